"""Elementwise terms of a steady adjoint loop computed for every step at once,
before the loop.

The adjoint of ``for t in t1: h = np.tanh(xs[t] @ W + h @ U)`` computes, in each
step, tanh's derivative ``1 - h ** 2`` of the step's output: three NumPy calls
on a small array, some 4 us of the RNN benchmark's 50 steps' 20 us each.  A
careful hand gradient computes ``1 - h ** 2`` of every step's output in one
pass over the stacked hidden states and multiplies one slice per step.  This
pass does the same where :mod:`.steady_loops` has written a loop out under its
guard: an elementwise expression of a step that reads only a value the step
restores from its tape, and numbers, is computed on the stacked values before
the loop, and the step reads its row::

    h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2  # 1 - h ** 2 of every step, at once
    for t in reversed(t1):
        d_t5 = d_h * h_terms[t]
        h = h_tape[t]  # restore: h
        ...
    del h_terms

Which values a step reads: a name ``h`` the body assigns only by its restore
``h = h_tape[t]`` holds, in step ``t``, ``h_tape[t]`` after that restore and,
before it, what the step before it (``t + 1``) restored, ``h_tape[t + 1]`` --
or, in the loop's first step (``t = n - 1``), the value ``h`` has where the
loop starts.  So the rows are ``h_tape[1:]`` then ``h`` for a read before the
restore, ``h_tape[0:]`` for one after it
(:func:`srcgrad.runtime.steps.stacked_tape`), indexed by ``t``.

Sound -- each step's term is bit for bit the one it computed -- because:

* the expression is made of ``+ - * /``, ``** 2`` (an int literal, which
  NumPy computes as ``np.square``) and negation, of the restored values and
  int or float literals: elementwise operations, each element of the result
  one IEEE operation (one rounding) of the same elements, whatever the length
  of the arrays NumPy's loops run over (no transcendental function, whose SIMD
  body and scalar tail may round differently; no other power);
* the guard gains ``stackable_tape(h_tape, 1, h)``
  (:func:`srcgrad.runtime.steps.stackable_tape`): every value the rows hold is an
  exact ``np.ndarray`` of float32 or float64 (so a Python number, the same
  dtype on both sides, takes the same loop), of one shape and dtype, and
  C-contiguous -- so row ``t`` of the result, a view, has the strides the
  step's own result would have, and what is computed from it next (a product,
  the matrix-product helpers after the loop) takes the same path; the
  guard's ``steady_tape`` of the same tape then checks only the entry that
  ``stackable_tape`` leaves out (:func:`_first_entry_only`);
* the body writes no array in place (:mod:`.steady_loops` writes out only
  straight-line assignments to names and ``append`` calls): the tape's values
  are those the steps would read;
* the values a term reads together have rows of one shape (the guard's
  ``t4.shape == y_tape[0].shape``, :func:`_same_rows`), so that the stacks pair
  row for row instead of broadcasting across the steps;
* every step of the loop runs (no ``break``), the expression raising nowhere
  the step's would not: at worst a warning, once, before the loop.

Where the guard fails the loop runs as it was, without the pass.  The terms
are deleted after the loop (an array of every step: left to the end of the
function it made the allocator give memory back and fault it in again, a
fifth of the RNN's gradient).  Runs after :mod:`.steady_loops`, in the same
cases.  Tested by tests/optimize/test_batched_steps.py.

    >>> from ..ir.emit import show_statements
    >>> from ..ir.naming import Namer
    >>> sweep = gast.parse(
    ...     "if len(t1) and steady_tape(h_tape, h.shape, 0):\\n"
    ...     "    for t in reversed(t1):\\n"
    ...     "        d_t5 = d_h * (1 - h ** 2)\\n"
    ...     "        h = h_tape[t]\\n"
    ...     "        d_h = d_t5 @ U.T\\n"
    ...     "        d_U_steps.append((d_t5, h))\\n"
    ...     "else:\\n"
    ...     "    pass\\n").body
    >>> sweep[0].steady_loop = True
    >>> print(show_statements(batch_step_terms(sweep, {"h_tape"}, Namer())))
    if len(t1) and steady_tape(h_tape[:1], h.shape, 0) and stackable_tape(h_tape, 1, h):
        h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2  # 1 - h ** 2 of every step at once (h as each step finds it: h_tape[1:], then h)
        for t in reversed(t1):
            d_t5 = d_h * h_terms[t]
            h = h_tape[t]
            d_h = d_t5 @ U.T
            d_U_steps.append((d_t5, h))
        del h_terms  # read by the loop only
    else:
        pass
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import call_to, clone, source_of, walk

_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div)
_BEFORE, _AFTER = "before", "after"   # a read before the step's restore, or after it


def batch_step_terms(backward, tapes, namer) -> list:
    """``backward`` with the elementwise terms of each loop that
    :mod:`.steady_loops` wrote out computed before it (see the module
    docstring).  ``tapes``: the indexed tapes' names."""
    for stmt in backward:
        if getattr(stmt, "steady_loop", False):
            _batch(stmt, tapes, namer)
    return backward


