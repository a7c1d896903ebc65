"""``functools.partial`` made inside the differentiated function, of a NumPy
function or of the user's own (outside tester T1 #7).

``m = functools.partial(np.multiply, w); m(x)`` and a partial passed to a
helper that calls it (``apply_n(functools.partial(np.multiply, w), x, 3)``) were
refused with three different messages, one of them false ("apply_n() updates
its argument 'x' in place").  Such a partial now stands for a local function:
its bound values are evaluated where it is made, and each call is the call of
its function with them first (``np.multiply(w, x)``), differentiated by that
function's rule (or inlined, for a user function).  A partial of a user
function with a default, passed to a helper, used to be passed as the bare
function: the bound keyword was lost and the value silently wrong.  Each
program runs under every policy (value bit for bit, gradient against central
differences) and in forward mode; autograd agrees where it runs.
"""

from __future__ import annotations

import functools
from functools import partial

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

W = np.array([0.5, 2.0, -1.5])
X = np.array([1.0, 3.0, 0.25])


def apply_n(fn, x, n):
    for _ in range(n):
        x = fn(x)
    return x


def twice(fn, x):
    return apply_n(fn, x, 2)


def scaled(a, c=1.0):
    return a * c


def called_by_name(w, x):  # T1 #7
    m = functools.partial(np.multiply, w)
    return np.sum(m(x) * x)


def passed_to_a_helper(w, x):  # T1 #7
    z = apply_n(functools.partial(np.multiply, w), x, 3)
    return np.sum(z) + np.sum(x)


def passed_by_name(w, x):
    m = partial(np.add, w)
    return np.sum(twice(m, x) ** 2)


def bound_then_rebound(w, x):
    m = partial(np.multiply, w)  # holds this w: the rebinding below does not reach it
    w = w * 3.0
    return np.sum(m(x) * w)


def made_in_a_loop(w, x):
    s = 0.0
    for i in range(3):
        m = partial(np.power, w * 0.5 + 1.5)
        s = s + np.sum(m(float(i + 1)) * x)
        w = np.sin(w)
    return s


def in_a_branch(w, x):
    if np.sum(w) > 0:
        m = partial(np.multiply, np.tanh(w))
        y = apply_n(partial(np.multiply, np.tanh(w)), x, 2)
    else:
        m = functools.partial(np.subtract, w)
        y = twice(functools.partial(np.subtract, w), x)
    return np.sum(m(y) * w)


def with_keywords(w, x):
    rows = partial(np.sum, axis=0)
    return np.sum(rows(np.outer(w, x)) * w) + np.sum(partial(np.sum, axis=1)(np.outer(w, x)))


def keyword_of_a_user_function(w, x):
    return np.sum(apply_n(partial(scaled, c=w), x, 3))


def of_a_user_function(w, x):
    m = partial(scaled, w)
    return np.sum(m(x) + m(c=x))


def of_a_local_lambda(w, x):
    f = lambda a, b: np.exp(a) * b  # noqa: E731
    m = partial(f, w * 0.5)
    return np.sum(apply_n(m, x, 2))


def partial_helper(w, x):
    return apply_n(partial(np.multiply, w), x, 2)


def in_a_helper(w, x):
    return np.sum(partial_helper(w, x) * partial_helper(x, w))


def matrix_product(w, x):
    A = np.outer(w, x) + np.eye(3)
    m = partial(np.dot, A)
    return np.sum(apply_n(m, x, 3))


PROGRAMS = [called_by_name, passed_to_a_helper, passed_by_name, bound_then_rebound,
            made_in_a_loop, in_a_branch, with_keywords, keyword_of_a_user_function,
            of_a_user_function, of_a_local_lambda, in_a_helper, matrix_product]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_every_policy(fn, wrt):
    check(fn, (W, X), wrt=wrt)
    check(fn, (-W, X), wrt=wrt)  # the other branch of in_a_branch


def test_tester_values():
    w, x = np.array([0.5, 2.0]), np.array([1.0, 3.0])
    assert_close(srcgrad.grad(called_by_name)(w, x), x * x)
    assert_close(srcgrad.grad(passed_to_a_helper)(w, x), 3 * w ** 2 * x)


def test_the_bound_keyword_is_kept():
    # the partial used to be passed as scaled itself: c=1.0, the value 4.0
    value, grad = srcgrad.value_and_grad(keyword_of_a_user_function)(W, X)
    assert value == keyword_of_a_user_function(W, X)
    assert_close(grad, 3 * W ** 2 * X)


def test_arrays_left_alone():
    w, x = W.copy(), X.copy()
    srcgrad.grad(passed_to_a_helper, wrt=(0, 1))(w, x)
    np.testing.assert_array_equal(w, W)
    np.testing.assert_array_equal(x, X)


@pytest.mark.parametrize("fn", [called_by_name, passed_to_a_helper, passed_by_name,
                                bound_then_rebound, in_a_branch, in_a_helper, matrix_product],
                         ids=lambda f: f.__name__)
def test_autograd(fn):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    namespace = dict(fn.__globals__, np=anp)
    for helper in (apply_n, twice, partial_helper):
        namespace[helper.__name__] = type(helper)(helper.__code__, namespace)
    twin = type(fn)(fn.__code__, namespace)
    for wrt in (0, 1):
        assert_close(srcgrad.grad(fn, wrt=wrt)(W, X), autograd.grad(twin, wrt)(W, X))
