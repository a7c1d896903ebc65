"""Adjoints of indexing, and of writes through an index: ``a[index]`` and
``x[index] = value``.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.  Kept apart from
:mod:`.shapes` because an index, unlike a reshape or a join, may name an
element twice: reading ``a[[1, 1]]`` adds both cotangents there
(:func:`getitem_grad`), while writing ``y[[1, 1]] = v`` keeps NumPy's last
write, so the earlier one gets none (:func:`written_cotangent`,
:func:`last_writes`) -- and Dask and CuPy indices need their own handling
for both.

    >>> import numpy as np
    >>> getitem_grad(np.ones(2), np.zeros(3), [1, 1])
    array([0., 2., 0.])
"""

from __future__ import annotations

import math

import numpy as np

from .aliases import is_basic_index
from .errors import error_at
from .namespaces import foreign, namespace_of
from .structures import (
    ListCotangent,
    cotangent_like,
    is_zero,
    item_cotangent,
    without_item,
)


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
        if foreign(grad):
            index, g = _without_newaxes(grad, index, g)
            index, g = _forward_steps(grad, index, g)
        grad[index] = g
    elif foreign(grad):
        try:
            np.add.at(grad, index, g)  # CuPy has it
        except TypeError:  # Dask has not (it is not lazy)
            return _scatter_rows(grad, index, g)
    else:
        np.add.at(grad, index, g)
    return grad


def _without_newaxes(grad, index, g):
    """``index`` without its ``None`` entries and ``g`` without their length-1
    axes, for a library whose assignment does not take ``None`` (Dask reads
    ``grad[:, None] = g`` as ``grad[:] = g``, and fails on ``g``'s extra axis).
    A basic index only: its other axes keep their order when the ``None``
    entries go.  Worked out from the index and ``grad.ndim`` alone, not from
    shapes (a Dask array's may be unknown, NaN)."""
    parts = index if isinstance(index, tuple) else (index,)
    if not any(p is None for p in parts):
        return index, g
    spread = np.ndim(grad) - sum(p is not None and p is not Ellipsis for p in parts)
    newaxes, axis = [], 0
    for p in parts:
        if p is None:
            newaxes.append(axis)
        if p is Ellipsis:
            axis += spread
        elif not isinstance(p, (int, np.integer)):  # a slice or None makes one axis
            axis += 1
    if Ellipsis not in parts:
        axis += spread  # the axes after the index's last entry
    lead = axis - np.ndim(g)  # axes g broadcasts along (it may be a number)
    drop = tuple(a - lead for a in newaxes if a >= lead)
    return tuple(p for p in parts if p is not None), np.squeeze(g, axis=drop) if drop else g


def _forward_steps(grad, index, g):
    """``index`` (basic, no ``None``) with each negative-step slice turned into
    the positive-step slice of the same elements, and ``g`` reversed along
    that slice's axis: Dask's assignment fails on ``grad[1, ::-1] = g`` (an
    IndexError from its own code) though it takes ``grad[1, :] = g[::-1]``.
    Left as it is where an axis's length is unknown (NaN) to Dask.

        >>> _forward_steps(np.zeros((2, 3)), (1, slice(None, None, -1)), np.arange(3))
        ((1, slice(0, 3, 1)), array([2, 1, 0]))
    """
    parts = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(p, slice) and p.step is not None and p.step < 0 for p in parts):
        return index, g
    spread = np.ndim(grad) - sum(p is not Ellipsis for p in parts)
    out, flips, axis, kept = [], [], 0, 0  # axis: of grad; kept: of grad[index]
    for p in parts:
        if p is Ellipsis:
            axis, kept = axis + spread, kept + spread
        elif isinstance(p, slice):
            n = grad.shape[axis]
            if p.step is not None and p.step < 0 and not math.isnan(n):
                span = range(*p.indices(int(n)))
                p = slice(span[-1], span[0] + 1, -p.step) if span else slice(0, 0)
                flips.append(kept)
            axis, kept = axis + 1, kept + 1
        else:
            axis += 1
        out.append(p)
    lead = kept + np.ndim(grad) - axis - np.ndim(g)  # axes g broadcasts along
    for a in flips:
        if a >= lead and np.shape(g)[a - lead] != 1:
            g = g[(slice(None),) * (a - lead) + (slice(None, None, -1),)]
    return (tuple(out) if isinstance(index, tuple) else out[0]), g


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
    if len(rows) == len(idx):  # each row once: g's rows go where idx says, in its order
        grad[idx] = g
        return grad
    # a repeated row: the sum of its cotangents, in the sorted order of ``rows``
    merge = (owner.ravel() == np.arange(len(rows))[:, None]).astype(g.dtype)
    grad[rows] = np.tensordot(namespace_of(grad).asarray(merge), g, axes=(1, 0))
    return grad