def restores(loop, tapes) -> dict:
    """``{name: (position, tape)}`` of the body's restores ``name = tape[t]``
    of a name the body assigns nowhere else."""
    index, found, assigned = loop.target.id, {}, {}
    for k, stmt in enumerate(loop.body):
        for name in ir.target_names(stmt):
            assigned[name] = assigned.get(name, 0) + 1
        value = getattr(stmt, "value", None)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and isinstance(value, gast.Subscript) \
                and isinstance(value.value, gast.Name) and value.value.id in tapes \
                and isinstance(value.slice, gast.Name) and value.slice.id == index:
            found[stmt.targets[0].id] = (k, value.value.id)
    return {name: where for name, where in found.items() if assigned[name] == 1}


class _Terms(gast.NodeTransformer):
    """Replaces, in the statements of one loop, each largest elementwise
    expression of restored values and numbers by its row of the terms array."""

    def __init__(self, loop, restored, namer):
        self.index, self.restored, self.namer = loop.target.id, restored, namer
        self.position = 0
        self.terms: dict = {}        # (text, reads) -> (name, the expression)

    def reads(self, node):
        """The ``(name, phase)`` pairs ``node`` reads, or None unless it is
        made of the operations and operands the pass computes at once."""
        kind = type(node)
        if kind is gast.Constant:
            return frozenset() if type(node.value) in (int, float) else None
        if kind is gast.Name:
            where = self.restored.get(node.id)
            if where is None:
                return None
            return frozenset({(node.id, _BEFORE if self.position < where[0] else _AFTER)})
        if kind is gast.UnaryOp and isinstance(node.op, gast.USub):
            return self.reads(node.operand)
        if kind is gast.BinOp:
            if isinstance(node.op, gast.Pow):
                two = node.right
                if not (isinstance(two, gast.Constant) and type(two.value) is int
                        and two.value == 2):
                    return None
                return self.reads(node.left)
            if isinstance(node.op, _ARITHMETIC):
                left, right = self.reads(node.left), self.reads(node.right)
                return None if left is None or right is None else left | right
        return None

    def _term(self, node):
        reads = self.reads(node)
        if not reads:
            return None
        key = (source_of(node), reads)
        if key not in self.terms:
            first = sorted(reads)[0][0]
            self.terms[key] = (self.namer.fresh(f"{first}_terms"), node)
        return gast.Subscript(value=ir.name(self.terms[key][0]), slice=ir.name(self.index),
                              ctx=gast.Load())

    def visit_BinOp(self, node):
        return self._term(node) or self.generic_visit(node)

    def visit_UnaryOp(self, node):
        return self._term(node) or self.generic_visit(node)


def _batch(made, tapes, namer) -> None:
    """Compute the terms of the fast loop of ``made`` (the guarded pair of
    loops) before it, in place."""
    loop = made.body[0]
    restored = restores(loop, tapes)
    if not restored:
        return
    terms = _Terms(loop, restored, namer)
    positions = {where[0] for where in restored.values()}
    for k, stmt in enumerate(loop.body):
        if k not in positions and hasattr(stmt, "value"):
            terms.position = k
            stmt.value = terms.visit(stmt.value)
    if not terms.terms:
        return
    used: dict = {}   # how many times the terms read each value, to stack it once
    for (_, reads), (_, node) in terms.terms.items():
        phases = dict(reads)
        for leaf in walk(node):
            if isinstance(leaf, gast.Name) and leaf.id in phases:
                read = (leaf.id, phases[leaf.id])
                used[read] = used.get(read, 0) + 1
    stacks, stacked, unstacked = {}, [], []
    for read in sorted(used):
        name, phase = read
        tape = restored[name][1]
        args = [ir.name(tape), gast.Constant(value=1 if phase == _BEFORE else 0, kind=None)]
        args += [ir.name(name)] if phase == _BEFORE else []
        _extend_guard(made, call_to("stackable_tape", *args))
        if phase == _BEFORE:
            _first_entry_only(made, tape, name)
        stacks[read] = call_to("stacked_tape", *clone(args))
        if used[read] > 1:   # read twice: stacked once, kept until the terms are made
            held = namer.fresh(f"{name}_steps")
            stacked.append(ir.assign(held, stacks[read]))
            stacked[-1].comment = _found(name, tape, phase)
            unstacked.append(_delete(held, "not read once the terms are made"))
            stacks[read] = ir.name(held)
    for check in _same_rows(terms.terms, restored):
        _extend_guard(made, check)
    made_terms = []
    for (text, reads), (target, node) in terms.terms.items():
        phases = dict(reads)
        made_terms.append(ir.assign(target, _Stacked(stacks, phases).visit(clone(node))))
        found = "; ".join(_found(name, restored[name][1], phase) for name, phase in sorted(reads)
                          if used[(name, phase)] == 1)
        made_terms[-1].comment = f"{text} of every step at once" + (f" ({found})" if found else "")
    made.body[:] = stacked + made_terms + unstacked + [loop] + \
        [_delete(name, "read by the loop only") for name, _ in terms.terms.values()]


