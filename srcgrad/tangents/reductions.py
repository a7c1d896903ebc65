"""Tangent rules of reductions (see srcgrad/rules/reductions.py for the adjoint rules).

A reduction's tangent is a reduction too: the linear ones (sum, mean, cumsum)
apply themselves to the tangent, the others reduce the tangent weighted by the
local derivative over the same ``axis``, ending with the call's ``keepdims``.
Where a weight depends on ``out`` it is first broadcast back over the reduced
axes (``np.expand_dims(out, axis)`` unless ``axis`` is None or ``keepdims``).
Only NumPy primitives are used, not the runtime helpers of the adjoint rules
(``prod_except``, ``extremum_grad``, ``norm_grad``), so the generated tangent
code can be differentiated again.

The conventions are the adjoint rules': tied extrema share the tangent equally
(the tangent is the mean of their tangents), ``np.prod`` is exact when some
elements are zero, and ``np.std``/``np.linalg.norm`` have the subgradient 0
where their value is 0.
"""

import numpy as np

from ..rules.registry import tangent


@tangent(np.sum, "a")
@tangent(np.ndarray.sum, "a", name="np.ndarray.sum")
def sum_(out, a, axis=None, *, keepdims=False, d_a):
    if keepdims:
        return np.sum(d_a, axis=axis, keepdims=True)
    if axis is None:
        return np.sum(d_a)
    return np.sum(d_a, axis=axis)


@tangent(np.mean, "a")
@tangent(np.ndarray.mean, "a", name="np.ndarray.mean")
def mean(out, a, axis=None, *, keepdims=False, d_a):
    if keepdims:
        return np.mean(d_a, axis=axis, keepdims=True)
    if axis is None:
        return np.mean(d_a)
    return np.mean(d_a, axis=axis)


@tangent(np.prod, "a")
@tangent(np.ndarray.prod, "a", name="np.ndarray.prod")
def prod(out, a, axis=None, *, keepdims=False, d_a):
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


@tangent(np.max, "a")
@tangent(np.amax, "a")
@tangent(np.ndarray.max, "a", name="np.ndarray.max")
@tangent(np.min, "a")
@tangent(np.amin, "a")
@tangent(np.ndarray.min, "a", name="np.ndarray.min")
def extremum(out, a, axis=None, *, keepdims=False, d_a):
    """The mean of the tangents of the tied maxima (or minima): the elements equal
    to the result."""
    if axis is None or keepdims:
        hit = a == out
    else:
        hit = a == np.expand_dims(out, axis)
    return (np.sum(d_a * hit, axis=axis, keepdims=keepdims)
            / np.sum(hit, axis=axis, keepdims=keepdims, dtype=out.dtype))


@tangent(np.var, "a")
@tangent(np.ndarray.var, "a", name="np.ndarray.var")
def var(out, a, axis=None, *, ddof=0, keepdims=False, d_a):
    """``2 / count * sum((a - mean) * d_a)``: the centred tangent's mean term
    vanishes against the centred ``a``."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = np.size(a) / np.size(out) - ddof
    return np.sum(centred * d_a, axis=axis, keepdims=keepdims) * (2 / count)


@tangent(np.std, "a")
@tangent(np.ndarray.std, "a", name="np.ndarray.std")
def std(out, a, axis=None, *, ddof=0, keepdims=False, d_a):
    """The variance's tangent over ``2 * out``; 0 where the deviation is 0."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = np.size(a) / np.size(out) - ddof
    return (np.sum(centred * d_a, axis=axis, keepdims=keepdims)
            / (count * np.where(out == 0, 1, out)))


@tangent(np.linalg.norm, "x", name="np.linalg.norm")
def norm(out, x, ord=None, axis=None, keepdims=False, d_x=None):
    """Vector p-norms (ord None, 2, 1, inf, -inf, 0, p) and the Frobenius norm,
    as in the adjoint rule: 0 where the norm is 0, the inf-norms' ties share the
    tangent equally.  Other matrix norms fail the assertion.  ``np.multiply``
    rather than ``*``: ``x`` may be a list (``np.linalg.norm([dx, dy])``)."""
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


@tangent(np.cumsum, "a")
@tangent(np.ndarray.cumsum, "a", name="np.ndarray.cumsum")
def cumsum(out, a, axis=None, d_a=None):
    if axis is None:
        return np.cumsum(d_a)
    return np.cumsum(d_a, axis=axis)
