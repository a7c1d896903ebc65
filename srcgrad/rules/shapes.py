"""Rules of shape operations: reshapes, transposes, joins, copies, both modes.

These move elements around without changing them, so they are linear: one
``@linear`` declaration gives the tangent, the same operation applied to the
tangent, and its adjoint, the transpose, which moves the cotangent back: a
reshape reshapes it to the input's shape, a transpose applies the inverse
permutation, a join splits it (one cotangent per joined array; the tangent
joins the tangents, zeros for arrays that do not move), a broadcast or tile
sums the copies.  ``np.insert`` is linear in its array and its values
together: where each element went is found by inserting their positions.
``np.shape``, ``np.ndim`` and ``np.size`` are integers and carry no
derivative.  ``sliding_window_view`` (the usual im2col of a convolution) is
linear too; its windows overlap, so its transpose adds each offset's slice of
the cotangent back (:func:`~srcgrad.runtime.windows_grad`).
"""

import numpy as np

from ..runtime import (
    block_grads,
    block_tangent,
    cotangent_at,
    grad_like,
    layout_order,
    memory_ravel,
    memory_unravel,
    move_cotangent,
    pad_grad,
    reshape_each,
    reshape_like,
    unappend,
    unbroadcast,
    cast_each_back,
    unconcatenate,
    unrepeat,
    unroll,
    unrollaxis,
    unsplit,
    unstack,
    untile,
    windows_grad,
)
from .derive import alias, linear
from .registry import adjoint, nondifferentiable, tangent


@adjoint(np.reshape, "a")
def reshape(out, d_out, a, shape, order="C"):
    """``order='A'`` reads ``a`` in its memory order: the cotangent goes back
    in that order, which is ``a``'s, not the cotangent's (``layout_order``)."""
    if order == "C":  # the default: folded away at inlining
        return reshape_like(d_out, a)
    if order == "F":
        return reshape_like(d_out, a, order)
    return reshape_like(d_out, a, layout_order(a, order))


@tangent(np.reshape, "a")
def reshape_tangent(out, a, shape, order="C", *, d_a):
    if order == "C":
        return np.reshape(d_a, shape)
    if order == "F":
        return np.reshape(d_a, shape, order=order)
    return np.reshape(d_a, shape, order=layout_order(a, order))


@adjoint(np.ravel, "a")
def ravel(out, d_out, a, order="C"):
    """``order='A'`` and ``'K'`` read ``a`` in its memory order (found by review:
    ``X.T.ravel('A')`` got the cotangent back in C order, a wrong gradient, and
    ``'K'`` a raw ValueError): ``memory_unravel`` puts each element back where
    ``a``'s layout read it from."""
    if order == "C":  # the default: folded away at inlining
        return reshape_like(d_out, a)
    if order == "F":
        return reshape_like(d_out, a, order)
    return memory_unravel(d_out, a, order)


@tangent(np.ravel, "a")
def ravel_tangent(out, a, order="C", *, d_a):
    """The tangent read in ``a``'s memory order, which a tangent (a copy of
    another layout) does not share (``X.copy(order='F').ravel('A')``)."""
    if order == "C":
        return np.ravel(d_a)
    if order == "F":
        return np.ravel(d_a, order=order)
    return memory_ravel(d_a, a, order)


nondifferentiable(layout_order)  # 'C' or 'F': a string, read off the value's layout


@linear(memory_ravel, "d", name="memory_ravel")
def memory_ravel_(out, d_out, d, a, order):
    return memory_unravel(d_out, a, order)


@linear(memory_unravel, "g", name="memory_unravel")
def memory_unravel_(out, d_out, g, a, order):
    return memory_ravel(d_out, a, order)


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


@adjoint(np.atleast_3d, "arys")
def atleast_3d(out, d_out, *arys):
    """One array gives one output; several give a tuple (and ``d_out`` a tuple)."""
    if len(arys) == 1:
        return [reshape_like(d_out, arys[0])]
    return reshape_each(d_out, arys)


