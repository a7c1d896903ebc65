"""Helpers of the rules of functions that pick elements from their inputs:
running extrema (``np.maximum.accumulate``), ``np.choose``, ``np.block`` and
``np.r_[...]`` / ``np.c_[...]``, the index ``np.put_along_axis`` writes
through, and the differences of ``np.ediff1d``.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.

``out = np.maximum.accumulate(a)`` is ``out[k] = np.maximum(out[k - 1],
a[k])``: each step's derivative is that of ``np.maximum``, whose ties split it
0.5/0.5 (rules/ufuncs.py), so the tangent and the cotangent run along the axis
step by step with those weights (the same for ``minimum``, ``fmax`` and
``fmin``: which operand won is read from the values).

    >>> a = np.array([1.0, 3.0, 2.0, 3.0, 5.0])
    >>> out = np.maximum.accumulate(a)
    >>> running_extremum_grad(np.ones(5), a, out)
    array([1. , 2.5, 0. , 0.5, 1. ])
    >>> running_extremum_tangent(np.array([1.0, 10.0, 100.0, 20.0, 30.0]), a, out)
    array([ 1., 10., 10., 15., 30.])
"""

from __future__ import annotations

import numpy as np

from .elementwise import unbroadcast
from .structures import ListCotangent, cotangent_at, no_cotangent


def _steps(a, running, axis):
    """``a`` and ``running`` with ``axis`` first, and each step's weights: 1
    where ``a[k]`` set the running value, 0.5 at a tie, 0 where the value ran
    on (the first step: 1)."""
    a = np.moveaxis(np.asarray(a), axis, 0)
    running = np.moveaxis(np.asarray(running), axis, 0)
    tie = np.zeros(a.shape, dtype=bool)
    won = np.ones(a.shape, dtype=bool)
    tie[1:] = a[1:] == running[:-1]
    won[1:] = (running[1:] == a[1:]) & ~tie[1:]
    return a, tie, won


def running_extremum_tangent(t, a, running, axis=0):
    """The tangent of ``running = np.maximum.accumulate(a, axis)`` (or
    ``minimum``, ``fmax``, ``fmin``) for the tangent ``t`` of ``a``."""
    if no_cotangent(t):
        return 0.0
    a, tie, won = _steps(a, running, axis)
    t = np.moveaxis(np.broadcast_to(t, np.shape(running)), axis, 0)
    out = np.empty(t.shape, dtype=np.result_type(t, 0.5))
    out[0] = t[0]
    for k in range(1, len(out)):
        out[k] = np.where(won[k], t[k], np.where(tie[k], 0.5 * (t[k] + out[k - 1]),
                                                  out[k - 1]))
    return np.moveaxis(out, 0, axis)


def running_extremum_grad(g, a, running, axis=0):
    """The cotangent of ``a`` in ``running = np.maximum.accumulate(a, axis)``
    (the transpose of :func:`running_extremum_tangent`)."""
    if no_cotangent(g):
        return 0.0
    a, tie, won = _steps(a, running, axis)
    g = np.moveaxis(np.broadcast_to(g, np.shape(running)), axis, 0)
    grad = np.empty(g.shape, dtype=np.result_type(g, 0.5))
    carry = np.zeros(g.shape[1:], dtype=grad.dtype)
    for k in range(len(g) - 1, 0, -1):
        w = g[k] + carry
        grad[k] = np.where(won[k], w, np.where(tie[k], 0.5 * w, 0.0))
        carry = np.where(won[k], 0.0, np.where(tie[k], 0.5 * w, w))
    grad[0] = g[0] + carry
    return np.moveaxis(grad, 0, axis)


def choice_index(a, n, mode="raise"):
    """The choice ``np.choose(a, choices, mode=mode)`` takes at each element,
    among ``n``: ``a`` itself, wrapped or clipped into range."""
    a = np.asarray(a)
    if mode == "wrap":
        return a % n
    if mode == "clip":
        return np.clip(a, 0, n - 1)
    return a


def choose_grads(g, a, choices, mode="raise"):
    """Cotangents of ``choices`` (one per choice) in ``np.choose(a, choices)``:
    each element's goes to the choice it took."""
    if no_cotangent(g):
        return ListCotangent([0.0] * len(choices))
    taken = choice_index(a, len(choices), mode)
    return ListCotangent([unbroadcast(np.where(taken == j, g, 0), c)
                          for j, c in enumerate(choices)])


def _leaves(arrays):
    if isinstance(arrays, (list, tuple)):
        return [leaf for item in arrays for leaf in _leaves(item)]
    return [arrays]


