"""Gradients of code run on Python floats where Python's float arithmetic
raises and NumPy's gives inf or nan (api/float_errors.py).

The derivative of ``math.sqrt(x)`` at 0 (``d / (2 * t)``), of ``x ** 0.5`` at
0 (``0.5 * x ** (-0.5)``) and of ``x ** -0.5`` at 1e-310 (an overflow) raised a
raw ZeroDivisionError or OverflowError from the code specialised on Python
floats, while the function itself ran.  The gradient is now NumPy's -- inf
with NumPy's RuntimeWarning, the same number the code for ``np.float64``
arguments gives -- a Python float as before; the value is the function's own.
Where the function itself raises (``1.0 / x`` at 0), that is Python's error
and it goes on.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import NonDifferentiableError

POLICIES = ("save", "recompute", "sqrt", ("revolve", 2))


def root(x):
    return math.sqrt(x)


def half_power(x):
    return x ** 0.5


def tiny_power(x):  # the derivative -0.5 x ** -1.5 overflows a Python float at 1e-310
    return x ** -0.5


def reciprocal(x):
    return 1.0 / x


def roots_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + math.sqrt(x * i)
    return s


def root_in_a_branch(x):
    if x >= 0.0:
        return math.sqrt(x) * 2.0
    return x


def helper_root(x):
    return math.sqrt(x)


def root_in_a_helper(x):
    return helper_root(x) + x


def two_floats(x, y):
    return math.sqrt(x) * y


def with_an_array(w, x):
    return np.sum(w * w) * math.sqrt(x)


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


@pytest.mark.parametrize(("fn", "x", "want"), [
    (root, 0.0, math.inf), (half_power, 0.0, math.inf), (tiny_power, 1e-310, -math.inf),
    (roots_in_a_loop, 0.0, math.nan), (root_in_a_branch, 0.0, math.inf),
    (root_in_a_helper, 0.0, math.inf)], ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_numpys_inf_where_python_raised(fn, x, want, policy):
    value, grad = _quiet(lambda: srcgrad.value_and_grad(fn, policy=policy)(x))
    assert type(value) is type(fn(x)) and value == fn(x)  # the function's own value
    assert type(grad) is float and (grad == want or math.isnan(want) and math.isnan(grad))
    # the same number as the code for np.float64 arguments gives (0 * inf: nan in the loop)
    assert np.array_equal(grad, float(_quiet(lambda: srcgrad.grad(fn, policy=policy)(
        np.float64(x)))), equal_nan=True)


def test_numpys_warning_is_given():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert srcgrad.grad(root)(0.0) == math.inf
    assert any(issubclass(w.category, RuntimeWarning) for w in seen)


def test_the_functions_own_error_goes_on():
    with pytest.raises(ZeroDivisionError):
        reciprocal(0.0)
    with pytest.raises(ZeroDivisionError):
        srcgrad.grad(reciprocal)(0.0)


def test_several_gradients():
    gx, gy = _quiet(lambda: srcgrad.grad(two_floats, wrt=(0, 1))(0.0, 2.0))
    assert (type(gx), type(gy)) == (float, float) and gx == math.inf and gy == 0.0
    w = np.array([1.0, 2.0])
    value, (gw, gx) = _quiet(lambda: srcgrad.value_and_grad(with_an_array, wrt=(0, 1))(w, 0.0))
    assert value == with_an_array(w, 0.0)
    np.testing.assert_array_equal(gw, np.zeros(2))
    assert type(gx) is float and gx == math.inf


def test_finite_points_are_unchanged():
    assert srcgrad.grad(root)(4.0) == 0.25
    assert srcgrad.grad(half_power)(4.0) == 0.5 * 4.0 ** -0.5


def math_of_math(x):  # 0.5 * t ** -0.5, t = math.sin(x): Python floats whatever x is
    t = math.sin(x)
    return t ** 0.5


def test_where_numpy_cannot_help_a_srcgrad_error():
    with pytest.raises((NonDifferentiableError,)) as info:
        _quiet(lambda: srcgrad.grad(math_of_math)(0.0))
    assert "Python floats" in info.value.message


class Scaled:
    def __init__(self, w):
        self.w = w

    def __call__(self, x, s):
        return np.sum(self.w * x) * math.sqrt(s)

    def loss(self, s):
        return math.sqrt(s) * self.w


def test_methods_and_callable_objects():
    m = Scaled(2.0)
    x = np.ones(2)
    assert _quiet(lambda: srcgrad.grad(m, wrt=1)(x, 0.0)) == math.inf
    gx, gs = _quiet(lambda: srcgrad.grad(m, wrt=(0, 1))(x, 0.0))
    np.testing.assert_array_equal(gx, np.zeros(2))
    assert gs == math.inf
    assert _quiet(lambda: srcgrad.grad(m.loss)(0.0)) == math.inf
    assert _quiet(lambda: srcgrad.value_and_grad(Scaled.loss, wrt=1)(m, 0.0)) == (0.0, math.inf)
