"""Arithmetic written into a buffer the adjoint sweep owns, where that gives
the very same array.

:mod:`srcgrad.optimize.inplace_adjoint` rewrites ``d_a = d_a + e`` as
``d_a = into_first(np.add, d_a, e)`` where ``d_a`` is a fresh array nobody
else holds, and ``d_aa * np.cos(y)`` as ``into_second(np.multiply, d_aa,
np.cos(y))``: the result goes into ``np.cos(y)``'s own fresh array.  A large
array then costs no new allocation (no page faults on first touch), and the
operands keep their order, so every element is the same operation on the
same numbers.

Which statements may do it is the pass's business (it proves the buffer is
fresh and unshared); whether the result is bit for bit the plain one is
checked here, at run time, because it depends on types, shapes and dtypes:
the buffer must be a C-contiguous ``np.ndarray`` of floats or complex
numbers, the other operand a Python number, a NumPy scalar or a C-contiguous
``np.ndarray`` of the buffer's shape or one that broadcasts to it (a bias
row added to a product: the result has the buffer's shape), and their
result dtype the buffer's (``float32 + float64`` is float64: the float32
buffer cannot hold it).  Anything else -- a list, a Python float buffer, a
buffer the other operand would stretch, a Dask or CuPy array, a subclass --
gets the plain operator.  The layout condition keeps
the result's memory order that of the plain result (a sum's rounding
follows the memory order).

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.

    >>> import numpy as np
    >>> a = np.array([1.0, 2.0])
    >>> b = into_first(np.add, a, np.array([0.5, 0.5]))
    >>> b, b is a
    (array([1.5, 2.5]), True)
    >>> c = into_first(np.add, np.ones((3, 1)), np.ones((3, 4)))   # stretched: a new array
    >>> c.shape
    (3, 4)
    >>> t = np.zeros((2, 3))
    >>> into_first(np.add, t, np.array([1.0, 2.0, 3.0])) is t      # a bias row: in place
    True
    >>> d = into_first(np.add, np.ones(2, np.float32), np.ones(2))   # float64 result
    >>> d.dtype
    dtype('float64')
    >>> into_second(np.subtract, 1.0, np.array([0.25, 4.0]))
    array([ 0.75, -3.  ])
"""

from __future__ import annotations

import numpy as np

from .reductions import unreduce

#: NumPy 2 promotes a NumPy scalar exactly as an array of its dtype (NEP 50);
#: before, a scalar's value could decide the result's dtype.
_SCALARS_PROMOTE_AS_ARRAYS = int(np.__version__.split(".")[0]) >= 2


def _fits(buffer, other) -> bool:
    """Whether ``ufunc(buffer, other)`` (either order) written into ``buffer``
    is the array the plain operation makes: same type, shape, dtype, layout."""
    if type(buffer) is not np.ndarray or not buffer.flags.c_contiguous \
            or buffer.dtype.kind not in "fc" or not buffer.ndim:
        return False  # (a 0-d array: NumPy's operators give a scalar, not an array)
    kind = type(other)
    if kind is np.ndarray:
        if not other.flags.c_contiguous or other.shape != buffer.shape \
                and not _stretches_into(other.shape, buffer.shape):
            return False
        return other.dtype is buffer.dtype or np.result_type(buffer, other) == buffer.dtype
    if kind is float or kind is int:  # weak Python numbers take a float buffer's dtype
        return True
    if kind is complex:
        return buffer.dtype.kind == "c"
    if isinstance(other, np.generic):
        return np.result_type(buffer, other) == buffer.dtype
    return False


def _stretches_into(small, shape) -> bool:
    """Whether an array of shape ``small`` broadcasts to exactly ``shape``
    (``t1 + b1``, a ``(256,)`` bias on a ``(128, 256)`` product): then
    ``buffer op other`` has the buffer's shape, and NumPy makes it
    C-contiguous for a C-contiguous buffer, each element the same operation
    on the same two numbers as in the buffer.

        >>> _stretches_into((256,), (128, 256)), _stretches_into((128, 1), (128, 256))
        (True, True)
        >>> _stretches_into((128, 256), (256,)), _stretches_into((2, 256), (128, 256))
        (False, False)
    """
    return len(small) <= len(shape) and all(
        s == 1 or s == n for s, n in zip(small[::-1], shape[::-1]))


def into_first(ufunc, a, b):
    """``a op b`` (``op`` the operator of ``ufunc``), written into ``a``'s array
    where that array is the result's type, shape, dtype and layout; the plain
    ``a op b`` otherwise.  ``a`` must be an array nothing else reads later."""
    if _fits(a, b):  # a += b is np.add(a, b, out=a), without the keyword's cost
        if (ufunc is np.multiply or ufunc is np.true_divide) and _real_one(a, b):
            return a  # a * 1 and a / 1 are a, element for element
        if ufunc is np.add:
            a += b
        elif ufunc is np.subtract:
            a -= b
        elif ufunc is np.multiply:
            a *= b
        else:
            a /= b
        return a
    return _plain(ufunc, a, b)


def into_second(ufunc, a, b):
    """``a op b``, written into ``b``'s array where it fits (see
    :func:`into_first`); ``b`` must be an array nothing else reads later."""
    if _fits(b, a):
        if ufunc is np.multiply and _real_one(b, a):
            return b  # 1 * b is b, element for element
        return ufunc(a, b, out=b)
    return _plain(ufunc, a, b)


