"""What numba must know to compile srcgrad's generated code on Python floats.

Importing this module imports numba (the backend is optional: only
``backend="numba"`` imports it) and teaches numba, through
``numba.extending.overload``, the few runtime helpers that scalar code calls,
so the generated source stays the NumPy backend's, decorated:

- ``grad_seed(value)`` is ``1.0``; ``unbroadcast(g, x)`` of two numbers is
  ``g`` (nothing is broadcast between scalars); ``grad_like(g, x)`` of a float
  (or a tuple of floats) is ``g`` as floats; ``zeros_grad(x)`` is ``0.0``;
  ``signum(x)`` is ``float(x > 0) - float(x < 0)``, ``signum_grad(d, x)`` of a
  real ``x`` is ``0.0 * d``; ``only_where(g, mask)`` of a number is ``g`` or 0.0; ``match_complex(g, x)`` of
  two numbers is ``g``; forward mode's ``expand(t, like)`` of two numbers is
  ``t``, ``tangent_like(t, x)`` of a float is ``float(t)``, ``zero_tangent(x)``
  of a number is ``0.0``; ``in_place(value, x)`` (``x op= v``) of numbers is
  ``value`` -- each what the NumPy helper returns for Python floats, bit for bit;
- ``reversed(range(...))``, the adjoint sweep's loop over a ``for`` loop's
  iterations, is the range counted down; ``float(flag)`` of a bool is 1.0 or
  0.0, as in Python.

The numba backend's source writes ``a ** b`` as :func:`power` (Python's
``pow``, where numba's ``**`` rounds differently).  For anything else (arrays,
containers, objects) the overloads do not apply, numba's typing fails, and
:func:`.numba_compile.compile_for` says why; the caller then runs the NumPy
code.  The typing happens when the first call's arguments are known and
before any generated code runs, never in the middle of a sweep.
:func:`.numba_calls.guarded` makes a compiled call raise what Python raises.
The fused kernels of :mod:`.numba_fusion` import their guard and helpers
from here (:func:`fits`, :func:`blank`, :func:`flat`, :func:`at`), as the
generated code imports :func:`power`: these names stay in this module.
"""

from __future__ import annotations

import math
import os
import sys
import types as pytypes
import weakref

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ..runtime import (
    expand,
    grad_like,
    grad_seed,
    in_place,
    match_complex,
    only_where,
    signum,
    signum_grad,
    tangent_like,
    unbroadcast,
    zero_tangent,
    zeros_grad,
)

_NUMBER = (types.Integer, types.Boolean)


def _unwrapped(t):
    """``t``, or the type of a value that may be None (a temporary bound to None
    before a loop that saves it): numba unwraps it where a number is needed."""
    return t.type if isinstance(t, types.Optional) else t


def _real(t) -> bool:
    """A Python float as numba types it (float64), an int or a bool; or one of
    them that may be None."""
    t = _unwrapped(t)
    return t == types.float64 or isinstance(t, _NUMBER)


def _floats(t) -> bool:
    """A tuple of Python floats (float64), as several gradients are."""
    return isinstance(t, types.BaseTuple) and all(e == types.float64 for e in t.types)


def power(base, exponent):
    """``base ** exponent``, as Python computes it.  The numba backend writes
    ``a ** b`` as ``power(a, b)``: numba's own ``**`` multiplies out integer
    exponents and takes ``** 0.5`` as a square root, which round differently
    from the C library's ``pow`` that Python calls; compiled, ``power`` of
    floats calls ``pow`` (``math.pow``), bit for bit Python's value."""
    return base ** exponent


@overload(power)
def _power(base, exponent):
    if isinstance(_unwrapped(base), types.Integer) and \
            isinstance(_unwrapped(exponent), types.Integer):
        return lambda base, exponent: base ** exponent
    if _real(base) and _real(exponent) and not isinstance(exponent, types.Optional):
        # math.pow of an int exponent is numba's powi (multiplications): pass a float;
        # numba's math.pow takes a base that may be None (it raises TypeError if it is)
        return lambda base, exponent: math.pow(base, float(exponent))
    return None


@overload(grad_seed)
def _grad_seed(value):
    if _real(value):
        return lambda value: 1.0
    return None


@overload(unbroadcast)
def _unbroadcast(g, x):
    if _real(g) and _real(x):
        return lambda g, x: g
    return None


@overload(grad_like)
def _grad_like(g, x):
    if x == types.float64 and _real(g):
        return lambda g, x: float(g)
    if _floats(x) and _floats(g) and len(g) == len(x):
        return lambda g, x: g
    return None


@overload(match_complex)
def _match_complex(g, x):
    if _real(g) and _real(x):
        return lambda g, x: g  # a real cotangent of a real value: itself
    return None


@overload(zeros_grad)
def _zeros_grad(x):
    if x == types.float64:
        return lambda x: 0.0
    return None


@overload(signum)
def _signum(x):
    if _real(x):
        return lambda x: (1.0 if x > 0 else 0.0) - (1.0 if x < 0 else 0.0)
    return None


@overload(only_where)
def _only_where(g, mask):
    if _real(g) and isinstance(mask, types.Boolean):
        return lambda g, mask: g if mask else 0.0  # a selection's cotangent of numbers
    return None


@overload(signum_grad)
def _signum_grad(d_out, x):
    if _real(d_out) and _real(x):
        return lambda d_out, x: 0.0 * d_out  # a real sign's cotangent: zero (signed, as NumPy's)
    return None


@overload(expand)
def _expand(t, like):
    if _real(t) and _real(like):
        return lambda t, like: t  # a number's tangent term: nothing to broadcast
    return None