def _same_rows(terms, restored) -> list:
    """The guard's checks that the values each term reads together have rows
    of one shape: ``t4.shape == y_tape[0].shape`` for a term ``y - t4``.  Each
    stack is of one shape (``stackable_tape``), but two stacks of different
    shapes broadcast against each other across the steps' axis: a ``(1, 3)``
    value's stack ``(4, 1, 3)`` minus a ``(3,)`` value's ``(4, 3)`` is ``(4, 4,
    3)``, each row every step's operand against one step's, which the
    step's ``unbroadcast`` then summed -- a gradient 3.8 times too large
    (review s36 R4-18).  With one shape the stacks' rows pair step for step.

        >>> terms = {("y - t4", frozenset({("y", _AFTER), ("t4", _BEFORE)})): ("t4_terms", None)}
        >>> [source_of(c) for c in _same_rows(terms, {"y": (1, "y_tape"), "t4": (3, "t4_tape")})]
        ['t4.shape == y_tape[0].shape']
    """
    checks = set()
    for _, reads in terms:
        shapes = sorted({f"{name}.shape" if phase == _BEFORE else f"{restored[name][1]}[0].shape"
                         for name, phase in reads})
        checks.update(f"{a} == {b}" for a, b in zip(shapes, shapes[1:]))
    return [gast.parse(check).body[0].value for check in sorted(checks)]


class _Stacked(gast.NodeTransformer):
    """A term's expression on the stacked values: each restored name it reads
    replaced by the stack of its values at every step (``phases``: the name's
    read, before or after its restore)."""

    def __init__(self, stacks, phases):
        self.stacks, self.phases = stacks, phases

    def visit_Name(self, node):
        phase = self.phases.get(node.id)
        return node if phase is None else clone(self.stacks[(node.id, phase)])


def _found(name, tape, phase) -> str:
    if phase == _BEFORE:
        return f"{name} as each step finds it: {tape}[1:], then {name}"
    return f"{name} as each step restores it: {tape}"


def _delete(name, comment) -> gast.Delete:
    stmt = gast.Delete(targets=[gast.Name(id=name, ctx=gast.Del(), annotation=None,
                                          type_comment=None)])
    stmt.comment = comment
    return stmt


def _first_entry_only(made, tape, name) -> None:
    """The guard's ``steady_tape(tape, name.shape, 0)`` reduced to the entry
    ``stackable_tape(tape, 1, name)``, which it now also makes, leaves out:
    ``steady_tape(tape[:1], name.shape, 0)`` (and ``steady_tape(tape,
    name.shape, 1)`` dropped).  The conjunction is the same: ``stackable_tape``
    holds the entries from the second on and ``name`` to exact ``np.ndarray``
    values of one shape, ``name``'s -- what ``steady_tape`` checks of them;
    and nothing between the two checks raises.  Each walk of the tape looks
    at fifty entries in the RNN benchmark: 14 us of a 700 us gradient.

        >>> made = gast.parse("if steady_tape(h_tape, h.shape, 0) and stackable_tape(h_tape, 1, h):"
        ...                   "\\n    pass").body[0]
        >>> _first_entry_only(made, "h_tape", "h")
        >>> print(source_of(made.test))
        steady_tape(h_tape[:1], h.shape, 0) and stackable_tape(h_tape, 1, h)
    """
    test = made.test
    if not (isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And)):
        return
    kept = []
    for check in test.values:
        args = getattr(check, "args", None)
        if isinstance(check, gast.Call) and isinstance(check.func, gast.Name) \
                and check.func.id == "steady_tape" and len(args) == 3 and not check.keywords \
                and isinstance(args[0], gast.Name) and args[0].id == tape \
                and source_of(args[1]) == f"{name}.shape" \
                and isinstance(args[2], gast.Constant) and type(args[2].value) is int \
                and args[2].value in (0, 1):
            if args[2].value == 1:
                continue
            args[0] = gast.Subscript(value=ir.name(tape), slice=gast.Slice(
                lower=None, upper=gast.Constant(value=1, kind=None), step=None), ctx=gast.Load())
        kept.append(check)
    test.values[:] = kept


def _extend_guard(made, check) -> None:
    test = made.test
    if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And):
        test.values.append(check)
    else:
        made.test = gast.BoolOp(op=gast.And(), values=[test, check])


__all__ = ["batch_step_terms", "restores"]
