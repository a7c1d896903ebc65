"""Rules for NumPy functions that had none: running extrema
(``np.maximum.accumulate``, ``minimum``, ``fmax``, ``fmin``), ``np.choose``,
``np.block``, ``np.ptp``, ``np.ediff1d``, ``np.unwrap``, and
``np.put_along_axis`` on a differentiated local.

Each was refused ("no adjoint rule for 'ufunc.accumulate'", "... 'np.choose'",
"'np.put_along_axis(a, ...)' may change 'a' in place ... in a way srcgrad
cannot follow").  A running extremum is a chain of ``np.maximum`` steps, ties
splitting 0.5/0.5 as ``np.maximum``'s rule does (runtime/picks.py);
``np.put_along_axis(y, idx, v, axis)`` is the assignment NumPy makes,
``y[along_axis_index(y, idx, axis)] = v``, which srcgrad follows (a place
written twice keeps the last value).  Each program: value bit for bit under
every policy and in jvp, gradient and tangent against differences; hvp against
differences of the gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -1.2, 0.7, 1.5, -0.4, 0.9, 2.1, 0.2])
A = np.array([[0.3, -1.2, 0.7], [1.5, -0.4, 0.9]])


def running_max(x):
    return np.sum(np.maximum.accumulate(np.sin(x)) ** 2)


def running_min_with_a_tie(x):  # x[4] - 0.7 == x[2] ... no; a constant tie: the floor 0
    return np.sum(np.minimum.accumulate(np.maximum(x, 0.0)) * np.arange(8.0))


def running_on_an_axis(x):
    m = x.reshape(2, 4)
    return np.sum(np.maximum.accumulate(m, axis=1) ** 2) \
        + np.sum(np.fmin.accumulate(m * m, axis=0)) + np.sum(np.fmax.accumulate(m[0]))


def choose(x):
    which = np.array([0, 1, 2, 1, 0, 2, 2, 1])
    return np.sum(np.choose(which, [x, x ** 2, np.sin(x)]) ** 2)


def choose_broadcast_and_constant(x):
    which = np.array([[0, 1], [1, 3], [2, 0], [5, 1]])
    m = x.reshape(4, 2)
    return np.sum(np.choose(which, [m, m[0], 1.5, m * 3.0], mode="wrap") ** 2)


def block(x):
    a = x[:4].reshape(2, 2)
    b = x[4:].reshape(2, 2)
    return np.sum(np.block([[a, b], [np.ones((1, 2)) * x[0], b[:1] ** 2]]) ** 2)


def block_of_vectors(x):
    return np.sum(np.block([x[:3], 2.0, x[5:] * x[0]]) ** 3)


def ptp(x):
    return np.ptp(x) ** 2 + np.sum(np.ptp(x.reshape(2, 4), axis=1) * np.array([1.0, 3.0]))


def ediff1d(x):
    return np.sum(np.ediff1d(x) ** 2) \
        + np.sum(np.ediff1d(x.reshape(2, 4) ** 2, to_begin=[1.0, 2.0], to_end=-1.0) ** 3)


def unwrap(x):
    return np.sum(np.unwrap(x * 4.0) ** 2)


def put_along_axis(x):
    a = x.reshape(2, 4) * 2.0
    np.put_along_axis(a, np.array([[0, 2], [1, 1]]), x[:4].reshape(2, 2) ** 2, axis=1)
    return np.sum(a ** 2)


def put_along_axis_broadcast(x):
    a = np.zeros((2, 4))
    np.put_along_axis(a, np.array([[3], [0]]), np.sin(x[:2])[:, None], 1)
    return np.sum(a * x.reshape(2, 4))


def in_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.maximum.accumulate(x * (k + 1.0) - k) * np.choose(
            np.arange(8) % 2, [x, x ** 2]))
    return s


def in_a_branch(x):
    if np.sum(x) > 0:
        return np.sum(np.minimum.accumulate(x) ** 2)
    return np.ptp(x ** 2)


def helper(v):
    return np.block([v, v ** 2])


def in_a_helper(x):
    return np.sum(np.maximum.accumulate(helper(x)) ** 2) + np.sum(helper(x[::-1]) * x[0])


PROGRAMS = [running_max, running_min_with_a_tie, running_on_an_axis, choose,
            choose_broadcast_and_constant, block, block_of_vectors, ptp, ediff1d, unwrap,
            put_along_axis, put_along_axis_broadcast, in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_new_rules(fn):
    x = X.copy()
    check(fn, (x,))
    np.testing.assert_array_equal(x, X)


def test_the_other_branch():
    check(in_a_branch, (-X,))


@pytest.mark.parametrize("fn", [running_max, running_on_an_axis, choose, block, ptp, ediff1d,
                                put_along_axis, in_a_loop])
def test_hvp(fn):
    v = np.linspace(-0.5, 1.0, X.size)
    got = srcgrad.hvp(fn)(X, v)
    g = srcgrad.grad(fn)
    eps = 1e-6
    assert_close(got, (g(X + eps * v) - g(X - eps * v)) / (2 * eps), rtol=1e-5, atol=1e-6,
                 what=fn.__name__)


def test_a_running_tie_splits_as_maximum_does():
    # out = [1, 3, 3, 3]: the tie at the end shares the last cotangent with x[1]
    x = np.array([1.0, 3.0, 2.0, 3.0])
    got = srcgrad.grad(lambda v: np.sum(np.maximum.accumulate(v)))(x)
    np.testing.assert_array_equal(got, [1.0, 2.5, 0.0, 0.5])

    def by_steps(v):  # the same chain written with np.maximum
        out, s = v[0], v[0]
        for k in range(1, 4):
            out = np.maximum(out, v[k])
            s = s + out
        return s

    np.testing.assert_array_equal(srcgrad.grad(by_steps)(x), got)


def put_into_the_argument(x):
    np.put_along_axis(x, np.array([[0], [1]]), 1.0, axis=1)
    return np.sum(x ** 2)


def test_put_along_axis_on_an_argument():
    # the argument is copied at the entry, as for any update srcgrad follows
    check(put_into_the_argument, (A.copy(),))
    assert_close(srcgrad.grad(put_into_the_argument)(A.copy()),
                 np.array([[0.0, -2.4, 1.4], [3.0, 0.0, 1.8]]))