@overload(tangent_like)
def _tangent_like(t, x):
    if x == types.float64 and _real(t):
        return lambda t, x: float(t)
    return None


@overload(in_place)
def _in_place(value, x):
    if _real(value) and _real(x):
        return lambda value, x: value  # x op= v on a number rebinds x to x op v
    return None


@overload(zero_tangent)
def _zero_tangent(x):
    if _real(x):
        return lambda x: 0.0
    return None


@overload(float)
def _float(x):
    if isinstance(x, types.Boolean):  # float(x > 0): a derivative of a comparison's sides
        return lambda x: 1.0 if x else 0.0
    return None


@overload(reversed)
def _reversed(r):
    if isinstance(r, types.RangeType):
        def counted_down(r):
            n = len(r)
            return range(r.start + (n - 1) * r.step, r.start - r.step, -r.step)
        return counted_down
    return None


def fits(kernel, *values, arrays=None) -> bool:
    """Whether the fused ``kernel`` (:mod:`.numba_fusion`) may compute its run for
    ``values``, those of the names it reads: the first ``arrays`` (all, by
    default) each a float64 ``ndarray`` (not a subclass, a Dask or CuPy
    array), C-contiguous or 1-d, of one shape with at least one dimension; the
    others such arrays too, or Python floats or NumPy float64s (numbers NumPy
    broadcasts; the run's statements are each made of one of the first
    ``arrays``, so NumPy's values are arrays too; an int is refused: ``n * n``
    of int64s wraps where Python's ints grow); and numba
    compiled the kernel for them (at the first call of each kind, before it
    runs; a failure is remembered and the NumPy code runs from then on).
    Otherwise the NumPy statements run."""
    shape = None
    kinds = []
    for i, a in enumerate(values):
        kind = type(a)
        if kind is np.ndarray:
            if a.dtype != _FLOAT64 or not (a.flags.c_contiguous or a.ndim == 1):
                return False  # (strided 1-d: see flat())
            if shape is None:
                shape = a.shape
            elif a.shape != shape:
                return False
            kinds.append((a.flags.writeable, a.flags.c_contiguous))
        elif arrays is not None and i >= arrays and (kind is float or kind is _NUMPY_FLOAT):
            kinds.append(kind)  # (not an int: n * n wraps in int64, Python's grows)
        else:
            return False
    if not shape:  # 0-d arrays: NumPy's own scalars
        return False
    verdicts = _FITTED.get(kernel)
    if verdicts is None:
        verdicts = _FITTED[kernel] = {}
    key = (len(shape), tuple(kinds))
    verdict = verdicts.get(key)
    if verdict is None:
        importable(kernel.py_func.__globals__, kernel.py_func.__code__.co_filename)
        try:
            written = kernel.py_func.__code__.co_argcount - len(values)  # blank()'s arrays
            kernel.compile(tuple(numba.typeof(a) for a in values)
                           + (types.Array(types.float64, len(shape), "C"),) * written)
            verdict = True
        except Exception:  # noqa: BLE001 - numba's typing, or a crash inside numba
            verdict = False
        verdicts[key] = verdict
    return verdict


def blank(like, count: int) -> tuple:
    """``count`` new float64 arrays of ``like``'s shape, for a fused kernel to
    write.  NumPy allocates them, not numba: NumPy asks the kernel for huge
    pages for big arrays, and numba's allocator's 4 KiB page faults made an
    18-output kernel on 1e6 floats twice as slow as its arithmetic."""
    return tuple(np.empty(like.shape) for _ in range(count))


def flat(array):
    """``array``'s elements in one dimension, for a fused kernel to index: a view
    of a C-contiguous array; a 1-d array with other strides (a cotangent
    broadcast from a number, strides 0) as it is."""
    return array.reshape(-1)


@overload(flat)
def _flat(array):
    if isinstance(array, types.Array) and array.layout == "C":
        return lambda array: array.reshape(-1)
    if isinstance(array, types.Array) and array.ndim == 1:
        return lambda array: array
    if isinstance(array, (types.Float, types.Integer)):  # a number the run broadcasts
        return lambda array: array
    return None


def at(values, index):
    """Element ``index`` of a fused kernel's input that may be a number: the
    number itself, or the element of a flattened array (:func:`flat`)."""
    return values if np.ndim(values) == 0 else values[index]


@overload(at)
def _at(values, index):
    if isinstance(values, (types.Float, types.Integer)):
        return lambda values, index: values
    if isinstance(values, types.Array) and values.ndim == 1:
        return lambda values, index: values[index]
    return None


_FLOAT64 = np.dtype(np.float64)
_NUMPY_FLOAT = np.float64
#: Per kernel (while it lives), per number of dimensions and kinds of values:
#: whether numba compiled it.
_FITTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def importable(namespace: dict, filename: str) -> None:
    """Make the generated module importable under a name of its own, as numba's
    disk cache needs: code loaded from it imports the module it was compiled in.
    The name is the file's (``srcgrad.generated.grad_f_<hash of the source>``),
    the same in every process, and the module holds the namespace's values."""
    name = "srcgrad.generated." + os.path.splitext(os.path.basename(filename))[0]
    if name not in sys.modules:
        module = pytypes.ModuleType(name)
        module.__dict__.update((k, v) for k, v in namespace.items() if k != "__name__")
        module.__file__ = filename
        sys.modules[name] = module
    for value in list(namespace.values()):
        if isinstance(value, numba.core.registry.CPUDispatcher):
            value.py_func.__module__ = name


__all__ = ["at", "blank", "fits", "flat", "importable", "power"]
