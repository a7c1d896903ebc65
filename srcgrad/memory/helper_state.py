"""What a user helper run as written may change outside itself.

A helper called with no value being differentiated (``decay()``,
``record(1)``, ``GM.decay()``) is run as written: srcgrad does not inline it,
so its writes are no statements of the function.  When it changes a
module-level or closed-over array, list, dict or object in place
(``W[...] *= 0.8``, ``LOG.append(v)``, ``STATE["t"] += 1``,
``np.copyto(W, W0)``, ``self.W *= 0.8`` on a module-level instance), or
rebinds a name declared ``global``/``nonlocal``, the adjoint sweep must not
read that state as it is after the call for a value computed before it, a
recompute must not read it again, and a checkpointed loop must not run the
helper again (outside review, session 34, R2-2/3/7/9: silently wrong
gradients under every policy).  This module reads the helper's source --
and, transitively, that of the helpers it calls -- and says which outside
objects it may change (:func:`outside_writes`), and which names of the
differentiated function hold one of them (:func:`names_changed`).  A helper
whose source cannot be read (a C function, a builtin) is not looked into:
it keeps the treatment calls of unknown effect get elsewhere.

    >>> import numpy as np
    >>> W = np.ones(2)
    >>> def decay():
    ...     W[...] *= 0.8
    >>> def scale():
    ...     return 2.0 * W
    >>> [o is W for o in outside_writes(decay).objects], outside_writes(scale).changes
    ([True], False)
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import textwrap
import types
import weakref
from dataclasses import dataclass

import gast
import numpy as np

from ..ad.in_place import only_reports
from ..frontend.linker import is_library_module
from ..ir.syntax import walk_nodes
from . import code_writes
from .effects import (
    CHANGES_ARGUMENT,
    MUTATES,
    MUTATING,
    NUMPY_WRITERS,
    UNKNOWN,
    function_effect,
)

__all__ = ["Writes", "helper_of", "how_it_writes", "names_changed", "namespace_helper_read",
           "only_reporting_call", "outside_writes", "outside_reads", "returns_outside",
           "state_changing_call", "state_read_elsewhere"]


@dataclass(frozen=True)
class Writes:
    """What a helper may change outside itself: ``objects`` whose contents it
    may change in place; ``rebound``, names it assigns after ``global`` or
    ``nonlocal``; ``params``, its parameters whose contents it may change;
    ``reports``, whether it prints or logs (an effect that changes no state);
    ``shown``, the names it writes through, as its source spells them;
    ``readable``, whether its source was read (False: nothing is known)."""
    objects: tuple = ()
    rebound: frozenset = frozenset()
    params: frozenset = frozenset()
    reports: bool = False
    shown: tuple = ()
    readable: bool = True

    @property
    def changes(self) -> bool:
        """Whether it may change state outside itself (not counting printing)."""
        return bool(self.objects or self.rebound)


_NOTHING = Writes()
_UNREAD = Writes(readable=False)
#: The in-place operator methods, called by name (PARAMS[0].__imul__(0.8)).
_IN_PLACE_DUNDERS = frozenset({"__iadd__", "__isub__", "__imul__", "__itruediv__",
                               "__ifloordiv__", "__imod__", "__ipow__", "__imatmul__",
                               "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
                               "__setitem__", "__delitem__"})
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ACTIVE: set = set()
#: Objects whose contents never change, or that are no state of the program.
_NOT_STATE = (int, float, complex, str, bytes, bool, type(None), types.ModuleType, type,
              types.FunctionType, types.BuiltinFunctionType, types.MethodType, frozenset)


def helper_of(func, free):
    """The user function (and the object it is bound to, or None) a call's
    function names through ``free``: ``decay`` or ``GM.decay``; (None, None)
    for anything else -- a library function, a method of a local value."""
    fn = free.get(func.id) if isinstance(func, gast.Name) else None
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and func.value.id in free:
        owner = free[func.value.id]
        if isinstance(owner, (int, float, complex, str, bytes, bool, type(None))):
            return None, None
        try:
            fn = inspect.getattr_static(owner, func.attr)
        except AttributeError:
            return None, None
        if isinstance(fn, (staticmethod, classmethod)):
            fn, owner = fn.__func__, None if isinstance(fn, staticmethod) else (
                owner if isinstance(owner, type) else type(owner))
        elif isinstance(owner, (types.ModuleType, type)):
            owner = None  # helpers.decay(), Class.function(x): no object bound
    else:
        owner = None
    if isinstance(fn, functools.partial):  # decay = partial(scale_by, W, 0.8): R2-21c
        return fn, None
    call = getattr(type(fn), "__call__", None) if isinstance(func, gast.Name) \
        and not isinstance(fn, _NOT_STATE) and not _user_function(fn) else None
    if _user_function(call):  # decay = Decayer(): its __call__, bound to it
        return call, fn
    return (fn, owner) if _user_function(fn) else (None, None)


def _user_function(fn) -> bool:
    return inspect.isfunction(fn) and not is_library_module(getattr(fn, "__module__", "") or "")


def _partial_writes(fn) -> Writes:
    """What the partial ``fn`` may change: what its function changes, and the
    objects it was given for a parameter its function changes in place
    (``partial(scale_by, W, 0.8)`` with ``a *= s``: ``W``)."""
    if not _user_function(fn.func):  # partial(operator.imul, W, 0.8), out=W
        given = [(f"argument {i + 1}", v) for i, v in enumerate(fn.args)] + list(
            fn.keywords.items())
        if "out" not in fn.keywords and function_effect(fn.func) not in (
                MUTATES, CHANGES_ARGUMENT, UNKNOWN):
            return _UNREAD
        given = [(n, v) for n, v in given if not isinstance(v, _NOT_STATE)]
        return Writes(tuple(v for _, v in given), shown=tuple(n for n, _ in given),
                      readable=False)
    inner = outside_writes(fn.func)
    positional = _positional(fn.func)
    bound = dict(zip(positional, fn.args)) | dict(fn.keywords)
    objects, shown = list(inner.objects), list(inner.shown)
    for name, value in bound.items():
        if name in inner.params and not isinstance(value, _NOT_STATE) \
                and not any(value is o for o in objects):
            objects.append(value)
            shown.append(name)
    return Writes(tuple(objects), inner.rebound, inner.params - bound.keys(), inner.reports,
                  tuple(shown), inner.readable)


def _positional(fn) -> list:
    """The names of the parameters a call of the user function (or partial)
    ``fn`` passes positionally."""
    if isinstance(fn, functools.partial):
        return _positional(fn.func)[len(fn.args):]
    code = getattr(fn, "__code__", None)
    return list(code.co_varnames[:code.co_argcount]) if code is not None else []


def outside_writes(fn) -> Writes:
    """What the user function ``fn`` may change outside itself (see
    :class:`Writes`), from its source and those of the helpers it calls.
    Nothing where its source cannot be read."""
    if isinstance(fn, functools.partial):
        return _partial_writes(fn)
    try:
        found, used = _CACHE[fn]
    except (KeyError, TypeError):
        pass
    else:  # a global rebound since (W = new_array): read again
        if all(_lookup(owner, name) is value for owner, name, value in used):
            return found
    code = getattr(fn, "__code__", None)
    if code is None or code in _ACTIVE:
        return _NOTHING  # recursion: the first visit collects the writes
    _ACTIVE.add(code)
    try:
        scan = _Scan(fn)
        found = scan.writes()
    finally:
        _ACTIVE.discard(code)
    try:
        _CACHE[fn] = (found, tuple(scan.used))
    except TypeError:
        pass
    return found


def _lookup(fn, name):
    """What ``name`` means in ``fn`` now: a closure cell's value or a global."""
    code = fn.__code__
    if fn.__closure__ and name in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(name)]
        return cell.cell_contents if _filled(cell) else None
    return fn.__globals__.get(name, getattr(builtins, name, None))