@tangent(np.atleast_3d, "arys")
def atleast_3d_tangent(out, *arys, d_arys):
    if len(arys) == 1:
        return np.atleast_3d(d_arys[0])
    return [np.atleast_3d(t) for t in d_arys]


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


@linear(np.fliplr, "m")
def fliplr(out, d_out, m):
    return move_cotangent(d_out, np.fliplr)


@linear(np.flipud, "m")
def flipud(out, d_out, m):
    return move_cotangent(d_out, np.flipud)


@linear(np.rot90, "m")
def rot90(out, d_out, m, k=1, axes=(0, 1)):
    return move_cotangent(d_out, np.rot90, -k, axes)


@linear(np.roll, "a")
def roll(out, d_out, a, shift, axis=None):
    """Rolled back by ``-shift`` (a tuple of shifts: each negated)."""
    return unroll(d_out, shift, axis)


@linear(np.rollaxis, "a")
def rollaxis(out, d_out, a, axis, start=0):
    return unrollaxis(d_out, a, axis, start)


@linear(np.broadcast_to, "array")
def broadcast_to(out, d_out, array, shape):
    return unbroadcast(d_out, array)


@linear(np.tile, "A")
def tile(out, d_out, A, reps):  # noqa: N803 - mirrors numpy
    return untile(d_out, A, reps)


@linear(np.repeat, "a")
def repeat(out, d_out, a, repeats, axis=None):
    return unrepeat(d_out, a, repeats, axis)


@linear(np.concatenate, "arrays", keywords=("axis", "dtype", "casting"))
def concatenate(out, d_out, arrays, axis=0, *, dtype=None, casting="same_kind"):
    """One cotangent per joined array; ``axis=None`` joins the flattened arrays.
    ``dtype=`` (NumPy 1.24) casts each array to it first, so each cotangent is
    cast back to its array's dtype (a list display with ``dtype=`` is written
    out as casts by normalize/numpy_callables; a list held in a name comes
    here)."""
    if dtype is None:
        return unconcatenate(d_out, arrays, axis)
    return cast_each_back(unconcatenate(d_out, arrays, axis), arrays)


@linear(np.stack, "arrays", keywords=("axis", "dtype", "casting"))
def stack(out, d_out, arrays, axis=0, *, dtype=None, casting="same_kind"):
    """One cotangent per stacked array (cast back to its dtype, as
    ``np.concatenate``'s, after a ``dtype=``)."""
    if dtype is None:
        return unstack(d_out, arrays, axis)
    return cast_each_back(unstack(d_out, arrays, axis), arrays)


@adjoint(np.broadcast_arrays, "args")
def broadcast_arrays(out, d_out, *args):
    """Each output is its input broadcast: its cotangent summed back
    (``0.0`` for an output no cotangent reached)."""
    return [unbroadcast(cotangent_at(d_out, i), a) for i, a in enumerate(args)]


@tangent(np.broadcast_arrays, "args")
def broadcast_arrays_tangent(out, *args, d_args):
    return tuple(np.broadcast_to(t, np.shape(o)) for t, o in zip(d_args, out))


@adjoint(np.insert, "arr", "values", name="np.insert")
def insert(out, d_out, arr, obj, values, axis=None):
    """Linear in ``arr`` and ``values`` together.  Inserting the flat positions
    of ``arr``'s elements (``-1`` for the slots) shows where each one went, and
    inserting those of ``values`` into ``-1``s where each value went, however
    NumPy broadcast it: the cotangent of ``arr`` is gathered back, each value's
    is the sum over its copies."""
    g = np.broadcast_to(d_out, np.shape(out))
    source = np.insert(np.arange(np.size(arr)).reshape(np.shape(arr)), obj, -1, axis)
    kept = source >= 0
    d_arr = g[kept][np.argsort(source[kept])].reshape(np.shape(arr))
    placed = np.insert(np.full(np.shape(arr), -1), obj,
                       np.arange(np.size(values)).reshape(np.shape(values)), axis)
    copies = placed >= 0
    d_values = g[copies] @ (placed[copies][:, None] == np.arange(np.size(values)))
    return d_arr, grad_like(d_values.reshape(np.shape(values)), values)


