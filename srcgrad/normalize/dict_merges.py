"""``a | b`` and ``a |= b`` of dicts are merges, not bitwise ors.

Normalisation maps ``|`` to :func:`operator.or_`, which carries no derivative
(a bitwise or of ints, bools, masks).  On dicts (Python 3.9) it builds a new
dict, ``b``'s items where ``b`` has the key and ``a``'s elsewhere, and each
item's derivative is that of the value it holds: differentiated as
``operator.or_`` the gradient through the merge was silently zero.  This pass
gives ``|`` the primitive :func:`~srcgrad.runtime.merged` wherever an operand
may be a dict -- every ``|`` but those with an operand certainly an array or a
number (a NumPy function's result, arithmetic on one, a constant).  Its rules
decide by the result's type as the code runs: the items' cotangents and
tangents for a dict, none for a bitwise or.  The statement's text does not
change (``a |= b`` is ``a_1 = a | b`` by then: the rebinding keeps the old
dict for whatever else holds it, which the alias checks see as any rebinding).

Sound because the rules agree with Python's ``|`` on every type it meets there.
The names certainly not dicts are kept on the program: ``d[k] = v`` on a name
that may hold one saves the item or its absence (:func:`may_hold_dict`).

    >>> from ..frontend.parse import parse_function
    >>> from ..ir.emit import unparse
    >>> from .normalizer import normalize
    >>> def f(x):
    ...     a = {'u': x[0], 'v': x[1]}
    ...     c = a | {'v': x[2] * 2}
    ...     return c['u'] + c['v'] * 3 + (x[0] > 0) | 1
    >>> program = normalize(parse_function(f))
    >>> type_dict_merges(program)
    >>> [(unparse(s.value), s.op.primitive.__name__) for s in program.body
    ...  if isinstance(s.value, gast.BinOp) and isinstance(s.value.op, gast.BitOr)]
    [('a | t5', 'merged'), ('t11 | 1', 'or_')]
"""

from __future__ import annotations

import operator

import gast

from .. import ir
from ..runtime import merged
from .attribute_reads import array_names


def type_dict_merges(program: ir.Program) -> None:
    """Retarget ``|`` whose operands may be dicts to :func:`~srcgrad.runtime.merged`;
    note on the program the names certainly not dicts (``program.not_dicts``,
    read by :func:`may_hold_dict`)."""
    arrays = array_names(program, (), entry=False)  # parameters: perhaps dicts
    program.not_dicts = arrays
    ors = [s for s in ir.walk_statements(program.body)
           if isinstance(s, gast.Assign) and getattr(s, "op", None) is not None
           and s.op.primitive is operator.or_]
    for stmt in ors:
        if not any(_certainly_not_dict(a, arrays) for a in stmt.op.args):
            stmt.op.primitive = merged


def _certainly_not_dict(node, arrays) -> bool:
    if isinstance(node, gast.Name):
        return node.id in arrays
    return isinstance(node, gast.Constant) and not isinstance(node.value, dict)


def may_hold_dict(program: ir.Program, name: str, index) -> bool:
    """Whether ``name`` may hold a dict where ``name[index] = v`` writes it, so
    that the key may be new (``d = {}; for k in keys: d[k] = ...``): the forward
    sweep then saves the item or its absence (``item_or_missing``), not the
    item itself, which is not there yet.  Not where every definition of
    ``name`` is an array, a number, a tuple or a list (``program.not_dicts``,
    ``program.sequences``), nor for an index with a slice (no dict key)."""
    return name not in getattr(program, "not_dicts", ()) \
        and name not in getattr(program, "sequences", ()) \
        and not any(isinstance(n, gast.Slice) for n in gast.walk(index))
