"""Rules of reductions: sums, means, products, extrema, moments, norms, cumulative
sums and products, and their NaN-skipping ``nan`` variants, both modes.

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
``np.prod`` and ``np.cumprod`` use the product of the other elements, so they
are exact when some elements are zero; ``np.std`` and ``np.linalg.norm`` give
the subgradient 0 where their value is 0.  The means and moments divide by
``size_of(a)`` (:func:`~srcgrad.runtime.size_of`), ``np.size`` that leaves a
Dask array lazy (NumPy's converts it, computing all of it).  The ``nan`` reductions
(``np.nansum``, ``np.nanmean``, ...) are their plain twins over the elements
that are not NaN: those get no cotangent and their tangents are ignored.
"""

import numpy as np

from ..runtime import (
    cumprod_grad,
    extremum_grad,
    extremum_kept_grad,
    norm_grad,
    prod_except,
    reverse_cumsum,
    signum,
    size_of,
    unreduce,
)
from .derive import alias, linear
from .registry import adjoint, nondifferentiable, tangent


@linear(np.sum, "a", keywords=("axis",), unused=("initial",))
def sum_(out, d_out, a, axis=None, *, dtype=None, keepdims=False, initial=None, where=True):
    """``initial`` adds a constant; ``where`` leaves the masked-out elements out
    (no cotangent); ``dtype`` is the sum's (the tangent is summed in it too)."""
    if where is True:
        return unreduce(d_out, a, axis, keepdims)
    return np.where(where, unreduce(d_out, a, axis, keepdims), 0)


@adjoint(np.bincount, "weights", name="np.bincount")
def bincount(out, d_out, x, weights=None, minlength=0):
    """The weights summed by bin (a segment sum, ``np.bincount(idx, weights=w)``),
    linear in them: each weight gets the cotangent of its bin, in its dtype."""
    return np.asarray(np.broadcast_to(d_out, np.shape(out))[x], dtype=np.result_type(weights))


@tangent(np.bincount, "weights", name="np.bincount")
def bincount_tangent(out, x, weights=None, minlength=0, *, d_weights):
    return np.bincount(x, weights=d_weights, minlength=minlength)


@linear(np.mean, "a", keywords=("axis",))
def mean(out, d_out, a, axis=None, *, dtype=None, keepdims=False, where=True):
    """With ``where``, the mean of the elements it keeps: each gets the
    cotangent over their count along ``axis``."""
    if where is not True:
        return np.where(where, unreduce(d_out, a, axis, keepdims), 0) / np.sum(
            np.broadcast_to(where, np.shape(a)), axis=axis, keepdims=True, dtype=out.dtype)
    if axis is None:  # folded at inlining: the common full mean reads like a hand-written one
        return unreduce(d_out / size_of(a), a, None, keepdims)
    return unreduce(d_out, a, axis, keepdims) * (size_of(out) / size_of(a))


@adjoint(np.prod, "a")
def prod(out, d_out, a, axis=None, *, dtype=None, keepdims=False, initial=None, where=True):
    """``initial`` multiplies the product; an element ``where`` leaves out counts as 1
    and gets no cotangent."""
    if where is not True:
        others = np.where(where, prod_except(np.where(where, a, 1), axis), 0)
    else:
        others = prod_except(a, axis)
    if initial is not None:
        others = others * initial
    return unreduce(d_out, a, axis, keepdims) * others


@tangent(np.prod, "a")
def prod_tangent(out, a, axis=None, *, dtype=None, keepdims=False, initial=None, where=True,
                 d_a):
    """d out / d a_i is the product of the other elements: the product of the
    nonzero ones over a_i (1 for a zero a_i), times the product of the zero
    ones other than a_i.  That is 1 when there are none, 0 when there are
    several, and the one zero element itself when there is one: 0 as well,
    but written so that it moves when generated code is differentiated again
    (``zero_left``, the sum of the other zero elements).  An element ``where``
    leaves out counts as 1 with no tangent; ``initial`` multiplies it all."""
    if where is True:
        zero = np.equal(a, 0)  # not a == 0: a may be a list
        nonzero = np.where(zero, 1, a)
        at_zeros = np.where(zero, a, 0)
        moved = d_a
    else:  # (the rule's parameters are the caller's names: never assigned here)
        zero = np.equal(a, 0) & where
        nonzero = np.where(zero | np.logical_not(where), 1, a)
        at_zeros = np.where(zero, a, 0)
        moved = np.where(where, d_a, 0)
    zeros_left = np.sum(zero, axis=axis, keepdims=True) - zero
    zero_left = np.sum(at_zeros, axis=axis, keepdims=True) - at_zeros
    others = (np.prod(nonzero, axis=axis, keepdims=True) / nonzero
              * ((zeros_left == 0) + zero_left * (zeros_left == 1)))
    if initial is None:
        return np.sum(moved * others, axis=axis, keepdims=keepdims)
    return np.sum(moved * others, axis=axis, keepdims=keepdims) * initial


