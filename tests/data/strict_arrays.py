"""A strict stand-in for CuPy, for machines without a GPU (tests/backends/test_cupy.py).

An ``ndarray`` here holds a NumPy array and behaves as CuPy's does where it
matters to srcgrad's runtime: NumPy's functions and ufuncs dispatch to it
(NEP 13 and 18) and return arrays of this module, it refuses NumPy arrays as
operands and it refuses to be converted to one (``np.asarray`` raises), so a
runtime helper that mixed in a NumPy array or converted behind the caller's
back fails here as it would on a GPU.  Its module has the few functions
:func:`srcgrad.runtime.namespaces.namespace_of` and the tests look for.
"""

from __future__ import annotations

import types

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

#: NumPy functions that only read shapes and dtypes: CuPy answers them too.
_METADATA = (np.shape, np.ndim, np.iscomplexobj, np.result_type, np.size, np.isscalar)


def _unwrap(x, strict=True):
    if isinstance(x, ndarray):
        return x._a
    if strict and isinstance(x, np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}: a NumPy array mixed with a strict array")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v, strict) for v in x)
    return x


def _wrap(x):
    if isinstance(x, np.ndarray):
        return ndarray(x)
    if isinstance(x, np.generic) and not isinstance(x, np.bool_):
        return ndarray(np.asarray(x))  # CuPy's reductions give 0-d arrays
    if isinstance(x, (tuple, list)):
        return type(x)(_wrap(v) for v in x)
    return x


class ndarray(NDArrayOperatorsMixin):
    """A NumPy array behind CuPy's rules: no NumPy operands, no conversion."""

    def __init__(self, a):
        self._a = a

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed (strict array)")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_unwrap(o) for o in out)
        result = getattr(ufunc, method)(*(_unwrap(i) for i in inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types_, args, kwargs):
        if func in _METADATA:
            return func(*_unwrap(args, False), **kwargs)
        kwargs = {k: _unwrap(v) for k, v in kwargs.items() if k != "like"}
        return _wrap(func(*_unwrap(args), **kwargs))

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    T = property(lambda self: ndarray(self._a.T))
    #: ``x.data.ptr``, the address of the first element, as CuPy's
    data = property(lambda self: types.SimpleNamespace(
        ptr=self._a.__array_interface__["data"][0]))

    def __getitem__(self, index):
        return _wrap(self._a[_unwrap(index)])

    def __setitem__(self, index, value):
        self._a[_unwrap(index)] = _unwrap(value)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(row) for row in self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __bool__(self):
        return bool(self._a)

    def __repr__(self):
        return f"strict({self._a!r})"

    def item(self):
        return self._a.item()

    def copy(self, order="C"):
        return ndarray(self._a.copy(order))

    def astype(self, dtype, copy=True):
        return ndarray(self._a.astype(dtype, copy=copy))

    def reshape(self, *shape, **kwargs):
        return ndarray(self._a.reshape(*shape, **kwargs))

    def ravel(self):
        return ndarray(self._a.ravel())

    def transpose(self, *axes):
        return ndarray(self._a.transpose(*axes))

    def swapaxes(self, a, b):
        return ndarray(self._a.swapaxes(a, b))

    def sum(self, *args, **kwargs):
        return _wrap(self._a.sum(*args, **kwargs))

    def max(self, *args, **kwargs):
        return _wrap(self._a.max(*args, **kwargs))

    def min(self, *args, **kwargs):
        return _wrap(self._a.min(*args, **kwargs))

    def any(self, *args, **kwargs):
        return _wrap(self._a.any(*args, **kwargs))

    def all(self, *args, **kwargs):
        return _wrap(self._a.all(*args, **kwargs))


def asarray(x, dtype=None):
    """Copy ``x`` (a number, list or NumPy array: the host) to a strict array."""
    return ndarray(np.array(_unwrap(x, False), dtype=dtype))


def asnumpy(x):
    """Copy ``x`` back to a NumPy array (the one explicit conversion)."""
    return np.array(x._a) if isinstance(x, ndarray) else np.asarray(x)


def _made_by(make):
    return lambda *args, **kwargs: ndarray(make(*_unwrap(args, False), **kwargs))


zeros, ones, empty, eye, arange, full = map(
    _made_by, (np.zeros, np.ones, np.empty, np.eye, np.arange, np.full))
zeros_like, ones_like, empty_like = map(_made_by, (np.zeros_like, np.ones_like, np.empty_like))
