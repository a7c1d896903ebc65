"""Refusing a call that changes a helper's mutable default argument.

Python evaluates a default once, where the ``def`` runs, and every call that
leaves the parameter out gets that same object: ``def helper(x, cache=[]):
cache.append(x)`` appends to one list that outlives the call (the memo and
scratch-buffer idioms: ``memo={}``, ``buf=np.zeros(2)`` written with
``buf[:] = ...``).  srcgrad's code for a helper works on a copy of what it
updates, so each call would see a fresh default and the default would be left
untouched: another value and gradient than Python's, no error.  Such a default
is state, as a global is (whose writes srcgrad refuses), so a call that leaves
out a parameter whose mutable default the helper may change is refused,
located at the call.  A default only read (``def f(x, w=W0)``), an immutable
one (``n=0; n += 1`` rebinds) and a call passing the argument are fine.

Before, a call leaving ``cache`` out; after, the refusal:

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> from .. import _doctest_helpers as h
    >>> def f(x):
    ...     return h.append_to_default(x) * 2.0
    >>> normalize(parse_function(f))
    Traceback (most recent call last):
    ...
    srcgrad.errors.UnsupportedSyntaxError: ...append_to_default() changes its default argument 'cache' in place...
    >>> def g(x):
    ...     return h.append_to_default(x, []) * 2.0
    >>> print(unparse_body(normalize(parse_function(g))))
    t1 = []
    t2 = h.append_to_default(x, t1)
    t3 = t2 * 2.0
    return t3
"""

from __future__ import annotations

import inspect
import numbers
import types

import gast
import numpy as np

from .. import ir
from ..errors import SrcGradError
from ..frontend.parse import parse_function
from ..ir.syntax import constant, helper_ref, walk
from .generator_reads import MUTATING

#: Values no statement can change in place (``n += 1`` on them rebinds).
_IMMUTABLE = (numbers.Number, str, bytes, type(None), frozenset, range, np.generic, type,
              types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type(Ellipsis),
              slice, np.ufunc)


def is_mutable(value) -> bool:
    """Whether ``value`` may be changed in place: a list, dict, set, array or
    other object, or a tuple holding one."""
    if isinstance(value, tuple):
        return any(is_mutable(v) for v in value)
    return not isinstance(value, _IMMUTABLE) and not callable(value)


def changed_defaults(fn, passed, updated) -> list:
    """The parameters of the user function ``fn`` that a call passing only
    ``passed`` (names) leaves to a mutable default which ``fn`` may change in
    place: each in ``updated`` (what the effect analyses found, calls made
    there included) or written by ``fn``'s own statements, through the name
    itself (``p[i] = v``, ``p += v``, ``p.append(v)``, ``p.a = v``, ``out=p``),
    whatever else binds it first on some path."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return []
    candidates = [name for name, p in params.items() if name not in passed
                  and p.default is not p.empty and is_mutable(p.default)]
    if not candidates:
        return []
    try:
        func = parse_function(fn).node
    except SrcGradError:
        func = None
    written = set(updated) | (written_names(func) if func is not None else set())
    copied = copied_first(func) if func is not None else set()
    return [name for name in candidates if name in written and name not in copied]


#: Calls that make a new container or array from their argument.
_COPIERS = frozenset({"list", "dict", "set", "tuple", "copy", "deepcopy", "array"})


def copied_first(func) -> set:
    """The parameters ``func`` rebinds to a new copy before anything else could
    change them (``buf = buf.copy()``, ``acc = list(acc)``, ``buf = buf * 1.0``
    as a statement of the body itself, with no write through the name before):
    what it changes afterwards is the copy, never the default."""
    params = {a.id for a in func.args.args + func.args.kwonlyargs}
    found, touched = set(), set()
    for stmt in func.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) \
                and stmt.targets[0].id in params - touched and _copy_of(stmt.value,
                                                                   stmt.targets[0].id):
            found.add(stmt.targets[0].id)
        touched |= written_names(stmt) | {n.id for n in walk(stmt) if isinstance(n, gast.Name)
                                          and isinstance(n.ctx, gast.Store)}
    return found


def _copy_of(value, name) -> bool:
    """Whether ``value`` is a new object made from ``name``: ``name.copy()``,
    ``list(name)``, ``np.array(name)``, ``copy.copy(name)``, arithmetic on it."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return any(isinstance(n, gast.Name) and n.id == name for n in walk(value))
    if not isinstance(value, gast.Call):
        return False
    func = value.func
    called = func.id if isinstance(func, gast.Name) else func.attr \
        if isinstance(func, gast.Attribute) else None
    if called not in _COPIERS:
        return False
    if isinstance(func, gast.Attribute) and called == "copy" and not value.args:
        return isinstance(func.value, gast.Name) and func.value.id == name  # name.copy()
    return bool(value.args) and isinstance(value.args[0], gast.Name) \
        and value.args[0].id == name and not any(k.arg == "copy" for k in value.keywords)


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def written_names(func) -> set:
    """The names the statements of ``func`` (a gast node) change in place,
    through the name itself (a syntactic look)."""
    names = set()
    for node in walk(func):
        if isinstance(node, (gast.Subscript, gast.Attribute)) \
                and isinstance(node.ctx, (gast.Store, gast.Del)):
            names.add(_root(node))
        elif isinstance(node, gast.AugAssign):
            names.add(_root(node.target))
        elif isinstance(node, gast.Call):
            if isinstance(node.func, gast.Attribute) and node.func.attr in MUTATING:
                names.add(_root(node.func.value))
            names.update(_root(kw.value) for kw in node.keywords if kw.arg == "out")
    names.discard(None)
    return names