@adjoint(np.max, "a")
@adjoint(np.amax, "a")
@adjoint(np.nanmax, "a")
def max_(out, d_out, a, axis=None, *, keepdims=False, initial=None, where=True):
    """Tied maxima share the cotangent equally; with ``initial`` or ``where``,
    those of the elements ``where`` keeps (none where ``initial`` is larger)."""
    if initial is None and where is True:
        return extremum_grad(d_out, out, a, axis, keepdims)
    return extremum_kept_grad(d_out, out, a, axis, keepdims, where)


@adjoint(np.min, "a")
@adjoint(np.amin, "a")
@adjoint(np.nanmin, "a")
def min_(out, d_out, a, axis=None, *, keepdims=False, initial=None, where=True):
    """Tied minima share the cotangent equally (as :func:`max_`)."""
    if initial is None and where is True:
        return extremum_grad(d_out, out, a, axis, keepdims)
    return extremum_kept_grad(d_out, out, a, axis, keepdims, where)


@tangent(np.max, "a")
@tangent(np.amax, "a")
@tangent(np.min, "a")
@tangent(np.amin, "a")
@tangent(np.nanmax, "a")
@tangent(np.nanmin, "a")
def extremum_tangent(out, a, axis=None, *, keepdims=False, initial=None, where=True, d_a):
    """The mean of the tangents of the tied maxima (or minima): the elements equal
    to the result (and kept by ``where``; none, a tangent 0, where ``initial`` wins)."""
    if axis is None or keepdims:
        hit = a == out
    else:
        hit = a == np.expand_dims(out, axis)
    if where is not True:
        hit = hit & where
    if initial is None:
        return (np.sum(d_a * hit, axis=axis, keepdims=keepdims)
                / np.sum(hit, axis=axis, keepdims=keepdims, dtype=out.dtype))
    return (np.sum(d_a * hit, axis=axis, keepdims=keepdims)
            / np.maximum(np.sum(hit, axis=axis, keepdims=keepdims, dtype=out.dtype), 1))


@adjoint(np.ptp, "a")
def ptp(out, d_out, a, axis=None, *, keepdims=False):
    """``max - min``: the maxima's share of the cotangent minus the minima's."""
    return (extremum_grad(d_out, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims)
            - extremum_grad(d_out, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims))


@tangent(np.ptp, "a")
def ptp_tangent(out, a, axis=None, *, keepdims=False, d_a):
    """The mean tangent of the tied maxima minus that of the tied minima."""
    high = np.max(a, axis=axis, keepdims=True)
    low = np.min(a, axis=axis, keepdims=True)
    return (np.sum(d_a * (a == high), axis=axis, keepdims=keepdims)
            / np.sum(a == high, axis=axis, keepdims=keepdims, dtype=high.dtype)
            - np.sum(d_a * (a == low), axis=axis, keepdims=keepdims)
            / np.sum(a == low, axis=axis, keepdims=keepdims, dtype=low.dtype))


@adjoint(np.var, "a")
def var(out, d_out, a, axis=None, *, ddof=0, keepdims=False):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = size_of(a) / size_of(out) - ddof
    return unreduce(np.real(d_out), a, axis, keepdims) * np.conj(centred) * (2 / count)


