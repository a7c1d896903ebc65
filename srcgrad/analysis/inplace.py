"""``x += v`` leaves what NumPy's update in place leaves: the array's type and dtype.

On an array, ``x += v`` writes into ``x``: ``x`` stays an array of its own
dtype and shape.  A 0-d array stays a 0-d array, where ``x + v`` is a NumPy
scalar; a float32 array stays float32, where ``x + v`` is float64 if ``v`` is.
On a number or a NumPy scalar, ``x += v`` rebinds ``x`` to ``x + v``.
Normalisation lowers both to ``x_1 = x + v``; this pass writes the update as
``x_1 = in_place(x + v, x)`` (:func:`~srcgrad.runtime.in_place`: ``x + v`` in
``x``'s type and dtype where ``x`` is an array) unless ``x + v`` is certainly
what the update leaves, which is so when

- ``x`` holds a number or a NumPy scalar on every path (``+=`` rebinds it), or
- ``x`` is never a 0-d array (every definition of it is arithmetic, a ufunc or
  a reduction, whose 0-d results NumPy makes scalars) and ``v``'s dtype is at
  most ``x``'s, so that NumPy's promotion gives ``x + v`` the dtype of ``x``:
  ``v`` is ``x`` itself, or a value ``x`` was computed from
  (``h = x * y; h -= y``), or a literal number, a floating function
  (``np.tanh``, a reduction) or product of those, of such values and of ``x``,
  where ``x`` is floating (``h *= 2.0``, ``h += 0.5 * np.tanh(h)``).  Where
  ``x`` may be an integer array and ``v`` is floating, NumPy refuses the update
  (it does not cast a float into an integer array): there is no value to keep.

Sound because the facts are invariants of every value a name takes (greatest
fixed points over all its definitions, a loop's included), because a value
``v`` is related to ``x`` only where it is a name assigned once outside any
loop (it holds one value), or is computed in the update's own block with no
assignment of its operands in between, and because NumPy's promotion has the
properties the rules use -- checked over every pair of NumPy's numeric types and
Python's numbers by tests/analysis/test_inplace.py, which also has a test for
each rule.

The same goes for an element of a list or dict, ``d['h'] += v``: the array it
holds is updated in place (``d['h'] = in_place(t1 + v, t1)``).  An element of
an array, ``x[i] += v``, takes ``x``'s dtype when it is stored back, and so
stays as it is where ``x`` is certainly a floating array (``np.zeros(n)``, a
floating ufunc's result) or ``v`` an int literal.  Any other ``x`` may be an
integer or bool array as the code runs (``np.arange(3)``, ``np.array([1, 2])``,
``x > 0``): NumPy updates a slice of it in place and refuses a float there,
which ``in_place`` raises too (an element, ``x[0] += 0.5``, is a NumPy scalar
there and is stored back truncated, as NumPy does).

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize, unparse_body
    >>> def f(x, y):
    ...     v = np.where(x > 0, x, y)
    ...     v += y
    ...     h = np.tanh(x)
    ...     h *= 2.0
    ...     return h, v
    >>> program = normalize(parse_function(f))
    >>> keep_in_place_types(program)
    >>> print(unparse_body(program))
    t1 = x > 0
    v = np.where(t1, x, y)
    t2 = v + y
    v_1 = in_place(t2, v)
    h = np.tanh(x)
    h_1 = h * 2.0
    return (h_1, v_1)
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import ir, runtime
from ..ir.syntax import helper_ref
from . import paths
from .activity import scalar_names

__all__ = ["CLOSED", "DOMINATING", "PROMOTING", "SAME_DTYPE", "floating",
           "keep_in_place_types"]

#: Binary primitives whose result's dtype is at least each operand's: NumPy's
#: promotion (or a floating result big enough for both).
PROMOTING = frozenset({
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.matmul, np.add, np.subtract, np.multiply,
    np.divide, np.floor_divide, np.remainder, np.power, np.matmul, np.maximum, np.minimum,
    np.fmax, np.fmin, np.hypot, np.arctan2, np.logaddexp})

#: Unary primitives whose result's dtype is their operand's.  (A floating ufunc's
#: result, see :func:`floating`, has a dtype at least its operand's too.)
DOMINATING = frozenset({operator.neg, np.negative, np.square})

#: Augmented operators for which ``x op v`` has ``x``'s dtype wherever ``v``'s is
#: at most ``x``'s, whatever ``x``'s; ``/``, ``//``, ``%`` and ``**`` need a
#: floating ``x`` too (``x / x`` of integers is a float).
CLOSED = frozenset({operator.add, operator.sub, operator.mul, operator.matmul})

#: Reductions whose result's dtype is at most a floating operand's (its own, or
#: np.var's float for complex), and which never give a 0-d array.
SAME_DTYPE = frozenset({
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std,
    np.ndarray.sum, np.ndarray.mean, np.ndarray.prod, np.ndarray.max, np.ndarray.min,
    np.ndarray.var, np.ndarray.std})

_ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.truediv,
                         operator.floordiv, operator.mod, operator.pow, operator.matmul,
                         operator.neg, abs})
_REDUCTION_KEYWORDS = frozenset({"axis", "keepdims"})
#: Calls whose result is always an array (never a list, tuple or dict).
_ARRAYS = frozenset({np.array, np.asarray, np.copy, np.where, np.zeros, np.ones, np.empty,
                     np.full, np.zeros_like, np.ones_like, np.empty_like, np.full_like,
                     np.arange, np.linspace, np.eye, np.identity, np.ndarray.copy})
_FLOATING_CODES = set("efdgFDGO")
#: Calls making a float64 array when given no dtype, with at most this many
#: arguments (the next positional one is the dtype): np.zeros(n), np.eye(n, m, k).
_FLOAT_MADE = {np.zeros: 1, np.ones: 1, np.empty: 1, np.identity: 1, np.eye: 3,
               np.linspace: 3}
#: Calls whose result has their one argument's dtype: x.copy(), np.zeros_like(x).
_SAME_DTYPE_MADE = frozenset({np.copy, np.ndarray.copy, np.zeros_like, np.ones_like,
                              np.empty_like})


def _member(prim, primitives) -> bool:
    try:
        return prim in primitives
    except TypeError:  # an unhashable primitive: none of these
        return False


def floating(prim) -> bool:
    """Whether ``prim`` is a ufunc whose result is floating (float, complex or
    object) whatever its operands: ``np.tanh``, ``np.divide`` (and ``/``)."""
    if prim is operator.truediv:
        return True
    if not isinstance(prim, np.ufunc) or prim.nout != 1:
        return False
    loops = [t.split("->") for t in prim.types]
    return all(out in _FLOATING_CODES for ins, out in loops if not set(ins) & set("mM"))


def keep_in_place_types(program: ir.Program) -> None:
    """Write each augmented assignment whose plain operation may give another
    type or dtype than NumPy's update in place as ``in_place(x op v, x)``."""
    statements = list(ir.walk_statements(program.body))
    if not any(getattr(s, "augmented", None) is not None
               or getattr(s, "item_update", None) is not None for s in statements):
        return  # no augmented assignment: nothing to decide (the facts cost a tenth of a compile)
    facts = _Facts(program)
    wrap = [(stmt, binop, old) for stmt in statements
            for binop, old in [facts.augmented(stmt)]
            if binop is not None and not facts.kept(stmt, binop, old)]
    for stmt, binop, old in wrap:
        _wrap(program, stmt, binop, old, facts.blocks)