@tangent(np.insert, "arr", "values", name="np.insert")
def insert_tangent(out, arr, obj, values, axis=None, *, d_arr, d_values):
    """The tangents inserted alike, zeros in the other one's places."""
    return (np.insert(d_arr, obj, np.zeros((), dtype=out.dtype), axis),
            np.insert(np.zeros(np.shape(arr), dtype=out.dtype), obj, d_values, axis))


@adjoint(np.block, "arrays", name="np.block")
def block(out, d_out, arrays):
    """Each array's block of the cotangent, nested as the arrays are."""
    return block_grads(d_out, arrays)


@tangent(np.block, "arrays", name="np.block")
def block_tangent_(out, arrays, *, d_arrays):
    """The tangents blocked alike, zeros for arrays that do not move."""
    return block_tangent(d_arrays, arrays)


@linear(block_tangent, "t", name="block_tangent")
def block_tangent_transpose(out, d_out, t, arrays):
    return block_grads(d_out, arrays)


@linear(np.hstack, "tup", keywords=("dtype", "casting"))
def hstack(out, d_out, tup, *, dtype=None, casting="same_kind"):
    """One cotangent per joined array (1-D ones join along axis 0, others 1),
    cast back to its dtype after a ``dtype=``."""
    if dtype is None:
        return unconcatenate(d_out, tup, 0 if np.ndim(d_out) == 1 else 1)
    return cast_each_back(unconcatenate(d_out, tup, 0 if np.ndim(d_out) == 1 else 1), tup)


@linear(np.vstack, "tup", keywords=("dtype", "casting"))
def vstack(out, d_out, tup, *, dtype=None, casting="same_kind"):
    """One cotangent per joined array (each 1-D array is one row), cast back
    to its dtype after a ``dtype=``."""
    if dtype is None:
        return unconcatenate(d_out, tup, 0)
    return cast_each_back(unconcatenate(d_out, tup, 0), tup)


if getattr(np, "row_stack", None) is not None and np.row_stack is not np.vstack:
    alias(np.row_stack, np.vstack, name="np.row_stack")  # deprecated in NumPy 2


@linear(np.column_stack, "tup")
def column_stack(out, d_out, tup):
    """One cotangent per joined array (each 1-D array is one column)."""
    return unconcatenate(d_out, tup, 1)


@linear(np.dstack, "tup")
def dstack(out, d_out, tup):
    """One cotangent per joined array (joined along the third axis, after
    ``np.atleast_3d``)."""
    return unconcatenate(d_out, tup, 2)


@adjoint(np.append, "arr", "values")
def append(out, d_out, arr, values, axis=None):
    """``axis=None`` joins the flattened arrays."""
    return unappend(d_out, arr, values, axis)


@tangent(np.append, "arr", "values")
def append_tangent(out, arr, values, axis=None, *, d_arr, d_values):
    """Each term joins one tangent with zeros in place of the other array."""
    if axis is None:
        return (np.append(d_arr, np.zeros_like(values, dtype=out.dtype)),
                np.append(np.zeros_like(arr, dtype=out.dtype), d_values))
    return (np.append(d_arr, np.zeros_like(values, dtype=out.dtype), axis),
            np.append(np.zeros_like(arr, dtype=out.dtype), d_values, axis))


@linear(np.split, "ary")
def split(out, d_out, ary, indices_or_sections, axis=0):
    """The pieces' cotangents joined back (zeros for pieces none reached)."""
    return unsplit(d_out, out, axis)