@tangent(np.var, "a")
def var_tangent(out, a, axis=None, *, ddof=0, keepdims=False, d_a):
    """``2 / count * Re(sum(conj(a - mean) * d_a))``: the centred tangent's mean
    term vanishes against the centred ``a``; the variance of a complex ``a`` is
    the mean of ``|a - mean|^2``, real, hence the conjugate and the real part."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = size_of(a) / size_of(out) - ddof
    return np.real(np.sum(np.conj(centred) * d_a, axis=axis, keepdims=keepdims)) * (2 / count)


@adjoint(np.std, "a")
def std(out, d_out, a, axis=None, *, ddof=0, keepdims=False):
    """Subgradient 0 where the standard deviation is 0."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    scale = unreduce(np.real(d_out) / np.where(out == 0, 1, out), a, axis, keepdims)
    count = size_of(a) / size_of(out) - ddof
    return scale * np.conj(centred) / count


@tangent(np.std, "a")
def std_tangent(out, a, axis=None, *, ddof=0, keepdims=False, d_a):
    """The variance's tangent over ``2 * out``; 0 where the deviation is 0."""
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = size_of(a) / size_of(out) - ddof
    return (np.real(np.sum(np.conj(centred) * d_a, axis=axis, keepdims=keepdims))
            / (count * np.where(out == 0, 1, out)))


@adjoint(np.linalg.norm, "x", name="np.linalg.norm")
def norm(out, d_out, x, ord=None, axis=None, keepdims=False):  # noqa: A002 - mirrors numpy
    """Vector p-norms (ord None, 2, 1, inf, -inf, p) and matrix norms (``'fro'``,
    ``'nuc'``, 2, -2, 1, -1, inf, -inf); subgradient 0 at x = 0, tied extreme
    rows or columns (and singular values) share the cotangent."""
    if ord is None or ord == "fro":
        return (unreduce(np.real(d_out) / np.where(out == 0, 1, out), x, axis, keepdims)
                * np.conj(x))
    return norm_grad(d_out, out, x, ord, axis, keepdims)


@tangent(np.linalg.norm, "x", name="np.linalg.norm")
def norm_tangent(out, x, ord=None, axis=None, keepdims=False, d_x=None):  # noqa: A002
    """As the adjoint, and the inf-norms' ties share the tangent equally.
    ``np.multiply`` rather than ``*``: ``x`` may be a list
    (``np.linalg.norm([dx, dy])``).  The matrix norms 2, -2 and ``'nuc'`` go
    through the singular vectors (``diag(u^T dX v)``), 1, -1, inf and -inf
    through the extreme column or row sums of ``|x|``.  A complex ``x`` has a
    real norm: each term is ``Re(conj(x) dx) / |x|``-like (``signum`` is
    ``conj(x) / |x|``, ``u^H dX v`` for the singular values)."""
    if ord is None or ord == "fro":
        return (np.real(np.sum(np.multiply(np.conj(x), d_x), axis=axis, keepdims=keepdims))
                / np.where(out == 0, 1, out))
    if axis is None:
        matrix = np.ndim(x) == 2
    elif isinstance(axis, int):
        matrix = False
    else:
        matrix = len(axis) == 2
    if matrix:
        if axis is None:
            xm = np.asarray(x)
            dm = d_x
        else:
            xm = np.moveaxis(x, axis, (-2, -1))
            dm = np.moveaxis(d_x, axis, (-2, -1))
        if ord in (2, -2, "nuc"):
            factors = np.linalg.svd(xm, full_matrices=False)
            ds = np.real(np.sum(np.conj(factors[0])
                                * (dm @ np.conj(np.swapaxes(factors[2], -1, -2))), axis=-2))
            if ord == "nuc":
                t = np.sum(ds, axis=-1)
            elif ord == 2:
                t = ds[..., 0]
            else:
                t = ds[..., -1]
        else:
            if ord in (1, -1):
                over = -2
            else:
                over = -1
            sums = np.sum(np.abs(xm), axis=over)
            terms = np.real(np.sum(signum(xm) * dm, axis=over))
            if ord in (1, float("inf")):
                hit = sums == np.max(sums, axis=-1, keepdims=True)
            else:
                hit = sums == np.min(sums, axis=-1, keepdims=True)
            t = np.sum(terms * hit, axis=-1) / np.sum(hit, axis=-1, dtype=out.dtype)
        if keepdims:
            if axis is None:
                return np.expand_dims(t, (0, 1))
            return np.expand_dims(t, axis)
        return t
    if ord == 0:  # the count of nonzero elements
        return np.zeros_like(out)
    if ord == 1:
        return np.real(np.sum(signum(x) * d_x, axis=axis, keepdims=keepdims))
    if ord == 2:
        return (np.real(np.sum(np.multiply(np.conj(x), d_x), axis=axis, keepdims=keepdims))
                / np.where(out == 0, 1, out))
    if axis is None or keepdims:
        scale = out
    else:
        scale = np.expand_dims(out, axis)
    if ord in (float("inf"), float("-inf")):  # not np.inf: a literal ord folds this test
        hit = np.abs(x) == scale
        return (np.real(np.sum(signum(x) * d_x * hit, axis=axis, keepdims=keepdims))
                / np.sum(hit, axis=axis, keepdims=keepdims, dtype=out.dtype))
    ratio = np.abs(x) / np.where(scale == 0, 1, scale)
    return np.real(np.sum(signum(x) * ratio ** (ord - 1) * d_x, axis=axis, keepdims=keepdims))