def _rebuilt(arrays, parts, kind=ListCotangent):
    """``parts`` (one per leaf, in order) nested as ``arrays`` is."""
    if isinstance(arrays, (list, tuple)):
        return kind([_rebuilt(item, parts, kind) for item in arrays])
    return parts.pop(0)


def block_grads(g, arrays):
    """Cotangents of the arrays of ``np.block(arrays)``, nested as they are:
    each leaf's block of ``g`` (found by blocking each leaf's number)."""
    if no_cotangent(g):
        return _rebuilt(arrays, [0.0] * len(_leaves(arrays)))
    leaves = _leaves(arrays)
    numbers = iter(range(len(leaves)))
    ids = np.block(_rebuilt(arrays, [np.full(np.shape(leaf), next(numbers))
                                     for leaf in leaves], list))
    g = np.broadcast_to(g, ids.shape)
    return _rebuilt(arrays, [np.reshape(g[ids == i], np.shape(leaf))
                             for i, leaf in enumerate(leaves)])


def block_tangent(t, arrays):
    """The tangent of ``np.block(arrays)`` for the tangents ``t`` (nested as
    ``arrays``; a leaf with no tangent, 0, becomes zeros of its shape)."""
    leaves, tangents = _leaves(arrays), _leaves(t)
    if all(no_cotangent(d) for d in tangents):
        return 0.0
    filled = [np.zeros(np.shape(leaf), np.result_type(leaf, 0.0)) if no_cotangent(d)
              else d for leaf, d in zip(leaves, tangents)]
    return np.block(_rebuilt(arrays, filled, list))


def along_axis_index(arr, indices, axis):
    """The index ``np.put_along_axis(arr, indices, values, axis)`` assigns
    through, ``arr[index] = values`` (``axis`` an int).

        >>> along_axis_index(np.zeros((2, 3)), np.array([[2], [0]]), 1)
        (array([[0],
               [1]]), array([[2],
               [0]]))
    """
    shape = np.shape(arr)
    axis %= len(shape)
    return tuple(np.asarray(indices) if k == axis else np.arange(n).reshape(
        [n if j == k else 1 for j in range(len(shape))]) for k, n in enumerate(shape))


def ediff1d_grad(g, ary, to_begin=None):
    """The cotangent of ``ary`` in ``np.ediff1d(ary, to_end, to_begin)``: element
    ``i`` of the flattened ``ary`` is subtracted in difference ``i`` and added in
    difference ``i - 1`` (those after ``to_begin``'s elements)."""
    if no_cotangent(g):
        return 0.0
    start = 0 if to_begin is None else np.size(to_begin)
    mid = np.asarray(g)[start:start + np.size(ary) - 1]
    zero = np.zeros(1, mid.dtype)
    return np.reshape(np.concatenate([zero, mid]) - np.concatenate([mid, zero]), np.shape(ary))


def ediff1d_ends_grad(g, ary, to_end, to_begin):
    """The cotangents of ``to_end`` and ``to_begin`` in ``np.ediff1d(ary,
    to_end, to_begin)``: the output's first ``size(to_begin)`` elements are
    ``to_begin``'s, its last ``size(to_end)`` ``to_end``'s (flattened, as
    NumPy lays them out), each back in its own shape; None for one not given."""
    if no_cotangent(g):
        return 0.0, 0.0
    g = np.asarray(g)
    start = 0 if to_begin is None else np.size(to_begin)
    stop = start + max(np.size(ary) - 1, 0)
    return _shaped_as(g[stop:], to_end), _shaped_as(g[:start], to_begin)


def _shaped_as(g, like):
    """The flat cotangent ``g`` of ``like`` in its shape: a list or tuple gets
    one cotangent per item (what a display hands out), None none."""
    if like is None:
        return None
    g = np.reshape(g, np.shape(like))
    return list(g) if isinstance(like, (list, tuple)) else g


def histogram_grads(g, out, a, bins, range, weights):
    """Cotangents of ``a`` and ``weights`` in ``hist, edges = np.histogram(a,
    bins, range, weights=weights)`` (no density).  The counts are piecewise
    constant in ``a``; a weighted histogram's sums are linear in the weights,
    each weight getting its bin's cotangent (none outside the edges); edges
    NumPy spaces between ``a``'s smallest and largest elements (``bins`` a
    number or a rule's name, no ``range``) move with them: edge ``k`` of ``n``
    by ``1 - k/n`` of the smallest, ``k/n`` of the largest (ties share)."""
    if no_cotangent(g):
        return 0.0, 0.0
    g_hist, g_edges = cotangent_at(g, 0), cotangent_at(g, 1)
    edges = out[1]
    flat = np.ravel(a)
    kind = np.asarray(a).dtype
    d_a = np.zeros(np.shape(a), kind if kind.kind in "fc" else np.float64)
    if range is None and np.ndim(bins) == 0 and not no_cotangent(g_edges) and flat.size:
        k = np.arange(np.size(edges)) / (np.size(edges) - 1)
        g_edges = np.broadcast_to(g_edges, np.shape(edges))
        low, high = flat == np.min(flat), flat == np.max(flat)
        moved = np.sum(g_edges * (1 - k)) * low / np.sum(low) \
            + np.sum(g_edges * k) * high / np.sum(high)
        d_a = np.reshape(moved, np.shape(a)).astype(d_a.dtype)
    d_weights = 0.0
    if weights is not None and not no_cotangent(g_hist):
        d_weights = np.reshape(binned_grad(g_hist, a, edges), np.shape(weights))
    return d_a, d_weights