def written_cotangent(g, x, index, value=None, where=None):
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
        if isinstance(index, slice) and isinstance(x, list):
            _check_same_length(x, index, value, where)
            if not is_zero(g):
                return rows_cotangent(list(g)[index], value)
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


def _check_same_length(x, index, value, where):
    """Refuse ``L[s] = value`` with ``s`` a slice object held in a name (a slice
    written out, ``L[a:b]``, goes through :func:`restore_part`) where the write
    may have changed the list's length: ``x`` is the list after it, and its
    length before, which tells where the elements went, is not known here.
    Only where ``s`` (on ``x``) names exactly ``len(value)`` elements that
    cannot have moved -- the same length, or a negative start, or an end
    inside the list -- is it followed."""
    start, stop, step = index.start, index.stop, index.step
    if step not in (None, 1):
        return  # an extended slice keeps the length (Python checks it)
    n = len(x)
    moved = len(range(n)[index]) != len(value) or not (
        start is not None and start < 0 or stop is not None and 0 <= stop < n)
    if moved:
        raise error_at("UnsupportedSyntaxError", (
            "the slice assignment of a list through a slice held in a name (L[s] = v) may "
            "change the list's length, and the gradient then needs the slice written out; "
            "write L[a:b] = v (with the bounds in names if need be)"), where)


_REPEATS_UNDEFINED = (
    "an element assignment x[index] = v writes one element of a {} array more than "
    "once (its integer index repeats an element), and that library does not say which "
    "write is kept; write each element once (np.unique(index, return_index=True) picks "
    "one value for each)")


def restore_part(x, index, value, old):
    """Undo ``x[index] = value`` (``index`` a slice) by writing back ``old``,
    the elements it overwrote.  A list's slice assignment may change the
    list's length (``L[1:3] = [v]``): then ``value``'s elements are not
    ``x[index]`` but the ``len(value)`` elements from the slice's start, found
    from the length the list had before (:func:`_written_span`).

        >>> L = [0.0, 1.0, 2.0, 3.0]
        >>> old = L[1:3]
        >>> L[1:3] = [9.0]
        >>> restore_part(L, slice(1, 3), [9.0], old)
        >>> L
        [0.0, 1.0, 2.0, 3.0]
    """
    if isinstance(x, list):
        x[_written_span(len(x) - len(value) + len(old), index, len(value))] = old
    else:
        x[index] = old


def slice_written_cotangent(g, x, index, value):
    """:func:`written_cotangent` for ``x[index] = value`` with ``index`` a
    slice, called once ``x`` is as it was before (:func:`restore_part`): for a
    list, the cotangent of ``value`` is that of the elements it became, which
    need not be ``g[index]`` when the write changed the list's length."""
    if isinstance(x, list):
        if is_zero(g):
            return 0.0
        return rows_cotangent(list(g)[_written_span(len(x), index, len(value))], value)
    return written_cotangent(g, x, index, value)


def rows_cotangent(parts, value):
    """The cotangent of ``value`` in ``L[a:b] = value``, from ``parts``, the
    cotangents of the list elements it became: a list one for a list or tuple,
    but an array for an array -- Python stores its rows (``L[0:2] = x[1:] * 2.0``
    makes ``L[0]`` the row ``x[1] * 2.0``), and the adjoints of what made the
    array take an array cotangent.  An integer array's rows have none.

        >>> rows_cotangent([1.0, 0.0], np.ones(2))
        array([1., 0.])
    """
    if isinstance(value, (list, tuple)) or not hasattr(value, "shape") or not value.ndim:
        return ListCotangent(parts)
    if value.dtype.kind not in "fc" or all(is_zero(p) for p in parts):
        return 0.0
    out = namespace_of(value).zeros(value.shape, dtype=value.dtype)
    for k, part in enumerate(parts):
        if not is_zero(part):
            out[k] = part
    return out


def slice_kept_cotangent(g, x, index, value):
    """``x``'s cotangent before ``x[index] = value`` (``index`` a slice), from
    ``g``, its cotangent after, ``x`` as it was before: zero where the write
    overwrote, the rest of ``g`` where it went.  For a list whose length the
    write changed, the elements after the slice moved."""
    if isinstance(x, list):
        if is_zero(g):
            return g
        parts = list(g)
        start, stop, step = index.indices(len(x))
        if step != 1:  # an extended slice keeps the length (Python checks it)
            for k in range(start, stop, step):
                parts[k] = 0.0
            return ListCotangent(parts)
        stop = max(start, stop)
        return ListCotangent(parts[:start] + [0.0] * (stop - start)
                             + parts[start + len(value):])
    return without_item(g, x, index)


def _written_span(n, index, m):
    """The positions ``value`` (``m`` elements) holds after ``L[index] = value``
    on a list of ``n`` elements: ``index`` itself for an extended slice (the
    lengths agree), else the ``m`` elements from the slice's start."""
    start, _, step = index.indices(n)
    return slice(start, start + m) if step == 1 else index


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
