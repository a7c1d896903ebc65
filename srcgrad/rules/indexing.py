"""Rules of indexing, ``a[index]`` (``operator.getitem``), and of the functions
that pick elements, both modes.

Reading elements is linear in ``a`` whatever the index, so one ``@linear``
declaration gives both rules.  The tangent is the same elements of ``a``'s
tangent, ``d_a[index]`` (a tuple, list or dict has a tuple, list or dict of
tangents, so the same expression picks an element's tangent there too).  The
adjoint scatters the cotangent back into zeros shaped like ``a``: a basic index
(ints, slices, ``None``, ``...``) selects each element at most once, so
assignment does; an advanced index (integer arrays, which may repeat an
element, or boolean masks) accumulates with ``np.add.at``.  Indexing a tuple or
list (``slogdet(x)[1]``) gives a tuple or list of cotangents with zeros for
the other elements.

The other ways of picking elements are linear too: ``np.take`` and
``np.take_along_axis`` (scattered back like an advanced index), diagonals (``np.diag``,
``np.diagonal``), triangles (``np.tril``, ``np.triu``), and ``np.select`` and
``np.choose``, which are linear in their choices (and default) and give each
element's cotangent to the one it took.  Generated forward-mode code writes a tangent into an array
through ``written_tangent`` (nothing into an integer array), linear too.
"""

import operator

import numpy as np

from ..runtime import (
    along_axis_index,
    choose_grads,
    diag_grad,
    diagonal_grad,
    getitem_grad,
    index_joined,
    joined_tangent,
    move_cotangent,
    normal_shape,
    select_grads,
    take_along_axis_grad,
    unbroadcast,
    unjoin,
    written_tangent,
)
from .derive import linear
from .registry import adjoint, nondifferentiable, tangent


@linear(operator.getitem, "a", name="[]")
def getitem(out, d_out, a, index):
    return getitem_grad(d_out, a, index)


@linear(written_tangent, "t", name="written_tangent")
def written_tangent_(out, d_out, t, x):
    """The tangent stored by ``d_x[index] = written_tangent(d_v, x)`` (generated
    forward-mode code, differentiated again for second derivatives): ``t``
    passes as it is, or nothing where ``x`` is an integer or bool array."""
    return written_tangent(d_out, x)


@linear(np.take_along_axis, "arr")
def take_along_axis(out, d_out, arr, indices, axis=-1):
    """Repeated indices add up."""
    return take_along_axis_grad(d_out, arr, indices, axis)


@linear(np.take, "a")
def take(out, d_out, a, indices, axis=None, *, mode="raise"):
    """``np.ravel(a)[indices]`` or, on ``axis``, ``a[:, ..., indices]``: scattered
    back like that advanced index, repeated indices adding up; ``mode="wrap"``
    and ``"clip"`` first bring the indices into range as NumPy does."""
    picked = indices
    if mode == "wrap":
        picked = np.mod(indices, np.size(a) if axis is None else np.shape(a)[axis])
    if mode == "clip":
        picked = np.clip(indices, 0, (np.size(a) if axis is None else np.shape(a)[axis]) - 1)
    if axis is None:
        return getitem_grad(d_out, a, np.unravel_index(np.arange(np.size(a))[picked],
                                                       np.shape(a)))
    return getitem_grad(d_out, a, (slice(None),) * (axis % np.ndim(a)) + (picked,))


@linear(np.diag, "v")
def diag(out, d_out, v, k=0):
    """A 1-D ``v`` builds a matrix (its cotangent is the matrix's diagonal); a 2-D
    ``v`` gives its diagonal (its cotangent has the diagonal's on that diagonal)."""
    return diag_grad(d_out, v, k)


@linear(np.diagflat, "v")
def diagflat(out, d_out, v, k=0):
    """``v`` flattened onto diagonal ``k`` of a square matrix (review s37 R5-2):
    the cotangent is that diagonal, in ``v``'s shape."""
    return np.reshape(np.diagonal(np.broadcast_to(d_out, np.shape(out)), k), np.shape(v))


@linear(np.delete, "arr")
def delete(out, d_out, arr, obj, axis=None):
    """``arr`` without the items ``obj`` names (flattened first for ``axis=None``;
    review s37 R5-2): each kept element's cotangent goes back to its place, found
    by deleting the same items from the array of flat positions; the deleted
    ones get none."""
    return getitem_grad(d_out, arr, np.unravel_index(np.delete(np.arange(np.size(arr)).reshape(
        np.shape(arr)), obj, axis), np.shape(arr)))


@linear(np.diagonal, "a")
def diagonal(out, d_out, a, offset=0, axis1=0, axis2=1):
    return diagonal_grad(d_out, a, offset, axis1, axis2)


@linear(np.tril, "m")
def tril(out, d_out, m, k=0):
    """The cotangent's lower triangle; a 1-D ``m`` (repeated as every row) sums
    the rows."""
    return unbroadcast(move_cotangent(d_out, np.tril, k), m)


@linear(np.triu, "m")
def triu(out, d_out, m, k=0):
    """The cotangent's upper triangle; a 1-D ``m`` (repeated as every row) sums
    the rows."""
    return unbroadcast(move_cotangent(d_out, np.triu, k), m)


@linear(np.choose, "choices")
def choose(out, d_out, a, choices, *, mode="raise"):
    """Linear in the choices: each element's cotangent goes to the choice it
    took (``mode`` wraps or clips ``a`` as NumPy does); one per choice."""
    return choose_grads(d_out, a, choices, mode)


@adjoint(np.select, "choicelist", "default", name="np.select")
def select(out, d_out, condlist, choicelist, default=0):
    """Each element's cotangent goes to the first choice whose condition holds
    there, or to ``default``; one cotangent per choice."""
    return select_grads(d_out, condlist, choicelist, default)


@tangent(np.select, "choicelist", "default", name="np.select")
def select_tangent(out, condlist, choicelist, default=0, *, d_choicelist, d_default):
    """The choices' term selects among their tangents, with 0 as the default;
    the default's term is its tangent where no condition holds."""
    return (np.select(condlist, d_choicelist, 0),
            np.select(condlist, [np.zeros_like(out) for c in condlist], d_default))


# the index np.put_along_axis(y, idx, v, axis) writes through, y[index] = v
# (normalize/statements.py put_along): integers, whatever y holds
nondifferentiable(along_axis_index, name="along_axis_index")
# the size rng.normal(loc, scale) draws (analysis/sorts_in_place.py): a shape
nondifferentiable(normal_shape, name="normal_shape")


# np.r_[a, b] / np.c_[a, b], written index_joined(np.r_, (a, b)): linear in
# the items (review s36 R4-8; normalize/index_tricks.py)

@adjoint(index_joined, "key", name="index_joined")
def index_joined_grad(out, d_out, maker, key):
    """Each item's piece of the cotangent, in its shape."""
    return unjoin(d_out, maker, key)


@tangent(index_joined, "key", name="index_joined")
def index_joined_tangent(out, maker, key, *, d_key):
    """The items' tangents joined alike (zeros, shaped like it, for an item
    that does not move or a slice)."""
    return joined_tangent(maker, key, d_key)


@linear(joined_tangent, "t", name="joined_tangent")
def joined_tangent_transpose(out, d_out, maker, key, t):
    """Linear in the tangents ``t``: each one's piece, as for the items (hvp)."""
    return unjoin(d_out, maker, key)
