"""Algebraic rewrites of operations before they are differentiated.

The forward statement stays as the user wrote it; only the operation its
derivative is taken from changes, to one whose rule is cheaper.  ``x * x``
differentiated as a product gives ``x`` two contributions, ``d_t * x`` each,
added together (three passes over the data); differentiated as ``x ** 2`` it
gives one, ``d_t * (2 * x)``.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(x * x)
    >>> from .frontend import parse_function
    >>> from .normalize import normalize
    >>> program = normalize(parse_function(f))
    >>> simplify(program)
    >>> program.body[0].op.label, program.body[0].op.primitive is operator.pow
    ('*', True)
"""

from __future__ import annotations

import operator

import gast

from . import ir


def simplify(program: ir.Program) -> None:
    """Rewrite, in place, the operations of ``program`` that have a cheaper form."""
    for stmt in ir.walk_statements(program.body):
        op = getattr(stmt, "op", None)
        if op is not None and op.primitive is operator.mul and not op.kwargs \
                and _same_name(*op.args):
            two = gast.Constant(value=2, kind=None)
            stmt.op = ir.Op(operator.pow, [op.args[0], two], {}, op.node, op.label)


def _same_name(a, b) -> bool:
    return isinstance(a, gast.Name) and isinstance(b, gast.Name) and a.id == b.id


__all__ = ["simplify"]
