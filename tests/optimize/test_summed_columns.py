"""runtime/summed_products.py: the column sums of ``summed_matmul_grad_b`` (the
cotangent of ``b`` in ``np.sum(a @ b)``) taken along ``a``'s rows, without
the transposed copy, are bit for bit the sums of that copy's rows -- every
number, its sign of zero and its dtype -- and the row sums of
``summed_matmul_grad_a`` skip the copy of ``g * b`` where ``g`` is 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from srcgrad.runtime import summed_matmul_grad_a, summed_matmul_grad_b
from srcgrad.runtime import summed_products as sp

LENGTHS = [*range(1, 140), 255, 256, 257, 511, 1000, 1023, 1024, 1025, 4099]


def copied(a, scale, dtype):
    """What the helper computed before: the sums of the rows of a transposed copy."""
    return np.multiply(a.T, scale, dtype=dtype, order="C").sum(axis=1)


def same_bits(got, want):
    """The same numbers, NaNs in the same places, zeros of the same sign."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if np.isnan(want).any():
        return np.array_equal(got, want, equal_nan=True)
    return got.tobytes() == want.tobytes()


def test_the_summation_is_numpys():
    assert sp._pairwise_is_numpys()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_column_sums_are_the_transposed_copys_row_sums(dtype):
    rng = np.random.default_rng(16)
    for n in LENGTHS:
        a = (rng.standard_normal((n, 5)) * 10.0 ** rng.integers(-8, 8, (n, 5))).astype(dtype)
        a[rng.random((n, 5)) < 0.1] = -0.0
        a[:, 4] = -0.0   # a column of negative zeros sums to +0.0 in NumPy
        for scale in (dtype(1), dtype(0.37), np.float64(-2.5), dtype(0)):
            result = np.result_type(scale, a.dtype)
            assert same_bits(sp._column_sums(a, scale, result), copied(a, scale, result)), (n, scale)


def test_infinities_and_nans_sum_as_before():
    a = np.ones((300, 4))
    a[5, 0], a[200, 0] = np.inf, -np.inf
    a[7, 1] = np.nan
    a[9, 2] = np.inf
    assert same_bits(sp._column_sums(a, np.float64(1), a.dtype), copied(a, 1.0, a.dtype))


@pytest.mark.parametrize("a", [np.ones((0, 3)), np.asfortranarray(np.arange(12.0).reshape(4, 3)),
                               np.arange(24.0).reshape(4, 6)[:, ::2],
                               np.arange(12, dtype=np.complex128).reshape(4, 3)])
def test_elsewhere_the_copy_is_summed(a):
    """No rows, another layout, complex numbers: the transposed copy, as before."""
    assert same_bits(sp._column_sums(a, a.dtype.type(2), a.dtype), copied(a, 2, a.dtype))


def test_a_scale_of_one_reads_the_operand_itself():
    b = np.arange(12.0).reshape(3, 4)
    assert sp._terms(b, np.float64(1), b.dtype) is b
    assert sp._terms(b, np.float64(2), b.dtype) is not b
    assert sp._terms(b.T, np.float64(1), b.dtype).flags.c_contiguous
    assert sp._terms(b.astype(np.float32), np.float64(1), b.dtype).dtype == np.float64


@pytest.mark.parametrize("shape_a, shape_b", [((7, 300), (300, 5)), ((1024, 129), (129, 1024)),
                                              ((300,), (300, 9)), ((9, 300), (300,))])
@pytest.mark.parametrize("g", [1.0, np.float64(0.25), np.float32(3.0)])
def test_the_helpers_are_bit_for_bit_what_they_were(shape_a, shape_b, g):
    rng = np.random.default_rng(7)
    for dtype in (np.float64, np.float32):
        a = rng.standard_normal(shape_a).astype(dtype)
        b = rng.standard_normal(shape_b).astype(dtype)
        for helper, old in ((summed_matmul_grad_b, _old_grad_b), (summed_matmul_grad_a, _old_grad_a)):
            got, want = helper(g, a, b), old(g, a, b)
            assert same_bits(got, want) and got.flags.writeable and got.flags.c_contiguous


def _old_grad_b(g, a, b):
    """summed_matmul_grad_b as it was written before the column sums."""
    dtype = sp._summed_dtype(g, a, b, a)
    scale = dtype.type(g)
    column = np.multiply(a, scale, dtype=dtype) if a.ndim == 1 else copied(a, scale, dtype)
    if b.ndim == 1:
        return column
    out = np.empty(b.shape, dtype)
    out[...] = column[:, None]
    return out


def _old_grad_a(g, a, b):
    """summed_matmul_grad_a as it was written before the row sums skipped g * b's copy."""
    dtype = sp._summed_dtype(g, a, b, b)
    scale = dtype.type(g)
    row = np.multiply(b, scale, dtype=dtype) if b.ndim == 1 \
        else np.multiply(b, scale, dtype=dtype, order="C").sum(axis=1)
    if a.ndim == 1:
        return row
    out = np.empty(a.shape, dtype)
    out[...] = row
    return out