def default_message(fn, param, default) -> str:
    """Why the call is refused, and what to write instead."""
    kind = type(default).__name__
    article = "an" if kind[:1].lower() in "aeiou" or kind == "ndarray" else "a"
    return (f"{fn.__name__}() changes its default argument '{param}' in place ({article} {kind} made "
            f"once, where the def runs, and shared by every call that leaves '{param}' out, "
            f"so it keeps what each call put there), and this call leaves '{param}' out: "
            f"srcgrad's code works on a copy of what a helper changes, so that state would "
            f"be lost; pass it explicitly ({fn.__name__}(..., {param}=...)) and use what the "
            f"helper returns, or give it the default None and make a new one in the "
            f"function")


def default_checks(fn, func, updated, namer, free, filename) -> list:
    """The checks, at the entry of srcgrad's code for the user function ``fn``
    (``func``, its parsed definition), that a parameter it changes in place
    (``updated``, or written by its own statements) was not left to its
    mutable default: ``untouched(default, cache, None, message, where)``
    raises where ``cache`` is that object, or shares its memory.  The caller
    that leaves it out is refused where it is compiled
    (:func:`changed_defaults`); this covers the function called by the user
    (``grad(helper)(x)``, whose generated code has ``helper``'s defaults) and
    a caller whose arguments are known only as it runs."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return []
    nodes = {a.id: a for a in func.args.args + func.args.kwonlyargs}
    written = None
    checks = []
    for name, param in params.items():
        if name not in nodes or param.default is param.empty or not is_mutable(param.default):
            continue
        written = set(updated) | written_names(func) if written is None else written
        if name not in written or name in copied_first(func):
            continue
        held = namer.fresh(f"{name}_default")
        free[held] = param.default
        node = nodes[name]
        message = (f"{fn.__name__}() changes its default argument '{name}' in place, and it "
                   f"was called without '{name}': Python shares that default between calls "
                   f"(it keeps what each call put there), while srcgrad's code works on a "
                   f"copy; pass '{name}' explicitly and use what the function returns, or "
                   f"give it the default None and make a new one in the function")
        where = constant((filename, getattr(node, "lineno", None),
                          getattr(node, "col_offset", None)))
        call = gast.Call(func=helper_ref("untouched"), args=[
            ir.name(held), ir.name(name), gast.Constant(value=None, kind=None),
            gast.Constant(value=message, kind=None), where], keywords=[])
        check = gast.copy_location(gast.Expr(value=call), node)
        check.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
        check.comment = f"{name} is changed in place below: it must not be its shared default"
        check.message = message
        checks.append(check)
    return checks


def changed_local_defaults(fdef, given, local_names) -> list:
    """The parameters of the local function or lambda ``fdef`` that a call
    passing only ``given`` leaves to a default which ``fdef`` changes in place
    and which is an object made where the ``def`` runs (``acc=[]``,
    ``buf=np.zeros(2)``) or a global's (``buf=BUF``): shared by every such
    call in Python, where srcgrad inlines each call with a default of its own.
    A constant (``acc=None``) is fine, and so is a variable of the enclosing
    function (``acc=acc``), another name for it that the aliasing checks
    follow."""
    params = [a.id for a in fdef.args.args]
    defaults = dict(zip(params[len(params) - len(fdef.args.defaults):], fdef.args.defaults))
    written = None
    found = []
    for param, default in defaults.items():
        if param in given or _constant(default) or (
                isinstance(default, gast.Name) and default.id in local_names):
            continue
        written = written_names(fdef) if written is None else written
        if param in written:
            found.append(param)
    return found


def _constant(node) -> bool:
    return isinstance(node, gast.Constant) or isinstance(node, gast.Tuple) and all(
        _constant(e) for e in node.elts)


def local_default_message(name, param) -> str:
    """Why a call of a local function is refused (:func:`changed_local_defaults`)."""
    return (f"the local function '{name}' changes its default argument '{param}' in place "
            f"(an object made once, where the def runs, and shared by every call that "
            f"leaves '{param}' out), and this call leaves '{param}' out: srcgrad inlines "
            f"each call with a default of its own, so that state would be lost; pass it "
            f"explicitly, or give it the default None and make a new one in the function")


__all__ = ["changed_defaults", "changed_local_defaults", "default_checks", "default_message",
           "is_mutable",
           "local_default_message", "written_names"]
