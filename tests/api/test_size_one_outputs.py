"""grad of a function whose output is an array of one element (an outside tester's finding).

``y.T @ K @ y`` of a column vector (a Gaussian process's quadratic form),
``np.sum(x ** 2, keepdims=True)``: autograd takes a one-element output as a
scalar; srcgrad refused it ("grad needs a function with a scalar output, but
it returned a value of shape (1, 1)").  The seed is now ones of the output's
shape (runtime.grad_seed).  Checked under every policy with and without the
optimiser (value bit for bit, gradient against differences and autograd),
in forward mode, for hvp, and on the numba backend; a larger output is still
refused, saying what to use.
"""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from numeric import assert_close, numeric_grad
from numeric import check_every_policy as check

import srcgrad

K = np.array([[2.0, 0.3], [0.3, 1.0]])


def quadratic_form(y):
    return y.T @ K @ y


def kept_dims(x):
    return np.sum(x ** 2, keepdims=True)


def summed_slices(x):
    s = np.zeros((1,))
    for i in range(3):
        if i != 1:
            s = s + np.tanh(x[i:i + 1] * 2.0)
    return s


def gp_like(y):
    L = np.linalg.cholesky(K)
    a = np.linalg.solve(L, y)
    return 0.5 * a.T @ a + np.sum(np.log(np.diag(L)))


CASES = [(quadratic_form, np.array([[0.5], [-1.0]])), (kept_dims, np.array([0.5, -1.0, 2.0])),
         (summed_slices, np.array([0.5, -1.0, 2.0])), (gp_like, np.array([[0.5], [-1.0]]))]


@pytest.mark.parametrize("fn,x", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_one_element_output_is_a_scalar(fn, x):
    grad = check(fn, (x,))
    assert grad.shape == x.shape
    for optimize in (True, False):
        assert_close(srcgrad.grad(fn, optimize=optimize)(x), grad)
    if fn is not gp_like:
        assert_close(grad, autograd.grad(fn)(x), what="autograd")
    v = np.linspace(0.5, 1.5, x.size).reshape(x.shape)
    want = numeric_grad(lambda z: float(np.sum(srcgrad.grad(fn)(z) * v)), [x.copy()], 0)
    assert_close(srcgrad.hvp(fn)(x, v), want, rtol=1e-5, atol=1e-7)


def test_numba_backend_too():
    pytest.importorskip("numba")
    x = np.array([[0.5], [-1.0]])
    assert_close(srcgrad.grad(quadratic_form, backend="numba")(x), (K + K.T) @ x)


def test_two_elements_still_refused():
    with pytest.raises(srcgrad.NonDifferentiableError, match="vjp or srcgrad.jacobian"):
        srcgrad.grad(lambda x: x * 2.0)(np.array([1.0, 2.0]))
