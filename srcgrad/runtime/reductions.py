"""Adjoints of reductions: sums and means, products, extrema, norms, traces,
cumulative sums.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.  A reduction's cotangent has
the reduced shape; :func:`unreduce` puts the reduced axes back and broadcasts
it to the input's shape, which is the whole adjoint of ``np.sum`` and the core
of the others.

    >>> import numpy as np
    >>> unreduce(np.array([1.0, 2.0]), np.zeros((2, 3)), axis=1)
    array([[1., 1., 1.],
           [2., 2., 2.]])
"""

from __future__ import annotations

import math

import numpy as np

from .decompositions import matrix_norm_grad
from .namespaces import as_array, broadcast_like, foreign, namespace_of, unknown
from .structures import no_cotangent


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction of ``x`` back to ``x``'s shape.

    ``axis`` and ``keepdims`` are those of the reduction; the reduced axes are
    re-inserted (when ``keepdims`` was false) and ``g`` is broadcast along them.
    The result is a read-only view (generated code never writes into it), or,
    for small arrays, where a view costs more to make than the copy, a fresh
    array.  A Python float cotangent of a floating array takes the array's
    dtype: the seed 1.0 of a float32 function's gradient stays float32.
    """
    shape = np.shape(x)
    small = False  # materialised below: a small NumPy x with a NumPy (or number) g
    if type(x) is np.ndarray:
        if type(g) is float:
            if x.dtype.kind == "f":
                g = x.dtype.type(g)
            small = x.size <= _SMALL
        else:  # a Dask cotangent of a NumPy array stays lazy
            small = x.size <= _SMALL and (type(g) is np.ndarray or not foreign(g))
    elif foreign(x) and not foreign(g):  # made an array of x's library (CuPy mixes no NumPy)
        float_x = type(g) is float and np.dtype(x.dtype).kind == "f"
        g = namespace_of(x).asarray(g, dtype=x.dtype if float_x else None)
    if axis is not None and not keepdims:
        if no_cotangent(g):
            return 0.0
        g = _keep_reduced_axes(g, len(shape), axis)
    if small:
        out = np.empty(shape, np.result_type(g))
        out[...] = g
        return out
    if foreign(x):  # a Dask shape may hold NaN (chunk sizes unknown)
        return broadcast_like(g, x)
    return np.broadcast_to(g, shape)


# Up to this many elements, materialising a broadcast is cheaper than making the view.
_SMALL = 4096


def size_of(x):
    """``np.size(x)``, the number of elements of ``x``, without computing a Dask
    array: NumPy's ``np.size`` converts an array of another library (Dask
    computes the whole of it; NumPy then counts).  A Dask or CuPy array has its
    ``.size``, an int; a Dask array whose chunk sizes are unknown (after
    ``x[mask]``, or from a data frame) has NaN there, and its count is then a
    lazy sum of ones, of NumPy's integer type.  The adjoints and tangents of
    ``np.mean``, ``np.var`` and ``np.std`` divide by it.

        >>> size_of(np.zeros((2, 3))), size_of([1.0, 2.0]), size_of(1.5)
        (6, 2, 1)
    """
    if type(x) is np.ndarray:
        return x.size
    if not foreign(x):
        return np.size(x)
    size = x.size
    if not math.isnan(size):
        return size
    return np.sum(np.ones_like(x, dtype=np.intp))


def _keep_reduced_axes(v, ndim, axis):
    """``v``, the result of a reduction over ``axis`` without ``keepdims``, with the
    reduced axes put back as length-1 axes (so that it broadcasts against the input)."""
    if ndim == 0:  # np.sum(0-d, axis=0): NumPy takes axis 0 or -1 of a 0-d array
        return v
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    axes = tuple(sorted(a % ndim for a in axes))
    if foreign(v) and unknown(v.shape):  # Dask, chunk sizes unknown: its
        # expand_dims reshapes, which needs them; indexing with None does not
        return v[tuple(None if k in axes else slice(None) for k in range(ndim))]
    return np.expand_dims(v, axes)


def prod_except(a, axis=None):
    """For each element of ``a``, the product of the other elements that
    ``np.prod(a, axis)`` multiplies it with (exact when some are zero)."""
    a = as_array(a)
    if axis is None or a.ndim == 0:
        axes = list(range(a.ndim))
    else:
        axes = [k % a.ndim for k in ((axis,) if np.ndim(axis) == 0 else axis)]
    order = [k for k in range(a.ndim) if k not in axes] + axes
    moved = np.transpose(a, order)
    flat = moved.reshape(moved.shape[:a.ndim - len(axes)] + (-1,))
    ones = np.ones_like(flat[..., :1])
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([ones, np.flip(flat, -1)[..., :-1]], -1), -1)
    others = (left * np.flip(right, -1)).reshape(moved.shape)
    return np.transpose(others, [int(k) for k in np.argsort(order)])


def extremum_grad(g, out, a, axis=None, keepdims=False):
    """Cotangent of ``a`` in ``np.max(a, axis)`` / ``np.min``: ``g`` goes to the
    elements equal to the extremum, split equally among ties."""
    if no_cotangent(g):
        return 0.0
    a = as_array(a)
    if axis is not None and not keepdims:
        out, g = _keep_reduced_axes(out, a.ndim, axis), _keep_reduced_axes(g, a.ndim, axis)
    hit = a == out
    # ties (or NaNs): share g among the hits; a lazy array is not asked whether
    # there are any (that would compute it): it always shares, which is exact too
    if foreign(a) or np.count_nonzero(hit) != np.size(out):
        g = g / np.sum(hit, axis=axis, keepdims=True).astype(np.result_type(g))
    return g * hit


def extremum_kept_grad(g, out, a, axis=None, keepdims=False, where=True):
    """:func:`extremum_grad` of ``np.max(a, axis, initial=..., where=where)``: ``g``
    goes to the elements ``where`` keeps that equal the extremum, split among
    them; none (``initial`` the extremum, or nothing kept) gets nothing."""
    if no_cotangent(g):
        return 0.0
    a = as_array(a)
    if axis is not None and not keepdims:
        out, g = _keep_reduced_axes(out, a.ndim, axis), _keep_reduced_axes(g, a.ndim, axis)
    hit = (a == out) & where
    count = np.maximum(np.sum(hit, axis=axis, keepdims=True), 1).astype(np.result_type(g))
    return g / count * hit


def norm_grad(g, out, x, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` in ``np.linalg.norm(x, ord, axis, keepdims)``: vector
    norms and the Frobenius norm, 0 (a subgradient) where the norm is 0; the
    other matrix norms through :func:`.decompositions.matrix_norm_grad`."""
    x = as_array(x)
    vector = (x.ndim == 1) if axis is None else np.ndim(axis) == 0 or len(axis) == 1
    if np.iscomplexobj(x) and (vector or ord not in (2, -2, "nuc")):
        # a function of |x| alone: the cotangent of |x| times conj(x) / |x|
        return norm_grad(np.real(g), out, np.abs(x), ord, axis, keepdims) * np.conj(np.sign(x))
    gg, scale = unreduce(g, x, axis, keepdims), unreduce(out, x, axis, keepdims)
    if ord is None or ord == "fro" or (ord == 2 and vector):
        return gg * x / np.where(scale == 0, 1, scale)
    if not vector:
        return matrix_norm_grad(g, out, x, ord, axis, keepdims)
    if ord == 0:
        return np.zeros_like(x)
    if ord == 1:
        return gg * np.sign(x)
    if ord in (np.inf, -np.inf):
        hit = np.abs(x) == scale
        return gg * np.sign(x) * hit / np.sum(hit, axis=axis, keepdims=True).astype(x.dtype)
    ratio = np.abs(x) / np.where(scale == 0, 1, scale)
    return gg * np.sign(x) * ratio ** (ord - 1)


