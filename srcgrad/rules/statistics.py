"""Rules of the functions of ordinary statistics code, both modes: quantiles
(``np.median``, ``np.quantile``, ``np.percentile``), weighted means
(``np.average``), covariances (``np.cov``, ``np.corrcoef``), polynomials
(``np.polyval``, ``np.vander``, ``np.polyfit``), ``np.correlate``, ``np.meshgrid`` and
``np.linalg.multi_dot``, and the means of Python's ``statistics`` module.
Second derivatives (reverse mode over tangent code) go through all of them: the tangent rules are written in NumPy
operations that have rules, and the few runtime helpers they call have rules
of their own (the quantiles' weighted sum, ``in_dtype_of``, and the linear
pieces of the weighted means and covariances: ``weights_like``, ``cov_rows``,
``cov_product``).

A quantile with NumPy's default linear interpolation is a weighted sum of the
two sorted elements around it (:func:`~srcgrad.runtime.quantile_weights`), so
both its rules are that weighted sum, of the tangent or transposed to the
cotangent; another interpolation ``method`` is a weighted sum of one or two
sorted elements too, at the virtual position NumPy's own quantile of the
positions ``0 .. n - 1`` gives.  ``np.average``'s weights, ``np.cov``'s ``y`` and
``np.polyval``'s coefficients are differentiable as well; ``np.cov``'s
``fweights``/``aweights`` and ``np.average(..., returned=True)`` are refused
the same way.  ``np.digitize`` gives bin numbers: no derivative; ``np.histogram``'s
counts have none in the data either, but a weighted histogram's sums are
linear in the weights, and edges spaced between the data's extremes move
with them (``density=True`` is refused).
"""

import math
import statistics

import numpy as np

from ..runtime import (
    elements_cotangent,
    average_grads,
    binned,
    binned_grad,
    convolve_grads,
    corrcoef_grads,
    cotangent_at,
    cov_grads,
    cov_product,
    cov_product_grads,
    cov_rows,
    cov_rows_back,
    histogram_grads,
    in_dtype_of,
    multi_dot_grads,
    quantile_grad,
    quantile_jvp,
    unbroadcast,
    weights_back,
    weights_like,
    zero_tangent,
)
from .derive import linear
from .registry import adjoint, nondifferentiable, tangent


@adjoint(np.median, "a")
def median(out, d_out, a, axis=None, *, keepdims=False):
    return quantile_grad(d_out, a, 0.5, axis)


@tangent(np.median, "a")
def median_tangent(out, a, axis=None, *, keepdims=False, d_a):
    return quantile_jvp(d_a, a, 0.5, axis, out)


@adjoint(np.quantile, "a")
def quantile(out, d_out, a, q, axis=None, *, method="linear", keepdims=False):
    """Another ``method`` puts the quantile at another virtual position of the
    sorted elements (an element for ``"lower"``, ``"higher"``, ``"nearest"``,
    halfway between two for ``"midpoint"``): NumPy's own quantile of the
    positions ``0 .. n - 1`` is that position, and the linear method's weights
    at it (``q = position / (n - 1)``) are the method's."""
    if method == "linear":
        return quantile_grad(d_out, a, q, axis)
    n = np.size(a) if axis is None else np.prod(np.take(np.shape(a), axis))
    at = np.quantile(np.arange(n), q, method=method) / max(n - 1, 1)
    return quantile_grad(d_out, a, at, axis)


@tangent(np.quantile, "a")
def quantile_tangent(out, a, q, axis=None, *, method="linear", keepdims=False, d_a):
    if method == "linear":
        return quantile_jvp(d_a, a, q, axis, out)
    n = np.size(a) if axis is None else np.prod(np.take(np.shape(a), axis))
    at = np.quantile(np.arange(n), q, method=method) / max(n - 1, 1)
    return quantile_jvp(d_a, a, at, axis, out)


@adjoint(np.percentile, "a")
def percentile(out, d_out, a, q, axis=None, *, method="linear", keepdims=False):
    """As ``np.quantile``'s, at ``q / 100``."""
    if method == "linear":
        return quantile_grad(d_out, a, np.true_divide(q, 100), axis)
    n = np.size(a) if axis is None else np.prod(np.take(np.shape(a), axis))
    at = np.percentile(np.arange(n), q, method=method) / max(n - 1, 1)
    return quantile_grad(d_out, a, at, axis)


