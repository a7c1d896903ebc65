"""Rules of ``scipy.spatial.distance.cdist``, both modes (review s37 R5-21).

Registered lazily once the user's code has imported ``scipy.spatial``.  The
usual way to write an RBF kernel is ``np.exp(-cdist(X, Y, "sqeuclidean") /
(2 * l ** 2))``; with ``S[i, j] = |x_i - y_j|^2`` and ``G`` the cotangent of the
result, ``x_i`` gets ``2 (sum_j G[i, j] x_i - (G Y)[i])`` and ``y_j``
``2 (sum_i G[i, j] y_j - (G^T X)[j])``.  The ``'euclidean'`` distance
``D = sqrt(S)`` takes ``G / (2 D)`` in place of ``G`` (0 where two points
coincide: the subgradient, as for ``np.abs``).  Any other metric is refused
when the code runs, naming it (:func:`~srcgrad.runtime.distance_metric`).

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
