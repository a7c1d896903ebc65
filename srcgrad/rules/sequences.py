"""Rules of functions of 1-D sequences: convolution, interpolation, search.

``np.convolve`` is linear in each operand (one ``@linear`` declaration; the
adjoint correlates the cotangent, placed in the full output, with the other
operand).  ``np.interp`` is piecewise linear in ``x`` and linear in ``fp``,
``left`` and ``right``, and smooth in the knots ``xp`` between them.  At a
knot, ``x`` takes the slope of the interval to its right; outside the knots,
slope 0.  A constant ``period`` wraps the knots around (srcgrad refuses to
differentiate the period itself, as it refuses any parameter a rule holds
constant).
``np.searchsorted`` returns indices: no derivative.
"""

import numpy as np

from ..runtime import convolve_grads, interp_grads, periodic_knots, unbroadcast
from .derive import linear
from .registry import adjoint, nondifferentiable, tangent


@linear(np.convolve, "a", "v")
def convolve(out, d_out, a, v, mode="full"):
    return convolve_grads(d_out, a, v, mode)


@adjoint(np.interp, "x", "xp", "fp", "left", "right")
def interp(out, d_out, x, xp, fp, left=None, right=None, period=None):
    """Inside the knots ``out = fp[i] + s (x - xp[i])`` with the interval's
    slope ``s``: its knots get ``s (t - 1)`` and ``-s t`` (``t`` how far along
    the interval ``x`` lies); ``left`` and ``right`` the cotangents of the
    points below and above the knots.  With a ``period`` (a constant: srcgrad
    refuses to differentiate it), the knots as NumPy lays them out -- ``xp %
    period`` sorted, one more at each end from the other end
    (:func:`~srcgrad.runtime.periodic_knots`); each of those gets its
    cotangent as above, summed back to the knot it copies."""
    if period is not None:
        knots, places = periodic_knots(xp, period)
        values = np.asarray(fp)[places]
        at = np.asarray(x, dtype=np.float64) % abs(period)
        g_at, g_values = interp_grads(d_out, at, knots, values)
        i = np.clip(np.searchsorted(knots, at, side="right") - 1, 0, len(knots) - 2)
        width = knots[i + 1] - knots[i]
        moved = d_out * (values[i + 1] - values[i]) / width
        g_knots = np.bincount(np.ravel(i), np.ravel(moved * ((at - knots[i]) / width - 1)),
                              len(knots)) \
            - np.bincount(np.ravel(i + 1), np.ravel(moved * (at - knots[i]) / width), len(knots))
        return (g_at, np.bincount(places, g_knots, len(places) - 2),
                np.bincount(places, np.real(g_values), len(places) - 2)
                + 1j * np.bincount(places, np.imag(g_values), len(places) - 2)
                if np.iscomplexobj(g_values) else np.bincount(places, g_values, len(places) - 2),
                0.0, 0.0)
    g_x, g_fp = interp_grads(d_out, x, xp, fp, left, right)
    knots = np.asarray(xp)
    i = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, len(knots) - 2)
    width = knots[i + 1] - knots[i]
    t = (x - knots[i]) / width
    moved = d_out * (np.asarray(fp)[i + 1] - np.asarray(fp)[i]) / width \
        * ((x >= knots[0]) & (x <= knots[-1]))
    g_xp = np.bincount(np.ravel(i), np.ravel(moved * (t - 1)), len(knots)) \
        - np.bincount(np.ravel(i + 1), np.ravel(moved * t), len(knots))
    return (g_x, np.asarray(g_xp, dtype=np.result_type(knots, 1.0)), g_fp,
            unbroadcast(d_out * (x < knots[0]), left),
            unbroadcast(d_out * (x > knots[-1]), right))


@tangent(np.interp, "x", "xp", "fp", "left", "right")
def interp_tangent(out, x, xp, fp, left=None, right=None, period=None, *, d_x, d_xp, d_fp,
                   d_left, d_right):
    """The slope of ``x``'s interval times ``d_x``; the tangents of the interval's
    two values, weighted as the values are; its knots' tangents times
    ``s (t - 1)`` and ``-s t``; ``left``'s below the knots, ``right``'s above.
    With a ``period``: the same on the knots NumPy lays out (``left`` and
    ``right`` are not used)."""
    if period is not None:
        knots, places = periodic_knots(xp, period)
        values = np.asarray(fp)[places]
        at = np.asarray(x, dtype=np.float64) % abs(period)
        i = np.clip(np.searchsorted(knots, at, side="right") - 1, 0, len(knots) - 2)
        width = knots[i + 1] - knots[i]
        t = np.clip((at - knots[i]) / width, 0, 1)
        slope = (values[i + 1] - values[i]) / width
        moved = np.asarray(d_fp)[places]
        shifted = np.asarray(d_xp)[places]
        return (np.asarray(d_x * slope, dtype=out.dtype),
                np.asarray(slope * (shifted[i] * (t - 1) - shifted[i + 1] * t), dtype=out.dtype),
                np.asarray(moved[i] * (1 - t) + moved[i + 1] * t, dtype=out.dtype), None, None)
    knots = np.asarray(xp)
    values = np.asarray(fp)
    i = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, len(knots) - 2)
    width = knots[i + 1] - knots[i]
    t = np.clip((x - knots[i]) / width, 0, 1)
    inside = (x >= knots[0]) * (x <= knots[-1])
    moved = np.asarray(d_fp)
    term = moved[i] * (1 - t) + moved[i + 1] * t
    if left is not None:
        term = term * (x >= knots[0])
    if right is not None:
        term = term * (x <= knots[-1])
    slope = (values[i + 1] - values[i]) / width * inside
    shifted = np.asarray(d_xp)
    return (np.asarray(d_x * slope, dtype=out.dtype),  # np.interp computes in float64
            np.asarray(slope * (shifted[i] * (t - 1) - shifted[i + 1] * t), dtype=out.dtype),
            np.asarray(term, dtype=out.dtype),
            np.asarray(d_left * (x < knots[0]), dtype=out.dtype),
            np.asarray(d_right * (x > knots[-1]), dtype=out.dtype))


nondifferentiable(np.searchsorted)
