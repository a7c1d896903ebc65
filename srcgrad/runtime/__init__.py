"""Runtime helpers that generated code calls.

These are the only srcgrad names generated code needs besides NumPy, and an
exported module carries copies of them, so each one is small, depends on NumPy
alone and is written to be read.  Adjoint rules use them too (the registry
allows a rule body to read exactly these names, ``np`` and ``math``).
"""

from __future__ import annotations

import numpy as np

from .aliases import (
    held_at,
    is_basic_index,
    same_object,
    same_or_untouched,
    same_window,
    taken_again,
    untouched,
    untouched_except,
    window,
    window_by,
)
from .errors import error_at
from .forward import (
    expand,
    fresh_tangent,
    sequence_tangent,
    tangent_attr,
    tangent_like,
    zero_tangent,
)
from .gradients import grad_like, zeros_grad
from .schedules import OnlineSnapshots, checkpoint_schedule, online_schedule
from .state import item_or_missing, restore_item, restored_into, snapshot, snapshot_state
from .structures import (
    AttributeCotangent,
    DictCotangent,
    ListCotangent,
    TupleCotangent,
    attribute_cotangent,
    cotangent_at,
    cotangent_like,
    cotangent_part,
    elements_cotangent,
    is_zero,
    sorted_order,
    unrepeat_sequence,
    unsort,
)

__all__ = [
    "ListCotangent",
    "TupleCotangent",
    "DictCotangent",
    "AttributeCotangent",
    "cotangent_at",
    "cotangent_part",
    "unrepeat_sequence",
    "sorted_order",
    "elements_cotangent",
    "unsort",
    "sequence_tangent",
    "attribute_cotangent",
    "drop_last",
    "untouched",
    "same_window",
    "taken_again",
    "same_or_untouched",
    "untouched_except",
    "held_at",
    "window",
    "window_by",
    "same_object",
    "keys_of",
    "sequence",
    "checkpoint_schedule",
    "OnlineSnapshots",
    "online_schedule",
    "unbroadcast",
    "unreduce",
    "grad_seed",
    "grad_like",
    "zeros_grad",
    "stop_gradient",
    "on_grad",
    "snapshot",
    "snapshot_state",
    "restored_into",
    "item_or_missing",
    "restore_item",
    "item_cotangent",
    "without_item",
    "signum",
    "matmul_grad_a",
    "matmul_grad_b",
    "tensordot_grad_a",
    "tensordot_grad_b",
    "einsum_grads",
    "prod_except",
    "extremum_grad",
    "norm_grad",
    "trace_grad",
    "untile",
    "unrepeat",
    "unconcatenate",
    "is_basic_index",
    "getitem_grad",
    "reshape_each",
    "reshape_like",
    "move_cotangent",
    "unstack",
    "reverse_cumsum",
    "outer_grads",
    "unpack_cotangent",
    "inv_grad",
    "solve_grads",
    "expand",
    "zero_tangent",
    "fresh_tangent",
    "tangent_like",
    "tangent_attr",
]


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``, undoing NumPy broadcasting.

    Used by the adjoints of broadcasting operations: if ``x`` was stretched to
    the output's shape, its cotangent is the sum over the stretched axes.
    """
    if type(g) is float:  # a Python float cotangent: nothing was broadcast
        return g
    if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape:
        return g  # the common case, first: no np.shape calls
    if isinstance(x, (tuple, list)):
        raise error_at(
            "UnsupportedSyntaxError",
            "srcgrad differentiated '+' as arithmetic, but an operand is a "
            f"{type(x).__name__}: a sequence whose type srcgrad could not see when it "
            "compiled (an argument or an element of a container); build it with "
            "tuple(...) or list(...) inside the function")
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    g = np.asarray(g)
    if g.ndim < len(shape) and not np.any(g):  # zeros smaller than x: no cotangent
        return 0.0
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if stretched:
        g = g.sum(axis=stretched, keepdims=True)
    if g.shape != shape and not np.any(g):  # zeros smaller than x: no cotangent
        return 0.0
    return g


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
    if type(g) is float and type(x) is np.ndarray and x.dtype.kind == "f":
        g = x.dtype.type(g)
    if axis is not None and not keepdims:
        if _no_cotangent(g):
            return 0.0
        g = _keep_reduced_axes(g, len(shape), axis)
    if type(x) is np.ndarray and x.size <= _SMALL:
        out = np.empty(shape, np.result_type(g))
        out[...] = g
        return out
    return np.broadcast_to(g, shape)


# Up to this many elements, materialising a broadcast is cheaper than making the view.
_SMALL = 4096


def _keep_reduced_axes(v, ndim, axis):
    """``v``, the result of a reduction over ``axis`` without ``keepdims``, with the
    reduced axes put back as length-1 axes (so that it broadcasts against the input)."""
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return np.expand_dims(v, tuple(sorted(a % ndim for a in axes)))


def grad_seed(value):
    """The cotangent 1 that starts ``grad``'s adjoint sweep.

    Raises if ``value`` is not a scalar: ``grad`` differentiates scalar
    functions; ``vjp`` and ``jacobian`` handle the others.
    """
    if type(value) is float:
        return 1.0
    if np.ndim(value) != 0:
        raise error_at(
            "NonDifferentiableError",
            f"grad needs a function with a scalar output, but it returned a value of "
            f"shape {np.shape(value)}; use srcgrad.vjp or srcgrad.jacobian for "
            f"non-scalar outputs")
    if isinstance(value, np.generic):
        return value.dtype.type(1)
    return 1.0


def drop_last(g):
    """The cotangent of a list before ``append``: ``g`` without its last element."""
    return g if is_zero(g) else ListCotangent(g[:-1])


# --- helpers of the adjoint rules (srcgrad.rules) ------------------------------------


def signum(x):
    """The derivative of ``abs`` at ``x``: ``np.sign(x)`` (a Python float for a
    Python number), and for complex ``x`` its conjugate ``conj(x) / |x|`` (the
    cotangent convention of autograd: a holomorphic rule needs no conjugate,
    ``abs`` does)."""
    if isinstance(x, (int, float)):
        return float(x > 0) - float(x < 0)
    if np.iscomplexobj(x):
        return np.conj(np.sign(x))
    return np.sign(x)


def _matmul_as_2d(g, a, b):
    """Promote 1-D matmul operands (and the cotangent) to matrices."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    if b.ndim == 1:
        b, g = b[:, None], g[..., None]
    if a.ndim == 1:
        a, g = a[None, :], g[..., None, :]
    return a, b, g


