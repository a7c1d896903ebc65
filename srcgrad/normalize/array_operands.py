"""List and tuple displays that NumPy takes as arrays, written as the arrays.

NumPy converts a list operand to an array (``np.asarray``) before it computes:
``M @ [a, b]``, ``np.linalg.solve(A, [a, 1.0])``, ``np.where(c, [a, b], 0.0)``,
``y[0] = [x[0], x[1], 1.0]`` of an array ``y``.  srcgrad's rules differentiate
arrays; given the Python list itself, an adjoint took it for a sequence (a raw
run-time refusal, or ``'*' of a tuple or list`` in a second derivative).  So a
display in such a place becomes ``np.array(display)``: the array NumPy makes of
it -- the same numbers and dtype (``np.array`` and ``np.asarray`` of a new list
agree) -- which the rules differentiate, and a display's items reach it through
the rule of ``np.array``.  The places, each where the conversion is certain,
never a guess (a list stays a list wherever it could be one):

- an argument of a NumPy ufunc called through ``np`` (T3, F3-7), or of another
  NumPy function at a parameter NumPy documents as ``array_like`` (by name:
  :data:`ARRAY_PARAMETERS`; ``np.concatenate``'s ``arrays`` and shape
  parameters are no such name), where the display holds a name or expression
  (a display of constants carries no derivative and is left as written);
- an operand beside one that is certainly a NumPy value
  (:meth:`ArrayOperands.certainly_numpy`: a global array, ``np.zeros(...)``,
  a ufunc's result, ...), and an operand of ``-``, ``/``, ``//``, ``**`` or
  ``@`` beside a name, item or call: a list has none of those operators, so
  Python runs them only through the other operand's NumPy method; beside a
  number they stay as written (Python's TypeError), and ``+`` and ``*``
  beside anything else may concatenate or repeat.  Where the other operand
  is not certainly an ndarray (an argument, a NumPy scalar, which repeats a
  list under ``*``), ``display_operand`` checks it first as the code runs
  (runtime/elementwise.py): beside a list, a tuple or a number it raises
  Python's TypeError, as the function does (R1-5: ``[a, b] - lst`` and
  ``[a, b] ** n`` ran NumPy's arithmetic), beside any other value that gives
  no array a located refusal;
- an operand of ``*`` or ``+`` beside an argument being differentiated (or
  arithmetic of one with numbers, ``x ** 2``) that the call passed no Python
  float, list, tuple or object and nothing rebinds: an ndarray or a NumPy
  scalar, as an int is refused there (``x * [1.0, 2.0, 3.0]``, F23), checked
  as the code runs as above;
- the value written into an element or slice of a local that is certainly a
  NumPy value (``y = np.zeros(...)``; ``y[0] = [...]``); a list's item
  written with a display stays a list.

Before and after:

    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> M = np.eye(2)
    >>> def f(x):
    ...     y = np.zeros((2, 2))
    ...     y[0] = [x[0], 1.0]
    ...     return np.sum(M @ [x[1], x[0]]) + y[0, 0]
    >>> print(unparse_body(normalize(parse_function(f))))
    y = np.zeros((2, 2))
    t1 = x[0]
    t2 = np.array([t1, 1.0])
    y[0] = t2
    t3 = x[1]
    t4 = x[0]
    t5 = np.array([t3, t4])
    t6 = M @ t5
    t7 = np.sum(t6)
    t8 = y[0, 0]
    t9 = t7 + t8
    return t9
"""

from __future__ import annotations

import inspect

import gast
import numpy as np

from .. import ir
from ..frontend.parse import MISSING, static_value
from ..ir.syntax import constant, helper_ref, load_name, source_of, walk
from .iterators import builtin_ref
from .list_methods import certainly_list

#: Parameter names NumPy gives its ``array_like`` operands (``np.where``'s
#: ``condition, x, y``, ``np.linalg.solve``'s ``a, b``, ``np.max``'s ``a``,
#: ``np.interp``'s ``x, xp, fp``, ``np.einsum``'s ``*operands``); a shape,
#: an axis, indices or a sequence of arrays (``arrays``, ``tup``) has another.
ARRAY_PARAMETERS = frozenset((
    "a", "b", "x", "y", "x1", "x2", "v", "p", "m", "A", "B", "condition", "xp", "fp",
    "a_min", "a_max", "arr", "operands"))

