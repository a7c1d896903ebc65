"""Adjoints of operations that move, repeat or pick elements: reshapes and
transposes, ``tile``, ``repeat``, ``concatenate``, ``stack``, splits, padding,
diagonals, sorting, ``np.select``; and of the finite differences ``np.diff``
and ``np.gradient``, which combine neighbouring elements.  Indexing and
writes through an index are :mod:`.indexing`'s.

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

from .elementwise import unbroadcast
from .errors import error_at
from .namespaces import as_array, foreign
from .structures import ListCotangent, no_cotangent


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
    if foreign(g):  # Dask has no split: slices, each lazy
        ends = np.cumsum(sizes)
        pieces = [g[(slice(None),) * (axis % g.ndim) + (slice(int(e) - n, int(e)),)]
                  for e, n in zip(ends, sizes)]
    else:
        pieces = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    return ListCotangent([np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays)])


def cast_each_back(gs, xs):
    """The cotangents ``gs`` of the arrays ``xs`` a join cast to its ``dtype=``
    (``np.concatenate(xs, dtype=np.float32)``), each in its array's floating
    dtype (float64 for integers); the 0.0 of no cotangent stays."""
    if no_cotangent(gs):
        return gs
    return ListCotangent([g if no_cotangent(g) else np.asarray(g).astype(
        np.asarray(x).dtype if np.asarray(x).dtype.kind in "fc" else np.float64, copy=False)
        for g, x in zip(gs, xs)])


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
    if order == "C":  # NumPy's default, passed on only when asked for: Dask takes no order
        return np.reshape(g, np.shape(a))
    return np.reshape(g, np.shape(a), order=order)


def layout_order(a, order):
    """The index order (``'C'`` or ``'F'``) in which ``ravel``, ``flatten`` or
    ``reshape`` with ``order`` read ``a``: ``'A'`` is ``'F'`` where ``a`` is
    Fortran-contiguous and not C-contiguous, else ``'C'``; ``'K'`` is ``a``'s
    memory order, ``'C'`` or ``'F'`` where ``a`` is contiguous, None where it is
    neither (then :func:`memory_positions` gives the order).  A cotangent or
    tangent has its own layout, so the rules ask the value's."""
    order = (order or "C").upper()
    flags = getattr(a, "flags", None)
    if order not in ("A", "K") or flags is None:
        return order
    if order == "A":
        return "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    if flags.c_contiguous:
        return "C"
    return "F" if flags.f_contiguous else None


def memory_positions(a):
    """For each element of ``np.ravel(a, order='K')``, its position in
    ``np.ravel(a)`` (C order): an array laid out as ``a`` is, holding those
    positions, read in its memory order."""
    positions = np.empty_like(a, dtype=np.intp)  # keeps a's memory layout
    positions[...] = np.arange(np.size(a)).reshape(np.shape(a))
    return np.ravel(positions, order="K")


def memory_ravel(d, a, order):
    """``np.ravel(d, order)`` read in ``a``'s layout: the tangent of ``np.ravel(a,
    order)`` (``order`` ``'A'`` or ``'K'``, which depend on where ``a``'s
    elements lie in memory, not on ``d``'s)."""
    if no_cotangent(d):
        return 0.0
    how = layout_order(a, order)
    if how is None:
        return np.ravel(d)[memory_positions(a)]
    return np.ravel(d) if how == "C" else np.ravel(d, order=how)


def memory_unravel(g, a, order):
    """The cotangent ``g`` of ``np.ravel(a, order)`` (``'A'``, ``'K'``) back in
    ``a``'s shape, each element where ``a``'s layout read it from."""
    if no_cotangent(g):
        return 0.0
    how = layout_order(a, order)
    if how is not None:
        return reshape_like(g, a, how)
    flat = np.zeros(np.size(a), dtype=np.result_type(g))
    flat[memory_positions(a)] = np.ravel(g)
    return flat.reshape(np.shape(a))


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