def matmul_grad_a(g, a, b):
    """Cotangent of ``a`` in ``a @ b`` (1-D, 2-D or batched, broadcast operands)."""
    if type(g) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray \
            and g.ndim == 2 and a.ndim == 2 and b.ndim == 2:
        return g @ b.T  # two matrices, the common case: nothing to promote or sum
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return g * b
    if _no_cotangent(g):  # no cotangent reached the product
        return 0.0
    a2, b2, g2 = _matmul_as_2d(g, a, b)
    ga = g2 @ np.swapaxes(b2, -1, -2)
    return unbroadcast(ga[..., 0, :] if np.ndim(a) == 1 else ga, a)


def matmul_grad_b(g, a, b):
    """Cotangent of ``b`` in ``a @ b`` (1-D, 2-D or batched, broadcast operands)."""
    if type(g) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray \
            and g.ndim == 2 and a.ndim == 2 and b.ndim == 2:
        return a.T @ g
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return g * a
    if _no_cotangent(g):
        return 0.0
    a2, b2, g2 = _matmul_as_2d(g, a, b)
    gb = np.swapaxes(a2, -1, -2) @ g2
    return unbroadcast(gb[..., 0] if np.ndim(b) == 1 else gb, b)


def _tensordot_axes(a, b, axes):
    """``np.tensordot``'s ``axes`` as two lists of non-negative axes."""
    if isinstance(axes, (int, np.integer)):
        return list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes))
    ax_a, ax_b = axes
    ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
    ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    return [k % np.ndim(a) for k in ax_a], [k % np.ndim(b) for k in ax_b]