#: NumPy functions that make an array of their argument themselves.
_MAKERS_OF_ARRAYS = (np.array, np.asarray, np.asanyarray, np.ascontiguousarray,
                     np.asfortranarray, np.asarray_chkfinite, np.copy)

#: Functions whose result is a new ndarray: a local bound to one is an array.
ARRAY_MAKERS = frozenset(id(f) for f in (
    *_MAKERS_OF_ARRAYS, np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
    np.empty_like, np.full_like, np.eye, np.identity, np.arange, np.linspace, np.diag,
    np.tile, np.stack, np.concatenate, np.hstack, np.vstack, np.outer, np.reshape, np.sort,
    np.argsort, np.cumsum, np.cumprod, np.diff, np.ravel))

_NO_LIST_OPERATORS = (gast.Sub, gast.Div, gast.FloorDiv, gast.Pow, gast.MatMult)

#: Each binary operator's symbol (runtime/elementwise.display_operand's key)
_SYMBOLS = {gast.Sub: "-", gast.Div: "/", gast.FloorDiv: "//", gast.Pow: "**",
            gast.MatMult: "@", gast.Add: "+", gast.Mult: "*", gast.Mod: "%",
            gast.LShift: "<<", gast.RShift: ">>", gast.BitOr: "|", gast.BitXor: "^",
            gast.BitAnd: "&"}


#: What a local bound only to is certainly a list or tuple (``certainly_sequence``).
_SEQUENCE_DISPLAYS = (gast.List, gast.ListComp, gast.Tuple)


def is_display(node) -> bool:
    """A list or tuple display with no starred item."""
    return isinstance(node, (gast.List, gast.Tuple)) \
        and not any(isinstance(e, gast.Starred) for e in node.elts)


def _carries_values(node) -> bool:
    """Whether a display holds a name or an expression (one of constants, even
    nested, carries no derivative)."""
    return any(not isinstance(n, (gast.Constant, gast.List, gast.Tuple, gast.UnaryOp,
                                  gast.USub, gast.UAdd, gast.Load))
               for n in walk(node))


def _numpy_function(prim) -> bool:
    module = getattr(prim, "__module__", None) or ""
    return module == "numpy" or module.startswith("numpy.")


