"""Reductions with NumPy's ``dtype=``, ``initial=`` and ``where=`` keywords.

``np.sum(x, where=m)``, ``np.prod(x, initial=2.0)``, ``np.max(x, where=m,
initial=-10.0)``, ``np.mean(x, dtype=np.float64)`` and the methods
(``x.sum(where=m)``) were refused ("srcgrad's rule for np.sum cannot take these
arguments (got an unexpected keyword argument 'where')").  The rules of
rules/reductions.py now take them: ``where`` leaves the masked-out elements
without cotangent or tangent (a mean divides by the count kept), ``initial``
adds to a sum, multiplies a product, and takes the cotangent of a max or min
where it wins (runtime.extremum_kept_grad); ``dtype`` is the sum's, and an
integer one makes the result constant (analysis/activity.integer_cast).  Each
program: value bit for bit under every policy and in jvp, gradient and tangent
against differences; hvp against differences of the gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([[1.3, -2.0, 0.5], [0.3, 2.1, -1.5]])
M = np.array([[True, False, True], [True, True, False]])


def sum_where(x):
    return np.sum(np.sin(x) ** 2, where=M)


def sum_where_axis(x):
    return np.sum(np.sum(x ** 2, axis=0, where=M) * np.array([1.0, 2.0, 3.0]))


def sum_where_computed(x):  # the mask made from the argument (no derivative through it)
    return np.sum(np.sum(x * np.cos(x), axis=1, initial=2.0, where=x > 0) ** 2)


def sum_initial_dtype(x):
    return np.sum(x ** 3, initial=1.5, dtype=np.float64) * np.sum(x, dtype=x.dtype)


def sum_integer_dtype(x):  # an integer sum is constant: x[0, 0] alone moves
    return np.sum(x * 3.1, dtype=int) * x[0, 0]


def mean_where(x):
    return np.mean(np.exp(x) * x, where=M) + np.sum(np.mean(x ** 2, axis=1, where=M))


def mean_dtype(x):
    return np.mean(x ** 2, dtype=np.float64, axis=0)[1] + np.mean(x, dtype=np.float64)


def prod_where(x):
    return np.prod(x, where=M) + np.sum(np.prod(x + 1.0, axis=1, where=M, keepdims=True))


def prod_initial(x):
    return np.prod(x, initial=2.0) + np.sum(np.prod(x, axis=0, initial=-0.5))


def prod_with_a_zero(x):
    return np.prod(x * np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]), initial=3.0, where=M)


def max_initial(x):
    return np.max(x, initial=0.7) + np.sum(np.max(x, axis=0, initial=1.0))


def max_where(x):
    return np.max(np.sin(x), where=M, initial=-10.0) \
        + np.sum(np.amax(x, axis=1, where=M, initial=-10.0))


def min_where(x):
    return np.min(x ** 2, where=M, initial=10.0) + np.sum(np.amin(x, axis=0, where=M,
                                                                  initial=0.0))


def methods(x):
    return (x ** 2).sum(where=M) + x.max(initial=0.7) + x.prod(where=M, initial=0.5) \
        + x.min(axis=0, initial=0.0, where=M).sum() + x.mean(where=M)


def in_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(x * (k + 1.0), where=M) * np.max(x, initial=float(k))
    return s


def in_a_branch(x):
    if np.sum(x, where=M) > 0:
        return np.prod(x, initial=2.0, where=M)
    return np.mean(x ** 2, where=M)


def helper(a):
    return np.sum(np.tanh(a), axis=1, where=M)


def in_a_helper(x):
    return np.sum(helper(x) ** 2) + np.sum(helper(x * 2.0), initial=1.0)


PROGRAMS = [sum_where, sum_where_axis, sum_where_computed, sum_initial_dtype, sum_integer_dtype,
            mean_where, mean_dtype, prod_where, prod_initial, prod_with_a_zero, max_initial,
            max_where, min_where, methods, in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_reduction_keywords(fn):
    check(fn, (X,))


def test_the_other_branch():
    check(in_a_branch, (-X,))


def test_float32_sum_in_float64():
    x = X.astype(np.float32)
    value, grad = srcgrad.value_and_grad(lambda v: np.sum(v * v, dtype=np.float64))(x)
    assert value == np.sum(x * x, dtype=np.float64) and value.dtype == np.float64
    assert grad.dtype == np.float32
    assert_close(grad, 2 * x)


@pytest.mark.parametrize("fn", [sum_where, mean_where, prod_initial, max_where, methods])
def test_hvp(fn):
    v = np.linspace(-0.5, 1.0, X.size).reshape(X.shape)
    got = srcgrad.hvp(fn)(X, v)
    g = srcgrad.grad(fn)
    eps = 1e-6
    assert_close(got, (g(X + eps * v) - g(X - eps * v)) / (2 * eps), rtol=1e-5, atol=1e-6,
                 what=fn.__name__)


def test_the_hand_gradients():
    # sum over the mask: 2 x where kept, 0 elsewhere; max with initial above
    # every element: no cotangent at all
    assert_close(srcgrad.grad(lambda x: np.sum(x ** 2, where=M))(X), np.where(M, 2 * X, 0.0))
    assert_close(srcgrad.grad(lambda x: np.max(x, initial=5.0))(X), np.zeros_like(X))
    assert_close(srcgrad.grad(lambda x: np.mean(x, where=M))(X), M / M.sum())