def trace_grad(g, a, offset=0, axis1=0, axis2=1):
    """Cotangent of ``a`` in ``np.trace(a, offset, axis1, axis2)``."""
    if no_cotangent(g):
        return 0.0
    shape, nd = np.shape(a), np.ndim(a)
    ax1, ax2 = axis1 % nd, axis2 % nd
    eye = np.eye(shape[ax1], shape[ax2], k=offset, dtype=np.result_type(g))
    if ax1 > ax2:
        eye = eye.T
    eye = eye.reshape([shape[k] if k in (ax1, ax2) else 1 for k in range(nd)])
    return np.expand_dims(g, (min(ax1, ax2), max(ax1, ax2))) * eye


def reverse_cumsum(g, a, axis=None):
    """Cotangent of ``a`` in ``np.cumsum(a, axis)``: the cumulative sum of ``g``
    from the end (over the flattened array when ``axis`` is None)."""
    if no_cotangent(g):
        return 0.0
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.ravel(g)))), np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def cumprod_grad(g, out, a, axis=None):
    """Cotangent of ``a`` in ``out = np.cumprod(a, axis)``: element ``i`` gets
    the sum over ``k >= i`` of ``g[k]`` times the product of ``a[:k + 1]`` without
    ``a[i]``.  Without zeros that is the reversed cumulative sum of ``g * out``
    over ``a``; with zeros, ``out[i - 1] * R[i]`` where ``R[i] = g[i] + a[i + 1]
    R[i + 1]``, exact."""
    if no_cotangent(g):
        return 0.0
    a = as_array(a)
    shape = a.shape
    if axis is None:
        a, out, g, axis = np.ravel(a), np.ravel(out), np.ravel(g), 0
    g = np.broadcast_to(g, np.shape(out))
    if np.all(a != 0):
        return np.reshape(reverse_cumsum(g * out, out, axis) / a, shape)
    am, gm, om = np.moveaxis(a, axis, 0), np.moveaxis(g, axis, 0), np.moveaxis(out, axis, 0)
    r = np.zeros(gm.shape, np.result_type(gm, am))
    r[-1] = gm[-1]
    for i in range(len(am) - 2, -1, -1):
        r[i] = gm[i] + am[i + 1] * r[i + 1]
    before = np.concatenate([np.ones_like(om[:1]), om[:-1]])
    return np.reshape(np.moveaxis(before * r, 0, axis), shape)