def returns_outside(fn) -> bool:
    """Whether ``fn`` may return (a part of) a module-level or closed-over
    array, list, dict or object (``return BUF``): the caller's name is then
    one more name for that state."""
    scan = _Scan(fn)
    if scan.tree is None:
        return False
    return any(isinstance(node, gast.Return) and node.value is not None
               and scan.outside(_root(node.value)) is not None
               and not isinstance(scan.outside(_root(node.value)), str)
               for node in gast.walk(scan.tree))


def names_changed(call, free) -> set[str]:
    """The names of ``free`` (a differentiated function's free names) whose
    objects the call ``call`` of a user helper run as written may change:
    one of them, a container holding one, or one a container it changes
    holds; and the names it rebinds."""
    fn, owner = helper_of(call.func, free)
    if fn is None:
        return set()
    writes = outside_writes(fn)
    objects = list(writes.objects)
    first = _first_parameter(fn)
    if owner is not None and first in writes.params:
        objects.append(owner)
    if not objects and not writes.rebound:
        return set()
    out = {n for n in writes.rebound if n in free}
    for name, value in free.items():
        if isinstance(value, (types.ModuleType, type)):
            # omod.W, Cfg.W: state the function reaches as an attribute of a
            # module or class (review s34, R2-21: the helper in another module)
            if any(value is obj or _attribute_of(value, obj) for obj in objects):
                out.add(name)
            continue
        if isinstance(value, _NOT_STATE):
            continue
        if any(_related(value, obj) for obj in objects):
            out.add(name)
    return out


