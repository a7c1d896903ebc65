"""Rules of reductions: sums, means, products, extrema, moments, norms, both modes.

A reduction over ``axis`` (None, an int or a tuple) maps an array to a smaller
one.  Its adjoint broadcasts the cotangent back over the reduced axes
(:func:`~srcgrad.runtime.unreduce`, which re-inserts them unless ``keepdims``)
and scales it by the local derivative; its tangent is a reduction too: the
linear ones (sum, mean, cumsum) apply themselves to the tangent (one
``@linear`` declaration), the others reduce the tangent weighted by the local
derivative over the same ``axis``, ending with the call's ``keepdims``; a
weight that depends on ``out`` is first broadcast back over the reduced axes
(``np.expand_dims(out, axis)`` unless ``axis`` is None or ``keepdims``).
``keepdims`` (and ``ddof``) are keyword-only in the rules because they follow
NumPy's ``dtype``/``out`` parameters, which the rules do not mirror.  The
``ndarray`` method (``x.sum(1)``) takes the function's rules (``np.sum(x, 1)``).

Tangent rules use only NumPy primitives, not the runtime helpers of the
adjoints (``prod_except``, ``extremum_grad``, ``norm_grad``), so generated
tangent code can be differentiated again.  Conventions, the same in both
modes: ``np.max``/``np.min`` split the derivative equally among tied extrema;
``np.prod`` uses the product of the other elements, so it is exact when some
elements are zero; ``np.std`` and ``np.linalg.norm`` give the subgradient 0
where their value is 0.
"""

import numpy as np

from ..runtime import extremum_grad, norm_grad, prod_except, reverse_cumsum, unreduce
from .derive import alias, linear
from .registry import adjoint, nondifferentiable, tangent


@linear(np.sum, "a", keywords=("axis",))
def sum_(out, d_out, a, axis=None, *, keepdims=False):
    return unreduce(d_out, a, axis, keepdims)


@linear(np.mean, "a", keywords=("axis",))
def mean(out, d_out, a, axis=None, *, keepdims=False):
    if axis is None:  # folded at inlining: the common full mean reads like a hand-written one
        return unreduce(d_out / np.size(a), a, None, keepdims)
    return unreduce(d_out, a, axis, keepdims) * (np.size(out) / np.size(a))


@adjoint(np.prod, "a")
def prod(out, d_out, a, axis=None, *, keepdims=False):
    return unreduce(d_out, a, axis, keepdims) * prod_except(a, axis)


@tangent(np.prod, "a")
def prod_tangent(out, a, axis=None, *, keepdims=False, d_a):
    """d out / d a_i is the product of the other elements: the product of the
    nonzero ones over a_i (1 for a zero a_i), times the product of the zero
    ones other than a_i.  That is 1 when there are none, 0 when there are
    several, and the one zero element itself when there is one: 0 as well,
    but written so that it moves when generated code is differentiated again
    (``zero_left``, the sum of the other zero elements)."""
    zero = np.equal(a, 0)  # not a == 0: a may be a list
    nonzero = np.where(zero, 1, a)
    at_zeros = np.where(zero, a, 0)
    zeros_left = np.sum(zero, axis=axis, keepdims=True) - zero
    zero_left = np.sum(at_zeros, axis=axis, keepdims=True) - at_zeros
    others = (np.prod(nonzero, axis=axis, keepdims=True) / nonzero
              * ((zeros_left == 0) + zero_left * (zeros_left == 1)))
    return np.sum(d_a * others, axis=axis, keepdims=keepdims)


@adjoint(np.max, "a")
@adjoint(np.amax, "a")
def max_(out, d_out, a, axis=None, *, keepdims=False):
    """Tied maxima share the cotangent equally."""
    return extremum_grad(d_out, out, a, axis, keepdims)


@adjoint(np.min, "a")
@adjoint(np.amin, "a")
def min_(out, d_out, a, axis=None, *, keepdims=False):
    """Tied minima share the cotangent equally."""
    return extremum_grad(d_out, out, a, axis, keepdims)


@tangent(np.max, "a")
@tangent(np.amax, "a")
@tangent(np.min, "a")
@tangent(np.amin, "a")
def extremum_tangent(out, a, axis=None, *, keepdims=False, d_a):
    """The mean of the tangents of the tied maxima (or minima): the elements equal
    to the result."""
    if axis is None or keepdims:
        hit = a == out
    else:
        hit = a == np.expand_dims(out, axis)
    return (np.sum(d_a * hit, axis=axis, keepdims=keepdims)
            / np.sum(hit, axis=axis, keepdims=keepdims, dtype=out.dtype))