def in_dtype_of(d, x):
    """``d`` in ``x``'s floating dtype (float64 for integers): a cotangent has
    its argument's dtype, a tangent its output's."""
    if d is None:
        return None
    kind = np.asarray(x).dtype
    return np.asarray(d).astype(kind if kind.kind in "fc" else np.float64, copy=False)


def _reduced_last(a, axis):
    """``a`` with the axes ``axis`` reduces moved last and merged into one (all
    of them for None), and the shape of the axes kept."""
    a = np.asarray(a)
    if axis is None:
        return a.reshape(-1), ()
    axes = [ax % a.ndim for ax in (axis if isinstance(axis, tuple) else (axis,))]
    kept = [i for i in range(a.ndim) if i not in axes]
    shape = tuple(a.shape[i] for i in kept)
    return np.transpose(a, kept + axes).reshape(shape + (-1,)), shape


def _reduced_back(d, a, axis):
    """The inverse of :func:`_reduced_last`: ``d`` laid out as ``a``."""
    shape = np.shape(a)
    if axis is None:
        return np.reshape(d, shape)
    ndim = len(shape)
    axes = [ax % ndim for ax in (axis if isinstance(axis, tuple) else (axis,))]
    kept = [i for i in range(ndim) if i not in axes]
    d = np.reshape(d, tuple(shape[i] for i in kept) + tuple(shape[i] for i in axes))
    return np.transpose(d, np.argsort(kept + axes))


def quantile_weights(a, q, axis=None):
    """How ``np.quantile(a, q, axis)`` (linear interpolation, NumPy's default;
    ``np.median`` is ``q = 0.5``) weighs each element: an array of ``q``'s shape,
    then the kept axes' shape, then one weight per reduced element, such that
    the quantile is the sum of the weights times the elements.  Quantile ``q``
    sits at the virtual position ``q * (n - 1)`` of the sorted elements, between
    two of them: they get ``1 - w`` and ``w``, the others 0 (tied elements:
    the order a stable sort gives)."""
    moved, _ = _reduced_last(a, axis)
    n = moved.shape[-1]
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1, kind="stable")
    position = np.asarray(q, dtype=np.float64) * (n - 1)
    low = np.floor(position)
    w = position - low
    at = (...,) + (np.newaxis,) * moved.ndim
    weights = (1 - w)[at] * (rank == low[at]) + w[at] * (rank == np.minimum(low + 1, n - 1)[at])
    return weights.astype(moved.dtype if moved.dtype.kind == "f" else np.float64)


def quantile_grad(g, a, q, axis=None):
    """The cotangent of ``a`` for ``np.quantile(a, q, axis)`` with cotangent
    ``g`` (``keepdims`` or not: the same elements in the same order)."""
    weights = quantile_weights(a, q, axis)
    qdims = np.ndim(q)
    lead = weights.shape[:-1]
    g = np.reshape(spread(g, lead), lead + (1,))
    return in_dtype_of(_reduced_back(np.sum(weights * g, axis=tuple(range(qdims))), a, axis), a)


def quantile_jvp(t, a, q, axis, like):
    """The tangent of ``like = np.quantile(a, q, axis)`` for ``a``'s tangent ``t``."""
    moved, _ = _reduced_last(np.broadcast_to(t, np.shape(a)), axis)
    return in_dtype_of(np.reshape(np.sum(quantile_weights(a, q, axis) * moved, axis=-1),
                                  np.shape(like)), like)