def _in_dtype(g, x):
    """``g`` in the floating dtype of the array ``x``, where a constant of another
    dtype (``np.append(x, 1.0)`` on float32) promoted the output."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc" and np.result_type(g) != x.dtype:
        return g.astype(x.dtype) if foreign(g) else np.asarray(g, dtype=x.dtype)
    return g


def unappend(g, arr, values, axis=None):
    """Cotangents of ``arr`` and ``values`` in ``np.append(arr, values, axis)``
    (``axis=None`` joined the flattened arrays)."""
    if no_cotangent(g):
        return 0.0, 0.0
    ga, gv = unconcatenate(g, [arr, values], axis)
    return _in_dtype(ga, arr), _in_dtype(gv, values)


def unsplit(g, out, axis=0):
    """Cotangent of ``ary`` in ``np.split(ary, ..., axis)`` (and ``array_split``,
    ``hsplit``, ``vsplit``, ``dsplit``), whose pieces are ``out``: the pieces'
    cotangents joined back, zeros for those no cotangent reached."""
    if no_cotangent(g):
        return 0.0
    return np.concatenate([np.zeros_like(o) if no_cotangent(p) else np.broadcast_to(p, np.shape(o))
                           for p, o in zip(g, out)], axis)



def unstack_grad(g, out, axis=0):
    """Cotangent of ``x`` in ``np.unstack(x, axis=axis)``, whose slices are
    ``out``: their cotangents stacked back, zeros for those none reached.

        >>> unstack_grad((0.0, np.ones(2)), (np.zeros(2), np.zeros(2)), 1)
        array([[0., 1.],
               [0., 1.]])
    """
    if no_cotangent(g):
        return 0.0
    return np.stack([np.zeros_like(o) if no_cotangent(p) else np.broadcast_to(p, np.shape(o))
                     for p, o in zip(g, out)], axis)


def windows_grad(g, x, window_shape, axis=None):
    """Cotangent of ``x`` in ``sliding_window_view(x, window_shape, axis)``: the
    windows overlap, so each offset within a window adds its slice of ``g``
    back where those windows read ``x`` (one strided add per offset).

        >>> windows_grad(np.ones((3, 2)), np.zeros(4), 2)
        array([1., 2., 2., 1.])
    """
    if no_cotangent(g):
        return 0.0
    g = as_array(g)
    shape = np.shape(x)
    sizes = tuple(np.atleast_1d(window_shape).tolist())
    axes = tuple(range(len(shape))) if axis is None else tuple(np.atleast_1d(axis).tolist())
    axes = tuple(a % len(shape) for a in axes)
    counts = g.shape[:len(shape)]  # windows along each axis of x
    grad = np.zeros(shape, dtype=g.dtype)
    for offset in np.ndindex(*sizes):
        starts = [0] * len(shape)
        for a, k in zip(axes, offset):
            starts[a] += k
        grad[tuple(slice(s, s + n) for s, n in zip(starts, counts))] += g[(Ellipsis, *offset)]
    return grad

def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """Cotangent of ``a`` in ``np.diagonal(a, offset, axis1, axis2)``: ``g`` written
    on that diagonal of zeros shaped like ``a``."""
    if no_cotangent(g):
        return 0.0
    g = as_array(g)
    grad = np.zeros(np.shape(a), dtype=g.dtype)
    moved = np.moveaxis(grad, (axis1, axis2), (-2, -1))  # a view: writes land in grad
    i = np.arange(g.shape[-1])
    moved[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return grad


def diag_grad(g, v, k=0):
    """Cotangent of ``v`` in ``np.diag(v, k)``: the diagonal ``k`` of ``g`` where
    ``v`` is 1-D (it built a matrix), ``g`` on that diagonal where ``v`` is 2-D."""
    if no_cotangent(g):
        return 0.0
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return diagonal_grad(g, v, k)


def unrollaxis(g, a, axis, start=0):
    """Cotangent of ``a`` in ``np.rollaxis(a, axis, start)``: the inverse
    permutation of the axes, applied to ``g``."""
    if no_cotangent(g):
        return 0.0
    n = np.ndim(a)
    axis, start = axis % n, start + n if start < 0 else start
    order = [k for k in range(n) if k != axis]
    order.insert(start - 1 if axis < start else start, axis)
    return np.transpose(g, np.argsort(order))


def unroll(g, shift, axis=None):
    """Cotangent of ``a`` in ``np.roll(a, shift, axis)``: ``g`` rolled back (each of
    several shifts negated).  A bool shift is the int NumPy takes it for
    (``np.roll(x, True)`` rolls by 1), whose negation NumPy refuses for a bool.

        >>> unroll(np.array([1.0, 2.0, 3.0]), True)
        array([2., 3., 1.])
    """
    if no_cotangent(g):
        return 0.0
    return np.roll(g, np.negative(np.asarray(shift).astype(np.intp)), axis)


def pad_grad(g, array, pad_width, mode="constant", reflect_type="even"):
    """Cotangent of ``array`` in ``np.pad(array, pad_width, mode)``: the middle of
    ``g`` for the constant mode; for the modes that copy elements of ``array``
    into the border (edge, wrap, and reflect and symmetric with the even
    reflection) each element also collects the cotangents of its copies."""
    if no_cotangent(g):
        return 0.0
    shape = np.shape(array)
    if mode == "constant":
        widths = np.broadcast_to(np.asarray(pad_width), (len(shape), 2))
        return g[tuple(slice(int(w), int(w) + n) for w, n in zip(widths[:, 0], shape))]
    if mode not in ("edge", "wrap", "reflect", "symmetric") or reflect_type != "even":
        raise error_at("MissingRuleError", f"np.pad: the mode {mode!r} (reflect_type="
                       f"{reflect_type!r}) has no adjoint; the constant, edge and wrap modes "
                       f"and reflect and symmetric with reflect_type='even' do")
    size = int(np.prod(shape))
    source = np.pad(np.arange(size).reshape(shape), pad_width, mode).ravel()
    g = np.ravel(g)
    if np.iscomplexobj(g):
        grad = np.zeros(size, dtype=g.dtype)
        np.add.at(grad, source, g)
    else:
        grad = np.bincount(source, weights=g, minlength=size).astype(g.dtype)
    return grad.reshape(shape)


def take_along_axis_grad(g, arr, indices, axis=-1):
    """Cotangent of ``arr`` in ``np.take_along_axis(arr, indices, axis)``: ``g``
    scattered back to the places it was taken from, repeated places adding up."""
    if no_cotangent(g):
        return 0.0
    g = as_array(g)
    grad = np.zeros(np.shape(arr), dtype=g.dtype)
    if axis is None:
        np.add.at(grad.reshape(-1), indices, g)
        return grad
    axis %= grad.ndim
    index = tuple(indices if k == axis else np.arange(n).reshape(
        [n if j == k else 1 for j in range(grad.ndim)]) for k, n in enumerate(grad.shape))
    np.add.at(grad, index, g)
    return grad


def permutation_of(out, a, axis=-1):
    """The positions along ``axis`` of the elements of ``a`` that ``out``, a
    rearrangement of ``a`` along that axis (``np.partition``), holds: ``p`` with
    ``np.take_along_axis(a, p, axis) == out`` (tied elements in some order).
    ``axis=None`` is the flattened ``a``."""
    if axis is None:
        a, out, axis = np.ravel(a), np.ravel(out), 0
    from_a = np.argsort(a, axis=axis, kind="stable")
    from_out = np.argsort(out, axis=axis, kind="stable")
    return np.take_along_axis(from_a, np.argsort(from_out, axis=axis), axis=axis)


def select_grads(g, condlist, choicelist, default=0):
    """Cotangents of ``choicelist`` (a list, one per choice) and ``default`` in
    ``np.select(condlist, choicelist, default)``: each element's cotangent goes to
    the first choice whose condition holds there, or to ``default``."""
    if no_cotangent(g):
        return ListCotangent([0.0] * len(choicelist)), 0.0
    taken = np.zeros(np.shape(g), dtype=bool)
    grads = []
    for cond, choice in zip(condlist, choicelist):
        pick = np.logical_and(cond, np.logical_not(taken))
        grads.append(unbroadcast(np.where(pick, g, 0), choice))
        taken = taken | pick
    return ListCotangent(grads), unbroadcast(np.where(taken, 0, g), default)


def diff_grad(g, a, n=1, axis=-1, prepend=None, append=None):
    """Cotangent of ``a`` in ``np.diff(a, n, axis, prepend=..., append=...)``: each
    difference's transpose is minus the difference of ``g`` padded with a zero
    at both ends; what belongs to ``prepend`` and ``append`` is cut off."""
    if no_cotangent(g):
        return 0.0
    g = as_array(g)
    axis %= g.ndim
    widths = [(1, 1) if k == axis else (0, 0) for k in range(g.ndim)]
    for _ in range(n):
        g = -np.diff(np.pad(g, widths), axis=axis)
    start = 0
    if prepend is not None:
        start = 1 if np.ndim(prepend) == 0 else np.shape(prepend)[axis]
    stop = start + np.shape(a)[axis]
    return _in_dtype(g[tuple(slice(start, stop) if k == axis else slice(None)
                             for k in range(g.ndim))], a)


def gradient_grad(g, f, spacing=(), axis=None, edge_order=1):
    """Cotangent of ``f`` in ``np.gradient(f, *spacing, axis=axis, edge_order=...)``.

    Along each axis ``np.gradient`` applies a banded linear map: each result
    reads the elements at most two places away.  Its transpose is read off
    five probes (every fifth element set), one per residue of the position
    mod 5, which cannot overlap within a band; it holds for any spacing.
    """
    if no_cotangent(g):
        return 0.0
    nd = np.ndim(f)
    if axis is None:
        axes = list(range(nd))
    else:
        axes = [k % nd for k in ((axis,) if np.ndim(axis) == 0 else axis)]
    parts = [g] if len(axes) == 1 else list(g)
    if len(spacing) == 0:
        spacing = [1.0] * len(axes)
    elif len(spacing) == 1 and np.ndim(spacing[0]) == 0:
        spacing = list(spacing) * len(axes)
    dtype = np.result_type(*[p for p in parts if not no_cotangent(p)] or [np.asarray(f)])
    grad = np.zeros(np.shape(f), dtype=dtype)
    for k, h, part in zip(axes, spacing, parts):
        if no_cotangent(part):
            continue
        n = np.shape(f)[k]
        part = np.moveaxis(np.broadcast_to(part, np.shape(f)), k, -1)
        total = np.zeros(part.shape, dtype=dtype)
        for r in range(min(5, n)):
            probe = (np.arange(n) % 5 == r).astype(np.float64)
            band = np.pad(part * np.gradient(probe, h, edge_order=edge_order),
                          [(0, 0)] * (part.ndim - 1) + [(2, 2)])
            total += probe * sum(band[..., d:d + n] for d in range(5))
        grad += np.moveaxis(total, -1, k)
    return grad
