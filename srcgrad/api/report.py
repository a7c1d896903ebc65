"""``srcgrad.saved``: what a policy keeps for the adjoint sweep, in bytes.

It runs the split-mode forward function of ``fn`` on the given arguments and
lists each residual it returns -- arguments, intermediate values, tapes of
loops (with how many entries they hold), snapshots of checkpointed loops, the
residuals of called functions -- with its shape, dtype and size, and the total.
Comparing two policies' reports shows what recomputing buys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..pipeline import Options
from .arguments import differentiable_value
from .compiled import compile_function


@dataclass(frozen=True)
class SavedValue:
    name: str
    kind: str          # "array", "scalar", "tape", "snapshots", "residuals", "other"
    shape: tuple
    dtype: str
    nbytes: int
    entries: int = 1


def _nbytes(value) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, (float, int, complex, np.generic)):
        return np.asarray(value).itemsize
    return 0


def _describe(name, value) -> SavedValue:
    if isinstance(value, np.ndarray):
        return SavedValue(name, "array", value.shape, str(value.dtype), value.nbytes)
    if isinstance(value, (float, int, np.generic)):
        return SavedValue(name, "scalar", (), type(value).__name__, _nbytes(value))
    if isinstance(value, list) and name.endswith("_tape"):
        return SavedValue(name, "tape", (), "", _nbytes(value), len(value))
    if isinstance(value, dict):
        return SavedValue(name, "snapshots", (), "", _nbytes(value), len(value))
    if isinstance(value, tuple):
        return SavedValue(name, "residuals", (), "", _nbytes(value), len(value))
    return SavedValue(name, "other", (), type(value).__name__, _nbytes(value))


class SavedReport:
    """The residuals of one forward sweep; ``print`` it for a table."""

    def __init__(self, policy, values):
        self.policy = policy
        self.values = values
        self.total = sum(v.nbytes for v in values)

    def __iter__(self):
        return iter(self.values)

    def __str__(self):
        rows = [f"saved by policy {self.policy!r}:",
                f"  {'name':<16} {'kind':<10} {'shape':<14} {'dtype':<9} {'bytes':>12}"]
        for v in self.values:
            shape = "x".join(map(str, v.shape)) if v.shape else (
                f"{v.entries} entries" if v.kind in ("tape", "snapshots", "residuals") else "")
            rows.append(f"  {v.name:<16} {v.kind:<10} {shape:<14} {v.dtype:<9} {v.nbytes:>12,}")
        rows.append(f"  {'total':<52} {self.total:>12,}")
        return "\n".join(rows)


def saved(fn, *args, wrt=None, policy="save", optimize=True) -> SavedReport:
    """Run ``fn``'s forward sweep under ``policy`` and report what it saves."""
    positions = tuple(i for i, a in enumerate(args) if differentiable_value(a)) \
        if wrt is None else ((wrt,) if isinstance(wrt, int) else tuple(wrt))
    options = Options(mode="vjp", wrt=positions, single=False, policy=policy, optimize=optimize)
    compiled = compile_function(fn, options)
    _, residuals = compiled.functions[0](*args)
    names = compiled.generated.residuals
    return SavedReport(policy, [_describe(n, v) for n, v in zip(names, residuals)])