class ArrayOperands:
    """The rewrites of the module docstring (mixed into the normaliser)."""

    def as_array(self, display, np_ref=None):
        """``np.array(display)``, located at the display; ``np_ref`` the user's
        own reference to NumPy where the call had one (``np`` otherwise)."""
        if np_ref is None:
            np_ref = load_name("np")
            np_ref.helper = np
        func = gast.Attribute(value=np_ref, attr="array", ctx=gast.Load())
        made = gast.Call(func=func, args=[display], keywords=[])
        for sub in (made, func, np_ref):
            gast.copy_location(sub, display)
        return made

    def certainly_sequence(self, node) -> bool:
        """Whether ``node``, an array operand of a NumPy function, is certainly a
        list or tuple other than a display: a local every binding of which makes
        one (``vals = []; vals.append(...)``, ``vals = (a, b)``;
        ``list_methods.certainly_list``) or a call of ``list``, ``tuple`` or
        ``sorted``.  A ufunc makes the array
        ``np.array`` makes of it; written so, forward mode's tangent of it is an
        array too, not a list that ``-d_vals`` cannot negate (review s36 R4-3)."""
        if isinstance(node, gast.Call):
            return isinstance(node.func, gast.Name) \
                and any(self.callee(node) is f for f in (list, tuple, sorted))
        if not isinstance(node, gast.Name) or node.id not in self.locals:
            return False
        known = self.__dict__.get("_certain_lists")
        if known is None:  # bound to a list or tuple display somewhere: worth the full look
            known = self._certain_lists = {
                t.id: None for a in walk(self.func) if isinstance(a, gast.Assign)
                and isinstance(a.value, _SEQUENCE_DISPLAYS) for t in a.targets
                if isinstance(t, gast.Name)}
        if node.id in known and known[node.id] is None:
            known[node.id] = certainly_list(self.func, self.params, self.callee, node.id,
                                            displays=_SEQUENCE_DISPLAYS)
        return bool(known.get(node.id))

    def displays_as_arrays(self, node):
        """``np.maximum([p[0], p[1]], 0.1)`` -> ``np.maximum(np.array([p[0],
        p[1]]), 0.1)``; ``np.linalg.solve(A, [a, 1.0])`` -> ``np.linalg.solve(A,
        np.array([a, 1.0]))``: the array the function makes of its operand
        (module docstring).  None where ``node`` is no such call."""
        func = node.func
        if not isinstance(func, gast.Attribute) or not any(
                is_display(a) or self.certainly_sequence(a) for a in node.args) \
                and not any(is_display(k.value) for k in node.keywords):
            return None
        prim = self.callee(node)
        root = func.value
        while isinstance(root, gast.Attribute):
            root = root.value
        if prim is MISSING or static_value(root, self.parsed.resolver, self.locals) is not np:
            return None
        if isinstance(prim, np.ufunc) and func.value is not root:
            return None  # np.add.at(...): a method of a ufunc
        if isinstance(prim, np.ufunc):
            converted = {i for i, a in enumerate(node.args)
                         if is_display(a) or self.certainly_sequence(a)}
            named = set()
        else:
            if not _numpy_function(prim) or any(prim is m for m in _MAKERS_OF_ARRAYS):
                return None
            converted, named = self._array_arguments(
                prim, node, lambda a: is_display(a) or self.certainly_sequence(a))
            converted = {i for i in converted if _carries_values(node.args[i])}
            named = {k for k in named if _carries_values(
                next(kw.value for kw in node.keywords if kw.arg == k))}
        if not converted and not named:
            return None
        args = [self.as_array(a, _copied(root)) if i in converted else a
                for i, a in enumerate(node.args)]
        keywords = [gast.keyword(arg=k.arg, value=self.as_array(k.value, _copied(root)))
                    if k.arg in named else k for k in node.keywords]
        return gast.copy_location(gast.Call(func=func, args=args, keywords=keywords), node)

    @staticmethod
    def _array_arguments(prim, node, converts=is_display):
        """The positions and keywords of ``node``'s displays (those ``converts``
        takes) that ``prim`` takes at an ``array_like`` parameter
        (:data:`ARRAY_PARAMETERS`)."""
        try:
            signature = inspect.signature(prim)
            bound = signature.bind_partial(*range(len(node.args)),
                                           **{k.arg: k.arg for k in node.keywords})
        except (TypeError, ValueError):
            return set(), set()
        positions, names = set(), set()
        for name, held in bound.arguments.items():
            if name not in ARRAY_PARAMETERS:
                continue
            kind = signature.parameters[name].kind
            for slot in held if kind is inspect.Parameter.VAR_POSITIONAL else (held,):
                if isinstance(slot, int) and converts(node.args[slot]):
                    positions.add(slot)
                elif isinstance(slot, str) and any(k.arg == slot and is_display(k.value)
                                                   for k in node.keywords):
                    names.add(slot)
        return positions, names

    def operands_as_arrays(self, node):
        """``M @ [a, b]`` -> ``M @ np.array([a, b])``, ``x - [a, b]``, and ``y *
        [a, b]`` for ``y`` certainly a NumPy value: the operand NumPy makes of
        the display (module docstring).  ``node`` itself where nothing changes.
        Where the other operand is not certainly an ndarray, the result's
        ``checked_display`` says whether the display is the left operand, and
        the sources of the operation and of the other operand:
        :meth:`display_checked` puts the run-time check before it."""
        left, right = is_display(node.left), is_display(node.right)
        if left == right:
            return node
        other = node.right if left else node.left
        if not self.certainly_numpy(other) and not (
                isinstance(node.op, _NO_LIST_OPERATORS) and isinstance(other, (
                    gast.Name, gast.Attribute, gast.Subscript, gast.Call, gast.BinOp))) \
                and not self.differentiated_array(other):
            return node
        made = gast.BinOp(left=self.as_array(node.left) if left else node.left, op=node.op,
                          right=self.as_array(node.right) if right else node.right)
        if not self.certainly_numpy(other, arrays=True):
            made.checked_display = (left, source_of(node), source_of(other))
        return gast.copy_location(made, node)

    def differentiated_array(self, node) -> bool:
        """Whether ``node`` is an argument being differentiated that the call
        passed no Python float, list, tuple or object (an int is refused there),
        and that nothing rebinds: an ndarray or a NumPy scalar, beside which
        ``x * [a, b]`` and ``x + [a, b]`` are NumPy's arithmetic -- the
        display's run-time check (:meth:`display_checked`) raises Python's
        TypeError where a NumPy scalar makes none, as the function does."""
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return self.differentiated_array(node.operand)  # -x
        if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.Mod):  # x ** 2
            sides = (node.left, node.right)
            return any(self.differentiated_array(s) for s in sides) and all(
                self.differentiated_array(s) or isinstance(s, gast.Constant)
                and type(s.value) in (int, float) for s in sides)
        if not isinstance(node, gast.Name) or node.id not in getattr(
                self.parsed, "array_params", ()):
            return False
        rebound = self.__dict__.get("_rebound_params")
        if rebound is None:
            rebound = self._rebound_params = {
                n.id for n in walk(self.func)
                if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))}
        return node.id not in rebound

    def display_checked(self, node, left, right) -> None:
        """Before ``[a, b] - y`` written as ``np.array([a, b]) - y`` (``left`` and
        ``right`` the atoms of the two operands), where ``y`` may be no
        ndarray: ``display_operand('-', list, y, ...)``, which raises Python's
        TypeError where ``y`` is a list, a tuple or a number, as the function
        raises it, or refuses, located, any other value NumPy does not take
        beside the list (runtime/elementwise.py)."""
        display_first, shown, other = node.checked_display
        display = node.left if display_first else node.right  # np.array([...]) now
        kind = builtin_ref("list" if isinstance(display.args[0], gast.List) else "tuple")
        symbol = _SYMBOLS[type(node.op)]
        message = (f"srcgrad compiled '{shown}' as NumPy's arithmetic on the array made of "
                   f"the {kind.id}, but '{other}' holds a value beside which Python makes no "
                   f"such array: write np.array(...) where an array is meant")
        operands = (kind, right) if display_first else (left, kind)
        call = gast.Call(func=helper_ref("display_operand"), args=[
            gast.Constant(value=symbol, kind=None), *operands,
            gast.Constant(value=message, kind=None),
            constant((self.parsed.filename, getattr(node, "lineno", None),
                      getattr(node, "col_offset", None)))], keywords=[])
        guard = gast.copy_location(gast.Expr(value=call), node)
        guard.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
        self.out.append(guard)

    def written_as_array(self, target, value, stmt):
        """``y[0] = [a, b]`` -> ``y[0] = np.array([a, b])`` where ``y`` is certainly
        a NumPy value; ``value`` itself otherwise, after ``list_written(y, ...)``
        where ``y`` may be an array too (not bound only to displays or
        ``list()``/``dict()``): the located refusal, as the code runs, of a list
        written into an array that srcgrad could not see was one."""
        if not is_display(value) or not _carries_values(value):
            return value
        if self.certainly_numpy(target.value):
            return self.as_array(value)
        base = target.value
        if isinstance(base, gast.Name) and base.id in self.locals \
                and base.id not in self.container_names() and base.id in self.env:
            shown = source_of(target)
            message = (f"'{shown} = [...]' writes a list into what is an array here, which "
                       f"srcgrad could not tell when it compiled: write {shown} = "
                       f"np.array([...])")
            call = gast.Call(func=helper_ref("list_written"), args=[
                ir.name(self.env[base.id]), gast.Constant(value=message, kind=None),
                constant((self.parsed.filename, getattr(stmt, "lineno", None),
                          getattr(stmt, "col_offset", None)))], keywords=[])
            guard = gast.copy_location(gast.Expr(value=call), stmt)
            guard.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
            self.out.append(guard)
        return value

    def container_names(self) -> set:
        """The locals bound only to list, tuple or dict displays, comprehensions,
        ``list(...)`` or ``dict(...)``: a display written into their item is
        stored as it is."""
        found = self.__dict__.get("_container_names")
        if found is None:
            bound, other = {}, set()
            for node in walk(self.func):
                if isinstance(node, gast.Assign):
                    for t in node.targets:
                        if isinstance(t, gast.Name):
                            bound.setdefault(t.id, []).append(node.value)
                elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    other.add(node.id)
            other -= {t.id for node in walk(self.func) if isinstance(node, gast.Assign)
                      for t in node.targets if isinstance(t, gast.Name)}
            found = self._container_names = {
                name for name, values in bound.items() if name not in other and all(
                    isinstance(v, (gast.List, gast.Tuple, gast.Dict, gast.ListComp,
                                   gast.DictComp))
                    or isinstance(v, gast.Call) and isinstance(v.func, gast.Name)
                    and v.func.id in ("list", "dict") for v in values)}
        return found

    def certainly_numpy(self, node, arrays=False) -> bool:
        """Whether ``node``'s value is certainly an ndarray or a NumPy scalar
        (whose item write raises, with a list or an array alike): a global
        array, a call of :data:`ARRAY_MAKERS` or a ufunc, ``.copy()`` or
        arithmetic of such values, or a local name every binding of which is
        one (:meth:`numpy_names`).  With ``arrays``, certainly an ndarray
        (beside which NumPy makes an array of a list whatever the operator): a
        ufunc's result or arithmetic may be a scalar (of a 0-d array too)."""
        if isinstance(node, gast.Name) and node.id in self.locals:
            return node.id in self.numpy_names(arrays)
        if isinstance(node, (gast.Name, gast.Attribute)):
            value = static_value(node, self.parsed.resolver, self.locals)
            if isinstance(value, np.ndarray if arrays else (np.ndarray, np.generic)):
                return True
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr == "copy" and not node.args:
            return self.certainly_numpy(node.func.value, arrays)
        if isinstance(node, gast.Call) and isinstance(node.func, (gast.Name, gast.Attribute)):
            prim = self.callee(node)
            return prim is not MISSING and (
                id(prim) in ARRAY_MAKERS or not arrays and isinstance(prim, np.ufunc))
        if isinstance(node, gast.BinOp) and not isinstance(node.op, gast.Mod) and not arrays:
            sides = (node.left, node.right)
            return any(self.certainly_numpy(s) for s in sides) and all(
                self.certainly_numpy(s) or isinstance(s, gast.Constant) and isinstance(
                    s.value, (int, float)) for s in sides)
        return False

    def numpy_names(self, arrays=False) -> set:
        """The locals every binding of which (``y = value``; ``y op= v`` keeps an
        array one) is certainly a NumPy value (with ``arrays``, an ndarray): a
        greatest fixed point."""
        key = "_array_names" if arrays else "_numpy_names"
        found = self.__dict__.get(key)
        if found is not None:
            return found
        values, simple = {}, set()
        for node in walk(self.func):
            if isinstance(node, gast.Assign) and all(isinstance(t, gast.Name)
                                                     for t in node.targets):
                for target in node.targets:
                    values.setdefault(target.id, []).append(node.value)
                    simple.add(id(target))
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                simple.add(id(node.target))
        other = {n.id for n in walk(self.func) if isinstance(n, gast.Name)
                 and not isinstance(n.ctx, gast.Load) and id(n) not in simple}
        found = set(values) - set(self.params) - other
        setattr(self, key, found)
        changed = True
        while changed:
            changed = False
            for name in sorted(found):
                if not all(self.certainly_numpy(v, arrays) for v in values[name]):
                    found.discard(name)
                    changed = True
        return found


def _copied(node):
    """A fresh copy of the reference ``node`` (``np``), located like it."""
    made = gast.Name(id=node.id, ctx=gast.Load(), annotation=None, type_comment=None)
    return gast.copy_location(made, node)
