"""Anomaly mode's check: the first NaN or Inf in the adjoint sweep, located.

``grad(f, check_finite=True)`` (or ``SRCGRAD_ANOMALY=1``) puts a call of
:func:`check_finite` after each statement of the adjoint sweep that makes a
cotangent (:mod:`srcgrad.ad.anomaly` inserts them).  It returns nothing and
costs one ``np.isfinite`` per cotangent; on a NaN or an Inf it raises
``NonFiniteGradientError`` naming the user's file, line, column and the
expression whose adjoint made it, with the forward values that adjoint read.

    >>> import numpy as np
    >>> check_finite(np.ones(3), "model.py", 6, 18, "np.log(p)", p=np.ones(3))
    >>> p = np.array([0.5, 0.0])
    >>> check_finite(np.array([-2.0, -np.inf]), "model.py", 6, 18, "np.log(p)", p=p)
    Traceback (most recent call last):
    srcgrad.errors.NonFiniteGradientError: the adjoint of np.log(p) made a non-finite cotangent
      1 of 2 elements are not finite (1 inf, 0 nan), the first at index (1,)
      the forward values it reads:
        p: shape (2,), min 0.0, max 0.5, 0 non-finite
      File "model.py", line 6, column 19
"""

from __future__ import annotations

import numpy as np

from .errors import error_at

__all__ = ["check_finite"]


def check_finite(cotangent, filename, lineno, col, expression, shown=None, /,
                 **forward) -> None:
    """Raise ``NonFiniteGradientError`` at ``filename:lineno:col`` (0-based
    column) when ``cotangent`` holds a NaN or an Inf; ``forward`` are the
    forward values the adjoint of ``expression`` read, described in the message
    (``shown``: the user's expression for a value srcgrad named, ``t3``)."""
    bad = _non_finite(cotangent)
    if bad is None:
        return
    lines = [f"the adjoint of {expression} made a non-finite cotangent", f"  {bad}"]
    if forward:
        lines.append("  the forward values it reads:")
        shown = shown or {}
        lines.extend(f"    {shown.get(name, name)}: {_describe(value)}"
                     for name, value in forward.items())
    raise error_at("NonFiniteGradientError", "\n".join(lines), (filename, lineno, col))


def _non_finite(value):
    """None when ``value`` is finite (or not a floating-point number or array),
    else what is wrong with it, in words."""
    if isinstance(value, (float, complex, np.inexact)):
        if np.isfinite(value):
            return None
        return f"its value is {np.asarray(value).item()!r}"
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fc":
        return None
    finite = np.isfinite(value)
    if finite.all():
        return None
    nans = int(np.count_nonzero(np.isnan(value)))
    count = value.size - int(np.count_nonzero(finite))
    first = tuple(int(i) for i in np.argwhere(~finite)[0])
    return (f"{count} of {value.size} elements are not finite ({count - nans} inf, {nans} nan), "
            f"the first at index {first}")


def _describe(value) -> str:
    """Shape, min, max and how many non-finite elements, for a forward value."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, complex, np.number, np.ndarray)):
        return type(value).__name__
    array = np.asarray(value)
    if array.dtype.kind not in "biufc" or array.size == 0:
        return f"shape {array.shape}, dtype {array.dtype}"
    bad = 0 if array.dtype.kind in "biu" else array.size - int(np.count_nonzero(
        np.isfinite(array)))
    real = array.real if array.dtype.kind == "c" else array
    if bad == array.size:
        return f"shape {array.shape}, {bad} non-finite (all)"
    # min and max of the finite elements (NumPy's min is nan where one is)
    finite = real[np.isfinite(real)] if bad else real
    return (f"shape {array.shape}, min {finite.min().item()!r}, max {finite.max().item()!r}"
            f"{' of the finite elements' if bad else ''}, {bad} non-finite")
