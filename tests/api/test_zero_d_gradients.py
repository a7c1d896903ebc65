"""The gradient with respect to a 0-d array is a 0-d array of its own (as
JAX and autograd give), not a NumPy scalar: code that updates gradients in
place (``g *= lr``, ``g[...] = 0``) needs an array (reviewer s33 F27).  A
NumPy float64 or a Python float still gets a float."""

import numpy as np
import pytest

import srcgrad


def cubic(x):
    return x * x * 3.0


def summed(x):
    return np.sum(x ** 2)


def two(x, y):
    return x * y + np.sin(x)


@pytest.mark.parametrize("fn", [cubic, summed])
def test_a_0d_array_gets_a_0d_array(fn):
    x = np.array(0.7)
    g = srcgrad.grad(fn)(x)
    assert type(g) is np.ndarray and g.shape == () and g.dtype == np.float64
    assert g == pytest.approx(4.2 if fn is cubic else 1.4)
    g[...] = 0.0  # writeable, its own
    assert x == 0.7


def test_each_argument_its_own_kind():
    gx, gy = srcgrad.grad(two, wrt=(0, 1))(np.array(0.5), np.float64(2.0))
    assert type(gx) is np.ndarray and gx.shape == ()
    assert isinstance(gy, float)  # (np.float64 is a float)
    assert float(gx) == 2.0 + np.cos(0.5) and float(gy) == 0.5
    assert type(srcgrad.grad(cubic)(0.7)) is float
    f32 = srcgrad.grad(cubic)(np.array(0.5, dtype=np.float32))
    assert type(f32) is np.ndarray and f32.dtype == np.float32
