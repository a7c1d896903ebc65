"""Adjoints of operations that move, repeat or pick elements: reshapes and
transposes, ``tile``, ``repeat``, ``concatenate``, ``stack``, splits, padding,
diagonals, sorting, ``np.select``, indexing; and of the finite differences
``np.diff`` and ``np.gradient``, which combine neighbouring elements.

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

import math

import numpy as np

from .aliases import is_basic_index
from .elementwise import unbroadcast
from .errors import error_at
from .namespaces import as_array, foreign, namespace_of
from .structures import ListCotangent, cotangent_like, item_cotangent, no_cotangent


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


def getitem_grad(g, a, index):
    """Cotangent of ``a`` in ``a[index]``: ``g`` scattered into zeros, with
    repeated integer indices accumulating (``np.add.at``).  For a tuple or
    list ``a`` it is a tuple or list with zeros for the other elements."""
    if isinstance(a, (tuple, list, dict)):
        return cotangent_like(a, index, g)
    if type(g) is np.ndarray or not foreign(g):
        grad = np.zeros_like(a)
        if np.iscomplexobj(g) and not np.iscomplexobj(grad):
            g = np.real(g)  # a real array's cotangent is the real part (and NumPy warns otherwise)
    else:  # a Dask or CuPy cotangent of a NumPy array: scattered in its own library
        grad = namespace_of(g).zeros_like(a)
    if is_basic_index(index):
        grad[index] = g
    elif foreign(grad):
        try:
            np.add.at(grad, index, g)  # CuPy has it
        except TypeError:  # Dask has not (it is not lazy)
            return _scatter_rows(grad, index, g)
    else:
        np.add.at(grad, index, g)
    return grad


def _scatter_rows(grad, index, g):
    """``np.add.at(grad, index, g)`` for an array whose library has no ``add.at``
    (a Dask array), where ``index`` is a NumPy array or list of integers that
    picks rows (``x[idx]``, an embedding lookup): the rows of ``g`` for a repeated
    index summed first (a product with a small NumPy 0/1 matrix, lazy), then
    written once each.  A 1-D NumPy boolean mask (``x[keep]``, rows chosen) is
    the rows ``np.flatnonzero(keep)``.  Other indices raise
    :class:`MissingRuleError`."""
    if type(index) is np.ndarray and index.dtype == bool and index.ndim == 1:
        index = np.flatnonzero(index)
    idx = np.asarray(index) if isinstance(index, (list, np.ndarray)) else None
    if idx is None or idx.dtype.kind not in "iu" or idx.ndim != 1:
        library = type(grad).__module__.split(".")[0]
        if getattr(index, "dtype", None) == bool:  # Dask makes chunks of unknown sizes
            kind = f"that is a {library} array" if foreign(index) else "of several axes"
            what = (f"a boolean mask {kind} (where its selected elements go is not known "
                    f"until it is computed; np.where(mask, x, 0) keeps the shape and "
                    f"stays lazy)")
        else:
            what = f"a {type(index).__name__} (several integer arrays)"
        raise error_at("MissingRuleError",
                       f"the adjoint of indexing a {library} array with {what} needs "
                       f"np.add.at, which that library does not have; index with slices, "
                       f"with one 1-D NumPy array of integers (x[idx]) or with a 1-D NumPy "
                       f"boolean mask (x[keep])")
    idx = np.where(idx < 0, idx + grad.shape[0], idx)
    rows, owner = np.unique(idx, return_inverse=True)
    g = np.broadcast_to(g, idx.shape + grad.shape[1:])
    if len(rows) < len(idx):  # a repeated row: the sum of its cotangents
        merge = (owner.ravel() == np.arange(len(rows))[:, None]).astype(g.dtype)
        g = np.tensordot(namespace_of(grad).asarray(merge), g, axes=(1, 0))
    grad[rows] = g
    return grad


def written_cotangent(g, x, index, value=None):
    """The cotangent of ``value`` in ``x[index] = value`` (shaped like
    ``x[index]``; the adjoint sums it to ``value``'s shape), where ``g`` is the
    cotangent of ``x`` after the write: the elements of ``g`` that ``value``
    wrote.  It differs from ``g[index]`` twice over:

    * an integer or bool array truncates what is written into it (a float
      stored into ``np.zeros(3, dtype=int)``): piecewise constant, so nothing
      flows back (0.0, no cotangent);
    * an advanced index may name an element twice (``y[[1, 1, 3]] = v``, and
      ``y[idx] += v``, which NumPy runs as ``y[idx] = y[idx] + v``): NumPy
      keeps the last write there, so the earlier writes to that element never
      reach the output and their cotangent is zero.  A basic index (ints,
      slices) names each element once and pays nothing; an advanced one a
      sort of the flat positions of its integer arrays (:func:`last_writes`).

    ``value`` is what was written, when the compiler has it: its memory order
    is part of the order NumPy writes in.  A list or dict ``x`` holds what is
    stored in it as it is.

        >>> y = np.zeros(4)
        >>> written_cotangent(np.arange(4.0), y, [1, 1, 3])
        array([0., 1., 3.])
        >>> written_cotangent(np.ones(3), np.zeros(3, dtype=int), 0)
        0.0
    """
    if isinstance(x, (list, dict)):
        return item_cotangent(g, x, index)
    if _truncates(x):
        return 0.0
    shape = np.shape(x)
    if is_basic_index(index):
        return np.broadcast_to(g, shape)[index]  # a read-only view, as before
    # advanced indexing copies: g itself where it has x's shape (broadcast_to costs ~4 us)
    part = (g if type(g) is np.ndarray and g.shape == shape else np.broadcast_to(g, shape))[index]
    kept = last_writes(x, index, np.shape(part), value)
    if kept is None:
        return part
    if foreign(part) or foreign(x):
        if type(x).__module__.split(".")[0] != "dask":  # CuPy: which write wins is not defined
            raise error_at("MissingRuleError", _REPEATS_UNDEFINED.format(type(x).__module__))
        return part * kept  # a NumPy mask, applied lazily
    part[~kept] = 0  # part is a copy: advanced indexing copies
    return part


_REPEATS_UNDEFINED = (
    "an element assignment x[index] = v writes one element of a {} array more than "
    "once (its integer index repeats an element), and that library does not say which "
    "write is kept; write each element once (np.unique(index, return_index=True) picks "
    "one value for each)")


def written_tangent(t, x):
    """The tangent ``x`` keeps of a value ``t`` is the tangent of, written into
    it by ``x[index] = value``: ``t``, or zeros shaped like it where ``x`` is an
    integer or bool array, which truncates what it stores (piecewise
    constant)."""
    return np.zeros_like(t) if _truncates(x) else t


def _truncates(x) -> bool:
    """Whether ``x`` is an integer or bool array (NumPy, Dask or CuPy)."""
    if type(x) is np.ndarray:
        return x.dtype.kind in "biu"
    return foreign(x) and np.dtype(x.dtype).kind in "biu"


def last_writes(x, index, shape, value=None):
    """Where ``x[index] = value`` (``x[index]`` of shape ``shape``) keeps what it
    writes: None where ``index`` names no element twice (the common case,
    decided by sorting the flat positions of its integer arrays),
    else a bool array of ``shape``, False at each write that a later write to
    the same element replaces.  The order of the writes is NumPy's own,
    observed on a probe array laid out like ``x`` (NumPy writes in the memory
    order of the index and the value where those are not C-ordered); the
    probe is ``np.empty``, so only the pages the index touches are paged in.

        >>> last_writes(np.zeros(4), [1, 1, 3], (3,))
        array([False,  True,  True])
        >>> last_writes(np.zeros(3), [1, -2], (2,))
        array([False,  True])
        >>> last_writes(np.zeros((2, 3)), (slice(None), [0, 2]), (2, 2)) is None
        True
    """
    keys = _advanced_positions(index, np.shape(x))
    if keys is None:
        return None
    keys = np.sort(keys, kind="stable")  # a repeat sits beside its twin (np.unique does this)
    if not np.count_nonzero(keys[1:] == keys[:-1]):  # faster than any() for small arrays
        return None
    index = _host_index(index)
    size = math.prod(shape)
    order = np.arange(size, dtype=np.intp).reshape(shape)
    written = order
    if type(value) is np.ndarray and value.shape == shape and not value.flags.c_contiguous:
        written = np.empty_like(value, dtype=np.intp)  # the value's memory order
        written[...] = order
    probe = np.empty_like(x, dtype=np.intp) if type(x) is np.ndarray \
        else np.empty(np.shape(x), dtype=np.intp)
    probe[index] = written
    kept = probe[index] == order
    return None if kept.all() else kept


def _advanced_positions(index, shape):
    """The flat positions in ``shape`` of the elements the integer arrays of
    ``index`` name together (broadcast; negative ones counted from the end), or
    None where the index has no integer array, so nothing can repeat (basic
    parts, one or more boolean masks: each names its elements once).  An index
    whose parts this does not place (``None`` or a bool beside arrays, sizes
    not known) gives ``_ALWAYS_PROBE``, whose repeated key sends
    :func:`last_writes` to its probe, which is right for every index."""
    if type(index) is np.ndarray and index.dtype.kind in "iu" or type(index) is list \
            and index and all(type(i) is int for i in index):  # y[idx], y[[1, 1, 3]]
        return np.remainder(index, shape[0]).ravel() if shape[0] else np.ravel(index)
    parts = _host_index(index)
    parts = parts if isinstance(parts, tuple) else (parts,)
    arrays, rest = [], []
    for p in parts:
        if p is None or isinstance(p, (bool, np.bool_)):
            return _ALWAYS_PROBE
        if isinstance(p, (list, np.ndarray)):
            p = np.asarray(p)
            if p.dtype == bool:
                arrays.append(("mask", p))
            elif p.size == 0 or p.dtype.kind in "iu":
                arrays.append(("ints", p.astype(np.intp, copy=False)))
            else:
                return _ALWAYS_PROBE
        rest.append(p)
    if not any(kind == "ints" for kind, _ in arrays):
        return None
    used = sum(np.ndim(p) if isinstance(p, np.ndarray) and p.dtype == bool else 1
               for p in rest if p is not Ellipsis)
    axis, comps, dims = 0, [], []
    for p in rest:
        if p is Ellipsis:
            axis += len(shape) - used
        elif isinstance(p, np.ndarray) and p.dtype == bool:
            comps.extend(np.nonzero(p))
            dims.extend(shape[axis:axis + p.ndim])
            axis += p.ndim
        else:
            if isinstance(p, np.ndarray):
                comps.append(p)
                dims.append(shape[axis])
            axis += 1
    if not all(isinstance(n, (int, np.integer)) for n in dims):
        return _ALWAYS_PROBE  # unknown sizes (a Dask array's NaN)
    if len(comps) == 1:
        return np.ravel(comps[0] % dims[0]) if dims[0] else np.ravel(comps[0])
    comps = np.broadcast_arrays(*comps)
    return np.ravel(np.ravel_multi_index(comps, dims, mode="wrap"))


_ALWAYS_PROBE = np.zeros(2, dtype=np.intp)


def _host_index(index):
    """``index`` with a CuPy array in it copied to the host; a Dask array there
    (a lazy index) would have to be computed to tell whether it repeats."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(foreign(p) for p in parts):
        return index
    out = []
    for p in parts:
        if foreign(p):
            if not hasattr(p, "get"):
                raise error_at("MissingRuleError", (
                    "an element assignment x[index] = v whose index is a "
                    f"{type(p).__module__.split('.')[0]} array: its adjoint must know "
                    "whether the index names an element twice (NumPy keeps the last "
                    "write), which a lazy index tells only when computed; index with a "
                    "NumPy array (idx.compute())"))
            p = p.get()
        out.append(p)
    return tuple(out) if isinstance(index, tuple) else out[0]


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
    several shifts negated)."""
    if no_cotangent(g):
        return 0.0
    return np.roll(g, np.negative(shift), axis)


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
