"""Rules of shape operations: reshapes, transposes, joins, copies, both modes.

These move elements around without changing them, so they are linear: one
``@linear`` declaration gives the tangent, the same operation applied to the
tangent, and its adjoint, the transpose, which moves the cotangent back: a
reshape reshapes it to the input's shape, a transpose applies the inverse
permutation, a join splits it (one cotangent per joined array; the tangent
joins the tangents, zeros for arrays that do not move), a broadcast or tile
sums the copies.  ``np.shape``, ``np.ndim`` and ``np.size`` are integers and
carry no derivative.
"""

import numpy as np

from ..runtime import (
    move_cotangent,
    reshape_each,
    reshape_like,
    unbroadcast,
    unconcatenate,
    unrepeat,
    unstack,
    untile,
)
from .derive import linear
from .registry import adjoint, nondifferentiable, tangent


@linear(np.reshape, "a", keywords=("order",))
def reshape(out, d_out, a, shape, order="C"):
    return reshape_like(d_out, a, order)


@linear(np.ravel, "a", keywords=("order",))
def ravel(out, d_out, a, order="C"):
    return reshape_like(d_out, a, order)


@linear(np.squeeze, "a")
def squeeze(out, d_out, a, axis=None):
    return reshape_like(d_out, a)


@linear(np.expand_dims, "a")
def expand_dims(out, d_out, a, axis):
    return reshape_like(d_out, a)


@adjoint(np.atleast_1d, "arys")
def atleast_1d(out, d_out, *arys):
    """One array gives one output; several give a tuple (and ``d_out`` a tuple)."""
    if len(arys) == 1:
        return [reshape_like(d_out, arys[0])]
    return reshape_each(d_out, arys)


@tangent(np.atleast_1d, "arys")
def atleast_1d_tangent(out, *arys, d_arys):
    if len(arys) == 1:
        return np.atleast_1d(d_arys[0])
    return [np.atleast_1d(t) for t in d_arys]


@adjoint(np.atleast_2d, "arys")
def atleast_2d(out, d_out, *arys):
    """One array gives one output; several give a tuple (and ``d_out`` a tuple)."""
    if len(arys) == 1:
        return [reshape_like(d_out, arys[0])]
    return reshape_each(d_out, arys)


@tangent(np.atleast_2d, "arys")
def atleast_2d_tangent(out, *arys, d_arys):
    if len(arys) == 1:
        return np.atleast_2d(d_arys[0])
    return [np.atleast_2d(t) for t in d_arys]


@linear(np.transpose, "a")
def transpose(out, d_out, a, axes=None):
    if axes is None:
        return np.transpose(d_out)
    return move_cotangent(d_out, np.transpose, np.argsort(np.mod(axes, np.ndim(a))))


@linear(np.swapaxes, "a")
def swapaxes(out, d_out, a, axis1, axis2):
    return move_cotangent(d_out, np.swapaxes, axis1, axis2)


@linear(np.moveaxis, "a")
def moveaxis(out, d_out, a, source, destination):
    return move_cotangent(d_out, np.moveaxis, destination, source)


@linear(np.flip, "m")
def flip(out, d_out, m, axis=None):
    return move_cotangent(d_out, np.flip, axis)


@linear(np.broadcast_to, "array")
def broadcast_to(out, d_out, array, shape):
    return unbroadcast(d_out, array)


@linear(np.tile, "A")
def tile(out, d_out, A, reps):  # noqa: N803 - mirrors numpy
    return untile(d_out, A, reps)


@linear(np.repeat, "a")
def repeat(out, d_out, a, repeats, axis=None):
    return unrepeat(d_out, a, repeats, axis)


@linear(np.concatenate, "arrays", keywords=("axis",))
def concatenate(out, d_out, arrays, axis=0):
    """One cotangent per joined array; ``axis=None`` joins the flattened arrays."""
    return unconcatenate(d_out, arrays, axis)


@linear(np.stack, "arrays", keywords=("axis",))
def stack(out, d_out, arrays, axis=0):
    """One cotangent per stacked array."""
    return unstack(d_out, arrays, axis)


@linear(np.hstack, "tup")
def hstack(out, d_out, tup):
    """One cotangent per joined array (1-D ones join along axis 0, others 1)."""
    return unconcatenate(d_out, tup, 0 if np.ndim(d_out) == 1 else 1)


@linear(np.vstack, "tup")
def vstack(out, d_out, tup):
    """One cotangent per joined array (each 1-D array is one row)."""
    return unconcatenate(d_out, tup, 0)


nondifferentiable(np.shape, np.ndim, np.size)