def how_it_writes(call, free) -> str:
    """How the helper ``call`` calls may change state, for a message."""
    fn, _ = helper_of(call.func, free)
    if fn is None or outside_writes(fn).readable:
        return "the helper, run as written, writes into it"
    return ("srcgrad cannot read the helper's source (made by exec, or not a Python "
            "function) and its code may write into it")


def namespace_helper_read(call, free) -> bool:
    """Whether ``call`` is of a function of a module or class (``omod.decay()``,
    ``Cfg.decay()``) whose source was read here: what it may change is then
    :func:`names_changed`'s, not that of a method changing its own object."""
    func = call.func
    if not isinstance(func, gast.Attribute) or not isinstance(func.value, gast.Name) \
            or not isinstance(free.get(func.value.id), (types.ModuleType, type)):
        return False
    fn, _ = helper_of(func, free)
    return fn is not None and outside_writes(fn).readable


def _namespace(value) -> bool:
    """Whether ``value`` is a user's module or class, whose attributes are state
    (``Cfg.W[...] *= 0.8`` in a staticmethod changes ``Cfg``)."""
    if isinstance(value, types.ModuleType):
        return not is_library_module(value.__name__)
    return isinstance(value, type) and not is_library_module(getattr(value, "__module__", "") or "")


def _attribute_of(owner, obj) -> bool:
    """Whether ``obj`` is, or is held by (two levels down), an attribute of the
    module or class ``owner``."""
    fields = getattr(owner, "__dict__", None)
    if fields is None or is_library_module(getattr(owner, "__name__", "") or ""):
        return False
    return any(value is obj or _holds(value, obj, 2) for value in list(fields.values())
               if not isinstance(value, _NOT_STATE))


def _first_parameter(fn):
    positional = _positional(fn)
    return positional[0] if positional else None


def _related(value, obj) -> bool:
    """Whether ``value`` is ``obj``, holds it, or is held by it (up to three
    levels down: ``CFG['model']['W']``)."""
    return value is obj or _holds(value, obj, 3) or _holds(obj, value, 3)


def _holds(outer, inner, depth) -> bool:
    if depth == 0:
        return False
    return any(item is inner or _holds(item, inner, depth - 1) for item in _held(outer))


