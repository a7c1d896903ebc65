"""``C[0].fill(v)`` after ``C[0]`` was read for the adjoint: followed as the
element write ``C[0][...] = v``, whose adjoint puts the old elements back
(outside tester T2, session 30, #1, left open by 93a8163: the call ran as
written on the copy of ``C`` the code works on, and the adjoint read the
zeroed row: 0.0 where Python's gradient is -1.17, no error).  ``C.fill(v)``
on a name was already the element write; an index of any depth is now too.
``C[[0, 1]].fill(v)`` fills a copy NumPy made, which ``C[[0, 1]][...] = v``
fills alike: C is unchanged in both."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close
from numeric import check_every_policy as check

import srcgrad

C = np.array([[2.0, 3.0], [1.0, 4.0]])


def a_row(w, c):  # the tester's: 0.0 for -1.1746
    s = np.sum(np.sin(w * c[0]))
    c[0].fill(0.0)
    return s


def a_row_then_read(w, c):
    s = np.sum(np.sin(w * c[0]))
    c[0].fill(0.5)
    return s + np.sum(w * c)


def two_levels(w, c):
    s = np.sum(np.sin(w * c[1]))
    c[1][0:1].fill(2.0)
    return s * np.sum(c * w)


def in_a_loop(w, c):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.sin(w * c[i]))
        c[i].fill(0.25)
    return s + np.sum(c * w)


def in_a_branch(w, c):
    s = np.sum(np.sin(w * c[0]))
    if s < 10.0:
        c[0].fill(0.0)
    return s + np.sum(c * w)


def inner(w, c):
    s = np.sum(np.sin(w * c[0]))
    c[0].fill(1.0)
    return s


def in_a_helper(w, c):
    return inner(w, c) * 2.0


def a_fancy_copy(w, c):  # fills NumPy's copy: c unchanged
    s = np.sum(np.sin(w * c[0]))
    c[[0, 1]].fill(0.0)
    return s + np.sum(w * c)


@pytest.mark.parametrize("fn", [a_row, a_row_then_read, two_levels, in_a_loop, in_a_branch,
                                in_a_helper, a_fancy_copy])
def test_fill_through_an_index_under_every_policy_and_jvp(fn):
    check(fn, (0.7, C.copy()))


@pytest.mark.parametrize("policy", POLICIES)
def test_the_differentiated_array_itself(policy):
    def f(c, w):
        s = np.sum(np.sin(w * c[0]))
        c[0].fill(0.0)
        return s + np.sum(c * c)
    x = C.copy()
    want = f(C.copy(), 0.7)
    value, grad = srcgrad.value_and_grad(f, policy=policy)(x, 0.7)
    assert_bit_identical(value, want)
    assert_bit_identical(x, C)  # the caller's array is left alone
    expected = 2.0 * C
    expected[0] = 0.7 * np.cos(0.7 * C[0])
    assert_close(grad, expected, rtol=1e-12)
