"""Algebraic rewrites of operations before they are differentiated.

The forward statement stays as the user wrote it; only the operation its
derivative is taken from changes, to one whose rule is cheaper.  ``x * x``
differentiated as a product gives ``x`` two contributions, ``d_t * x`` each,
added together (three passes over the data); differentiated as ``x ** 2`` it
gives one, ``d_t * (2 * x)``.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(x * x)
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> program = normalize(parse_function(f))
    >>> simplify(program)
    >>> program.body[0].op.label, program.body[0].op.primitive is operator.pow
    ('*', True)

Sound when: the forward statement is never touched (recomputation copies the
statement's value, ``x * x``, not the operation), so the value is the user's
whatever the rewrite.  ``x * x`` -> ``x ** 2`` needs the two operands to be one
value: the same name, read by one statement at one time -- in a loop too,
where the name is reused across iterations.  ``d_t * (2 * x)`` equals
``d_t * x + d_t * x`` up to rounding (``2 * x`` is exact).  The shift-neutral
extrema are sound for the reason given below, whatever ``z`` holds.
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import ir


def simplify(program: ir.Program) -> None:
    """Rewrite, in place, the operations of ``program`` that have a cheaper form,
    and note in ``program.neutral`` the shift-neutral extrema (below)."""
    for stmt in ir.walk_statements(program.body):
        op = getattr(stmt, "op", None)
        if op is not None and op.primitive is operator.mul and not op.kwargs \
                and _same_name(*op.args):
            two = gast.Constant(value=2, kind=None)
            stmt.op = ir.Op(operator.pow, [op.args[0], two], {}, op.node, op.label)
    program.neutral = shift_neutral(program)


# -- shift-neutral extrema -------------------------------------------------------
#
# The stable log-softmax subtracts the row maximum, ``m = np.max(z, axis=1,
# keepdims=True); s = z - m``, then uses ``s`` only in ways that a shift of each
# row cannot change: ``s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))``,
# ``e / np.sum(e, ...)``.  The output does not depend on ``m`` at all, so its
# cotangent is exactly zero; computing it (a row sum, a comparison with the
# maximum, a tie count) only adds rounding noise.  ``m`` is then left out of the
# differentiated values, as if it were wrapped in ``stop_gradient``.
#
# Each value derived from ``s`` gets a kind: SHIFT (moves by the row's shift),
# SCALE (is multiplied by the exponential of it) or, once the shift cancels,
# nothing.  Any other use of a SHIFT or SCALE value gives up.
#
# Sound when: the output is G(z - m) with G(s + c) = G(s) for every row-constant
# c; then it equals G(z) and its derivative with respect to m is exactly zero
# (which z is -- even one updated in between -- does not matter).  m must be
# row-constant along the axis the sums reduce (keepdims, the same integer
# axis), assigned once and read once; every derived value is assigned once,
# by a top-level statement (a loop or branch would give a name several values),
# and is not an output.

_SHIFT, _SCALE = "shift", "scale"
_EXTREMA = {np.max, np.amax, np.min, np.amin, np.ndarray.max, np.ndarray.min}
_SUMS = {np.sum, np.ndarray.sum}


def shift_neutral(program: ir.Program) -> set[str]:
    """Names of extrema ``m`` (``np.max(z, axis=a, keepdims=True)``) whose only
    use is ``z - m`` and whose shift the output cannot see.

        >>> import numpy as np
        >>> def f(z):
        ...     m = np.max(z, axis=1, keepdims=True)
        ...     s = z - m
        ...     return np.sum(s - np.log(np.sum(np.exp(s), axis=1, keepdims=True)))
        >>> from ..frontend.parse import parse_function
        >>> from ..normalize.normalizer import normalize
        >>> sorted(shift_neutral(normalize(parse_function(f))))
        ['m']
    """
    top = {t: stmt for stmt in program.body for t in ir.target_names(stmt)}
    uses: dict[str, list] = {}
    for stmt in ir.walk_statements(program.body):
        for name in ir.names_in(stmt):
            uses.setdefault(name, []).append(stmt)
    counts, _ = ir.definitions(program.body)
    output = set(ir.names_in(program.output))
    found = set()
    for name, stmt in top.items():
        axis = _keepdims_axis(getattr(stmt, "op", None), _EXTREMA)
        if axis is None or counts.get(name) != 1 or name in output:
            continue
        users = uses.get(name, [])
        op = getattr(users[0], "op", None) if len(users) == 1 else None
        if op is None or op.primitive is not operator.sub or op.kwargs \
                or not _same_name(op.args[0], stmt.op.args[0]) or not _is(op.args[1], name):
            continue
        if _cancels(ir.target_names(users[0])[0], axis, program.body, uses, counts, output):
            found.add(name)
    return found


def _cancels(start, axis, body, uses, counts, output) -> bool:
    """Whether every value derived from ``start`` (shifted along ``axis``) is
    used only where the shift cancels.  Straight-line code, in order: each
    operand's kind is known before its use."""
    kinds = {start: _SHIFT}
    for stmt in body:
        if not set(ir.names_in(stmt)) & set(kinds):
            continue
        target = ir.target_names(stmt)
        op = getattr(stmt, "op", None)
        if op is None or len(target) != 1 or not isinstance(stmt, gast.Assign) \
                or counts.get(target[0]) != 1:
            return False  # a loop, a branch, an update: not one operation
        kind = _derived(op, kinds, axis)
        if kind is False:
            return False
        if kind is not None:
            kinds[target[0]] = kind
    top = {id(stmt) for stmt in body}
    return all(name not in output and all(id(u) in top for u in uses.get(name, []))
               for name in kinds)


def _derived(op, kinds, axis):
    """The kind of ``op``'s result (None: the shift cancelled), or False."""
    args = [kinds.get(a.id) if isinstance(a, gast.Name) else None for a in op.args]
    prim = op.primitive
    if prim is np.exp and args == [_SHIFT] and not op.kwargs:
        return _SCALE
    if prim is np.log and args == [_SCALE] and not op.kwargs:
        return _SHIFT
    if prim in _SUMS and args == [_SCALE] and _keepdims_axis(op, _SUMS) == axis:
        return _SCALE
    if prim is operator.sub and args == [_SHIFT, _SHIFT] and not op.kwargs:
        return None
    if prim is operator.truediv and args == [_SCALE, _SCALE] and not op.kwargs:
        return None
    return False


def _keepdims_axis(op, primitives):
    """``a`` for ``prim(x, axis=a, keepdims=True)`` with ``prim`` in ``primitives``."""
    try:
        if op is None or op.primitive not in primitives or len(op.args) != 1 \
                or not isinstance(op.args[0], gast.Name) or set(op.kwargs) != {"axis", "keepdims"}:
            return None
    except TypeError:  # an unhashable primitive
        return None
    axis, keep = op.kwargs["axis"], op.kwargs["keepdims"]
    if isinstance(keep, gast.Constant) and keep.value is True \
            and isinstance(axis, gast.Constant) and type(axis.value) is int:
        return axis.value
    return None


def _is(node, name) -> bool:
    return isinstance(node, gast.Name) and node.id == name


def _same_name(a, b) -> bool:
    return isinstance(a, gast.Name) and isinstance(b, gast.Name) and a.id == b.id


__all__ = ["simplify"]