def tensordot_grad_a(g, a, b, axes=2):
    """Cotangent of ``a`` in ``np.tensordot(a, b, axes)``."""
    if _no_cotangent(g):
        return 0.0
    ax_a, ax_b = _tensordot_axes(a, b, axes)
    free_a = [k for k in range(np.ndim(a)) if k not in ax_a]
    free_b = [k for k in range(np.ndim(b)) if k not in ax_b]
    ga = np.tensordot(g, b, axes=(list(range(len(free_a), np.ndim(g))), free_b))
    order = free_a + [ax_a[ax_b.index(k)] for k in sorted(ax_b)]
    return np.transpose(ga, [int(k) for k in np.argsort(order)])


def tensordot_grad_b(g, a, b, axes=2):
    """Cotangent of ``b`` in ``np.tensordot(a, b, axes)``."""
    if _no_cotangent(g):
        return 0.0
    ax_a, ax_b = _tensordot_axes(a, b, axes)
    free_a = [k for k in range(np.ndim(a)) if k not in ax_a]
    free_b = [k for k in range(np.ndim(b)) if k not in ax_b]
    gb = np.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    order = [ax_b[ax_a.index(k)] for k in sorted(ax_a)] + free_b
    return np.transpose(gb, [int(k) for k in np.argsort(order)])


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(subscripts, arrays):
    """Explicit per-operand and output subscripts, with ``...`` spelt out."""
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, rhs = subscripts.partition("->")
    ins = lhs.split(",")
    spare = [c for c in _LETTERS if c not in subscripts]
    extra = [np.ndim(a) - len(s.replace("...", "")) for s, a in zip(ins, arrays)]
    ell = "".join(spare[:max([n for s, n in zip(ins, extra) if "..." in s] + [0])])
    ins = [s.replace("...", ell[len(ell) - n:] if n else "") for s, n in zip(ins, extra)]
    if arrow:
        return ins, rhs.replace("...", ell)
    once = sorted(c for c in set("".join(ins)) if c not in ell and "".join(ins).count(c) == 1)
    return ins, ell + "".join(once)


def einsum_grads(g, operands):
    """Cotangents of ``np.einsum(subscripts, *arrays)``: ``[None, d_array1, ...]``.

    Each operand's cotangent is the einsum of the cotangent with the other
    operands, contracted back to that operand's subscripts.  The first entry
    stands for the subscripts string, which has no cotangent.
    """
    subscripts, arrays = operands[0], list(operands[1:])
    if not isinstance(subscripts, str):
        raise error_at("MissingRuleError", "einsum's sublist form einsum(x, [0, 1], ...) has no "
                     "adjoint; write the subscripts as a string")
    if _no_cotangent(g):
        return [None] + [0.0] * len(arrays)
    ins, outs = _einsum_parse(subscripts, arrays)
    grads = [None]
    for i, a in enumerate(arrays):
        sub = ins[i]
        if len(set(sub)) != len(sub):
            raise error_at("MissingRuleError", f"einsum {subscripts!r}: an index repeated "
                         f"within one operand ({sub!r}, a diagonal) has no adjoint")
        others = ins[:i] + ins[i + 1:] + [outs]
        kept = "".join(c for c in sub if c in "".join(others))
        gi = np.einsum(",".join(others) + "->" + kept, *(arrays[:i] + arrays[i + 1:]), g)
        gi = np.expand_dims(gi, tuple(k for k, c in enumerate(sub) if c not in kept))
        grads.append(np.broadcast_to(unbroadcast(gi, a), np.shape(a)))
    return grads


