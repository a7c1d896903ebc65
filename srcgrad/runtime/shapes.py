"""Adjoints of operations that move, repeat or pick elements: reshapes and
transposes, ``tile``, ``repeat``, ``concatenate``, ``stack``, indexing.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.  Inside loops and after
calls the cotangent reaching an adjoint may be the scalar ``0.0`` that stands
for "no cotangent yet" (see :func:`.structures.no_cotangent`); elementwise
adjoints take it as it is, and these helpers pass it on instead of reshaping
it.  A cotangent of a list of arrays is a :class:`.structures.ListCotangent`,
whose ``+`` adds element by element where a plain list's would concatenate.

    >>> import numpy as np
    >>> untile(np.arange(6.0), np.zeros(2), 3)
    array([6., 9.])
    >>> reshape_like(0.0, np.zeros((2, 3)))
    0.0
"""

from __future__ import annotations

import numpy as np

from .aliases import is_basic_index
from .structures import ListCotangent, cotangent_like, no_cotangent


def untile(g, a, reps):
    """Cotangent of ``a`` in ``np.tile(a, reps)``: the sum over the copies."""
    if no_cotangent(g):
        return 0.0
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    shape = np.shape(a)
    d = max(len(reps), len(shape))
    reps = (1,) * (d - len(reps)) + reps
    full = (1,) * (d - len(shape)) + shape
    g = np.reshape(g, [n for pair in zip(reps, full) for n in pair])
    return np.reshape(np.sum(g, axis=tuple(range(0, 2 * d, 2))), shape)


def unrepeat(g, a, repeats, axis=None):
    """Cotangent of ``a`` in ``np.repeat(a, repeats, axis)``: the sum over the
    repeats of each element."""
    if no_cotangent(g):
        return 0.0
    shape = np.shape(a)
    if axis is None:
        g, axis, base = np.ravel(g), 0, (int(np.size(a)),)
    else:
        axis, base = axis % len(shape), shape
    if np.ndim(repeats) == 0:
        split = base[:axis] + (base[axis], int(repeats)) + base[axis + 1:]
        return np.reshape(np.sum(np.reshape(g, split), axis=axis + 1), shape)
    owner = np.repeat(np.arange(base[axis]), repeats)
    acc = np.zeros((base[axis],) + np.shape(np.moveaxis(g, axis, 0))[1:], dtype=np.result_type(g))
    np.add.at(acc, owner, np.moveaxis(g, axis, 0))
    return np.reshape(np.moveaxis(acc, 0, axis), shape)


def unconcatenate(g, arrays, axis=0):
    """Cotangents of the pieces of ``np.concatenate(arrays, axis)`` (also
    ``hstack``/``vstack``, whose lower-dimensional pieces take one slot)."""
    if no_cotangent(g):
        return ListCotangent([0.0] * len(arrays))
    if axis is None:
        g, axis = np.ravel(g), 0
        sizes = [np.size(a) for a in arrays]
    else:
        sizes = [np.shape(a)[axis] if np.ndim(a) == np.ndim(g) else 1 for a in arrays]
    pieces = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    return ListCotangent([np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays)])


def getitem_grad(g, a, index):
    """Cotangent of ``a`` in ``a[index]``: ``g`` scattered into zeros, with
    repeated integer indices accumulating (``np.add.at``).  For a tuple or
    list ``a`` it is a tuple or list with zeros for the other elements."""
    if isinstance(a, (tuple, list, dict)):
        return cotangent_like(a, index, g)
    grad = np.zeros_like(a)
    if is_basic_index(index):
        grad[index] = g
    else:
        np.add.at(grad, index, g)
    return grad


def reshape_each(gs, xs):
    """The cotangents ``gs`` of several arrays, each reshaped to its array's
    shape (``np.atleast_1d(x, y)`` and the like)."""
    if no_cotangent(gs):
        return ListCotangent([0.0] * len(xs))
    return ListCotangent([reshape_like(g, x) for g, x in zip(gs, xs)])


def reshape_like(g, a, order="C"):
    """The cotangent ``g`` of a reshape of ``a`` (``np.reshape``, ``ravel``,
    ``squeeze``, ``expand_dims``...) reshaped back to ``a``'s shape; the scalar
    zero of no cotangent stays 0.0."""
    if no_cotangent(g):
        return 0.0
    return np.reshape(g, np.shape(a), order=order)


def move_cotangent(g, move, *args):
    """``move(g, *args)``, where ``move`` only moves elements around
    (``np.transpose``, ``np.swapaxes``, ``np.moveaxis``, ``np.flip``): the
    cotangent of the input of such a move; the scalar zero of no cotangent
    stays 0.0."""
    if no_cotangent(g):
        return 0.0
    return move(g, *args)


def unstack(g, arrays, axis=0):
    """Cotangents of the arrays ``np.stack(arrays, axis)`` joined: the slices of
    ``g`` along ``axis`` (0.0 for each when no cotangent reached the stack)."""
    if no_cotangent(g):
        return ListCotangent([0.0] * len(arrays))
    return ListCotangent(np.moveaxis(g, axis, 0))


def unpack_cotangent(g, items):
    """Cotangents of the elements of the list or tuple ``items`` packed into one
    array (``np.array([x, y, z])``): the rows of ``g``."""
    if no_cotangent(g):
        return ListCotangent([0.0] * len(items))
    return ListCotangent(g)
