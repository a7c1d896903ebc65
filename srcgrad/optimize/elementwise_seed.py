"""``grad``'s seed without the elementwise tail of the function's value.

``grad`` does not return the value: its adjoint sweep reads it for the seed's
dtype alone (``d_t3 = grad_seed(t3)``).  Where the function ends with the sum
(or mean) of elementwise arithmetic on arrays the adjoint sweep reads anyway
-- the benchmark's chain ends ``bb = aa * m; cc = bb + s; return np.sum(cc)``,
``aa``, ``m`` and ``s`` saved -- the forward sweep made two arrays and three
passes over them for one dtype.  This pass seeds from the operands::

    d_t3 = grad_seed(t3)
      ->  d_t3 = summed_elementwise_seed(np.sum, (aa, m, s), lambda: aa * m + s)

so that nothing reads ``bb``, ``cc`` or ``t3`` and the forward sweep drops
them.  The helper (:mod:`srcgrad.runtime.summed_products`) knows the dtype
where the operands are NumPy arrays of real floats of one shape and no
floating-point error raises; anything else calls the lambda -- the same
operations in the same order, as the function does -- and seeds from its
reduction, raising what the function raises.

Sound when (for ``grad`` only: ``value_and_grad`` returns the value, ``vjp``
is given the cotangent): the output is assigned once, at the top level, by
``np.sum(x)`` or ``np.mean(x)`` with no other argument; ``x`` and each
intermediate value inside the expression once, at the top level, by ``+``,
``-``, ``*``, ``/`` or unary ``-`` on names and Python numbers (int or float,
not bool); the adjoint sweep reads none of these names but the output, and
that once, in the seed (a value it reads is a leaf); the leaves are names holding one value all along
(arguments never assigned, names assigned once at the top level, in a
function updating nothing in place), so they hold at the seed what the
expression read.  Tested by tests/optimize/test_elementwise_seed.py.

    >>> import operator
    >>> from types import SimpleNamespace
    >>> from .. import ir
    >>> from ..ir.emit import show_statements
    >>> body = gast.parse("a = np.sin(x)\\nb = a * x\\nc = b + 2.0\\nt = np.sum(c)").body
    >>> ops = [ir.Op(np.sin, [ir.name("x")], {}, None, "np.sin"),
    ...        ir.Op(operator.mul, [ir.name("a"), ir.name("x")], {}, None, "*"),
    ...        ir.Op(operator.add, [ir.name("b"), gast.Constant(value=2.0, kind=None)], {},
    ...              None, "+"),
    ...        ir.Op(np.sum, [ir.name("c")], {}, None, "np.sum")]
    >>> for stmt, op in zip(body, ops):
    ...     stmt.op = op
    >>> program = SimpleNamespace(body=body, params=["x"], output=ir.name("t"))
    >>> sweep = gast.parse("d_t = grad_seed(t)\\nd_x = d_t * a").body
    >>> print(show_statements(seed_without_elementwise(sweep, program)))
    d_t = summed_elementwise_seed(np.sum, (a, x), lambda: a * x + 2.0)  # grad_seed(t) without a * x + 2.0
    d_x = d_t * a
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import ir
from ..ir.syntax import call_to, load_name, source_of, walk_nodes
from .summed_products import returned_definitions

_REDUCTIONS = {np.sum: "sum", np.mean: "mean"}
#: The most operands the seed's expression is made of, counted as they are looked at:
#: a longer tail (``v1 = v0 + x`` ... ``v500 = v499 + x``, ``return np.sum(v500)``)
#: keeps its plain seed -- its expression recursed past Python's limit
#: (RecursionError), and one whose values are each read twice (``b = a * a``)
#: doubles at every step.
_LARGEST = 256
_BINARY = {operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult,
           operator.truediv: gast.Div}


def seed_without_elementwise(stmts, program) -> list:
    """``grad``'s sweep ``stmts`` seeded from the operands of the elementwise
    expression whose sum or mean the function returns (see the module
    docstring); ``stmts`` unchanged where a condition fails."""
    output = program.output
    found = returned_definitions(program)
    if found is None:
        return stmts
    once, steady = found
    op = getattr(once(output.id), "op", None)
    if op is None or op.primitive not in _REDUCTIONS or op.kwargs or len(op.args) != 1 \
            or not isinstance(op.args[0], gast.Name):
        return stmts
    swept = {n.id for stmt in ir.walk_statements(stmts) for n in walk_nodes(stmt)
             if isinstance(n, gast.Name)}
    inner: list[str] = []     # the intermediate values the expression stands for
    leaves: dict[str, None] = {}
    budget = [_LARGEST]       # operands left to look at (see _LARGEST)

    def expression(node):
        """``node`` (an operand) as an expression of leaves, None where it cannot be."""
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if isinstance(node, gast.Constant):
            ok = type(node.value) in (int, float)
            return gast.Constant(value=node.value, kind=None) if ok else None
        if not isinstance(node, gast.Name):
            return None
        stmt = once(node.id)
        made = getattr(stmt, "op", None)
        if made is not None and not made.kwargs and node.id not in swept and (
                made.primitive in _BINARY and len(made.args) == 2
                or made.primitive is operator.neg and len(made.args) == 1):
            operands = [expression(arg) for arg in made.args]
            if any(o is None for o in operands):
                return None
            inner.append(node.id)
            if made.primitive is operator.neg:
                return gast.UnaryOp(op=gast.USub(), operand=operands[0])
            return gast.BinOp(left=operands[0], op=_BINARY[made.primitive](),
                              right=operands[1])
        if not steady(node.id):
            return None
        leaves[node.id] = None
        return load_name(node.id)

    value = expression(op.args[0])
    if value is None or not inner or not leaves:
        return stmts
    seeds = [stmt for stmt in stmts if isinstance(stmt, gast.Assign)
             and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name)
             and stmt.value.func.id == "grad_seed" and len(stmt.value.args) == 1
             and isinstance(stmt.value.args[0], gast.Name) and stmt.value.args[0].id == output.id]
    watched = set(inner) | {output.id}
    reads = [n.id for stmt in ir.walk_statements(stmts) for n in walk_nodes(stmt)
             if isinstance(n, gast.Name) and n.id in watched]
    if len(seeds) != 1 or reads != [output.id]:
        return stmts
    reduction = gast.Attribute(value=load_name("np"), attr=_REDUCTIONS[op.primitive],
                               ctx=gast.Load())
    operands = gast.Tuple(elts=[load_name(n) for n in leaves], ctx=gast.Load())
    thunk = gast.Lambda(args=gast.arguments(args=[], posonlyargs=[], vararg=None,
                                            kwonlyargs=[], kw_defaults=[], kwarg=None,
                                            defaults=[]), body=value)
    seeds[0].value = call_to("summed_elementwise_seed", reduction, operands, thunk)
    seeds[0].comment = f"grad_seed({output.id}) without {source_of(value)}"
    return stmts