@linear(np.cumsum, "a", keywords=("axis",))
def cumsum(out, d_out, a, axis=None):
    return reverse_cumsum(d_out, a, axis)


@adjoint(np.cumprod, "a")
def cumprod(out, d_out, a, axis=None):
    """Exact where some elements are zero (see cumprod_grad)."""
    return cumprod_grad(d_out, out, a, axis)


@tangent(np.cumprod, "a")
def cumprod_tangent(out, a, axis=None, *, d_a):
    """``out * cumsum(d_a / a)`` before the first zero; after it, with ``kept``
    the cumulative product of the nonzero elements: ``kept`` times the tangent
    of the one zero after one zero, 0 after more.  The terms that are 0 in
    value are written so that they move when generated code is differentiated
    again (``at_zero``, the values of the zero elements), as in ``np.prod``."""
    if axis is None:
        flat = np.ravel(a)
        d_flat = np.ravel(d_a)
        along = 0
    else:
        flat = a
        d_flat = d_a
        along = axis
    zero = np.equal(flat, 0)
    nonzero = np.where(zero, 1, flat)
    zeros = np.cumsum(zero, axis=along)
    kept = np.cumprod(nonzero, axis=along)
    ratios = np.cumsum(np.where(zero, 0, d_flat) / nonzero, axis=along)
    d_zero = np.cumsum(np.where(zero, d_flat, 0), axis=along)
    at_zero = np.cumsum(np.where(zero, flat, 0), axis=along)
    both = np.cumsum(np.where(zero, d_flat * flat, 0), axis=along)
    return kept * ((zeros == 0) * ratios + (zeros == 1) * (d_zero + at_zero * ratios)
                   + (zeros == 2) * (d_zero * at_zero - both))


# -- the NaN-ignoring reductions: NaN elements are left out, and get no cotangent --

@adjoint(np.nansum, "a")
def nansum(out, d_out, a, axis=None, *, keepdims=False):
    return np.where(np.isnan(a), 0, unreduce(d_out, a, axis, keepdims))


@tangent(np.nansum, "a")
def nansum_tangent(out, a, axis=None, *, keepdims=False, d_a):
    return np.sum(np.where(np.isnan(a), 0, d_a), axis=axis, keepdims=keepdims)


@adjoint(np.nanmean, "a")
def nanmean(out, d_out, a, axis=None, *, keepdims=False):
    count = np.sum(np.logical_not(np.isnan(a)), axis=axis, keepdims=True, dtype=out.dtype)
    return np.where(np.isnan(a), 0, unreduce(d_out, a, axis, keepdims) / count)


@tangent(np.nanmean, "a")
def nanmean_tangent(out, a, axis=None, *, keepdims=False, d_a):
    return (np.sum(np.where(np.isnan(a), 0, d_a), axis=axis, keepdims=keepdims)
            / np.sum(np.logical_not(np.isnan(a)), axis=axis, keepdims=keepdims, dtype=out.dtype))


@adjoint(np.nanprod, "a")
def nanprod(out, d_out, a, axis=None, *, keepdims=False):
    """``np.prod``'s rule with NaN elements taken as 1."""
    nan = np.isnan(a)
    return np.where(nan, 0, unreduce(d_out, a, axis, keepdims)
                    * prod_except(np.where(nan, 1, a), axis))


