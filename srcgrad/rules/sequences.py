"""Rules of functions of 1-D sequences: convolution, interpolation, search.

``np.convolve`` is linear in each operand (one ``@linear`` declaration; the
adjoint correlates the cotangent, placed in the full output, with the other
operand).  ``np.interp`` is piecewise linear in ``x`` and linear in ``fp``,
``left`` and ``right``, and smooth in the knots ``xp`` between them.  At a
knot, ``x`` takes the slope of the interval to its right; outside the knots,
slope 0.
``np.searchsorted`` returns indices: no derivative.
"""

import numpy as np

from ..runtime import convolve_grads, interp_grads, unbroadcast
from .derive import linear
from .registry import adjoint, nondifferentiable, tangent


@linear(np.convolve, "a", "v")
def convolve(out, d_out, a, v, mode="full"):
    return convolve_grads(d_out, a, v, mode)


@adjoint(np.interp, "x", "xp", "fp", "left", "right")
def interp(out, d_out, x, xp, fp, left=None, right=None):
    """Inside the knots ``out = fp[i] + s (x - xp[i])`` with the interval's
    slope ``s``: its knots get ``s (t - 1)`` and ``-s t`` (``t`` how far along
    the interval ``x`` lies); ``left`` and ``right`` the cotangents of the
    points below and above the knots."""
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
def interp_tangent(out, x, xp, fp, left=None, right=None, *, d_x, d_xp, d_fp, d_left, d_right):
    """The slope of ``x``'s interval times ``d_x``; the tangents of the interval's
    two values, weighted as the values are; its knots' tangents times
    ``s (t - 1)`` and ``-s t``; ``left``'s below the knots, ``right``'s above."""
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
