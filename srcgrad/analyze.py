"""Activity analysis: which values get adjoints.

A value is *varied* when it depends on a ``wrt`` argument through
differentiable operations, and *useful* when the output depends on it through
differentiable operations.  Only values that are both -- *active* -- get a
cotangent; everything else is computed by the forward sweep and never touched
by the adjoint sweep.  That keeps generated code free of adjoints of shapes,
indices, masks and constants.

    >>> import numpy as np
    >>> def f(x, y, n):
    ...     s = x.shape
    ...     z = np.sin(x) * n
    ...     w = np.cos(y)
    ...     return np.sum(z)
    >>> from .frontend import parse_function
    >>> from .normalize import normalize
    >>> program = normalize(parse_function(f))
    >>> sorted(activity(program, ["x"]).active)
    ['t1', 'x', 'z']
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ir
from .rules import registry


@dataclass
class Activity:
    varied: set[str]
    useful: set[str]

    @property
    def active(self) -> set[str]:
        return self.varied & self.useful

    def is_active(self, name: str) -> bool:
        return name in self.varied and name in self.useful


def differentiable(op: ir.Op) -> bool:
    """Whether values can flow through ``op`` to its output."""
    prim = op.primitive
    return prim is not ir.OPAQUE and not registry.is_nondifferentiable(prim)


def operand_names(op: ir.Op) -> list[str]:
    """Variables an operation reads through its operands."""
    names = []
    for arg in [*op.args, *op.kwargs.values()]:
        for n in ir.names_in(arg):
            if n not in names:
                names.append(n)
    return names


def output_names(program: ir.Program) -> list[str]:
    return ir.names_in(program.output)


def activity(program: ir.Program, wrt: list[str]) -> Activity:
    """Varied and useful sets of ``program`` for the arguments ``wrt``."""
    varied = set(wrt)
    for stmt in program.body:
        op = getattr(stmt, "op", None)
        if op is None or not differentiable(op):
            continue
        if any(n in varied for n in operand_names(op)):
            varied.update(ir.target_names(stmt))
    useful = set(output_names(program))
    for stmt in reversed(program.body):
        op = getattr(stmt, "op", None)
        if op is None or not differentiable(op):
            continue
        if any(n in useful for n in ir.target_names(stmt)):
            useful.update(operand_names(op))
    return Activity(varied, useful)