def prod_except(a, axis=None):
    """For each element of ``a``, the product of the other elements that
    ``np.prod(a, axis)`` multiplies it with (exact when some are zero)."""
    a = np.asarray(a)
    if axis is None:
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
    if _no_cotangent(g):
        return 0.0
    a = np.asarray(a)
    if axis is not None and not keepdims:
        out, g = _keep_reduced_axes(out, a.ndim, axis), _keep_reduced_axes(g, a.ndim, axis)
    hit = a == out
    if np.count_nonzero(hit) != np.size(out):  # ties (or NaNs): share g among the hits
        g = g / np.sum(hit, axis=axis, keepdims=True).astype(np.result_type(g))
    return g * hit


def norm_grad(g, out, x, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` in ``np.linalg.norm(x, ord, axis, keepdims)`` for vector
    norms and the Frobenius norm; 0 (a subgradient) where the norm is 0."""
    x = np.asarray(x)
    vector = (x.ndim == 1) if axis is None else np.ndim(axis) == 0 or len(axis) == 1
    gg, scale = unreduce(g, x, axis, keepdims), unreduce(out, x, axis, keepdims)
    if ord is None or ord == "fro" or (ord == 2 and vector):
        return gg * x / np.where(scale == 0, 1, scale)
    if not vector:
        raise error_at("MissingRuleError", f"np.linalg.norm: the matrix norm ord={ord!r} has "
                     f"no adjoint; only the Frobenius norm does")
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
    if _no_cotangent(g):
        return 0.0
    shape, nd = np.shape(a), np.ndim(a)
    ax1, ax2 = axis1 % nd, axis2 % nd
    eye = np.eye(shape[ax1], shape[ax2], k=offset, dtype=np.result_type(g))
    if ax1 > ax2:
        eye = eye.T
    eye = eye.reshape([shape[k] if k in (ax1, ax2) else 1 for k in range(nd)])
    return np.expand_dims(g, (min(ax1, ax2), max(ax1, ax2))) * eye


def untile(g, a, reps):
    """Cotangent of ``a`` in ``np.tile(a, reps)``: the sum over the copies."""
    if _no_cotangent(g):
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
    if _no_cotangent(g):
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
    if _no_cotangent(g):
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


def stop_gradient(x):
    """Return ``x``; no gradient flows through the call."""
    return x


def on_grad(x, hook):
    """Return ``x``; in the adjoint sweep, ``x``'s cotangent is replaced by
    ``hook(cotangent)`` (inspect it, clip it, scale it) before it flows on."""
    return x


def reshape_each(gs, xs):
    """The cotangents ``gs`` of several arrays, each reshaped to its array's
    shape (``np.atleast_1d(x, y)`` and the like)."""
    if _no_cotangent(gs):
        return ListCotangent([0.0] * len(xs))
    return ListCotangent([reshape_like(g, x) for g, x in zip(gs, xs)])


def item_cotangent(g, x, index):
    """The part of ``x``'s cotangent ``g`` that belongs to ``x[index]``."""
    if isinstance(x, (list, dict)):
        if isinstance(index, slice):
            return 0.0 if is_zero(g) else ListCotangent(list(g)[index])
        return cotangent_at(g, index)
    return np.broadcast_to(g, np.shape(x))[index]


def without_item(g, x, index):
    """``x``'s cotangent ``g`` with ``x[index]`` zeroed: after ``x[index] = v``,
    the old elements there no longer reach the output."""
    if isinstance(x, (list, dict)):
        if is_zero(g):
            return g
        if isinstance(g, dict):
            return DictCotangent((k, v) for k, v in g.items() if k != index)
        parts = list(g)
        for k in (range(len(parts))[index] if isinstance(index, slice) else [index]):
            parts[k] = 0.0
        return ListCotangent(parts)
    g = np.array(np.broadcast_to(g, np.shape(x)))
    g[index] = 0
    return g


def keys_of(mapping):
    """The keys of a dict, as a list (what ``for k in d`` runs over)."""
    return list(mapping)


def sequence(items):
    """What ``for x in items`` runs over, indexable by position: a list, tuple or
    array as it is; any other iterable (a dict: its keys) as a list."""
    return items if isinstance(items, (list, tuple, np.ndarray)) else list(items)


# --- adjoints of shape operations that may receive no cotangent --------------------
#
# A cotangent of a list of arrays is a ListCotangent, whose + adds element by
# element: a plain list's + would concatenate (a list stacked twice, say).
#
# Inside loops and after calls, the cotangent reaching an adjoint may be the scalar
# 0.0 that stands for "no cotangent yet" (see structures.is_zero).  Elementwise
# adjoints take it as it is; these helpers let the shape adjoints do the same.


def _no_cotangent(g) -> bool:
    """Whether ``g`` is a scalar zero standing for a whole array of zeros: the 0.0
    of no cotangent, perhaps moved on the way (``np.transpose(0.0)`` is a 0-d
    array, ``0.0 * s`` a NumPy float)."""
    if isinstance(g, np.ndarray):
        return g.ndim == 0 and not g
    return isinstance(g, (int, float, np.number)) and not isinstance(g, bool) and g == 0


def reshape_like(g, a, order="C"):
    """The cotangent ``g`` of a reshape of ``a`` (``np.reshape``, ``ravel``,
    ``squeeze``, ``expand_dims``...) reshaped back to ``a``'s shape; the scalar
    zero of no cotangent stays 0.0."""
    if _no_cotangent(g):
        return 0.0
    return np.reshape(g, np.shape(a), order=order)


def move_cotangent(g, move, *args):
    """``move(g, *args)``, where ``move`` only moves elements around
    (``np.transpose``, ``np.swapaxes``, ``np.moveaxis``, ``np.flip``): the
    cotangent of the input of such a move; the scalar zero of no cotangent
    stays 0.0."""
    if _no_cotangent(g):
        return 0.0
    return move(g, *args)


def unstack(g, arrays, axis=0):
    """Cotangents of the arrays ``np.stack(arrays, axis)`` joined: the slices of
    ``g`` along ``axis`` (0.0 for each when no cotangent reached the stack)."""
    if _no_cotangent(g):
        return ListCotangent([0.0] * len(arrays))
    return ListCotangent(np.moveaxis(g, axis, 0))


def reverse_cumsum(g, a, axis=None):
    """Cotangent of ``a`` in ``np.cumsum(a, axis)``: the cumulative sum of ``g``
    from the end (over the flattened array when ``axis`` is None)."""
    if _no_cotangent(g):
        return 0.0
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.ravel(g)))), np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def outer_grads(g, a, b):
    """Cotangents of ``a`` and ``b`` in ``np.outer(a, b)`` (both flattened there)."""
    if _no_cotangent(g):
        return 0.0, 0.0
    return np.reshape(g @ np.ravel(b), np.shape(a)), np.reshape(np.ravel(a) @ g, np.shape(b))


def unpack_cotangent(g, items):
    """Cotangents of the elements of the list or tuple ``items`` packed into one
    array (``np.array([x, y, z])``): the rows of ``g``."""
    if _no_cotangent(g):
        return ListCotangent([0.0] * len(items))
    return ListCotangent(g)


def inv_grad(g, out):
    """Cotangent of ``a`` in ``out = np.linalg.inv(a)``: ``-out.T @ g @ out.T``."""
    if _no_cotangent(g):
        return 0.0
    out_t = np.swapaxes(out, -1, -2)
    return -(out_t @ g @ out_t)


def solve_grads(g, out, a, b):
    """Cotangents of ``a`` and ``b`` in ``out = np.linalg.solve(a, b)``, where ``b``
    is a vector (shape (M,)) or a stack of matrices (..., M, K)."""
    if _no_cotangent(g):
        return 0.0, 0.0
    if np.ndim(b) == 1:
        gb = np.linalg.solve(np.swapaxes(a, -1, -2), g[..., None])
        return -(gb * out[..., None, :]), unbroadcast(gb[..., 0], b)
    gb = np.linalg.solve(np.swapaxes(a, -1, -2), g)
    return unbroadcast(-(gb @ np.swapaxes(out, -1, -2)), a), unbroadcast(gb, b)
