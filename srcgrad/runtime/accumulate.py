"""Cotangents of indexing accumulated in place, for loops that index an array.

A loop ``for i in ...: s = s + f(X[i])`` gives ``X`` one indexing adjoint per
iteration.  Written as ``d_X = d_X + getitem_grad(g, X, i)`` each iteration
builds a zeros array of ``X``'s size: the gradient costs O(n) per iteration
and O(n^2) in all.  :mod:`srcgrad.optimize.accumulate` allocates the
cotangent once (:func:`cotangent_buffer`) and adds each adjoint into the
elements it concerns (:func:`scatter_add`), which is what
``d_X[i] += g`` does, with ``getitem_grad``'s dtype rules kept.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.

    >>> import numpy as np
    >>> X = np.ones((3, 2))
    >>> d_X = cotangent_buffer(X)
    >>> d_X = scatter_add(d_X, np.array([1.0, 2.0]), X, 1)
    >>> d_X = scatter_add(d_X, np.array([5.0, 5.0]), X, [1, 1])
    >>> d_X
    array([[ 0.,  0.],
           [11., 12.],
           [ 0.,  0.]])
    >>> cotangent_buffer([1.0, 2.0])
    0.0
"""

from __future__ import annotations

import numpy as np

from .aliases import is_basic_index
from .indexing import getitem_grad


def cotangent_buffer(a):
    """The starting cotangent of ``a`` that :func:`scatter_add` updates in place:
    zeros shaped like a float or complex array ``a`` (``getitem_grad``'s zeros),
    and ``0.0``, no cotangent yet, for anything else (a list, a Python float, an
    integer array, a 0-d array, whose plain sums are NumPy scalars), whose
    adjoints then keep the plain sum."""
    if type(a) is np.ndarray and a.dtype.kind in "fc" and a.ndim:
        return np.zeros_like(a)
    return 0.0


def scatter_add(acc, g, a, index):
    """``acc + getitem_grad(g, a, index)``, the cotangent ``acc`` of ``a`` plus
    that of ``a[index]`` being ``g``, computed in ``acc`` itself where it is an
    array of ``a``'s shape (made by :func:`cotangent_buffer` or by a sum: the
    caller owns it) whose dtype holds the sum; then it is ``acc[index] += g``
    with ``g`` first cast to ``a``'s dtype as ``getitem_grad`` casts it, so each
    element is the same sum, bit for bit.  Repeated integer indices add up in
    their order of appearance (``np.add.at``) before they reach ``acc``, as
    they do in ``getitem_grad``'s zeros.  Anything else (a list, a cotangent of another
    array library, such as Dask) takes the plain sum."""
    # the common case first, in few checks: a row or a slice, dtypes that agree
    # (one dtype object, as arrays of one dtype mostly share it, before ==)
    if type(index) in _ROW_OR_SLICE and type(acc) is np.ndarray and type(g) is np.ndarray \
            and type(a) is np.ndarray:
        dtype = acc.dtype
        if (g.dtype is dtype and a.dtype is dtype or dtype == g.dtype == a.dtype) \
                and acc.shape == a.shape:
            view = acc[index]
            if type(view) is np.ndarray and g.ndim <= view.ndim:
                view += g  # g already is what getitem_grad writes: no cast, no copy
                return acc
    return _scatter_add(acc, g, a, index)


_ROW_OR_SLICE = (int, slice)


def _scatter_add(acc, g, a, index):
    """:func:`scatter_add` for every index, dtype and kind of array."""
    if type(acc) is not np.ndarray or type(a) is not np.ndarray or acc.shape != a.shape \
            or not (type(g) is np.ndarray or isinstance(g, (int, float, complex, np.generic))) \
            or np.result_type(acc.dtype, a.dtype) != acc.dtype:
        return acc + getitem_grad(g, a, index)  # (a Dask or CuPy g stays in its library)
    if np.iscomplexobj(g) and not np.iscomplexobj(acc):
        # a real argument's gradient is the real part of its cotangent; written into the
        # real buffer as is, NumPy warned (ComplexWarning, an error under -W error: T3, F3-10)
        g = np.real(g)
    if is_basic_index(index):
        view = acc[index]  # a view of acc, or one element
        if type(view) is np.ndarray and type(g) is np.ndarray and g.ndim <= view.ndim \
                and g.dtype == acc.dtype == a.dtype:
            view += g  # g already is what getitem_grad writes: no cast, no copy
            return acc
        part = np.zeros_like(a[index])
        part[...] = g  # the elements getitem_grad writes
        acc[index] += part
        return acc
    where = np.asarray(index) if isinstance(index, (list, np.ndarray)) else None
    if where is None or a.ndim == 0 or where.dtype.kind not in "iub":
        acc += getitem_grad(g, a, index)
        return acc
    if where.dtype.kind == "b":  # a mask: each element once
        part = np.zeros_like(a[where])
        np.add.at(part, slice(None), g)
        acc[where] += part
        return acc
    # integer indices along the first axis: add up the repeats first, on their own
    n = a.shape[0]
    flat = where.reshape(-1)
    if flat.size and (flat.min() < -n or flat.max() >= n):
        return acc + getitem_grad(g, a, index)  # raises getitem_grad's IndexError
    rows, inverse = np.unique(np.where(flat < 0, flat + n, flat), return_inverse=True)
    part = np.zeros((rows.size,) + a.shape[1:], dtype=a.dtype)
    np.add.at(part, inverse.reshape(where.shape), g)
    acc[rows] += part
    return acc
