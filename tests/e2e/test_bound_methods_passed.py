"""A bound method passed to a helper that calls it (``apply(layer.fwd, y)``).

A reviewer found the very first call failing with a raw TypeError from the
generated code: the helper's code is specialised on the function passed, and
its guard compared that function by identity -- but ``layer.fwd`` is a new
bound-method object at each read.  The guard (and the key srcgrad's gradient
objects choose code by) now compares a bound method's function and the
object it is bound to."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, check_policies, jvp_fd, numeric_grad

import srcgrad


def act(v):
    return np.tanh(v) * 2.0


def apply(g, a):
    return g(a)


class Layer:
    def __init__(self, s):
        self.s = s

    def fwd(self, v):
        return act(v) * self.s

    def shift(self, v):
        return v + self.s


L = Layer(1.5)
M = Layer(-0.5)
X = np.array([0.3, 0.7, -0.2])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


def passed_once(x):  # the reviewer's program: gradient [5.784, 7.128, -4.333]
    y = x * 2.0
    z = apply(L.fwd, y)
    return np.sum(z * y)


def passed_in_a_loop(x):
    h = x
    for k in range(4):
        if k % 2:
            h = apply(L.fwd, h) * x
        else:
            h = apply(M.shift, h)
    return np.sum(h * h)


def in_a_branch(x):
    if x[0] > 0:
        z = apply(L.fwd, x)
    else:
        z = apply(M.fwd, x * x)
    return np.sum(z * x)


def passed_on(x):  # a helper handing the method on to another helper
    return np.sum(twice(L.fwd, x))


def twice(g, a):
    return apply(g, apply(g, a))


PROGRAMS = [passed_once, passed_in_a_loop, in_a_branch, passed_on]


@pytest.mark.parametrize("fn", PROGRAMS)
def test_a_bound_method_passed_to_a_helper(fn):
    for x in (X, -X):
        check_policies(fn, (x,), policies=POLICIES)
        value, tangent = srcgrad.jvp(fn, (x,), (np.ones(3),))
        assert_bit_identical(value, fn(x))
        assert_close(tangent, jvp_fd(fn, [x], [0], [np.ones(3)]))


def test_the_reviewers_values_and_second_order():
    np.testing.assert_allclose(srcgrad.grad(passed_once)(X), [5.78397735, 7.12779055, -4.33322686],
                               rtol=1e-8)
    v = np.array([1.0, -0.5, 2.0])
    g = srcgrad.grad(passed_in_a_loop)
    want = (g(X + 1e-6 * v) - g(X - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(srcgrad.hvp(passed_in_a_loop)(X, v), want, rtol=1e-6, atol=1e-7)


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    for fn in (passed_once, passed_in_a_loop):
        np.testing.assert_allclose(srcgrad.grad(fn)(X), autograd.grad(fn)(X), rtol=1e-13)


def summed(g, a):
    return np.sum(g(a) * a)


def test_a_bound_method_passed_to_the_differentiated_function():
    grad = srcgrad.grad(summed, wrt=1)
    first = grad(L.fwd, X)
    for _ in range(2):  # a new bound-method object each time: the same code, the same value
        assert_bit_identical(grad(L.fwd, X), first)
    assert_close(first, numeric_grad(lambda a: summed(L.fwd, a), [X], 0))
    # another object, another method: other code, each right
    for method in (M.fwd, Layer(2.0).fwd, L.shift):
        assert_close(grad(method, X), numeric_grad(lambda a: summed(method, a), [X], 0))
    assert_bit_identical(grad(L.fwd, X), first)
