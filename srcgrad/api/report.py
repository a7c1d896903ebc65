"""``srcgrad.saved``: what a policy keeps for the adjoint sweep, in bytes.

It runs the split-mode forward function of ``fn`` on the given arguments and
lists each residual it returns -- arguments, intermediate values, tapes of
loops (with how many entries they hold), snapshots of checkpointed loops, the
residuals of called functions -- with its shape, dtype and size, and the total.
Comparing two policies' reports shows what recomputing buys.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace

import numpy as np

from ..pipeline import Options
from .arguments import (
    callee_arguments,
    differentiable_value,
    differentiated_at,
    is_user_object,
    object_classes,
    object_positions,
    sequence_positions,
)
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
    if args and inspect.isfunction(fn):  # (review s37 R5-6: as grad's call compiles)
        options = specialised(fn, options, args)
    compiled = compile_function(fn, options)
    _, residuals = compiled.functions[0](*args)
    names = compiled.generated.residuals
    return SavedReport(policy, [_describe(n, v) for n, v in zip(names, residuals)])


def specialised(func, options: Options, args: tuple) -> Options:
    """``options`` specialised on the example arguments as a gradient's call is:
    the functions and modules passed (``callee_arguments``), an object's class
    (its methods, ``dataclasses.replace`` of it, the classes of the layers it
    holds in a list), the fields of the objects passed."""
    wrt, count = options.wrt, len(args)
    receiver = options.receiver
    if receiver is None and is_user_object(args[0], differentiated_at(0, wrt, count)):
        receiver = type(args[0])
    return replace(options, receiver=receiver,
                   callees=callee_arguments(func, wrt, args, int(receiver is not None)),
                   objects=object_positions(args), sequences=sequence_positions(args),
                   object_classes=object_classes(tuple(map(type, args))))
