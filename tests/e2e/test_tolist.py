"""``x.tolist()`` of a differentiated array (review s33, H4-7).

It had no rule ("no adjoint rule for the method '.tolist()'").  The nested
lists of Python numbers it makes get the array's derivative: the cotangent of
the lists, laid out as the array (runtime ``listed_cotangent``; zeros where
no cotangent reached a row or an item), and in forward mode the tangent's
elements in the same lists.  Value bit for bit (the Python floats'
arithmetic is run as written), gradient against differences under every
policy, jvp, hvp; in a loop, a branch and a helper.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -1.2, 2.0, 0.5, 0.9, -0.4])


def flat(x):
    xs = (x * 2.0).tolist()
    return xs[0] * xs[1] + sum(xs) + xs[-1] ** 2


def nested(x):
    rows = np.sin(x).reshape(2, 3).tolist()
    return rows[1][2] * rows[0][0] + sum(rows[0])


def some_items_unused(x):
    rows = x.reshape(3, 2).tolist()
    return rows[2][0] * 3.0


def zero_d(x):
    v = np.sum(x ** 2).tolist()  # a 0-d array's: a Python float
    return v * v


def float32(x):
    xs = x.astype(np.float32).tolist()
    return xs[0] * xs[2] + xs[1]


def in_a_loop(x):
    s = 0.0
    for v in np.tanh(x).tolist():
        s = s + v * v
    return s


def in_a_branch(x):
    xs = x.tolist()
    if xs[0] > 0.0:
        return xs[0] * xs[3]
    return xs[1] ** 2


def helper(a):
    return [v * 2.0 for v in a.tolist()]


def in_a_helper(x):
    ys = helper(x[1:])
    return ys[0] * ys[-1]


PROGRAMS = [flat, nested, some_items_unused, zero_d, in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS)
def test_every_policy(fn):
    check(fn, (X.copy(),))


def test_float32_against_the_derivative():  # (differences of float32 values are too coarse)
    value, grad = srcgrad.value_and_grad(float32)(X.copy())
    assert value == float32(X.copy())
    x32 = X.astype(np.float32).astype(np.float64)
    assert_close(grad, [x32[2], 1.0, x32[0], 0.0, 0.0, 0.0], rtol=1e-12, atol=0)
    value, tangent = srcgrad.jvp(float32)(X.copy(), np.ones(X.size))
    assert tangent == pytest.approx(x32[2] + 1.0 + x32[0])


def test_the_branch_not_taken():
    check(in_a_branch, (-X,))


@pytest.mark.parametrize("fn", [flat, nested, in_a_loop, in_a_helper])
def test_hvp(fn):
    v = np.linspace(-0.5, 1.0, X.size)
    eps = 1e-5
    grad = srcgrad.grad(fn)
    fd = (grad(X + eps * v) - grad(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X.copy(), v), fd, rtol=1e-5, atol=1e-7, what=fn.__name__)
