"""Tangent rules of shape operations: reshapes, transposes, joins, copies.

These operations are linear and only move elements around, so each one maps
the tangent exactly as it maps the value: the tangent of a reshape is the
reshaped tangent, of a transpose the transposed tangent, of a join the join
of the tangents (with zeros for arrays that do not move), of a broadcast or
tile the broadcast or tiled tangent.  Where the adjoint rule takes an
optional argument, an ``if`` on it (folded away at inlining) keeps the
default out of the generated code.
"""

import numpy as np

from ..rules.registry import tangent


@tangent(np.reshape, "a")
def reshape(out, a, shape, order="C", *, d_a):
    if order == "C":
        return np.reshape(d_a, shape)
    return np.reshape(d_a, shape, order=order)


@tangent(np.ravel, "a")
def ravel(out, a, order="C", *, d_a):
    if order == "C":
        return np.ravel(d_a)
    return np.ravel(d_a, order=order)


@tangent(np.squeeze, "a")
def squeeze(out, a, axis=None, *, d_a):
    if axis is None:
        return np.squeeze(d_a)
    return np.squeeze(d_a, axis)


@tangent(np.expand_dims, "a")
def expand_dims(out, a, axis, d_a):
    return np.expand_dims(d_a, axis)


@tangent(np.atleast_1d, "arys")
def atleast_1d(out, *arys, d_arys):
    """One array gives one output; several give one output per array."""
    if len(arys) == 1:
        return np.atleast_1d(d_arys[0])
    return [np.atleast_1d(t) for t in d_arys]


@tangent(np.atleast_2d, "arys")
def atleast_2d(out, *arys, d_arys):
    """One array gives one output; several give one output per array."""
    if len(arys) == 1:
        return np.atleast_2d(d_arys[0])
    return [np.atleast_2d(t) for t in d_arys]


@tangent(np.transpose, "a")
def transpose(out, a, axes=None, *, d_a):
    if axes is None:
        return np.transpose(d_a)
    return np.transpose(d_a, axes)


@tangent(np.swapaxes, "a")
def swapaxes(out, a, axis1, axis2, d_a):
    return np.swapaxes(d_a, axis1, axis2)


@tangent(np.moveaxis, "a")
def moveaxis(out, a, source, destination, d_a):
    return np.moveaxis(d_a, source, destination)


@tangent(np.flip, "m")
def flip(out, m, axis=None, *, d_m):
    if axis is None:
        return np.flip(d_m)
    return np.flip(d_m, axis)


@tangent(np.broadcast_to, "array")
def broadcast_to(out, array, shape, d_array):
    return np.broadcast_to(d_array, shape)


@tangent(np.tile, "A")
def tile(out, A, reps, d_A):
    return np.tile(d_A, reps)


@tangent(np.repeat, "a")
def repeat(out, a, repeats, axis=None, *, d_a):
    if axis is None:
        return np.repeat(d_a, repeats)
    return np.repeat(d_a, repeats, axis)


@tangent(np.concatenate, "arrays")
def concatenate(out, arrays, axis=0, *, d_arrays):
    """``d_arrays`` holds one tangent per joined array (zeros where one does not move)."""
    if axis == 0:
        return np.concatenate(d_arrays)
    return np.concatenate(d_arrays, axis=axis)


@tangent(np.stack, "arrays")
def stack(out, arrays, axis=0, *, d_arrays):
    if axis == 0:
        return np.stack(d_arrays)
    return np.stack(d_arrays, axis=axis)


@tangent(np.hstack, "tup")
def hstack(out, tup, d_tup):
    return np.hstack(d_tup)


@tangent(np.vstack, "tup")
def vstack(out, tup, d_tup):
    return np.vstack(d_tup)