@tangent(np.percentile, "a")
def percentile_tangent(out, a, q, axis=None, *, method="linear", keepdims=False, d_a):
    if method == "linear":
        return quantile_jvp(d_a, a, np.true_divide(q, 100), axis, out)
    n = np.size(a) if axis is None else np.prod(np.take(np.shape(a), axis))
    at = np.percentile(np.arange(n), q, method=method) / max(n - 1, 1)
    return quantile_jvp(d_a, a, at, axis, out)


@adjoint(quantile_jvp, "t", "a", name="quantile_jvp")
def quantile_jvp_adjoint(out, d_out, t, a, q, axis, like):
    """For second derivatives (reverse mode over tangent code): the tangent of
    a quantile is linear in ``t``; its weights stay put as ``a`` moves (they
    change only where two elements swap places), so ``a`` gets zeros."""
    return (unbroadcast(quantile_grad(d_out, a, q, axis), t),
            in_dtype_of(np.zeros(np.shape(a)), a))


@tangent(quantile_jvp, "t", "a", name="quantile_jvp")
def quantile_jvp_tangent(out, t, a, q, axis, like, *, d_t, d_a):
    return quantile_jvp(d_t, a, q, axis, like), in_dtype_of(np.zeros(np.shape(out)), out)


@adjoint(np.average, "a", "weights")
def average(out, d_out, a, axis=None, weights=None, *, keepdims=False):
    return average_grads(out, d_out, a, axis, weights, keepdims)


@tangent(np.average, "a", "weights")
def average_tangent(out, a, axis=None, weights=None, *, keepdims=False, d_a, d_weights):
    """``sum(d_a * w + (a - out) * d_w) / sum(w)`` for the weights ``w`` laid
    out as ``a`` (:func:`~srcgrad.runtime.weights_like`, linear, has rules of
    its own); without weights the mean of ``d_a``."""
    shape = np.shape(out)
    if weights is None:
        return in_dtype_of(np.reshape(np.mean(d_a, axis=axis, keepdims=True), shape), out), 0.0
    w = weights_like(weights, a, axis)
    total = np.sum(w, axis=axis, keepdims=True)
    centred = a - np.reshape(out, np.shape(total))
    by_a = np.sum(d_a * w, axis=axis, keepdims=True)
    by_weights = np.sum(centred * weights_like(d_weights, a, axis), axis=axis, keepdims=True)
    return (in_dtype_of(np.reshape(by_a / total, shape), out),
            in_dtype_of(np.reshape(by_weights / total, shape), out))


@adjoint(np.cov, "m", "y")
def cov(out, d_out, m, y=None, rowvar=True, bias=False, ddof=None):
    return cov_grads(d_out, m, y, rowvar, bias, ddof)


@tangent(np.cov, "m", "y")
def cov_tangent(out, m, y=None, rowvar=True, bias=False, ddof=None, *, d_m, d_y):
    """``C = Xc Xc^T / f`` for the centred rows ``Xc`` (:func:`~srcgrad.runtime.cov_rows`,
    linear, has rules of its own): its tangent is ``(Tc Xc^T + Xc Tc^T) / f``
    for the centred rows ``Tc`` of the tangents (:func:`~srcgrad.runtime.cov_product`;
    zeros for the other input)."""
    if y is None:
        x = cov_rows(m, rowvar)
    else:
        x = np.concatenate([cov_rows(m, rowvar), cov_rows(y, rowvar)], axis=0)
    xc = x - np.mean(x, axis=1, keepdims=True)
    fact = np.shape(x)[1] - ((0 if bias else 1) if ddof is None else ddof)
    shape = np.shape(out)
    if y is None:
        moved = cov_product(cov_rows(d_m, rowvar), xc)
        return in_dtype_of(np.reshape(moved / fact, shape), out), 0.0
    t_m = np.concatenate([cov_rows(d_m, rowvar), cov_rows(np.zeros(np.shape(y)), rowvar)], axis=0)
    t_y = np.concatenate([cov_rows(np.zeros(np.shape(m)), rowvar), cov_rows(d_y, rowvar)], axis=0)
    return (in_dtype_of(np.reshape(cov_product(t_m, xc) / fact, shape), out),
            in_dtype_of(np.reshape(cov_product(t_y, xc) / fact, shape), out))


@adjoint(np.corrcoef, "x", "y")
def corrcoef(out, d_out, x, y=None, rowvar=True):
    return corrcoef_grads(out, d_out, x, y, rowvar)