def _wrap(program, stmt, binop, old, blocks) -> None:
    """``x_1 = x + v`` -> ``t = x + v; x_1 = in_place(t, x)``; in a loop, where the
    sum has a temporary already (``t = x + v; x = t``), the copy becomes the call."""
    if stmt is binop:
        target = binop.targets[0]
        tmp = program.namer.temp()
        binop.targets = [ir.name(tmp, store=True)]
        stmt = gast.copy_location(ir.assign(target, ir.name(tmp)), binop)
        for attribute in ("augmented", "augmented_symbol", "user_target", "item_update"):
            if hasattr(binop, attribute):
                setattr(stmt, attribute, getattr(binop, attribute))
                delattr(binop, attribute)
        block, _, _ = blocks[id(binop)]
        block.insert(block.index(binop) + 1, stmt)
    value = stmt.value
    stmt.value = gast.Call(func=helper_ref("in_place"), args=[value, ir.name(old)],
                           keywords=[])
    stmt.op = ir.Op(runtime.in_place, [ir.name(value.id), ir.name(old)], {}, binop.op.node,
                    "in_place")


class _Facts:
    """What every value of each name is, whatever path computed it: never a 0-d
    array, floating, never a list or dict; and the names whose dtype is at most
    its own.  Greatest fixed points over the definitions of each name (a
    parameter's unknown value and a loop's target count as definitions)."""

    def __init__(self, program):
        self.program = program
        self.blocks = paths.blocks_of(program.body)
        self.update = None  # the augmented assignment kept() is deciding about
        self.scalars = scalar_names(program)
        self.floats = set(getattr(program, "float_params", ()))
        statements = list(ir.walk_statements(program.body))
        self.prev = {}  # an augmented copy (loop: x = t) -> the statement computing t
        for block, i, _ in self.blocks.values():
            if i and isinstance(block[i], gast.Assign):
                self.prev[id(block[i])] = block[i - 1]
        self.defs: dict[str, list] = {p: ["float" if p in self.floats else None]
                                      for p in program.params}
        loops = paths.enclosing_loops(program.body)
        in_loops, counts = set(), {}
        for stmt in statements:
            if ir.is_update(stmt):
                continue  # x[i] = v, xs.append(v): x keeps its type and dtype
            for name in ir.assigned_by(stmt):
                counts[name] = counts.get(name, 0) + 1
                if loops.get(id(stmt)):
                    in_loops.add(name)
                simple = isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                self.defs.setdefault(name, []).append(stmt if simple else None)
        # names that hold one value: parameters never assigned, names assigned
        # once outside any loop
        self.stable = {n for n, c in counts.items() if c == 1 and n not in in_loops
                       and n not in program.params}
        self.stable |= {p for p in program.params if p not in counts}
        self.never_0d = self._greatest(self._never_0d)
        self.inexact = self._greatest(self._inexact)
        self.arrayish = self._greatest(self._arrayish)
        self._dom = None  # _dominated(), computed when an update first asks (dominates)

    # -- definitions ---------------------------------------------------------------------
    def augmented(self, stmt):
        """``(binop, x)`` for an augmented assignment ``stmt`` (``x_1 = x + v``, or
        in a loop ``t = x + v; x = t``; for an element ``t2 = t1 + v`` with
        ``t1 = d[k]``): the statement applying the operator and the name updated;
        ``(None, None)`` for any other statement."""
        old = getattr(stmt, "augmented", None)
        if old is None:
            item = getattr(stmt, "item_update", None)
            old = item[1] if item is not None else None
        op = getattr(stmt, "op", None)
        if old is None or op is None or not isinstance(stmt, gast.Assign):
            return None, None
        binop = stmt
        if op.primitive is operator.pos and isinstance(stmt.value, gast.Name):
            binop = self.prev.get(id(stmt))
            if binop is None or ir.target_names(binop) != [stmt.value.id]:
                return None, None
        prim = getattr(getattr(binop, "op", None), "primitive", None)
        if not _member(prim, _ARITHMETIC) or len(binop.op.args) != 2:
            return None, None  # a sequence's += (ir.CONCAT): a list, not an array
        return binop, old

    def _operation(self, stmt):
        """``(op, x)``: the operation a definition applies, and for an augmented
        assignment the name it updates (the result is ``in_place(op's, x)``)."""
        x = getattr(stmt, "augmented", None)
        if x is None and getattr(stmt, "item_update", None) is not None:
            x = stmt.item_update[1]
        op = stmt.op
        if x is not None and op.primitive is operator.pos and isinstance(stmt.value, gast.Name):
            op = getattr(self.prev.get(id(stmt)), "op", op)
        return op, x

    def _greatest(self, holds) -> set[str]:
        """The names each definition of which ``holds`` for, assuming it of the names
        in the set (iterated down to a fixed point)."""
        true = set(self.defs)
        changed = True
        while changed:
            changed = False
            for name in [n for n in self.defs if n in true]:
                if not all(self._holds(d, holds, true) for d in self.defs[name]):
                    true.discard(name)
                    changed = True
        return true

    def _holds(self, stmt, holds, true) -> bool:
        if stmt is None:
            return False
        if stmt == "float":
            return True
        if getattr(stmt, "op", None) is None:
            return False
        op, x = self._operation(stmt)
        return holds(op, stmt, true) and (x is None or x in true)

    # -- the facts -----------------------------------------------------------------------
    @staticmethod
    def _atom(node, true, constant) -> bool:
        if isinstance(node, gast.Constant):
            return constant(node.value)
        return isinstance(node, gast.Name) and node.id in true

    def _never_0d(self, op, stmt, true) -> bool:
        """Never a 0-d array: arithmetic, a ufunc or a reduction (NumPy makes their
        0-d results scalars), a number, or a copy of such a value."""
        prim = op.primitive
        if prim is operator.pos and isinstance(stmt.value, (gast.Name, gast.Constant)):
            return self._atom(op.args[0], true, lambda v: True)
        if "out" in op.kwargs:
            return False
        return _member(prim, _ARITHMETIC) or isinstance(prim, np.ufunc) \
            or _member(prim, SAME_DTYPE) or getattr(prim, "__module__", None) == "math" \
            or any(prim is f for f in (float, int, len))

    def _inexact(self, op, stmt, true) -> bool:
        """Floating (float, complex or object) whenever it is an array or a NumPy
        scalar: a floating ufunc's result, promotion with a floating operand."""
        prim = op.primitive

        def floating_atom(node):
            return self._atom(node, true, lambda v: isinstance(v, (float, complex)))

        if prim is operator.pos and isinstance(stmt.value, (gast.Name, gast.Constant)):
            return floating_atom(op.args[0])
        if op.kwargs.keys() - _REDUCTION_KEYWORDS:
            return False
        if floating(prim):
            return True
        made = _FLOAT_MADE.get(prim) if _member(prim, _FLOAT_MADE) else None
        if made is not None:
            return len(op.args) <= made
        if _member(prim, _SAME_DTYPE_MADE):
            return len(op.args) == 1 and floating_atom(op.args[0])
        if _member(prim, PROMOTING) or _member(prim, DOMINATING) or _member(prim, SAME_DTYPE):
            return any(floating_atom(a) for a in op.args)
        return False

    def _arrayish(self, op, stmt, true) -> bool:
        """An array, a NumPy scalar or a Python float: never a list, tuple or dict
        (with which ``*`` would repeat and ``x[i] += v`` would update an item)."""
        prim = op.primitive

        def arrayish_atom(node):
            return self._atom(node, true, lambda v: isinstance(v, (float, complex)))

        if prim is operator.pos and isinstance(stmt.value, (gast.Name, gast.Constant)):
            return arrayish_atom(op.args[0])
        if prim is runtime.snapshot or prim is operator.getitem:
            return arrayish_atom(op.args[0])
        if isinstance(prim, np.ufunc) or _member(prim, SAME_DTYPE) or _member(prim, _ARRAYS):
            return True
        return _member(prim, _ARITHMETIC) and any(arrayish_atom(a) for a in op.args)

    def dominates(self, name, x) -> bool:
        """Whether ``name`` holds one value whose dtype is at most that of every value
        ``x`` takes (:meth:`_dominated`, computed once, and only for a function with
        an update to decide about: most have none)."""
        if self._dom is None:
            self._dom = self._dominated()
        bits, dom = self._dom
        return bool(bits.get(name, 0) & dom.get(x, 0))

    def _dominated(self):
        """For each name, the names (each holding one value) whose dtype is at most
        the dtype of every value it takes: its operands under promotion, theirs.
        From all of them for every name down to the greatest fixed point; names are
        visited in the order of their definitions, so that straight-line code settles
        in one sweep and a loop in as many as its back edges need (the fixed point is
        the same in any order: each step only shrinks a set).  A set is an integer
        with one bit per name holding one value: the sets are as long as the
        function, and so is the table of them."""
        bits = {name: 1 << k for k, name in enumerate(sorted(self.stable))}
        everything = (1 << len(bits)) - 1

        def below(node, dom):
            if not isinstance(node, gast.Name):
                return 0
            return dom.get(node.id, 0) | bits.get(node.id, 0)

        dom = dict.fromkeys(self.defs, everything)
        changed = True
        while changed:
            changed = False
            for name in self.defs:
                new = everything
                for stmt in self.defs[name]:
                    new &= self._dominated_by(stmt, dom, below)
                if new != dom[name]:
                    dom[name] = new
                    changed = True
        return bits, dom

    def _dominated_by(self, stmt, dom, below) -> int:
        if stmt is None or stmt == "float" or getattr(stmt, "op", None) is None:
            return 0
        op, x = self._operation(stmt)
        prim = op.primitive
        if prim is operator.pos and isinstance(stmt.value, gast.Name):
            found = below(op.args[0], dom)
        elif op.kwargs or not (_member(prim, PROMOTING) or _member(prim, DOMINATING) or (
                floating(prim) and len(op.args) == 1)):
            found = 0
        else:
            found = 0
            for a in op.args:
                found |= below(a, dom)
        if x is not None:  # in_place(value, x): x's dtype where x is an array
            found &= below(ir.name(x), dom)
        return found

    # -- one update ----------------------------------------------------------------------
    def kept(self, stmt, binop, old) -> bool:
        """Whether ``binop`` (``x op v``) already is what ``x op= v`` leaves."""
        item = getattr(stmt, "item_update", None)
        if item is not None:
            base, _, index = item
            v = binop.op.args[1]
            if base not in self.inexact and not (isinstance(v, gast.Constant)
                                                 and isinstance(v.value, (int, bool))):
                # y[1:] += x of an array not known to be floating (np.arange(3),
                # np.array([1, 2]), a bool mask): NumPy updates the view in place and
                # refuses a float result ('same_kind'), where y[1:] = y[1:] + x
                # truncates; in_place checks the array's dtype as the code runs (an
                # element, y[0] += x, is a NumPy scalar there and truncates, as in NumPy)
                return False
            return base in self.arrayish or any(
                isinstance(n, gast.Slice) for n in gast.walk(index))
        if old in self.scalars:
            return True  # a number or NumPy scalar: += rebinds it
        if old not in self.never_0d:
            return False
        prim = binop.op.primitive
        x, v = binop.op.args
        if not (isinstance(x, gast.Name) and x.id == old):
            return False
        self.update = binop
        block, k, _ = self.blocks[id(binop)]
        inexact = old in self.inexact
        if inexact or self._floating(v):
            # x floating: v's dtype at most x's makes x op v x's dtype; x an integer
            # array: NumPy refuses a floating v
            return self._at_most(v, old, block, k, k, assume=True)
        return prim in CLOSED and self._at_most(v, old, block, k, k, assume=False)

    def _floating(self, node) -> bool:
        """Whether every value of ``node`` is floating (a float or complex literal)."""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (float, complex))
        return isinstance(node, gast.Name) and node.id in self.inexact

    def _reaching(self, name, block, i):
        """The statement in ``block[:i]`` that last assigned ``name`` and its index,
        if it is a plain assignment (None where a compound statement may assign it,
        or no statement of the block does)."""
        for j in range(i - 1, -1, -1):
            stmt = block[j]
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                inner = [stmt, *ir.walk_statements(stmt.body), *ir.walk_statements(stmt.orelse)]
                if any(name in ir.assigned_by(s) for s in inner):
                    return None, None
                continue
            if name in ir.assigned_by(stmt) and not ir.is_update(stmt):
                simple = isinstance(stmt, gast.Assign) and len(ir.target_names(stmt)) == 1 \
                    and getattr(stmt, "op", None) is not None
                return (stmt, j) if simple else (None, None)
        return None, None

    def _unchanged(self, name, block, i, k) -> bool:
        """Whether ``name`` holds at the update (``block[k]`` of its block) the value
        it held at ``block[i]``."""
        if name in self.stable:
            return True
        if block is not self.blocks[id(self.update)][0]:
            return False
        for stmt in block[i:k]:
            inner = [stmt]
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                inner += [*ir.walk_statements(stmt.body), *ir.walk_statements(stmt.orelse)]
            if any(name in ir.assigned_by(s) and not ir.is_update(s) for s in inner):
                return False
        return True

    def _at_most(self, node, x, block, i, k, assume, depth=0) -> bool:
        """Whether the dtype of ``node`` -- its value at ``block[i]`` -- is at most
        ``x``'s at the update ``block[k]`` (``x`` an array; floating if ``assume``)."""
        if depth > 20:
            return False
        if isinstance(node, gast.Constant):
            value = node.value
            return assume and isinstance(value, (int, float)) and not isinstance(value, bool)
        if not isinstance(node, gast.Name):
            return False
        name = node.id
        if name == x and self._unchanged(x, block, i, k):
            return True
        if self.dominates(name, x):
            return True
        if name in self.floats and name in self.stable:
            return assume  # a Python float argument: NumPy's weak scalar
        stmt, j = self._reaching(name, block, i)
        if stmt is None and name in self.stable and isinstance(self.defs[name][0], gast.Assign):
            stmt = self.defs[name][0]  # its one value, computed elsewhere
            block, j, _ = self.blocks[id(stmt)]
        if stmt is None:
            return False
        op, updated = self._operation(stmt)
        prim, args = op.primitive, op.args

        def at_most(a):
            return self._at_most(a, x, block, j, k, assume, depth + 1)

        def floating_arg(a):
            if isinstance(a, gast.Constant):
                return isinstance(a.value, (int, float)) and not isinstance(a.value, bool)
            return isinstance(a, gast.Name) and a.id in self.inexact

        if updated is not None and not at_most(ir.name(updated)):
            return False
        if prim is operator.pos and isinstance(stmt.value, (gast.Name, gast.Constant)):
            return at_most(args[0])
        if op.kwargs.keys() - _REDUCTION_KEYWORDS:
            return False
        if _member(prim, DOMINATING) and len(args) == 1:
            return at_most(args[0])
        if assume and len(args) == 1 and (floating(prim) or (
                _member(prim, SAME_DTYPE) and floating_arg(args[0]))):
            return at_most(args[0])
        if assume and _member(prim, PROMOTING) and not op.kwargs \
                and all(floating_arg(a) for a in args):
            return all(at_most(a) for a in args)
        return False