def weights_like(weights, a, axis):
    """``np.average``'s weights laid out as ``a`` (1-D weights run along ``axis``).
    Linear in ``weights``, with rules (its transpose is :func:`weights_back`):
    ``np.average``'s tangent rule uses it, and hvp differentiates that again."""
    weights = np.asarray(weights)
    if weights.shape != np.shape(a) and weights.ndim == 1 and axis is not None:
        shape = [1] * np.ndim(a)
        shape[axis if isinstance(axis, int) else axis[0]] = weights.size
        weights = weights.reshape(shape)
    return np.broadcast_to(weights, np.shape(a))


def spread(g, shape):
    """The cotangent ``g`` in ``shape``: a number (the zero of no cotangent, the
    cotangent of a one-element output) filled in, else ``g`` reshaped."""
    if np.size(g) == 1 and int(np.prod(shape)) != 1:
        return np.full(shape, np.reshape(g, ()))
    return np.reshape(g, shape)


def weights_back(d, weights, a, axis):
    """A cotangent laid out as ``a`` summed back to the weights' shape."""
    d = spread(d, np.shape(a)) if np.ndim(d) == 0 else d
    shape = np.shape(weights)
    if shape != np.shape(a) and len(shape) == 1 and axis is not None:
        ax = (axis if isinstance(axis, int) else axis[0]) % np.ndim(a)
        return np.sum(d, axis=tuple(i for i in range(np.ndim(a)) if i != ax))
    return np.sum(d, axis=tuple(range(np.ndim(d) - len(shape)))).reshape(shape) \
        if np.ndim(d) > len(shape) else np.reshape(d, shape)


def average_grads(out, g, a, axis=None, weights=None, keepdims=False):
    """The cotangents of ``a`` and ``weights`` for ``out = np.average(a, axis,
    weights)``: ``a``'s elements weigh ``w / sum(w)``; a weight moves the
    average by ``(a - out) / sum(w)``."""
    g = unreduce(g, a, axis, keepdims)
    if weights is None:
        return in_dtype_of(g * (np.size(out) / np.size(a)), a), None
    w = weights_like(weights, a, axis)
    total = np.sum(w, axis=axis, keepdims=True)
    centred = np.asarray(a) - np.reshape(out, np.shape(total))
    return (in_dtype_of(g * w / total, a),
            in_dtype_of(weights_back(g * centred / total, weights, a, axis), weights))


def average_jvp(out, a, axis, weights, keepdims, t_a, t_w):
    """The tangent of ``out = np.average(a, axis, weights)`` (:func:`average_grads`)."""
    t_a = np.broadcast_to(t_a, np.shape(a)) if t_a is not None else np.zeros(np.shape(a))
    if weights is None:
        return in_dtype_of(np.reshape(np.mean(t_a, axis=axis, keepdims=True), np.shape(out)), out)
    w = weights_like(weights, a, axis)
    total = np.sum(w, axis=axis, keepdims=True)
    moved = t_a * w
    if t_w is not None:
        centred = np.asarray(a) - np.reshape(out, np.shape(total))
        moved = moved + centred * weights_like(t_w, a, axis)
    return in_dtype_of(np.reshape(np.sum(moved, axis=axis, keepdims=True) / total,
                                  np.shape(out)), out)


def cov_rows(part, rowvar):
    """One of ``np.cov``'s inputs as rows of variables (a 1-D one is one row;
    with ``rowvar`` false the columns are the variables).  Linear in ``part``,
    with rules of its own: the tangent rules of ``np.cov``/``np.corrcoef`` use
    it, and hvp differentiates their code again."""
    x = np.array(part, ndmin=2)
    return x.T if not rowvar and x.shape[0] != 1 else x


def cov_rows_back(d, part, rowvar):
    """The transpose of :func:`cov_rows`: a cotangent of the rows laid out as ``part``."""
    turned = not rowvar and np.ndim(part) > 1 and np.shape(part)[0] != 1
    d = spread(d, np.shape(cov_rows(part, rowvar))) if np.ndim(d) == 0 else d
    return in_dtype_of(np.reshape(np.transpose(d) if turned else d, np.shape(part)), part)


def cov_product(t, xc):
    """``Tc Xc^T + Xc Tc^T`` for the rows ``t`` centred (``Tc``): the tangent of
    ``Xc Xc^T`` as the rows move by ``t`` (``xc`` is centred).  Linear in ``t``
    and in ``xc``, with rules of its own (:func:`cov_product_grads`): the
    tangent rules of ``np.cov``/``np.corrcoef`` use it, and hvp differentiates
    their code again."""
    tc = t - np.mean(t, axis=1, keepdims=True)
    return tc @ xc.T + xc @ tc.T


