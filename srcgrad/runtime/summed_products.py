"""Adjoints of a matrix product that is summed whole: ``np.sum(a @ b)``,
``np.mean(a @ b)``.

A runtime helper module (see :mod:`srcgrad.runtime`): small, NumPy alone,
copied into exported modules.  The cotangent of a full sum is one scalar
``g`` on every element of the product (``g / size`` for a mean), and
``matmul_grad_a`` would multiply that matrix of one value by ``b.T``: a full
matrix product whose rows are all the same, ``g`` times the sums of ``b``'s
rows.  These helpers compute those sums instead -- work in the size of the
operands, no matrix product -- and never need the product's value, so the
forward sweep does not keep it for the adjoint sweep's sake.

Each helper computes what ``matmul_grad_a(unreduce(g, a @ b), a, b)``
computes (``_b`` likewise), with the same shape and dtype; the numbers
differ only by the order of a sum: both add ``g * b[0, 0] + g * b[0, 1] +
...``, the matrix product in its blocking, the helpers by NumPy's pairwise
summation along contiguous rows of a copy of ``g`` times the operand (so:
as accurate on any layout, where NumPy's ``sum`` along a strided axis adds
row after row and drifts by percents over millions of float32 rows; ``g``
applied to each term first, where summing first overflows for a mean of
large values; an empty sum 0, where ``inf * 0`` would make NaN of a mean
over no elements), within a few
``n * eps`` of the sum of the terms' magnitudes (exact where no sum is
involved: a 1-D ``b``'s cotangent of ``a``).  The sums take the
result's dtype: float32 operands give float32, and a float32 operand beside
a float64 one is summed in float64, as the product would be.

The shortcut is taken for NumPy arrays of float32, float64, complex64 or
complex128 where ``a`` and ``b`` are each a vector or a matrix (not both
vectors, whose product is a number) and ``g`` is a number; anything else --
stacks of matrices, integers, Dask or CuPy arrays, a cotangent that is an
array -- gets the general rule, as before, on the product made again (for a
Dask or CuPy vector or matrix, an empty array of the product's shape and
dtype: ``unreduce`` reads nothing else of it).

    >>> import numpy as np
    >>> a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    >>> summed_matmul_grad_a(1.0, a, b)      # b's row sums, on every row
    array([[ 6., 22., 38.],
           [ 6., 22., 38.]])
    >>> summed_matmul_grad_b(0.5, a, b)[:, 0]   # half a's column sums, in every column
    array([1.5, 2.5, 3.5])
"""

from __future__ import annotations

import warnings

import numpy as np

from .elementwise import grad_seed
from .linalg import matmul_grad_a, matmul_grad_b, sparse
from .namespaces import foreign, namespace_of
from .reductions import size_of, unreduce

#: The dtypes whose sums stand in for BLAS's products, by their character
#: (float32, float64, complex64, complex128), in native byte order.
_SUMMED = "fdFD"


def summed_matmul_grad_a(g, a, b):
    """``matmul_grad_a(unreduce(g, a @ b), a, b)``: the cotangent of ``a`` in
    ``a @ b`` when every element of the product has the cotangent ``g``.
    Each row of it is ``g`` times ``b``'s row sums (``ones @ b.T``)."""
    dtype = _summed_dtype(g, a, b, b)
    if dtype is None:  # not two NumPy vectors or matrices of floats: the product's rule
        return matmul_grad_a(unreduce(g, _product(a, b)), a, b)
    scale = dtype.type(g)
    if b.ndim == 1:
        row = np.multiply(b, scale, dtype=dtype)  # a @ b weighs a's columns by b: g * b
    else:
        # (g * ones) @ b.T: the sums of g * b's rows, each row contiguous
        row = _terms(b, scale, dtype).sum(axis=1)
    if a.ndim == 1:
        return row
    out = np.empty(a.shape, dtype)
    out[...] = row  # the same on every row of a
    return out


