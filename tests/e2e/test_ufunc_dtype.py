"""A ufunc called with ``dtype=`` (review s36 R4-13): ``np.add(x, 1.5, dtype=D)``
was refused ("srcgrad's rule for np.add cannot take these arguments"); the
call is written with its operands cast to ``D`` (normalize/numpy_callables.py),
so the value is NumPy's own, bit for bit, and both modes differentiate it."""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


def float32_product(x):
    return np.sum(np.multiply(x, 2.0, dtype=np.float32) ** 2)


def float64_exp_times_integers(x):
    return np.sum(np.exp(x, dtype=np.float64) * np.add(x, 1.5, dtype=int, casting="unsafe"))


def float32_binary(x, y):
    return np.sum(np.subtract(x, y, dtype=np.float32) * np.tanh(y))


X = np.array([0.3, -1.2, 2.7])
Y = np.array([0.5, 0.25, -1.5])


@pytest.mark.parametrize(("fn", "args", "expected"), [
    (float32_product, (X,), 8 * X),
    (float64_exp_times_integers, (X,), np.exp(X) * np.array([1.0, 0.0, 3.0])),
], ids=["float32", "int-unsafe"])
def test_dtype_on_a_ufunc_call_is_differentiated(fn, args, expected):
    value, g = srcgrad.value_and_grad(fn)(*args)
    assert value == fn(*args)  # the same bits
    np.testing.assert_allclose(g, expected, rtol=1e-6)
    _, t = srcgrad.jvp(fn, args, (np.ones(3),))
    assert float(t) == pytest.approx(float(np.sum(expected)), rel=1e-6)


def test_both_operands_cast_get_their_cotangents():
    fn = float32_binary
    value, (gx, gy) = srcgrad.value_and_grad(fn, wrt=(0, 1))(X, Y)
    assert value == fn(X, Y)
    # analytic: the float32 value's finite differences are rounding noise
    np.testing.assert_allclose(gx, np.tanh(Y), rtol=1e-6)
    np.testing.assert_allclose(gy, -np.tanh(Y) + (X - Y) * (1 - np.tanh(Y) ** 2), rtol=1e-6)
    assert gx.dtype == np.float64 and gy.dtype == np.float64


def joined_as_float32(x, y):
    return np.sum(np.concatenate([x, y ** 2], dtype=np.float32) * np.arange(6.0)) \
        + np.sum(np.stack((x, y), axis=1, dtype=np.float32) ** 2)


def joined_as_integers(x):
    return np.sum(np.stack([x, x], dtype=int, casting="unsafe") * x)


def test_dtype_on_a_join_casts_each_array_first():
    """np.concatenate / np.stack with dtype= (NumPy 1.24) were refused too."""
    value, (gx, gy) = srcgrad.value_and_grad(joined_as_float32, wrt=(0, 1))(X, Y)
    assert value == joined_as_float32(X, Y)
    np.testing.assert_allclose(gx, np.arange(3.0) + 2 * X, rtol=1e-6)
    np.testing.assert_allclose(gy, 2 * Y * np.arange(3.0, 6.0) + 2 * Y, rtol=1e-6)
    _, t = srcgrad.jvp(joined_as_float32, (X, Y), (np.ones(3), np.zeros(3)))
    assert float(t) == pytest.approx(float(np.sum(np.arange(3.0) + 2 * X)), rel=1e-6)
    value, g = srcgrad.value_and_grad(joined_as_integers)(X)
    assert value == joined_as_integers(X)
    np.testing.assert_array_equal(g, 2 * X.astype(int))  # the integers carry none
