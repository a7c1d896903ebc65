"""``hs[-1] += v`` on a list of arrays (outside testers T1 #4, T2 #5).

A negative position is the slot counted from the end: ``s[-1] *= 0.5`` on a
two-item list is ``s[1] *= 0.5``.  The run-time check that no other item of the
list sees the array updated in place (``untouched_except``) compared the key
-1 with the positions 0 and 1, found the updated array itself among "the other
items" and refused the program with "'s' shares its memory" -- though nothing
else held it, and ``s[1] *= 0.5`` worked.  It now counts a negative key from the
end, where the list's length is known: as the code runs.  Each program runs
under every policy (value bit for bit the function's own, gradient against
central differences) and in forward mode, in a loop, a branch and a helper.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check
from numeric import assert_close

import srcgrad
from srcgrad.errors import AliasedUpdateError

X = np.array([0.6, -1.1, 0.9])


def last_scaled(x):  # T1 #4
    s = [x, 2 * x]
    s[-1] *= 0.5
    return np.sum(s[0] * s[1])


def last_shifted(x):  # T2 #5
    hs = [x * 1.0, x * 2.0]
    hs[-1] += 1.0
    return np.sum(hs[0]) + np.sum(hs[1] ** 2)


def second_from_the_end(x):
    hs = [x * 1.0, x * 2.0, x * 3.0]
    hs[-2] *= 0.5
    hs[-1][0] = x[1] * 4.0
    return np.sum(hs[1] * hs[2])


def history_in_a_loop(x):
    hs = [x * 1.0]
    for i in range(3):
        hs.append(hs[-1] * 0.5)
        hs[-1] += x * i
    return np.sum(hs[-1] ** 2) + np.sum(hs[1])


def in_a_branch(x):
    hs = [np.sin(x), x * 2.0]
    if np.sum(x) > 0:
        hs[-1] -= x
    else:
        hs[-2] *= x
    return np.sum(hs[0] * hs[1])


def grown(hs, x):
    hs.append(hs[-1] * x)
    hs[-1] += 1.0
    return hs


def in_a_helper(x):
    hs = [x * 1.0]
    for _ in range(2):
        hs = grown(hs, x)
    return np.sum(hs[-1]) + np.sum(hs[1])


PROGRAMS = [last_scaled, last_shifted, second_from_the_end, history_in_a_loop, in_a_branch,
            in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_a_negative_position_is_the_slot_from_the_end(fn):
    check(fn, (X,))


def test_the_testers_gradient():
    assert_close(srcgrad.grad(last_scaled)(np.array([1.0, 2.0])), [2.0, 4.0])


def last_twice(x):  # one array in two slots: Python changes both
    y = x * 2.0
    s = [y, y]
    s[-1] *= 0.5
    return np.sum(s[0] * x)


def test_the_same_array_in_another_slot_is_still_refused():
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.grad(last_twice)(X.copy())
    assert info.value.lineno


def test_autograd_agrees_on_the_plain_form():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):
        return anp.sum(x * (2 * x * 0.5))

    assert_close(srcgrad.grad(last_scaled)(X.copy()), autograd.grad(plain)(X), what="autograd")