def summed_matmul_grad_b(g, a, b):
    """``matmul_grad_b(unreduce(g, a @ b), a, b)``: the cotangent of ``b`` in
    ``a @ b`` when every element of the product has the cotangent ``g``.
    Each column of it is ``g`` times ``a``'s column sums (``a.T @ ones``)."""
    dtype = _summed_dtype(g, a, b, a)
    if dtype is None:  # not two NumPy vectors or matrices of floats: the product's rule
        return matmul_grad_b(unreduce(g, _product(a, b)), a, b)
    scale = dtype.type(g)
    if a.ndim == 1:
        column = np.multiply(a, scale, dtype=dtype)  # a @ b weighs b's rows by a: g * a
    else:
        # a.T @ (g * ones): the sums of g * a's columns, as if each were a contiguous row
        column = _column_sums(a, scale, dtype)
    if b.ndim == 1:
        return column
    out = np.empty(b.shape, dtype)
    out[...] = column[:, None]  # the same in every column of b
    return out



def _terms(m, scale, dtype):
    """``np.multiply(m, scale, dtype=dtype, order="C")``: the terms of the sums,
    C-ordered.  ``m`` itself where that is already them: a C-contiguous ``m``
    of ``dtype`` and a scale of 1 (``x * 1`` is ``x``, bit for bit)."""
    if scale == 1 and m.dtype == dtype and m.flags.c_contiguous:
        return m
    return np.multiply(m, scale, dtype=dtype, order="C")


def _column_sums(a, scale, dtype):
    """``_terms(a.T, scale, dtype).sum(axis=1)``, bit for bit, without the
    transposed copy where ``a`` is a C-contiguous matrix of float32 or float64.

    That copy reads ``a`` down its columns, an element per cache line: on a
    1024 x 1024 matrix 8 ms, where the sums take 1.  NumPy sums a contiguous
    row pairwise (:func:`_pairwise_rows`); the same additions, in the same
    order, on whole rows of ``a`` give every column's sum at once, each
    number the one the transposed copy's row sum has.  Checked once against
    NumPy's own sums (:func:`_pairwise_is_numpys`); where they differ (another
    NumPy's summation) the transposed copy is made as before.
    """
    if a.ndim != 2 or not a.shape[0] or dtype.char not in "fd" \
            or not a.flags.c_contiguous or not _pairwise_is_numpys():
        return _terms(a.T, scale, dtype).sum(axis=1)
    sums = _pairwise_rows(_terms(a, scale, dtype), 0, a.shape[0])
    sums += 0.0  # NumPy starts a sum at +0.0: a sum of -0.0s is +0.0
    return sums