def binned(values, a, edges):
    """The sums of ``values`` in the bins ``edges`` of ``a``'s elements, as
    ``np.histogram(a, edges, weights=values)[0]``: linear in ``values`` (a
    histogram's tangent, with rules of its own for second derivatives)."""
    return np.histogram(a, edges, weights=values)[0]


def binned_grad(g, a, edges):
    """Each element of ``a`` (flattened) gets the cotangent ``g`` of its bin --
    ``edges[i] <= v < edges[i + 1]``, the last bin closed, as NumPy bins --
    and none outside the edges: the transpose of :func:`binned`."""
    flat = np.ravel(a)
    last = np.size(edges) - 2
    place = np.where(flat == edges[-1], last, np.searchsorted(edges, flat, side="right") - 1)
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    picked = np.broadcast_to(g, (last + 1,))[np.clip(place, 0, last)]
    return np.where(inside, picked, 0.0)


def normal_shape(loc, scale):
    """The size ``rng.normal(loc, scale)`` draws: the shape of ``loc`` and
    ``scale`` broadcast, None (one number) where both are numbers."""
    if np.ndim(loc) == 0 and np.ndim(scale) == 0 and not isinstance(loc, np.ndarray) \
            and not isinstance(scale, np.ndarray):
        return None
    return np.broadcast_shapes(np.shape(loc), np.shape(scale))


__all__ = ["along_axis_index", "block_grads", "block_tangent", "choice_index", "choose_grads",
           "ediff1d_grad", "normal_shape", "running_extremum_grad", "running_extremum_tangent"]


def index_joined(maker, key):
    """``np.r_[key]`` or ``np.c_[key]`` (``maker``): NumPy's own array, bit for
    bit -- the subscript written as a call, so that a rule can give each item
    its piece of the cotangent (normalize/index_tricks.py).

        >>> index_joined(np.r_, (np.array([1.0, 2.0]), 3.0))
        array([1., 2., 3.])
    """
    return maker[key]


def unjoin(g, maker, key):
    """The cotangents of the items of ``index_joined(maker, key)``: each item's
    piece of ``g`` along the axis they were joined on (``maker.axis``: 0 for
    ``np.r_``, -1 for ``np.c_``), in the item's own shape -- a number's 0-d, a
    1-d column of ``np.c_`` 1-d again.  One per item of a tuple ``key`` (a
    list of them), else the one item's.

        >>> unjoin(np.array([1.0, 2.0, 3.0]), np.r_, (np.zeros(2), 0.5))
        ListCotangent([array([1., 2.]), array(3.)])
        >>> unjoin(np.arange(6.0).reshape(3, 2), np.c_, (np.zeros(3), np.zeros(3)))
        ListCotangent([array([0., 2., 4.]), array([1., 3., 5.])])
    """
    items = key if type(key) is tuple else (key,)
    if no_cotangent(g):
        parts = [0.0] * len(items)
    else:
        g, parts, start = np.asarray(g), [], 0
        for item in items:
            width = np.shape(maker[(item,)])[maker.axis]  # as NumPy lays the item out
            piece = np.take(g, np.arange(start, start + width), axis=maker.axis)
            # (a slice's np.arange values: constants)
            parts.append(0.0 if type(item) is slice else np.reshape(piece, np.shape(item)))
            start += width
    return ListCotangent(parts) if type(key) is tuple else parts[0]


def joined_tangent(maker, key, t):
    """The tangent of ``index_joined(maker, key)``: the items' tangents ``t``
    joined alike, zeros in the places of a slice's ``np.arange`` values.

        >>> joined_tangent(np.r_, (np.zeros(2), slice(0, 2)), (np.ones(2), 0.0))
        array([1., 1., 0., 0.])
    """
    if type(key) is not tuple:
        return maker[t]
    return maker[tuple(np.zeros(np.shape(maker[(item,)])) if type(item) is slice else part
                       for item, part in zip(key, t))]