@tangent(np.corrcoef, "x", "y")
def corrcoef_tangent(out, x, y=None, rowvar=True, *, d_x, d_y):
    """``R = C / sqrt(d d^T)`` for the covariance ``C`` and its diagonal ``d``:
    its tangent is ``T / sqrt(d d^T) - R (r_i + r_j) / 2`` for the tangent
    ``T`` of ``C`` (as in :func:`cov_tangent`) and the rates ``r = diag(T) / d``."""
    c = np.atleast_2d(np.cov(x, y, rowvar))
    d = np.diag(c)
    r = np.reshape(out, np.shape(c))
    if y is None:
        rows = cov_rows(x, rowvar)
        t_x = cov_rows(d_x, rowvar)
    else:
        rows = np.concatenate([cov_rows(x, rowvar), cov_rows(y, rowvar)], axis=0)
        t_x = np.concatenate([cov_rows(d_x, rowvar), cov_rows(np.zeros(np.shape(y)), rowvar)],
                             axis=0)
        t_y = np.concatenate([cov_rows(np.zeros(np.shape(x)), rowvar), cov_rows(d_y, rowvar)],
                             axis=0)
    xc = rows - np.mean(rows, axis=1, keepdims=True)
    fact = np.shape(rows)[1] - 1
    c_x = np.reshape(in_dtype_of(np.reshape(cov_product(t_x, xc) / fact, np.shape(c)), c),
                     np.shape(c))
    rate_x = np.diag(c_x) / d
    moved_x = (c_x / np.sqrt(np.outer(d, d))
               - 0.5 * r * (rate_x[:, np.newaxis] + rate_x[np.newaxis, :]))
    if y is None:
        return in_dtype_of(np.reshape(moved_x, np.shape(out)), out), 0.0
    c_y = np.reshape(in_dtype_of(np.reshape(cov_product(t_y, xc) / fact, np.shape(c)), c),
                     np.shape(c))
    rate_y = np.diag(c_y) / d
    moved_y = (c_y / np.sqrt(np.outer(d, d))
               - 0.5 * r * (rate_y[:, np.newaxis] + rate_y[np.newaxis, :]))
    return (in_dtype_of(np.reshape(moved_x, np.shape(out)), out),
            in_dtype_of(np.reshape(moved_y, np.shape(out)), out))


@adjoint(np.polyfit, "y", name="np.polyfit")
def polyfit(out, d_out, x, y, deg):
    """A least-squares fit: the coefficients are ``pinv(V) y`` for the
    Vandermonde matrix ``V`` of ``x`` (of full rank), linear in ``y``; ``x``
    is a constant (a moving ``x`` is refused, located) and so are the
    options (weights ``w``, ``full``, ``cov``: refused as arguments)."""
    g = np.broadcast_to(d_out, np.shape(out))
    return in_dtype_of(np.linalg.pinv(np.vander(x, deg + 1)).T @ g, y)


@tangent(np.polyfit, "y", name="np.polyfit")
def polyfit_tangent(out, x, y, deg, d_y):
    return in_dtype_of(np.polyfit(x, d_y, deg), out)


@adjoint(np.polyval, "p", "x")
def polyval(out, d_out, p, x):
    """``out = sum p[i] x ** (n - 1 - i)``: ``p[i]`` gets the cotangent times
    that power, ``x`` the cotangent times the derivative polynomial at ``x``."""
    powers = np.vander(np.ravel(x), len(p))
    by_power = np.reshape(np.ravel(np.broadcast_to(d_out, np.shape(out))) @ powers, np.shape(p))
    return in_dtype_of(by_power, p), in_dtype_of(unbroadcast(d_out * np.polyval(np.polyder(p), x), x), x)


@tangent(np.polyval, "p", "x")
def polyval_tangent(out, p, x, *, d_p, d_x):
    return (in_dtype_of(np.polyval(d_p, x), out),
            in_dtype_of(np.polyval(np.polyder(p), x) * d_x, out))


@linear(np.polyder, "p")
def polyder(out, d_out, p, m=1):
    """Linear in the coefficients: the ``m``-th derivative scales coefficient
    ``i`` (of the power ``n - 1 - i``) by the falling factorial of its power and
    drops the last ``m``, so the transpose scales the cotangent back and pads
    it with zeros.  np.polyval's tangent calls it: hvp differentiates it again
    (review s36 R4-13: np.polyval's hvp was refused)."""
    powers = np.arange(np.shape(p)[0] - 1, -1, -1)
    scale = np.prod([powers - k for k in range(m)] + [np.ones_like(powers)], axis=0)
    g = np.broadcast_to(d_out, np.shape(out))
    # (np.polyder of a polynomial of degree below m is [0.]: cut to p's length,
    # where the scale is 0 anyway)
    return in_dtype_of(np.concatenate([g, np.zeros(m, dtype=g.dtype)])[:np.shape(p)[0]] * scale, p)