def cov_product_grads(g, t, xc):
    """The cotangents of ``t`` and ``xc`` for :func:`cov_product`: ``S Xc``
    centred (the centring is its own transpose) and ``S Tc``, for ``S = G + G^T``."""
    g = spread(g, (np.shape(xc)[0],) * 2)
    s = g + np.transpose(g)
    d_t = s @ xc
    return d_t - np.mean(d_t, axis=1, keepdims=True), s @ (t - np.mean(t, axis=1, keepdims=True))


def _variables(m, y, rowvar):
    """``np.cov``'s observations: one row per variable, ``y``'s rows after ``m``'s."""
    rows = [cov_rows(part, rowvar) for part in (m, y) if part is not None]
    return np.concatenate(rows, axis=0) if len(rows) > 1 else rows[0]


def _variables_back(d, m, y, rowvar):
    """A cotangent of :func:`_variables`' rows, split back to ``m`` and ``y``."""
    found, start = [], 0
    for part in (m, y):
        if part is None:
            found.append(None)
            continue
        x = np.array(part, ndmin=2)
        turned = not rowvar and x.shape[0] != 1
        rows = x.shape[1] if turned else x.shape[0]
        piece = d[start:start + rows]
        start += rows
        found.append(in_dtype_of(np.reshape(piece.T if turned else piece, np.shape(part)), part))
    return tuple(found)


def _centred(m, y, rowvar, bias, ddof):
    x = _variables(m, y, rowvar)
    if ddof is None:
        ddof = 0 if bias else 1
    return x - np.mean(x, axis=1, keepdims=True), x.shape[1] - ddof


def cov_grads(g, m, y=None, rowvar=True, bias=False, ddof=None):
    """The cotangents of ``m`` and ``y`` for ``np.cov(m, y, rowvar, bias, ddof)``:
    ``C = Xc Xc^T / f`` for the centred rows ``Xc``, so ``X`` gets ``(G + G^T)
    Xc / f`` (centring takes nothing away: those rows already sum to 0)."""
    xc, fact = _centred(m, y, rowvar, bias, ddof)
    g = spread(g, (xc.shape[0], xc.shape[0]))
    return _variables_back((g + g.T) @ xc / fact, m, y, rowvar)


def cov_jvp(m, y, rowvar, bias, ddof, t_m, t_y, out):
    """The tangent of ``out = np.cov(m, y, rowvar, bias, ddof)``."""
    xc, fact = _centred(m, y, rowvar, bias, ddof)
    t_m = np.zeros(np.shape(m)) if t_m is None else np.broadcast_to(t_m, np.shape(m))
    if y is not None:
        t_y = np.zeros(np.shape(y)) if t_y is None else np.broadcast_to(t_y, np.shape(y))
    t = _variables(t_m, t_y if y is not None else None, rowvar)
    tc = t - np.mean(t, axis=1, keepdims=True)
    return in_dtype_of(np.reshape((tc @ xc.T + xc @ tc.T) / fact, np.shape(out)), out)


def corrcoef_grads(out, g, x, y=None, rowvar=True):
    """The cotangents of ``x`` and ``y`` for ``out = np.corrcoef(x, y, rowvar)``:
    ``R = C / sqrt(d d^T)`` for the covariance ``C`` and its diagonal ``d``."""
    c = np.atleast_2d(np.cov(x, y, rowvar))
    d = np.diag(c)
    r = np.reshape(out, c.shape)
    g = spread(g, c.shape)
    gr = g * r
    d_c = g / np.sqrt(np.outer(d, d)) - 0.5 * np.diag((np.sum(gr, axis=1) + np.sum(gr, axis=0)) / d)
    return cov_grads(d_c, x, y, rowvar)


def corrcoef_jvp(x, y, rowvar, t_x, t_y, out):
    """The tangent of ``out = np.corrcoef(x, y, rowvar)``."""
    c = np.atleast_2d(np.cov(x, y, rowvar))
    d = np.diag(c)
    t_c = np.reshape(cov_jvp(x, y, rowvar, False, None, t_x, t_y, c), c.shape)
    r = np.reshape(out, c.shape)
    rate = np.diag(t_c) / d
    t = t_c / np.sqrt(np.outer(d, d)) - 0.5 * r * (rate[:, np.newaxis] + rate[np.newaxis, :])
    return in_dtype_of(np.reshape(t, np.shape(out)), out)
