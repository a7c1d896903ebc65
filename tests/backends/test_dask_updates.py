"""In-place writes into arrays made from a Dask argument: the gradient Dask gives
is NumPy's.

``y[:] = y * 3.0`` and ``y[...] = np.cumsum(y)`` gave a zero gradient on Dask
(outside tester; the value was right): Dask returns the array itself for a
full slice, for ``astype`` to its own dtype and ``broadcast_to`` its own
shape, so the cotangent of what was written and the cotangent left to ``y``
(zeroed where the write overwrote) were one object, and zeroing one zeroed
both.  The runtime now copies where a Dask call handed the same object back."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad

da = pytest.importorskip("dask.array")

X = np.array([0.5, -1.0, 2.0, 0.3])


def full_slice(x):
    y = x * 1.0
    y[:] = y * 3.0
    return np.sum(y)


def ellipsis_cumsum(x):
    y = x.copy()
    y[...] = np.cumsum(y)
    return np.sum(y ** 2)


def in_loop(x):
    y = x * 1.0
    for _ in range(2):
        y[:] = np.sin(y) + x
        y[1:] = y[1:] * 2.0
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [full_slice, ellipsis_cumsum, in_loop])
def test_dask_gradient_is_numpy_s(fn):
    value, grad = srcgrad.value_and_grad(fn)(da.from_array(X, chunks=2))
    expected_value, expected = srcgrad.value_and_grad(fn)(X)
    assert_close(np.asarray(value), expected_value, what="value")
    assert_close(np.asarray(grad), expected, what=f"{fn.__name__} gradient on Dask")
    assert_close(expected, numeric_grad(fn, [X], 0), what=f"{fn.__name__} gradient")
