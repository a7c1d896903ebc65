"""Where broadcasting bookkeeping can go, at a rule's call site.

Adjoint rules of broadcasting operations sum a cotangent back to each
operand's shape (``unbroadcast(g, x)``) and tangent rules widen an operand's
term to the output's shape (``expand(t, out)``).  Both are identities when
the operation cannot have broadcast: every operand is a scalar or shares one
shape class (see :func:`..analysis.activity.shape_classes`).  The inliner runs these
passes over each inlined rule body.

    >>> import gast, operator
    >>> from .. import ir
    >>> from ..ir.syntax import source_of
    >>> op = ir.Op(operator.mul, [ir.name("x"), gast.Constant(value=2.0, kind=None)], {}, None, "*")
    >>> call = gast.parse("unbroadcast(d_t * 2.0, x)").body[0].value
    >>> source_of(DropUnbroadcast(op, None).visit(call))
    'd_t * 2.0'
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import ir
from ..analysis.activity import SCALAR
from ..ir.syntax import walk_nodes
from ..ir.transformer import Transformer


def _elementwise(prim) -> bool:
    """Whether ``prim`` applies elementwise to operands broadcast together."""
    if isinstance(prim, np.ufunc):
        return prim.signature is None
    try:
        return prim in _ELEMENTWISE
    except TypeError:
        return False


_ELEMENTWISE = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
                operator.mod, operator.neg, operator.pos, abs, np.where, np.clip}


class DropUnbroadcast(Transformer):
    """``unbroadcast(g, x)`` -> ``g`` where the operation cannot have broadcast ``x``:
    every operand is a scalar or in ``x``'s shape class (``x * 2``, ``x * x``,
    ``np.sum(x) + 1.0``, ``y + np.tanh(y)``)."""

    def __init__(self, op, shape_class):
        # only an elementwise operation's operands broadcast against each other
        # (np.full(6, c)'s 6 is a shape, not an operand of the same kind)
        self.operands = [*op.args, *op.kwargs.values()] if _elementwise(op.primitive) else [None]
        self.shape_class = shape_class or (lambda name: name)

    def kind(self, operand):
        if isinstance(operand, gast.Name):
            return self.shape_class(operand.id)
        if isinstance(operand, gast.Constant) and isinstance(operand.value, (int, float)) \
                and not isinstance(operand.value, bool):
            return SCALAR
        return None

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id == "unbroadcast" \
                and len(node.args) == 2 and isinstance(node.args[1], gast.Name):
            target = self.kind(node.args[1])
            kinds = [self.kind(other) for other in self.operands]
            if all(k is not None and (k == target or k == SCALAR) for k in kinds):
                return node.args[0]
        return node


class DropExpand(Transformer):
    """``expand(term, out)`` -> ``term`` where the operation cannot broadcast: every
    operand is a scalar or in one shape class, and so is the moving operand."""

    def __init__(self, op, shape_class):
        self.drop = DropUnbroadcast(op, shape_class)

    def visit_Call(self, node):
        self.generic_visit(node)
        if not (isinstance(node.func, gast.Name) and node.func.id == "expand"
                and len(node.args) == 2):
            return node
        moving = [n.primal for n in gast.walk(node.args[0]) if hasattr(n, "primal")]
        kinds = [self.drop.kind(other) for other in self.drop.operands]
        if len(moving) != 1 or any(k is None for k in kinds):
            return node
        arrays = {k for k in kinds if k != SCALAR}
        own = self.drop.kind(moving[0])
        if len(arrays) <= 1 and (own in arrays or not arrays):
            return node.args[0]
        return node


# The runtime helpers that read an argument only for its shape, and its position.
_SHAPE_READS = {"unbroadcast": 1, "unreduce": 1}


def retarget_shape_reads(statements, program, classes) -> list:
    """``unbroadcast(g, y)`` -> ``unbroadcast(g, x)`` (``unreduce`` too) where
    ``y`` provably has the shape of ``x``, an argument the function never
    reassigns: the adjoint sweep then reads the argument, always at hand, and
    ``y`` need not be kept for it.

    ``classes`` is :func:`..analysis.activity.shape_classes` of ``program``.  A program that
    updates anything in place (an ``append`` can grow a list argument) is left
    as it is.

    Sound when: ``unbroadcast``/``unreduce`` read their second argument only for
    its shape; ``y``'s class is ``x`` only where ``y`` is assigned once and
    provably has ``x``'s shape (shape_classes claims nothing for a reassigned
    name, so a value that changes shape across loop iterations has no class);
    and ``x`` is an argument no statement assigns -- not at top level, in a
    branch, a loop or as a loop target -- nor updates in place, so at every
    point of the adjoint sweep it is the caller's array.  Tested by
    tests/optimize/test_optimize_soundness.py (``param_rebound_in_loop``,
    ``param_rebound_in_branch``, ``param_steady``).

        >>> import gast
        >>> from types import SimpleNamespace
        >>> from ..ir.syntax import source_of
        >>> program = SimpleNamespace(params=["x"], body=[])
        >>> stmts = gast.parse("d_y = unreduce(d_t, y)\\nd_z = d_y * 2").body
        >>> [source_of(s) for s in retarget_shape_reads(stmts, program, {"y": "x"})]
        ['d_y = unreduce(d_t, x)', 'd_z = d_y * 2']
        >>> stmts[0].comment
        'y has the shape of x'
    """
    if any(ir.is_update(stmt) for stmt in ir.walk_statements(program.body)):
        return statements
    counts, _ = ir.definitions(program.body)
    steady = {p for p in program.params if not counts.get(p)}
    stand_in = {name: cls for name, cls in classes.items()
                if cls in steady and cls != name}
    if not stand_in:
        return statements
    for stmt in ir.walk_statements(statements):
        if not isinstance(stmt, (gast.Assign, gast.Expr)):
            continue
        for node in walk_nodes(stmt.value):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
                at = _SHAPE_READS.get(node.func.id)
                if at is not None and len(node.args) > at \
                        and isinstance(node.args[at], gast.Name) \
                        and node.args[at].id in stand_in:
                    name = node.args[at].id
                    node.args[at] = ir.name(stand_in[name])
                    if not getattr(stmt, "comment", None):
                        stmt.comment = f"{name} has the shape of {stand_in[name]}"
    return statements