def _held(obj) -> list:
    """The values a container or object holds, one level down."""
    if isinstance(obj, dict):
        return list(obj.values())
    if isinstance(obj, (list, tuple)):
        return list(obj)
    fields = getattr(obj, "__dict__", None)
    return list(fields.values()) if isinstance(fields, dict) and not isinstance(
        obj, np.ndarray) else []


def _root(node):
    """The name an expression's value is reached from (``P`` of ``P['W'][0]``,
    ``W`` of ``W[0].fill``), or None."""
    while isinstance(node, (gast.Subscript, gast.Attribute, gast.Starred)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


class _Scan:
    """One reading of a helper's source."""

    def __init__(self, fn):
        self.fn = fn
        self.tree = None
        self.used = []  # (function, name, the value it had): what the answer rests on
        try:
            tree = gast.ast_to_gast(ast.parse(textwrap.dedent(inspect.getsource(fn))))
        except (OSError, TypeError, SyntaxError, IndentationError):
            return
        defs = [n for n in tree.body if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef))]
        if len(defs) != 1:
            return  # a lambda among other code: not looked into
        self.tree = defs[0]
        self.env = dict(fn.__globals__)
        if fn.__closure__:
            try:
                self.env.update(inspect.getclosurevars(fn).nonlocals)
            except (ValueError, TypeError):
                pass
        declared = {n for node in gast.walk(self.tree) if isinstance(node, (gast.Global,
                                                                           gast.Nonlocal))
                    for n in node.names}
        self.declared = declared
        self.params = {n.id for n in gast.walk(self.tree.args) if isinstance(n, gast.Name)}
        # a method of a module-level class: its self.other() calls are resolved
        code = fn.__code__
        self.own = code.co_varnames[0] if code.co_argcount else None
        owner = fn.__globals__.get(fn.__qualname__.split(".")[0]) \
            if fn.__qualname__.count(".") == 1 else None
        self.cls = owner if isinstance(owner, type) else None
        self.local = {n.id for n in gast.walk(self.tree) if isinstance(n, gast.Name)
                      and isinstance(n.ctx, (gast.Store, gast.Param))} - declared
        self.local |= {n.name for n in gast.walk(self.tree)
                       if isinstance(n, gast.FunctionDef) and n is not self.tree}
        # a local bound to outside state (w = W, w = P['W'], w = self.W): writes
        # through it change that state
        self.alias: dict = {}
        for _ in range(2):
            for node in gast.walk(self.tree):
                if isinstance(node, gast.Assign):
                    root = _root(node.value)
                    for target in node.targets:
                        if isinstance(target, gast.Name) and root is not None \
                                and root != target.id:
                            self.alias.setdefault(target.id, set()).update(
                                self.alias.get(root, {root}))

    def outside(self, name):
        """The outside object (or parameter name) ``name`` may stand for, or None."""
        if name is None:
            return None
        for root in self.alias.get(name, {name}):
            if root in self.params:
                return root
            if root in self.local:
                continue
            value = self.env.get(root, getattr(builtins, root, None))
            self.used.append((self.fn, root, value))
            if value is not None and (not isinstance(value, _NOT_STATE) or _namespace(value)):
                return value
        return None

    def writes(self) -> Writes:
        if self.tree is None:
            return _code_writes(self.fn)
        objects, params, rebound, reports, shown = [], set(), set(), False, []

        def changed(name):
            found = self.outside(name)
            if isinstance(found, str):
                params.add(found)
            elif found is not None and not any(found is o for o in objects):
                objects.append(found)
            if found is not None and not isinstance(found, str) and name not in shown:
                shown.append(name)

        for node in gast.walk(self.tree):
            targets = node.targets if isinstance(node, (gast.Assign, gast.Delete)) else \
                [node.target] if isinstance(node, (gast.AugAssign, gast.AnnAssign)) else []
            for target in targets:
                for part in gast.walk(target):
                    if isinstance(part, (gast.Subscript, gast.Attribute)) \
                            and isinstance(part.ctx, (gast.Store, gast.Del)):
                        changed(_root(part))
                    elif isinstance(part, gast.Name) and part.id in self.declared \
                            and isinstance(part.ctx, (gast.Store, gast.Del)):
                        rebound.add(part.id)
                        shown.extend([part.id] if part.id not in shown else [])
                if isinstance(node, gast.AugAssign) and isinstance(target, gast.Name):
                    changed(target.id)  # a += v on an array or list changes it in place
            if isinstance(node, gast.Call):
                reports = self._call(node, changed, objects, params, rebound, shown) or reports
        return Writes(tuple(objects), frozenset(rebound), frozenset(params), reports,
                      tuple(shown))

    def _call(self, call, changed, objects, params, rebound, shown) -> bool:
        """Collect what ``call`` may change; whether it prints or logs."""
        func = call.func
        for keyword in call.keywords:
            if keyword.arg == "out":
                for part in gast.walk(keyword.value):
                    if isinstance(part, gast.Name):
                        changed(part.id)
        if only_reports(call, self.env):
            return True
        if isinstance(func, gast.Attribute) and (func.attr in MUTATING or func.attr in _IN_PLACE_DUNDERS):
            changed(_root(func.value))  # LOG.append(v), W[0].fill(v), D.update(...)
        free = {k: v for k, v in self.env.items() if k not in self.local}
        target = _resolved(func, free)
        if isinstance(target, np.ufunc) or getattr(target, "__name__", "") in NUMPY_WRITERS \
                and (getattr(target, "__module__", "") or "").startswith("numpy"):
            if getattr(target, "__name__", "") in NUMPY_WRITERS and call.args:
                changed(_root(call.args[0]))  # np.copyto(W, W0)
            return False
        if isinstance(getattr(target, "__self__", None), np.ufunc) and call.args:
            changed(_root(call.args[0]))  # np.add.at(W, i, v)
            return False
        fn, owner = helper_of(func, free)
        if fn is None and isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id == self.own and self.cls is not None:
            # self.decay() in a method of a module-level class: that method's writes
            fn = inspect.getattr_static(self.cls, func.attr, None)
            fn, owner = (fn, self.own) if inspect.isfunction(fn) else (None, None)
        if fn is None:
            return False
        inner = outside_writes(fn)
        self.used.extend(_CACHE.get(fn, ((), ()))[1])
        objects.extend(o for o in inner.objects if not any(o is p for p in objects))
        rebound.update(inner.rebound)
        shown.extend(n for n in inner.shown if n not in shown)
        positional = _positional(fn)
        if owner is not None and positional:
            if positional[0] in inner.params:
                changed(_root(func.value if isinstance(func, gast.Attribute) else func))
            positional = positional[1:]
        for i, arg in enumerate(call.args):
            if isinstance(arg, gast.Starred) or i < len(positional) \
                    and positional[i] in inner.params:
                changed(_root(arg))
        for keyword in call.keywords:
            if keyword.arg is None or keyword.arg in inner.params:
                changed(_root(keyword.value))
        return inner.reports


