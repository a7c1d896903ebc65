"""Translation validation at run time: ``grad(f, check=True)``, ``SRCGRAD_CHECK=1``.

The forward sweep of generated code must compute exactly what ``f`` computes --
the same operations on the same values, so the same bits.  With checking on,
every call of a generated function also calls ``f`` itself (on copies of the
arguments, so an ``f`` that updates them in place sees what the generated code
saw) and compares the two values bit for bit: type, shape, dtype and every
element (NaN where NaN).  A difference raises :class:`TranslationError` naming
the function and its file and line, with both values -- the first thing to turn
on when a gradient looks suspicious.  Off by default: it doubles the forward
work.

    >>> import numpy as np
    >>> same_value(np.float64(1.5), np.float64(1.5)), same_value(1.5, np.float64(1.5))
    (True, False)
    >>> same_value((np.zeros(2), 2.0), (np.zeros(2), 2.0))
    True
"""

from __future__ import annotations

import copy
import os

import numpy as np

from ..errors import TranslationError


def enabled(check) -> bool:
    """``check`` as given, or (None) whether ``SRCGRAD_CHECK`` is set to 1."""
    if check is not None:
        return bool(check)
    return os.environ.get("SRCGRAD_CHECK", "") not in ("", "0")


def private_copies(args) -> tuple:
    """Copies of the arguments ``f`` may update in place (arrays, containers)."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a.copy())
        elif isinstance(a, (list, dict, tuple)):
            try:
                out.append(copy.deepcopy(a))
            except Exception:  # noqa: BLE001 - an uncopyable object: pass it as it is
                out.append(a)
        else:
            out.append(a)
    return tuple(out)


def same_value(a, b) -> bool:
    """Whether ``a`` and ``b`` are the same value bit for bit (tuples, lists and
    dicts element by element)."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(
            same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return type(a) is type(b) and a.keys() == b.keys() and all(
            same_value(a[k], b[k]) for k in a)
    if type(a) is not type(b):
        return False
    if isinstance(a, (np.ndarray, np.generic, float, complex)):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind in "fc":
            return bool(np.array_equal(x, y, equal_nan=True)
                        and np.array_equal(np.signbit(x.real), np.signbit(y.real)))
        return bool(np.array_equal(x, y))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - objects without a truth-valued ==
        return a is b


def verify(fn, args, value, what: str, kwargs=None, draws=None) -> None:
    """Raise :class:`TranslationError` unless ``value`` (the generated code's) is
    ``fn(*args, **kwargs)`` bit for bit; ``args`` are private copies of the
    arguments.  ``draws`` (a :class:`.draws.Draws` taken before the generated
    code ran): ``fn`` runs from the generators' states the generated code
    started from -- it draws what that code drew (review r1: another draw was
    reported as a srcgrad bug) -- and they are left as one run leaves them."""
    if draws is not None:
        draws.rewind()
    try:
        expected = fn(*args, **(kwargs or {}))
    finally:
        if draws is not None:
            draws.finish()
    if same_value(value, expected):
        return
    code = getattr(fn, "__code__", None)
    raise TranslationError(
        f"srcgrad's {what} of {getattr(fn, '__qualname__', fn)} computed another value than "
        f"the function itself -- a srcgrad bug; please report it with the function.\n"
        f"  generated code: {_describe(value)}\n  the function:   {_describe(expected)}",
        filename=getattr(code, "co_filename", None), lineno=getattr(code, "co_firstlineno", None))


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        with np.printoptions(precision=17, threshold=20):
            return f"array of shape {value.shape}, dtype {value.dtype}: {value!r}"
    return f"{type(value).__name__} {value!r}"
