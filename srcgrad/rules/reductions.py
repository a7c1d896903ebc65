"""Adjoint rules of reductions: sums, means, products, extrema, moments, norms.

A reduction over ``axis`` (None, an int or a tuple) maps an array to a smaller
one; its adjoint broadcasts the cotangent back over the reduced axes
(:func:`~srcgrad.runtime.unreduce`, which re-inserts them unless ``keepdims``)
and scales it by the local derivative.  ``keepdims`` (and ``ddof``) are
keyword-only in the rules because they follow NumPy's ``dtype``/``out``
parameters, which the rules do not mirror.  The same rule serves the function
and the ``ndarray`` method (``np.sum(x, 1)`` and ``x.sum(1)``).

Conventions: ``np.max``/``np.min`` split the cotangent equally among tied
extrema; ``np.prod`` uses the product of the other elements, so it is exact
when some elements are zero; ``np.std`` and ``np.linalg.norm`` give the
subgradient 0 where their value is 0.
"""

import numpy as np

from ..runtime import extremum_grad, norm_grad, prod_except, reverse_cumsum, unreduce
from .registry import adjoint, nondifferentiable


@adjoint(np.sum, "a")
@adjoint(np.ndarray.sum, "a", name="np.ndarray.sum")
def sum_(out, d_out, a, axis=None, *, keepdims=False):
    return unreduce(d_out, a, axis, keepdims)


@adjoint(np.mean, "a")
@adjoint(np.ndarray.mean, "a", name="np.ndarray.mean")
def mean(out, d_out, a, axis=None, *, keepdims=False):
    if axis is None:  # folded at inlining: the common full mean reads like a hand-written one
        return unreduce(d_out / np.size(a), a, None, keepdims)
    return unreduce(d_out, a, axis, keepdims) * (np.size(out) / np.size(a))


@adjoint(np.prod, "a")
@adjoint(np.ndarray.prod, "a", name="np.ndarray.prod")
def prod(out, d_out, a, axis=None, *, keepdims=False):
    return unreduce(d_out, a, axis, keepdims) * prod_except(a, axis)


@adjoint(np.max, "a")
@adjoint(np.amax, "a")
@adjoint(np.ndarray.max, "a", name="np.ndarray.max")
def max_(out, d_out, a, axis=None, *, keepdims=False):
    """Tied maxima share the cotangent equally."""
    return extremum_grad(d_out, out, a, axis, keepdims)


@adjoint(np.min, "a")
@adjoint(np.amin, "a")
@adjoint(np.ndarray.min, "a", name="np.ndarray.min")
def min_(out, d_out, a, axis=None, *, keepdims=False):
    """Tied minima share the cotangent equally."""
    return extremum_grad(d_out, out, a, axis, keepdims)


@adjoint(np.var, "a")
@adjoint(np.ndarray.var, "a", name="np.ndarray.var")
def var(out, d_out, a, axis=None, *, ddof=0, keepdims=False):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = np.size(a) / np.size(out) - ddof
    return unreduce(d_out, a, axis, keepdims) * centred * (2 / count)


@adjoint(np.std, "a")
@adjoint(np.ndarray.std, "a", name="np.ndarray.std")
def std(out, d_out, a, axis=None, *, ddof=0, keepdims=False):
    """Subgradient 0 where the standard deviation is 0."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    scale = unreduce(d_out / np.where(out == 0, 1, out), a, axis, keepdims)
    count = np.size(a) / np.size(out) - ddof
    return scale * centred / count


@adjoint(np.linalg.norm, "x", name="np.linalg.norm")
def norm(out, d_out, x, ord=None, axis=None, keepdims=False):  # noqa: A002 - mirrors numpy
    """Vector p-norms (ord None, 2, 1, inf, -inf, p) and the Frobenius norm;
    subgradient 0 at x = 0.  Other matrix norms raise MissingRuleError when the adjoint runs."""
    if ord is None or ord == "fro":
        return unreduce(d_out / np.where(out == 0, 1, out), x, axis, keepdims) * x
    return norm_grad(d_out, out, x, ord, axis, keepdims)


@adjoint(np.cumsum, "a")
@adjoint(np.ndarray.cumsum, "a", name="np.ndarray.cumsum")
def cumsum(out, d_out, a, axis=None):
    return reverse_cumsum(d_out, a, axis)


nondifferentiable(np.argmax, np.argmin, np.argsort, np.count_nonzero, np.any, np.all)
nondifferentiable(np.ndarray.argmax, name="np.ndarray.argmax")
nondifferentiable(np.ndarray.argmin, name="np.ndarray.argmin")
nondifferentiable(np.ndarray.argsort, name="np.ndarray.argsort")
nondifferentiable(np.ndarray.any, name="np.ndarray.any")
nondifferentiable(np.ndarray.all, name="np.ndarray.all")