@adjoint(np.var, "a")
def var(out, d_out, a, axis=None, *, ddof=0, keepdims=False):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = np.size(a) / np.size(out) - ddof
    return unreduce(d_out, a, axis, keepdims) * centred * (2 / count)


@tangent(np.var, "a")
def var_tangent(out, a, axis=None, *, ddof=0, keepdims=False, d_a):
    """``2 / count * sum((a - mean) * d_a)``: the centred tangent's mean term
    vanishes against the centred ``a``."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = np.size(a) / np.size(out) - ddof
    return np.sum(centred * d_a, axis=axis, keepdims=keepdims) * (2 / count)


@adjoint(np.std, "a")
def std(out, d_out, a, axis=None, *, ddof=0, keepdims=False):
    """Subgradient 0 where the standard deviation is 0."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    scale = unreduce(d_out / np.where(out == 0, 1, out), a, axis, keepdims)
    count = np.size(a) / np.size(out) - ddof
    return scale * centred / count


@tangent(np.std, "a")
def std_tangent(out, a, axis=None, *, ddof=0, keepdims=False, d_a):
    """The variance's tangent over ``2 * out``; 0 where the deviation is 0."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = np.size(a) / np.size(out) - ddof
    return (np.sum(centred * d_a, axis=axis, keepdims=keepdims)
            / (count * np.where(out == 0, 1, out)))


@adjoint(np.linalg.norm, "x", name="np.linalg.norm")
def norm(out, d_out, x, ord=None, axis=None, keepdims=False):  # noqa: A002 - mirrors numpy
    """Vector p-norms (ord None, 2, 1, inf, -inf, p) and the Frobenius norm;
    subgradient 0 at x = 0.  Other matrix norms raise MissingRuleError when the adjoint runs."""
    if ord is None or ord == "fro":
        return unreduce(d_out / np.where(out == 0, 1, out), x, axis, keepdims) * x
    return norm_grad(d_out, out, x, ord, axis, keepdims)


@tangent(np.linalg.norm, "x", name="np.linalg.norm")
def norm_tangent(out, x, ord=None, axis=None, keepdims=False, d_x=None):  # noqa: A002
    """As the adjoint, and the inf-norms' ties share the tangent equally.  Other
    matrix norms fail the assertion.  ``np.multiply`` rather than ``*``: ``x``
    may be a list (``np.linalg.norm([dx, dy])``)."""
    if ord is None or ord == "fro":
        return (np.sum(np.multiply(x, d_x), axis=axis, keepdims=keepdims)
                / np.where(out == 0, 1, out))
    if axis is None:
        assert np.ndim(x) == 1, "np.linalg.norm: only the Frobenius matrix norm has a tangent"
    elif not isinstance(axis, int) and len(axis) != 1:
        assert False, "np.linalg.norm: only the Frobenius matrix norm has a tangent"
    if ord == 0:  # the count of nonzero elements
        return np.zeros_like(out)
    if ord == 1:
        return np.sum(np.sign(x) * d_x, axis=axis, keepdims=keepdims)
    if ord == 2:
        return (np.sum(np.multiply(x, d_x), axis=axis, keepdims=keepdims)
                / np.where(out == 0, 1, out))
    if axis is None or keepdims:
        scale = out
    else:
        scale = np.expand_dims(out, axis)
    if ord in (float("inf"), float("-inf")):  # not np.inf: a literal ord folds this test
        hit = np.abs(x) == scale
        return (np.sum(np.sign(x) * d_x * hit, axis=axis, keepdims=keepdims)
                / np.sum(hit, axis=axis, keepdims=keepdims, dtype=out.dtype))
    ratio = np.abs(x) / np.where(scale == 0, 1, scale)
    return np.sum(np.sign(x) * ratio ** (ord - 1) * d_x, axis=axis, keepdims=keepdims)


@linear(np.cumsum, "a", keywords=("axis",))
def cumsum(out, d_out, a, axis=None):
    return reverse_cumsum(d_out, a, axis)


for _name in ("sum", "mean", "prod", "max", "min", "var", "std", "cumsum"):
    alias(getattr(np.ndarray, _name), getattr(np, _name), name=f"np.ndarray.{_name}")


nondifferentiable(np.argmax, np.argmin, np.argsort, np.count_nonzero, np.any, np.all)
nondifferentiable(np.ndarray.argmax, name="np.ndarray.argmax")
nondifferentiable(np.ndarray.argmin, name="np.ndarray.argmin")
nondifferentiable(np.ndarray.argsort, name="np.ndarray.argsort")
nondifferentiable(np.ndarray.any, name="np.ndarray.any")
nondifferentiable(np.ndarray.all, name="np.ndarray.all")