@tangent(np.nanprod, "a")
def nanprod_tangent(out, a, axis=None, *, keepdims=False, d_a):
    """``np.prod``'s tangent with NaN elements taken as 1 that do not move."""
    nan = np.isnan(a)
    clean = np.where(nan, 1, a)
    zero = np.equal(clean, 0)
    nonzero = np.where(zero, 1, clean)
    at_zeros = np.where(zero, clean, 0)
    zeros_left = np.sum(zero, axis=axis, keepdims=True) - zero
    zero_left = np.sum(at_zeros, axis=axis, keepdims=True) - at_zeros
    others = (np.prod(nonzero, axis=axis, keepdims=True) / nonzero
              * ((zeros_left == 0) + zero_left * (zeros_left == 1)))
    return np.sum(np.where(nan, 0, d_a) * others, axis=axis, keepdims=keepdims)


@adjoint(np.nanvar, "a")
def nanvar(out, d_out, a, axis=None, *, ddof=0, keepdims=False):
    valid = np.logical_not(np.isnan(a))
    centred = np.where(valid, a - np.nanmean(a, axis=axis, keepdims=True), 0)
    count = np.sum(valid, axis=axis, keepdims=True, dtype=out.dtype) - ddof
    return unreduce(d_out, a, axis, keepdims) * centred * (2 / count)


@tangent(np.nanvar, "a")
def nanvar_tangent(out, a, axis=None, *, ddof=0, keepdims=False, d_a):
    valid = np.logical_not(np.isnan(a))
    centred = np.where(valid, a - np.nanmean(a, axis=axis, keepdims=True), 0)
    count = np.sum(valid, axis=axis, keepdims=keepdims, dtype=out.dtype) - ddof
    return np.sum(centred * np.where(valid, d_a, 0), axis=axis, keepdims=keepdims) * (2 / count)


@adjoint(np.nanstd, "a")
def nanstd(out, d_out, a, axis=None, *, ddof=0, keepdims=False):
    """Subgradient 0 where the standard deviation is 0."""
    valid = np.logical_not(np.isnan(a))
    centred = np.where(valid, a - np.nanmean(a, axis=axis, keepdims=True), 0)
    count = np.sum(valid, axis=axis, keepdims=True, dtype=out.dtype) - ddof
    return unreduce(d_out / np.where(out == 0, 1, out), a, axis, keepdims) * centred / count


@tangent(np.nanstd, "a")
def nanstd_tangent(out, a, axis=None, *, ddof=0, keepdims=False, d_a):
    valid = np.logical_not(np.isnan(a))
    centred = np.where(valid, a - np.nanmean(a, axis=axis, keepdims=True), 0)
    count = np.sum(valid, axis=axis, keepdims=keepdims, dtype=out.dtype) - ddof
    return (np.sum(centred * np.where(valid, d_a, 0), axis=axis, keepdims=keepdims)
            / (count * np.where(out == 0, 1, out)))


@adjoint(np.nancumsum, "a")
def nancumsum(out, d_out, a, axis=None):
    return np.where(np.isnan(a), 0, reverse_cumsum(d_out, a, axis))


@tangent(np.nancumsum, "a")
def nancumsum_tangent(out, a, axis=None, *, d_a):
    return np.cumsum(np.where(np.isnan(a), 0, d_a), axis=axis)


for _name in ("sum", "mean", "prod", "max", "min", "var", "std", "cumsum", "cumprod"):
    alias(getattr(np.ndarray, _name), getattr(np, _name), name=f"np.ndarray.{_name}")


nondifferentiable(np.argmax, np.argmin, np.argsort, np.count_nonzero, np.any, np.all)
nondifferentiable(np.lexsort)  # positions, as np.argsort's (review s37 R5-2)
nondifferentiable(np.nanargmax, np.nanargmin)
nondifferentiable(size_of)  # np.size that leaves a Dask array lazy: a count, in the rules above
nondifferentiable(np.ndarray.argmax, name="np.ndarray.argmax")
nondifferentiable(np.ndarray.argmin, name="np.ndarray.argmin")
nondifferentiable(np.ndarray.argsort, name="np.ndarray.argsort")
nondifferentiable(np.ndarray.any, name="np.ndarray.any")
nondifferentiable(np.ndarray.all, name="np.ndarray.all")