def times_one(s, b):
    """``s * b`` for a number ``s`` (a scalar cotangent: ``grad``'s seed, a
    full sum's), without the pass over ``b`` where it would change nothing:
    ``b`` itself where ``s`` is 1 and ``b`` a NumPy array of real floats of
    the product's dtype.  IEEE multiplication by 1 gives back every number,
    infinities, NaN (its sign too) and the sign of zero included; only a
    signalling NaN, which arithmetic never makes, would come back quieted,
    and subnormals on a CPU told to flush them to zero (NumPy does not).
    The caller (:mod:`srcgrad.optimize.unit_seed`) makes sure nothing writes
    into the result or gives it back, since it may be ``b``'s array.

        >>> b = np.array([2.0, -0.0, np.inf])
        >>> times_one(np.float64(1.0), b) is b, times_one(1.0, b) is b
        (True, True)
        >>> times_one(np.float64(1.0), b.astype(np.float32)).dtype   # promoted: a product
        dtype('float64')
        >>> times_one(2.0, b)
        array([ 4., -0., inf])
    """
    if type(b) is np.ndarray and _real_one(b, s):
        return b
    return s * b


def _real_one(array, number) -> bool:
    """Whether ``number`` is a real 1 whose product with the NumPy array of
    real floats ``array`` has ``array``'s dtype (1 times a complex number is
    not always that number: ``inf * 0`` in its imaginary part)."""
    kind = type(number)
    if kind is float or kind is int:
        return number == 1 and array.dtype.kind == "f"
    return isinstance(number, np.floating) and number == 1 and array.dtype.kind == "f" \
        and np.result_type(array, number) == array.dtype


def into_operand(ufunc, a):
    """``ufunc(a)`` for a unary ufunc, written into ``a``'s array where that
    array is the result's type, shape, dtype and layout: a C-contiguous,
    writeable ``np.ndarray`` of real floats, not 0-d (the pass writes this
    only for ufuncs whose result on real floats has their dtype: ``np.sin``,
    ``np.exp``, ``np.sqrt``, ...); the plain ``ufunc(a)`` otherwise.  ``a``
    must be an array nothing else reads later.  NumPy takes an output that
    is exactly its input for an elementwise loop, so each element is the
    same function of the same number.

        >>> a = np.array([0.0, 1.0])
        >>> b = into_operand(np.exp, a)
        >>> b is a, b[1] == np.exp(1.0)
        (True, np.True_)
        >>> into_operand(np.exp, np.arange(2))     # integers: a new float array
        array([1.        , 2.71828183])
    """
    if type(a) is np.ndarray and a.dtype.kind == "f" and a.ndim \
            and a.flags.c_contiguous and a.flags.writeable:
        return ufunc(a, out=a)
    return ufunc(a)


def one_minus_square(a, out=None):
    """``1 - a ** 2`` (the derivative of ``np.tanh`` at its output ``a``), written
    into ``out`` where given: ``into_operand(one_minus_square, h)`` is ``h *= h;
    np.subtract(1, h, out=h)``, a careful hand's tanh adjoint in the array of an
    ``h`` read no more (``into_operand`` passes ``out`` only for a C-contiguous,
    writeable ``np.ndarray`` of real floats).  ``a ** 2`` is ``np.square(a)`` for
    NumPy (its power's fast path), so every element is the same two operations
    on the same number, NaN, infinities and zeros' signs included; without
    ``out`` it is the expression itself, for anything ``a`` may be.

        >>> h = np.array([0.5, -1.0, 0.0])
        >>> g = one_minus_square(h, out=h)
        >>> g, g is h
        (array([0.75, 0.  , 1.  ]), True)
        >>> one_minus_square(3)
        -8
    """
    if out is None:
        return 1 - a ** 2
    np.square(a, out=out)
    return np.subtract(1, out, out=out)


def _plain(ufunc, a, b):
    """The operator ``ufunc`` stands for, as the code without the pass has it."""
    if ufunc is np.add:
        return a + b
    if ufunc is np.subtract:
        return a - b
    if ufunc is np.multiply:
        return a * b
    return a / b


def unreduced(g, x):
    """``unreduce(g, x)`` for the cotangent ``g`` of a full reduction of ``x``,
    kept a NumPy scalar where every reader broadcasts it against an array of
    ``x``'s shape: the same numbers in the same dtype (a Python float ``g``
    takes a float ``x``'s dtype, as ``unreduce`` gives it), without an array
    of ``x``'s size.  Anything but a NumPy array ``x`` and a scalar ``g`` gets
    ``unreduce`` itself.

        >>> unreduced(1.0, np.ones(3, np.float32)), unreduced(np.float64(2.0), np.ones(3))
        (np.float32(1.0), np.float64(2.0))
    """
    if _SCALARS_PROMOTE_AS_ARRAYS and type(x) is np.ndarray:
        if type(g) is float:
            return x.dtype.type(g) if x.dtype.kind == "f" else np.float64(g)
        if isinstance(g, np.generic) or (type(g) is np.ndarray and g.ndim == 0):
            return g[()]
    return unreduce(g, x)
