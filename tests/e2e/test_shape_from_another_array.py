"""A reshape whose shape is read from another array (outside tester T1, session 30, #2).

``def mk(f, g): return (g * 2.0).reshape(f.shape)`` returns a new array; only
its shape comes from ``f``.  The look at what memory a value may be
(normalize/memory_scan.py) took the shape argument of ``reshape`` (and of
``np.reshape``, ``transpose``, ``swapaxes``, ...) for memory the result may
share, so an in-place update of the result by a helper, ``upd(mk(x, y))``
with ``x`` read afterwards, was refused ("reads 'x' ... which shares the
memory of 'b'"; autograd's fluidsim example).  The shape, axes and counts of
NumPy's views of their first argument now relate the result to nothing; a
real view of ``x`` (``x.reshape(g.shape)``) is still refused, located.  Each
program: value bit for bit under every policy and in jvp, gradient and
tangent against differences, autograd.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, assert_refused_both_modes
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([1.0, 2.0, 0.5, -1.5])


def upd(a):
    a -= 1.0
    return a


def by_method(f, g):
    return (g * 2.0).reshape(f.shape)


def by_function(f, g):
    return np.reshape(g * 2.0, f.shape)


def by_a_count(f, g):
    n = f.shape[0]
    return (g * 2.0).reshape(n)


def by_unpacked_shape(f, g):  # fluidsim's advect: rows, cols = f.shape
    rows, cols = f.shape
    return np.reshape(np.ravel(g * 2.0), (rows, cols))


def the_testers(x):  # refused before; 23.0 at x = [1, 2], y = [3, 5]
    y = x[::-1] * 1.0
    b = by_method(x, y)
    a = upd(b)
    return np.sum(a * x)


def through_np_reshape(x):
    b = by_function(x, x ** 2)
    a = upd(b)
    return np.sum(a * x)


def in_a_loop(x):
    s = 0.0
    for k in range(3):
        a = upd(by_a_count(x, x * float(k)))
        s = s + np.sum(a * x)
    return s


def in_a_branch(x):
    if np.sum(x) > 0:
        a = upd(by_method(x, np.sin(x)))
    else:
        a = upd(by_function(x, np.cos(x)))
    return np.sum(a * x)


def in_a_branch_other_way(x):
    return in_a_branch(-x)


def grid(x):
    m = x.reshape(2, 2)
    a = upd(by_unpacked_shape(m, m.T * 1.0))
    return np.sum(a * m)


def in_a_helper(x):
    return grid(x) + through_np_reshape(x)


PROGRAMS = [the_testers, through_np_reshape, in_a_loop, in_a_branch, in_a_branch_other_way,
            grid, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_the_shape_of_another_array_shares_nothing(fn):
    check(fn, (X,))


def test_the_testers_numbers():
    x = np.array([1.0, 2.0])

    def loss(x, y):
        b = by_method(x, y)
        a = upd(b)
        return np.sum(a * x)

    value, grad = srcgrad.value_and_grad(loss)(x, np.array([3.0, 5.0]))
    assert value == 23.0
    assert_close(grad, np.array([5.0, 9.0]))


def a_real_view(x):
    b = x.reshape(x[::-1].shape)  # the memory of x itself
    a = upd(b)
    return np.sum(a * x)


def test_a_real_view_is_still_refused():
    assert_refused_both_modes(a_real_view, SrcGradError, "'x'", x=X * 1.0)


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):
        return anp.sum((x ** 2 * 2.0 - 1.0) * x)

    assert_close(srcgrad.grad(through_np_reshape)(X.copy()), autograd.grad(plain)(X),
                 what="autograd")
