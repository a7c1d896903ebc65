"""Arrays of other libraries that speak NumPy's API: Dask and CuPy arrays.

A runtime helper module (see :mod:`srcgrad.runtime`): small, NumPy and the
standard library alone, copied into exported modules.  Generated code calls
NumPy's functions (``np.tanh(x)``, ``np.sum(x, axis=1)``), and NumPy hands a
call whose arguments include a Dask or CuPy array to that array's library
(NEP 13's ``__array_ufunc__``, NEP 18's ``__array_function__``), so the same
code computes lazily on a Dask array and on the GPU for a CuPy one.  Three
things do not dispatch that way, and the helpers use this module for them:

* converting: ``np.asarray(dask_array)`` computes the whole array into memory
  and ``np.asarray(cupy_array)`` refuses; :func:`as_array` leaves such an
  array as it is;
* making an array from a shape alone (``np.zeros(shape)``, ``np.eye(n)``),
  which is always NumPy's: NEP 35's ``like=x`` covers most of them, and
  :func:`namespace_of` finds the library's own module for the rest;
* asking about values (``if np.any(g)``, ``np.count_nonzero``), which computes
  a Dask array: :func:`foreign` tells a helper to take the branch that is
  right for every value instead;
* shapes with NaN: a Dask array whose chunk sizes are unknown (``x[mask]``)
  cannot be broadcast to its own shape by ``np.broadcast_to``;
  :func:`broadcast_like` can.

A NumPy array or number answers in the first test of each function, so the
NumPy path pays one ``type(...) is`` check at most.

    >>> import numpy as np
    >>> foreign(np.ones(2)), foreign(1.5), namespace_of(np.ones(2)) is np
    (False, False, True)
    >>> as_array([1.0, 2.0])
    array([1., 2.])
"""

from __future__ import annotations

import math
import sys

import numpy as np

__all__ = ["as_array", "broadcast_like", "foreign", "fresh_like", "namespace_of", "unknown"]


def foreign(x) -> bool:
    """Whether ``x`` is an array of another library that takes part in NumPy's
    dispatch (a Dask or CuPy array): it defines ``__array_function__`` and is
    not a NumPy array or scalar."""
    if type(x) is np.ndarray or isinstance(x, (float, int, complex, np.generic, np.ndarray)):
        return False
    return hasattr(type(x), "__array_function__") and hasattr(x, "shape")


def as_array(x):
    """``np.asarray(x)`` for numbers, sequences and NumPy arrays; ``x`` itself for
    a Dask or CuPy array, which NumPy would compute or refuse to convert."""
    if type(x) is np.ndarray:
        return x
    return x if foreign(x) else np.asarray(x)


def fresh_like(g, x, dtype=None):
    """A new array of ``x``'s shape holding ``g`` broadcast, in ``dtype`` (``g``'s by
    default), of ``g``'s library where ``g`` is a Dask or CuPy array and of ``x``'s
    otherwise: what ``np.array(np.broadcast_to(g, np.shape(x)), dtype)`` makes for
    NumPy arrays, where that call would convert (``astype`` copies)."""
    if not foreign(g):
        g = namespace_of(x).asarray(g)
    out = broadcast_like(g, x)
    out = out.astype(out.dtype if dtype is None else dtype)
    # Dask's astype to its own dtype (and broadcast_to its own shape) returns the
    # array itself, and a caller writes into what this returns (g[index] = 0)
    return out.copy() if out is g else out


def broadcast_like(g, x):
    """``np.broadcast_to(g, np.shape(x))``, also where ``x`` is a Dask array
    whose chunk sizes are unknown (its shape holds NaN: after ``x[mask]``, or
    from a data frame), which Dask's ``broadcast_to`` refuses (NaN is not
    NaN, not even in its own shape): ``g`` times ones of ``x``'s chunks then
    broadcasts chunk by chunk, and keeps every value (-0.0, NaN, Inf)."""
    shape = np.shape(x)
    if foreign(x) and unknown(shape):
        g = as_array(g)
        return g * np.ones_like(x, dtype=g.dtype)
    return np.broadcast_to(g, shape)


def unknown(shape) -> bool:
    """Whether ``shape`` holds NaN: a Dask array's whose chunk sizes are unknown."""
    return any(map(math.isnan, shape))


def namespace_of(*values):
    """The module whose functions make arrays of the kind of ``values``: NumPy,
    unless one of them is a foreign array, then its own library's module
    (``dask.array``, ``cupy``).  The module is one already loaded -- the array
    exists, so its library is imported -- found from the array's
    ``__array_namespace__`` or its type's module; nothing is imported here."""
    for x in values:
        if foreign(x):
            return _library_of(x)
    return np


def _library_of(x):
    module = type(x).__module__ or ""
    parts = module.split(".")
    for end in range(1, len(parts) + 1):  # the shortest loaded prefix with array functions
        candidate = sys.modules.get(".".join(parts[:end]))
        if candidate is not None and hasattr(candidate, "zeros") and hasattr(candidate, "eye"):
            return candidate
    get = getattr(x, "__array_namespace__", None)
    return get() if get is not None else np