def _code_writes(fn) -> Writes:
    """What a user function whose source cannot be read (made by ``exec``) may
    change, from its instructions (:mod:`.code_writes`): nothing, or whatever
    it names and is given."""
    code = getattr(fn, "__code__", None)
    if code is None or code_writes.changes_nothing(code):
        return _UNREAD
    objects, shown = [], []
    for name, value in code_writes.reachable(fn):
        inner = outside_writes(value) if _user_function(value) else None
        if inner is not None:
            objects.extend(o for o in inner.objects if not any(o is p for p in objects))
            shown.extend(n for n in inner.shown if n not in shown)
        elif not isinstance(value, _NOT_STATE) or _namespace(value):
            objects.append(value)
            shown.append(name)
    return Writes(tuple(objects), code_writes.rebound(code),
                  frozenset(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]),
                  False, tuple(shown), readable=False)


def _resolved(func, free):
    """The object a call's function names through ``free``, or None."""
    if isinstance(func, gast.Name):
        return free.get(func.id, getattr(builtins, func.id, None))
    if isinstance(func, gast.Attribute):
        owner = _resolved(func.value, free)
        return getattr(owner, func.attr, None) if owner is not None else None
    return None


def outside_reads(fn) -> tuple:
    """The module-level or closed-over objects the user function ``fn`` reads
    (its source's, and those of the helpers it calls)."""
    seen, out, todo = set(), [], [fn]
    while todo:
        fn = todo.pop()
        if isinstance(fn, functools.partial):  # what it was given, and its function's
            out.extend(v for v in (*fn.args, *fn.keywords.values())
                       if not isinstance(v, _NOT_STATE) and not any(v is o for o in out))
            todo.append(fn.func)
            continue
        scan = _Scan(fn)
        if scan.tree is None or scan.fn.__code__ in seen:
            continue
        seen.add(scan.fn.__code__)
        free = {k: v for k, v in scan.env.items() if k not in scan.local}
        for node in gast.walk(scan.tree):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                found = scan.outside(node.id)
                if found is not None and not isinstance(found, str) \
                        and not any(found is o for o in out):
                    out.append(found)
            elif isinstance(node, gast.Call):
                inner, owner = helper_of(node.func, free)
                if inner is not None:
                    todo.append(inner)
                    if owner is not None and not any(owner is o for o in out):
                        out.append(owner)
    return tuple(out)