@adjoint(np.vander, "x")
def vander(out, d_out, x, N=None, increasing=False):
    """``out[i, j] = x[i] ** k[j]`` for the powers ``k``: its derivative is
    ``k[j] x[i] ** (k[j] - 1)`` (0 for the power 0)."""
    k = np.arange(np.shape(out)[1]) if increasing else np.arange(np.shape(out)[1])[::-1]
    column = np.asarray(x)[:, np.newaxis]
    return in_dtype_of(np.sum(d_out * k * column ** np.maximum(k - 1, 0), axis=1), x)


@tangent(np.vander, "x")
def vander_tangent(out, x, N=None, increasing=False, *, d_x):
    k = np.arange(np.shape(out)[1]) if increasing else np.arange(np.shape(out)[1])[::-1]
    column = np.asarray(x)[:, np.newaxis]
    return in_dtype_of(k * column ** np.maximum(k - 1, 0) * np.asarray(d_x)[:, np.newaxis], out)


@linear(np.correlate, "a", "v")
def correlate(out, d_out, a, v, mode="valid"):
    """``np.correlate(a, v)`` is ``np.convolve(a, v[::-1])`` for real values."""
    d_a, d_reversed = convolve_grads(d_out, a, np.ravel(v)[::-1], mode)
    return d_a, np.reshape(np.ravel(d_reversed)[::-1], np.shape(v)) if np.ndim(d_reversed) \
        else d_reversed  # (0.0: no cotangent)


@adjoint(np.meshgrid, "xi")
def meshgrid(out, d_out, *xi, copy=True, sparse=False, indexing="xy"):
    """Grid ``i`` repeats ``xi[i]`` along every axis but its own (the first two
    axes swapped for ``'xy'``): its cotangent sums over the others."""
    found = []
    for i in range(len(xi)):
        own = (1 - i if i < 2 else i) if indexing == "xy" and len(xi) > 1 else i
        g = np.broadcast_to(cotangent_at(d_out, i), np.shape(out[i]))
        found.append(np.reshape(np.sum(g, axis=tuple(j for j in range(np.ndim(g)) if j != own)),
                                np.shape(xi[i])))
    return tuple(found)


@tangent(np.meshgrid, "xi")
def meshgrid_tangent(out, *xi, copy=True, sparse=False, indexing="xy", d_xi):
    return tuple(np.meshgrid(*d_xi, copy=copy, sparse=sparse, indexing=indexing))


@adjoint(np.linalg.multi_dot, "arrays")
def multi_dot(out, d_out, arrays):
    return multi_dot_grads(d_out, arrays)


@tangent(np.linalg.multi_dot, "arrays")
def multi_dot_tangent(out, arrays, *, d_arrays):
    """One product per operand, with that operand replaced by its tangent; up
    to four operands written out (generated code that is differentiated again
    can follow those; more are a sum over a list, as ``np.einsum``'s)."""
    if len(arrays) == 2:
        return in_dtype_of(np.dot(d_arrays[0], arrays[1]) + np.dot(arrays[0], d_arrays[1]), out)
    if len(arrays) == 3:
        return in_dtype_of(np.linalg.multi_dot([d_arrays[0], arrays[1], arrays[2]])
                           + np.linalg.multi_dot([arrays[0], d_arrays[1], arrays[2]])
                           + np.linalg.multi_dot([arrays[0], arrays[1], d_arrays[2]]), out)
    if len(arrays) == 4:
        return in_dtype_of(np.linalg.multi_dot([d_arrays[0], arrays[1], arrays[2], arrays[3]])
                           + np.linalg.multi_dot([arrays[0], d_arrays[1], arrays[2], arrays[3]])
                           + np.linalg.multi_dot([arrays[0], arrays[1], d_arrays[2], arrays[3]])
                           + np.linalg.multi_dot([arrays[0], arrays[1], arrays[2], d_arrays[3]]), out)
    return in_dtype_of(sum([np.linalg.multi_dot([d_arrays[j] if j == i else arrays[j]
                                                 for j in range(len(arrays))])
                            for i in range(len(arrays))]), out)


@linear(in_dtype_of, "d", name="in_dtype_of", call="in_dtype_of")
def in_dtype_of_(out, d_out, d, x):
    """A cast (the tangent and cotangent rules above end with it): linear in
    ``d``; ``x`` only lends its dtype."""
    return in_dtype_of(d_out, d)