@linear(np.array_split, "ary")
def array_split(out, d_out, ary, indices_or_sections, axis=0):
    return unsplit(d_out, out, axis)


@linear(np.hsplit, "ary")
def hsplit(out, d_out, ary, indices_or_sections):
    """Along the second axis (the first of a 1-D array)."""
    return unsplit(d_out, out, min(np.ndim(ary) - 1, 1))


@linear(np.vsplit, "ary")
def vsplit(out, d_out, ary, indices_or_sections):
    return unsplit(d_out, out, 0)


@linear(np.dsplit, "ary")
def dsplit(out, d_out, ary, indices_or_sections):
    return unsplit(d_out, out, 2)


@adjoint(np.pad, "array", "constant_values", name="np.pad")
def pad(out, d_out, array, pad_width, mode="constant", *, constant_values=0,
        reflect_type="even"):
    """The constant mode (the border's values are constants) and the modes that
    copy elements into the border: edge, wrap, reflect and symmetric (whose
    elements collect their copies' cotangents).  Others raise MissingRuleError.
    Each constant gets the sum of the cotangent over the part of the border it
    fills (a corner belongs to the later axis, as NumPy fills it), found by
    padding labels the same way; summed back to the shape the constants were
    given in (one, one pair, or a pair per axis)."""
    assert mode in ("constant", "edge", "wrap", "reflect", "symmetric"), \
        "np.pad: only the constant, edge, wrap, reflect and symmetric modes have an adjoint"
    assert reflect_type == "even" or mode in ("constant", "edge", "wrap"), \
        "np.pad: reflect and symmetric have an adjoint with reflect_type='even' only"
    if mode != "constant":
        return pad_grad(d_out, array, pad_width, mode, reflect_type), None
    labels = np.pad(np.full(np.shape(array), -1), pad_width,
                    constant_values=np.arange(2 * np.ndim(array)).reshape(-1, 2))
    sums = np.bincount(np.ravel(labels) + 1, np.ravel(np.broadcast_to(d_out, np.shape(out))),
                       2 * np.ndim(array) + 1)[1:]
    g_values = unbroadcast(np.asarray(sums.reshape(-1, 2), dtype=np.result_type(d_out)),
                           np.asarray(constant_values))
    return (pad_grad(d_out, array, pad_width, mode, reflect_type),
            tuple(g_values) if isinstance(constant_values, (tuple, list)) else g_values)


@tangent(np.pad, "array", "constant_values", name="np.pad")
def pad_tangent(out, array, pad_width, mode="constant", *, constant_values=0,
                reflect_type="even", d_array, d_constant_values):
    """The border of the tangent: zeros (constant mode) or copies of the
    tangent's elements (``2 * edge - copy`` for the odd reflection); the
    constants' tangents fill the border of zeros."""
    if mode == "constant":
        return (np.pad(d_array, pad_width),
                np.pad(np.zeros(np.shape(array), dtype=out.dtype), pad_width,
                       constant_values=d_constant_values))
    if mode not in ("edge", "wrap", "reflect", "symmetric"):
        assert False, "np.pad: only the constant, edge, wrap, reflect and symmetric modes " \
            "have a tangent"
    if reflect_type == "even":
        return np.pad(d_array, pad_width, mode), None
    return np.pad(d_array, pad_width, mode, reflect_type=reflect_type), None


nondifferentiable(np.shape, np.ndim, np.size)


@linear(np.lib.stride_tricks.sliding_window_view, "x", unused=("subok",),
        name="np.lib.stride_tricks.sliding_window_view")
def sliding_window_view(out, d_out, x, window_shape, axis=None, *, subok=False):
    """A read-only view of overlapping windows: each element of ``x`` gets the
    cotangents of every window position that reads it (review s36 R4-13).
    ``writeable=True`` is not a parameter of the rule, so it is refused: a
    write through the view would change ``x`` behind srcgrad's back."""
    return windows_grad(d_out, x, window_shape, axis)