def state_read_elsewhere(call, stmts, free) -> bool:
    """Whether the state the helper call ``call`` may change is read by the
    function (a free name for it) or by another helper ``stmts`` call: a
    rerun of ``call`` would change what they see.  A counter nothing reads
    (``tick()`` counting steps for the caller) may be rerun."""
    fn, _ = helper_of(call.func, free)
    writes = outside_writes(fn)
    if writes.rebound:  # global t; t += 1: any helper may read t
        return True
    read = [v for v in free.values() if not isinstance(v, _NOT_STATE)]
    read += [cell.cell_contents for v in free.values()  # STEP.__closure__ read in f
             for cell in (getattr(v, "__closure__", None) or ()) if _filled(cell)]
    for stmt in stmts:
        for node in gast.walk(getattr(stmt, "value", None) or gast.Pass()):
            if isinstance(node, gast.Call):
                other, _ = helper_of(node.func, free)
                if other is not None and other is not fn:
                    read.extend(outside_reads(other))
    return any(_related(value, obj) for value in read for obj in writes.objects)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def state_changing_call(stmt, free):
    """The first call in ``stmt`` (a statement run as written) of a user helper
    that may change state outside the function (:meth:`Writes.changes`, or
    the object it is bound to), and the names it changes it through (its
    source's); (None, ()) where there is none."""
    value = getattr(stmt, "value", None)
    if value is None or isinstance(stmt, (gast.If, gast.For, gast.While)):
        return None, ()
    for node in walk_nodes(value):  # (every statement asks: the faster walk)
        if isinstance(node, gast.Call):
            fn, owner = helper_of(node.func, free)
            if fn is None:
                continue
            writes = outside_writes(fn)
            if writes.changes:
                return node, writes.shown
            if owner is not None and _first_parameter(fn) in writes.params:
                return node, (_root(node.func.value if isinstance(node.func, gast.Attribute)
                                    else node.func),)
    return None, ()


def only_reporting_call(stmt, free) -> bool:
    """Whether ``stmt`` is a call, for what it does, of a user helper that
    prints or logs and changes nothing outside itself (``log(i)`` with
    ``print("step", i)``): like ``print`` itself, a rerun leaves it out."""
    call = getattr(stmt, "value", None)
    if not isinstance(stmt, gast.Expr) or not isinstance(call, gast.Call):
        return False
    fn, _ = helper_of(call.func, free)
    if fn is None:
        return False
    writes = outside_writes(fn)
    return writes.reports and not writes.changes and not writes.params
