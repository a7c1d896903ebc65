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


# Reading through a negative-step slice after an integer (B[1, ::-1]), with
# None axes too: the adjoint's grad[1, ::-1] = g raised a raw IndexError from
# Dask's own assignment (a reviewer's find).  The runtime writes g reversed
# through the positive-step slice of the same elements.
X6 = np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.1])


def int_then_reversed(x):  # the reviewer's program: gradient [0, 0, 0, 2, 1, 0]
    B = x.reshape(2, 3)
    return (B[1, ::-1] * np.arange(3.0)).sum()


def with_new_axes(x):  # the reviewer's program: gradient [0, 0, 0, 2, 2, 2]
    B = x.reshape(2, 3)
    return (B[None, 1, None, ::-1] * 2.0).sum()


def steps_in_a_loop(x):
    B = x.reshape(3, 2)
    s = 0.0
    for k in range(3):
        if k % 2:
            s = s + np.sum(B[k, ::-1] * B[::-2, 0])
        else:
            s = s + np.sum(np.sin(B[2:0:-1, k % 2]) * B[k, :])
    return s + np.sum(B[..., ::-1] * B)


def _reversed_rows(B):
    return B[::-1, ::-1][1]


def in_a_helper(x):
    B = x.reshape(2, 3)
    return np.sum(_reversed_rows(B) * np.arange(1.0, 4.0)) + np.sum(B[-1, 2::-2] ** 2)


POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn", [int_then_reversed, with_new_axes, steps_in_a_loop, in_a_helper])
def test_dask_negative_step_after_an_integer(fn, policy):
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(da.from_array(X6, chunks=2))
    expected_value, expected = srcgrad.value_and_grad(fn, policy=policy)(X6)
    assert expected_value == fn(X6)
    assert_close(np.asarray(value), expected_value, what="value")
    assert_close(np.asarray(grad), expected, what=f"{fn.__name__} gradient on Dask")
    assert_close(expected, numeric_grad(fn, [X6], 0), what=f"{fn.__name__} gradient")
    direction = np.linspace(0.5, 1.5, 6)
    value, tangent = srcgrad.jvp(fn, (da.from_array(X6, chunks=2),), (direction,))
    assert_close(np.asarray(value), expected_value, what="value")
    assert_close(np.asarray(tangent), expected @ direction, what=f"{fn.__name__} tangent")


def test_dask_negative_step_values():
    for fn, want in ((int_then_reversed, [0, 0, 0, 2, 1, 0]), (with_new_axes, [0, 0, 0, 2, 2, 2])):
        np.testing.assert_array_equal(
            np.asarray(srcgrad.grad(fn)(da.from_array(X6, chunks=2))), want)
