"""``np.add.at(a, idx, v)`` with an index array on a differentiated local.

Refused before ("'np.add.at(a, IDX, v * v)' may change 'a' in place, and a
value being differentiated flows into it, in a way srcgrad cannot follow"):
only a list of int literals was followed (as element updates).  Any other
index -- an array with repeated entries, a name, a tuple ``(rows, 1)`` -- is
now ``a[...] = added_at(a, idx, v)`` (normalize/statements.py
``accumulated_at``, runtime/scatter.py): the same unbuffered adds in the same
order into a copy, stored back, a whole write srcgrad follows; ``added_at``'s
rules (rules/ufunc_methods.py) give ``v`` the output's cotangent at each
index, repeated ones each theirs.  ``np.subtract.at`` likewise.  Each program:
value bit for bit under every policy and in jvp, gradient and tangent against
differences for both arguments, hvp; the caller's arrays left alone.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

IDX = np.array([0, 2, 0, 1, 2, 2])
X = np.array([0.3, -1.2, 0.7])
V = np.array([0.5, 1.0, -0.3, 0.2, 0.9, -1.1])


def into_a_local(x, v):
    a = x * 2.0
    np.add.at(a, IDX, v * v)
    return np.sum(np.sin(a))


def into_zeros(x, v):
    a = np.zeros(3)
    np.add.at(a, IDX, v * x[IDX])
    return np.sum(a ** 2)


def tuple_index(x, v):
    a = np.zeros((3, 2))
    np.add.at(a, (IDX, 1), v)
    return np.sum(a ** 2) + np.sum(a * x[:, None])


def broadcast_value(x, v):
    a = np.outer(x, x)
    np.add.at(a, IDX, v[:3] * 0.5)  # each picked row gets the same three
    return np.sum(np.tanh(a))


def subtracted(x, v):
    a = x.copy()
    np.subtract.at(a, IDX, v)
    return np.sum(a ** 3)


def in_a_loop(x, v):
    a = x * 1.0
    for k in range(3):
        np.add.at(a, IDX[k:], v[k:] * a[IDX[k:]])
    return np.sum(a ** 2)


def in_a_branch(x, v):
    a = x + 0.0
    if np.sum(x) > 0:
        np.add.at(a, IDX, v)
    else:
        np.subtract.at(a, IDX, v ** 2)
    return np.sum(np.exp(a))


def segment_sum(values, ids):
    out = np.zeros(3)
    np.add.at(out, ids, values)
    return out


def in_a_helper(x, v):
    return np.sum(segment_sum(v * x[IDX], IDX) ** 2) + np.sum(segment_sum(v, IDX[::-1]) * x)


def read_before_and_after(x, v):
    a = np.sin(x)
    s = np.sum(a ** 2)  # read for the adjoint before the write
    np.add.at(a, IDX, v)
    return s * np.sum(a * x)


def an_argument_read_before(x, v):  # test_stale_views_refused.py refused it before
    s = np.sum(np.sin(v[:3] * x[0]))
    np.add.at(x, np.array([0, 0]), 1.0)
    return s + np.sum(x * v[3:])


PROGRAMS = [into_a_local, into_zeros, tuple_index, broadcast_value, subtracted, in_a_loop,
            in_a_branch, in_a_helper, read_before_and_after, an_argument_read_before]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_add_at(fn, wrt):
    x, v = X.copy(), V.copy()
    check(fn, (x, v), wrt=wrt)
    np.testing.assert_array_equal(x, X)  # (an_argument_read_before: srcgrad's copy changes)
    np.testing.assert_array_equal(v, V)


def test_the_other_branch():
    check(in_a_branch, (-X, V), wrt=0)
    check(in_a_branch, (-X, V), wrt=1)


@pytest.mark.parametrize("fn", [into_a_local, into_zeros, in_a_loop])
def test_hvp(fn):
    u = np.linspace(-0.5, 1.0, X.size)
    got = srcgrad.hvp(fn)(X, V, u)
    g = srcgrad.grad(fn)
    eps = 1e-6
    assert_close(got, (g(X + eps * u, V) - g(X - eps * u, V)) / (2 * eps), rtol=1e-5,
                 atol=1e-6, what=fn.__name__)


def test_the_loop_form_agrees():
    def loop(x, v):
        a = np.zeros(3)
        for i, u in zip(IDX, v * x[IDX]):
            a[i] += u
        return np.sum(a ** 2)

    for wrt in (0, 1):
        assert_close(srcgrad.grad(into_zeros, wrt=wrt)(X, V), srcgrad.grad(loop, wrt=wrt)(X, V))


def multiplied(x, v):
    a = x * 1.0
    np.multiply.at(a, IDX, v)
    return np.sum(a)


@pytest.mark.parametrize("wrt", [0, 1])
def test_multiply_at(wrt):
    # refused before; y[...] = multiplied_at(y, idx, v) now (tests/e2e/test_multiply_at.py)
    check(multiplied, (X, V), wrt)
