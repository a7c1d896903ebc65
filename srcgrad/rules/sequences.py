"""Rules of functions of 1-D sequences: convolution, interpolation, search.

``np.convolve`` is linear in each operand (one ``@linear`` declaration; the
adjoint correlates the cotangent, placed in the full output, with the other
operand).  ``np.interp`` is piecewise linear in ``x`` and linear in ``fp``; the
knots ``xp`` (and ``left``, ``right``) are constants.  At a knot, ``x`` takes
the slope of the interval to its right; outside the knots, slope 0.
``np.searchsorted`` returns indices: no derivative.
"""

import numpy as np

from ..runtime import convolve_grads, interp_grads
from .derive import linear
from .registry import adjoint, nondifferentiable, tangent


@linear(np.convolve, "a", "v")
def convolve(out, d_out, a, v, mode="full"):
    return convolve_grads(d_out, a, v, mode)


@adjoint(np.interp, "x", "fp")
def interp(out, d_out, x, xp, fp, left=None, right=None):
    return interp_grads(d_out, x, xp, fp, left, right)


@tangent(np.interp, "x", "fp")
def interp_tangent(out, x, xp, fp, left=None, right=None, *, d_x, d_fp):
    """The slope of ``x``'s interval times ``d_x``; the tangents of the interval's
    two values, weighted as the values are."""
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
    return (np.asarray(d_x * slope, dtype=out.dtype),  # np.interp computes in float64
            np.asarray(term, dtype=out.dtype))


nondifferentiable(np.searchsorted)
