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