@linear(weights_like, "weights", name="weights_like", call="weights_like")
def weights_like_(out, d_out, weights, a, axis):
    """``np.average``'s weights laid out as ``a`` (its tangent rule uses it):
    linear in ``weights``."""
    return weights_back(d_out, weights, a, axis)


@linear(cov_rows, "part", name="cov_rows", call="cov_rows")
def cov_rows_(out, d_out, part, rowvar):
    """``np.cov``'s input as rows of variables (its tangent rule uses it): linear."""
    return cov_rows_back(d_out, part, rowvar)


@linear(cov_product, "t", "xc", name="cov_product", call="cov_product")
def cov_product_(out, d_out, t, xc):
    """``Tc Xc^T + Xc Tc^T`` (a covariance's tangent): linear in each of ``t``, ``xc``."""
    return cov_product_grads(d_out, t, xc)


nondifferentiable(np.digitize)


@adjoint(np.histogram, "a", "weights", name="np.histogram")
def histogram(out, d_out, a, bins=10, range=None, density=None, weights=None):
    """Counts: no derivative in ``a`` (bin numbers, as ``np.digitize``'s); the
    sums of a weighted histogram: each weight its bin's cotangent; edges spaced
    between ``a``'s extremes (``bins`` a number, no ``range``): those extremes'
    (runtime ``histogram_grads``)."""
    assert density in (None, False), "np.histogram: density=True has no derivative here"
    return histogram_grads(d_out, out, a, bins, range, weights)


@tangent(np.histogram, "a", "weights", name="np.histogram")
def histogram_tangent(out, a, bins=10, range=None, density=None, weights=None, *, d_a,
                      d_weights):
    """The weights' tangents summed in the same bins (``out[1]``, the edges
    NumPy used: the same membership); the edges' tangent, where they are spaced
    between ``a``'s extremes, the extremes' tangents spread as the edges are."""
    assert density in (None, False), "np.histogram: density=True has no tangent here"
    edges = out[1]
    flat = np.ravel(a)
    moves = np.ravel(np.broadcast_to(d_a, np.shape(a)))
    low = flat == np.min(flat)
    high = flat == np.max(flat)
    k = np.arange(np.size(edges)) / (np.size(edges) - 1)
    spaced = np.ndim(bins) == 0 and range is None
    by_a = (np.sum(moves * low) / np.sum(low) * (1 - k)
            + np.sum(moves * high) / np.sum(high) * k) * spaced
    by_weights = binned(np.broadcast_to(d_weights, np.shape(a)), a, edges)
    return ((zero_tangent(out[0]), in_dtype_of(by_a, edges)),
            (by_weights, zero_tangent(edges)))


@adjoint(binned, "values", name="binned")
def binned_adjoint(out, d_out, values, a, edges):
    """For second derivatives: ``binned`` is linear in ``values``; the bins
    (``a``, ``edges``) only choose where each value goes."""
    return np.reshape(binned_grad(d_out, a, edges), np.shape(values))


@tangent(binned, "values", name="binned")
def binned_tangent(out, values, a, edges, *, d_values):
    return binned(d_values, a, edges)


# --- Python's statistics module (review s36 R4-13) ------------------------------------

@adjoint(statistics.mean, name="statistics.mean")
def stat_mean(out, d_out, data):
    """``sum(data) / len(data)``: each item gets ``1 / n`` of the cotangent."""
    return elements_cotangent([unbroadcast(d_out / len(data), x) for x in data], data)


@tangent(statistics.mean, name="statistics.mean")
def stat_mean_tangent(out, data, d_data):
    return sum(d_data) / len(data)


@adjoint(statistics.fmean, "data", "weights", name="statistics.fmean")
def stat_fmean(out, d_out, data, weights=None):
    """The mean in floats; with ``weights``, ``sum(w x) / sum(w)``: item i gets
    ``w_i / sum(w)``, weight i ``(x_i - out) / sum(w)``."""
    if weights is None:
        return elements_cotangent([d_out / len(data) for x in data], data), None
    return (elements_cotangent([d_out * w / math.fsum(weights) for w in weights], data),
            elements_cotangent([d_out * (x - out) / math.fsum(weights) for x in data], weights))


@tangent(statistics.fmean, "data", "weights", name="statistics.fmean")
def stat_fmean_tangent(out, data, weights=None, *, d_data, d_weights):
    if weights is None:
        return float(sum(d_data) / len(data)), None
    return (float(sum([w * t for w, t in zip(weights, d_data)]) / math.fsum(weights)),
            float(sum([(x - out) * t for x, t in zip(data, d_weights)]) / math.fsum(weights)))