def _pairwise_rows(m, start, n):
    """The sums of rows ``start`` to ``start + n`` (``n >= 1``) of ``m``, added as
    NumPy adds a contiguous row of ``n`` numbers (its ``pairwise_sum``):
    fewer than 8 one after the other; up to 128 in 8 running sums of every
    8th number, then combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
    (r6 + r7))``, and the rest added one by one; more split in two halves, the
    first a multiple of 8 long, summed so and added.  A new array."""
    if n < 8:
        total = m[start].copy()
        for i in range(start + 1, start + n):
            total += m[i]
        return total
    if n <= 128:
        whole = n - n % 8
        blocks = m[start:start + whole].reshape(whole // 8, 8, m.shape[1])
        r = blocks[0].copy()
        for block in blocks[1:]:
            r += block
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(start + whole, start + n):
            total += m[i]
        return total
    half = n // 2
    half -= half % 8
    total = _pairwise_rows(m, start, half)
    total += _pairwise_rows(m, start + half, n - half)
    return total


_PAIRWISE = []  # whether _pairwise_rows adds as this NumPy does, once known


def _pairwise_is_numpys() -> bool:
    """Whether :func:`_pairwise_rows` gives, bit for bit, the sums NumPy gives
    for the rows of the transpose, on columns of every length class (short,
    one block, several, odd remainders) of numbers of many magnitudes and
    signs, zeros of both signs among them, in float32 and float64."""
    if not _PAIRWISE:
        numbers = np.sin(np.arange(1.0, 4 * 1040 + 1.0)) * 10.0 ** (np.arange(4 * 1040) % 13 - 6)
        numbers[::17] = -0.0
        matches = True
        for rows in (1, 5, 8, 13, 128, 129, 300, 1040):
            for dtype in (np.float64, np.float32):
                m = numbers[:4 * rows].reshape(rows, 4).astype(dtype)
                m[:, 3] = -0.0
                mine = _pairwise_rows(m, 0, rows)
                mine += 0.0
                numpys = np.ascontiguousarray(m.T).sum(axis=1)
                matches &= np.array_equal(mine, numpys) \
                    and np.array_equal(np.signbit(mine), np.signbit(numpys))
        _PAIRWISE.append(bool(matches))
    return _PAIRWISE[0]

def _summed_dtype(g, a, b, other):
    """The dtype of the cotangent the general rule gives, where the sums may
    stand in for its product (see the module docstring), else None.  That
    rule multiplies ``unreduce(g, a @ b)`` by ``other`` (``b`` for ``a``'s
    cotangent, ``a`` for ``b``'s); ``unreduce`` gives a Python float ``g``
    the product's dtype where that is a float dtype, float64's otherwise."""
    if not _vectors_or_matrices(a, b):
        return None
    if type(g) is float and a.dtype is b.dtype and a.dtype.kind == "f":
        return a.dtype  # the common case: one float dtype throughout
    if type(g) is float:
        product = np.result_type(a.dtype, b.dtype)
        seed = product if product.kind == "f" else np.dtype(np.float64)
    elif isinstance(g, (np.floating, np.complexfloating)) \
            or (type(g) is np.ndarray and g.ndim == 0 and g.dtype.kind in "fc"):
        seed = g.dtype
    else:
        return None
    dtype = np.result_type(seed, other.dtype)
    return dtype if dtype.char in _SUMMED and dtype.isnative else None


def _vectors_or_matrices(a, b) -> bool:
    """Whether ``a @ b`` is a product of NumPy vectors or matrices (not two
    vectors) of float32, float64, complex64 or complex128 whose shapes fit."""
    return type(a) is np.ndarray and type(b) is np.ndarray \
        and a.dtype.char in _SUMMED and b.dtype.char in _SUMMED \
        and a.dtype.isnative and b.dtype.isnative \
        and 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2 and not a.ndim == b.ndim == 1 \
        and a.shape[-1] == b.shape[0]


def _product(a, b):
    """``a @ b`` again, for the general rule's ``unreduce``, which reads only its
    shape, dtype and library: for NumPy arrays (not two vectors, whose product
    is a number) a read-only view of one element stands in, of the product's
    shape and dtype (a stack of matrices: the batch axes broadcast); for a
    Dask or CuPy vector or matrix, an empty array of that shape and dtype (no
    product on the GPU; for Dask, one whose sizes are all known).  Else the
    product is made (a Dask product is a graph, never computed)."""
    if type(a) is np.ndarray and type(b) is np.ndarray:
        shape = _stacked_shape(a.shape, b.shape)
        if shape is None or a.dtype.kind not in "biufc" or b.dtype.kind not in "biufc":
            return np.matmul(a, b)
        return np.broadcast_to(np.empty((), np.result_type(a.dtype, b.dtype)), shape)
    if sparse(a) or sparse(b):  # a SciPy operator: its own @ (linalg.sparse)
        return np.asarray(a @ b)
    if not (foreign(a) or foreign(b)):
        return np.matmul(a, b)
    shape = _product_shape(a, b)
    if shape is None:
        return a @ b
    return namespace_of(a, b).empty(shape, np.result_type(a.dtype, b.dtype))


def _stacked_shape(sa, sb):
    """The shape of ``np.matmul`` of arrays of shapes ``sa`` and ``sb`` (not two
    vectors), None where they do not fit (the product then raises)."""
    if not sa or not sb or len(sa) == len(sb) == 1 \
            or sa[-1] != (sb[-2] if len(sb) >= 2 else sb[0]):
        return None
    try:
        batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        return None
    return batch + sa[-2:-1] + (sb[-1:] if len(sb) >= 2 else ())


def _product_shape(a, b):
    """The shape of ``a @ b`` for two arrays each a vector or a matrix (not two
    vectors) whose sizes are known and fit; else None."""
    shapes = [getattr(a, "shape", None), getattr(b, "shape", None)]
    if not all(isinstance(s, tuple) and 1 <= len(s) <= 2 for s in shapes) \
            or len(shapes[0]) == len(shapes[1]) == 1 \
            or not all(type(n) is int for s in shapes for n in s) \
            or shapes[0][-1] != shapes[1][0] or not hasattr(a, "dtype") or not hasattr(b, "dtype"):
        return None
    return shapes[0][:-1] + shapes[1][1:]


def summed_product_seed(reduction, a, b):
    """``grad_seed(reduction(a @ b))`` for ``reduction`` ``np.sum`` or
    ``np.mean``: the seed 1 of ``grad``'s adjoint sweep, of the dtype of the
    product's sum or mean -- where ``grad`` reads the function's value only
    for that dtype, and the sweep reads nothing else of the product.

    Without the product where nothing about it is unknown but its numbers: two
    non-empty NumPy vectors or matrices of floats whose shapes fit, so ``a @
    b`` could not raise, and no floating-point error made an exception
    (``np.errstate(over="raise")``, a warnings filter turning RuntimeWarning
    into an error); its sum's dtype is the product's, ``np.result_type`` of
    the two.  Anything else makes the product and its sum, as the function
    does, and raises whatever they raise.  Left out: a RuntimeWarning an
    overflowing product would print (as for any value srcgrad drops because
    nothing reads it).

        >>> summed_product_seed(np.sum, np.ones((2, 3), np.float32), np.ones(3, np.float32))
        np.float32(1.0)
    """
    if _vectors_or_matrices(a, b) and a.size and b.size and _quiet():
        kind = np.result_type(a.dtype, b.dtype)
        if kind.kind != "c":  # (a complex sum: grad_seed refuses it)
            return kind.type(1)  # what np.sum(a @ b) has
    return grad_seed(reduction(a @ b))


def summed_elementwise_seed(reduction, operands, value):
    """``grad_seed(reduction(value()))`` for ``reduction`` ``np.sum`` or
    ``np.mean`` of an elementwise expression ``value`` (``+ - * /`` and
    negation) of the arrays ``operands`` and Python numbers: the seed 1 of
    ``grad``'s adjoint sweep, of the dtype of the expression's sum -- where
    ``grad`` reads the function's value only for that dtype.

    Without the expression where nothing about it is unknown but its numbers:
    NumPy arrays of real floats of one shape (nothing broadcasts, so nothing
    can raise) and no floating-point error made an exception; the dtype is
    then ``np.result_type`` of the arrays (a Python number takes an array's
    float dtype).  Anything else calls ``value`` and reduces it, as the
    function does, raising whatever it raises.  Left out: a RuntimeWarning an
    overflow in the expression would print.

        >>> a = np.ones(3, np.float32)
        >>> summed_elementwise_seed(np.sum, (a, a), lambda: a * a + 2.0)
        np.float32(1.0)
        >>> summed_elementwise_seed(np.sum, (a, np.ones(2)), lambda: a * 2.0)   # as the function
        np.float32(1.0)
    """
    first = operands[0]
    if type(first) is np.ndarray and first.dtype.kind == "f" and _quiet() and all(
            type(a) is np.ndarray and a.dtype.kind == "f" and a.shape == first.shape
            for a in operands):
        return np.result_type(*operands).type(1)
    return grad_seed(reduction(value()))


def summed_product_size(a, b):
    """``size_of(a @ b)``, the count ``np.mean(a @ b)``'s rule divides by,
    from the operands' shapes where ``a @ b`` is a product of NumPy vectors
    or matrices of floats (see :func:`summed_matmul_grad_a`): rows of ``a``
    times columns of ``b``.  Else the product is made again and counted.

        >>> a, b = np.ones((2, 3)), np.ones((3, 5))
        >>> summed_product_size(a, b), summed_product_size(a[0], b), summed_product_size(a, b[:, 0])
        (10, 5, 2)
    """
    if _vectors_or_matrices(a, b):
        # a vector contributes no axis to the product
        return (a.shape[0] if a.ndim == 2 else 1) * (b.shape[1] if b.ndim == 2 else 1)
    return size_of(_product(a, b))


def _quiet() -> bool:
    """Whether a floating-point error in NumPy only warns (or is ignored), and
    no warnings filter turns a RuntimeWarning into an exception."""
    if not {"ignore", "warn"}.issuperset(np.geterr().values()):
        return False
    return not any(action == "error" and issubclass(RuntimeWarning, category)
                   for action, _, category, _, _ in warnings.filters)
