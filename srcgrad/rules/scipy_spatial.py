"""Rules of ``scipy.spatial.distance.cdist``, both modes (review s37 R5-21).

Registered lazily once the user's code has imported ``scipy.spatial``.  The
usual way to write an RBF kernel is ``np.exp(-cdist(X, Y, "sqeuclidean") /
(2 * l ** 2))``; with ``S[i, j] = |x_i - y_j|^2`` and ``G`` the cotangent of the
result, ``x_i`` gets ``2 (sum_j G[i, j] x_i - (G Y)[i])`` and ``y_j``
``2 (sum_i G[i, j] y_j - (G^T X)[j])``.  The ``'euclidean'`` distance
``D = sqrt(S)`` takes ``G / (2 D)`` in place of ``G`` (0 where two points
coincide: the subgradient, as for ``np.abs``).  Any other metric is refused
when the code runs, naming it (:func:`~srcgrad.runtime.distance_metric`).
``pdist(X, metric)`` is the same distances for the pairs ``i < j`` of rows,
in SciPy's condensed order (``np.triu_indices``): each pair's cotangent goes
to its two rows with opposite signs, through the pairs' incidence matrix.
``squareform`` is linear: a condensed vector's cotangent is the matrix's two
entries of each pair summed; a matrix's, the vector's on its upper triangle.

    >>> from scipy.spatial.distance import cdist
    >>> from .registry import display_name
    >>> display_name(cdist)
    'scipy.spatial.distance.cdist'
"""

import numpy as np
from scipy.spatial import distance

from ..runtime import distance_metric
from .registry import adjoint, nondifferentiable, tangent

nondifferentiable(distance_metric)


@adjoint(distance.cdist, "XA", "XB", name="scipy.spatial.distance.cdist")
def cdist(out, d_out, XA, XB, metric="euclidean"):
    squared = distance_metric(metric) == "sqeuclidean"
    g = np.broadcast_to(d_out, np.shape(out))
    w = 2 * g if squared else g * (out != 0) / np.where(out == 0, 1, out)
    return (np.sum(w, axis=1)[:, None] * XA - w @ XB,
            np.sum(w, axis=0)[:, None] * XB - np.swapaxes(w, 0, 1) @ XA)


@tangent(distance.cdist, "XA", "XB", name="scipy.spatial.distance.cdist")
def cdist_tangent(out, XA, XB, metric="euclidean", *, d_XA, d_XB):
    squared = distance_metric(metric) == "sqeuclidean"
    scale = 2.0 if squared else (out != 0) / np.where(out == 0, 1, out)
    return (scale * (np.sum(XA * d_XA, axis=1)[:, None] - d_XA @ np.swapaxes(XB, 0, 1)),
            scale * (np.sum(XB * d_XB, axis=1)[None, :] - XA @ np.swapaxes(d_XB, 0, 1)))


@adjoint(distance.pdist, "X", name="scipy.spatial.distance.pdist")
def pdist(out, d_out, X, metric="euclidean"):
    squared = distance_metric(metric) == "sqeuclidean"
    g = np.broadcast_to(d_out, np.shape(out))
    w = 2 * g if squared else g * (out != 0) / np.where(out == 0, 1, out)
    i, j = np.triu_indices(np.shape(X)[0], 1)
    rows = np.arange(np.shape(X)[0])
    incidence = (rows == i[:, None]).astype(X.dtype) - (rows == j[:, None]).astype(X.dtype)
    return np.swapaxes(incidence, 0, 1) @ (w[:, None] * (incidence @ X))


@tangent(distance.pdist, "X", name="scipy.spatial.distance.pdist")
def pdist_tangent(out, X, metric="euclidean", *, d_X):
    squared = distance_metric(metric) == "sqeuclidean"
    scale = 2.0 if squared else (out != 0) / np.where(out == 0, 1, out)
    i, j = np.triu_indices(np.shape(X)[0], 1)
    rows = np.arange(np.shape(X)[0])
    incidence = (rows == i[:, None]).astype(X.dtype) - (rows == j[:, None]).astype(X.dtype)
    return scale * np.sum((incidence @ X) * (incidence @ d_X), axis=1)


@adjoint(distance.squareform, "X", name="scipy.spatial.distance.squareform")
def squareform(out, d_out, X, force="no", checks=True):
    """A condensed vector made a matrix: each pair's two entries' cotangents
    summed; a matrix made a vector: the vector's cotangent on the upper
    triangle (SciPy reads that triangle)."""
    n = np.shape(out)[0] if np.ndim(out) == 2 else np.shape(X)[0]
    i, j = np.triu_indices(n, 1)
    g = np.broadcast_to(d_out, np.shape(out))
    rows = np.arange(n)
    first, second = (rows == i[:, None]).astype(g.dtype), (rows == j[:, None]).astype(g.dtype)
    return g[i, j] + g[j, i] if np.ndim(out) == 2 \
        else np.swapaxes(first, 0, 1) @ (g[:, None] * second)


@tangent(distance.squareform, "X", name="scipy.spatial.distance.squareform")
def squareform_tangent(out, X, force="no", checks=True, *, d_X):
    n = np.shape(out)[0] if np.ndim(out) == 2 else np.shape(X)[0]
    i, j = np.triu_indices(n, 1)
    rows = np.arange(n)
    first, second = (rows == i[:, None]).astype(out.dtype), (rows == j[:, None]).astype(out.dtype)
    if np.ndim(out) == 2:
        upper = np.swapaxes(first, 0, 1) @ (d_X[:, None] * second)
        return upper + np.swapaxes(upper, 0, 1)
    return d_X[i, j]
