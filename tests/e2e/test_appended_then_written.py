"""An array stored in a list, tuple or dict, then written in place through its
own name (outside tester T3, F3-12): ``lst.append(b); b[1] = v``.

The container holds the very object, so Python's list sees the write.  srcgrad
follows ``b += v`` there (the updated array is stored back where it was held,
analysis/refresh.insert_holders), and a write through the container
(``lst[0][1] = v``); an element write through the array's own name is not
followed -- the list would keep the old values in the dataflow -- and is
refused, located at the write, under every form below, never a silently wrong
gradient.  The message no longer says to copy the array (the list would then
miss the write, another program): it says to write through the container or
before storing.  Both rewrites it suggests are checked: value bit for bit under
every policy and in jvp, gradient and tangent against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_refused_both_modes
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.7, -0.4, 1.3])


def appended_then_written(x):  # T3's program
    lst = []
    b = np.array([1.0, 2.0]) * x[0]
    lst.append(b)
    b[1] = x[1] * 3.0
    return lst[0][1] * x[0] + lst[0][0]


def in_a_loop(x):
    lst = []
    for i in range(2):
        b = x[:2] * (i + 1.0)
        lst.append(b)
        b[0] = x[2] * b[1]
    return lst[0][0] * lst[1][0] + np.sum(lst[1])


def in_a_branch(x):
    lst = []
    b = x * 1.5
    lst.append(b)
    if x[0] > 0:
        b[2] = np.sin(x[1])
    return np.sum(lst[0] ** 2)


def in_a_display(x):
    b = x * 2.0
    lst = [b, x]
    b[0] = x[1] ** 2
    return np.sum(lst[0] * lst[1])


def in_a_dict(x):
    d = {}
    b = x * 1.0
    d['a'] = b
    b[0] = x[1] * 4.0
    return np.sum(d['a'] ** 2)


def in_a_tuple(x):
    b = x * 1.0
    t = (b, 2.0)
    b[0] = x[1] * 4.0
    return np.sum(t[0] ** 2)


def extended(x):
    lst = []
    b = x * 1.0
    lst.extend([b])
    b[0] = x[1] * 4.0
    return np.sum(lst[0] ** 2)


def a_view_appended(x):
    y = x * 1.0
    lst = []
    lst.append(y[:2])
    y[0] = x[1] * 4.0
    return np.sum(lst[0] ** 2)


def read_before_and_after(x):
    lst = []
    b = x * 2.0
    lst.append(b)
    s = np.sum(lst[0])
    b[1] = x[0] * 5.0
    return s * np.sum(lst[0])


REFUSED = [appended_then_written, in_a_loop, in_a_branch, in_a_display, in_a_dict, in_a_tuple,
           extended, a_view_appended, read_before_and_after]


@pytest.mark.parametrize("fn", REFUSED, ids=lambda f: f.__name__)
def test_refused_located_never_wrong(fn):
    assert_refused_both_modes(fn, srcgrad.AliasedUpdateError, "holds it", "write the element "
                              "through", x=X)


def written_through_the_list(x):  # what the message says, first
    lst = []
    b = np.array([1.0, 2.0]) * x[0]
    lst.append(b)
    lst[-1][1] = x[1] * 3.0
    return lst[0][1] * x[0] + lst[0][0] + b[1]


def written_before_it_is_stored(x):  # what the message says, second
    lst = []
    for i in range(2):
        b = x[:2] * (i + 1.0)
        b[0] = x[2] * b[1]
        lst.append(b)
    return lst[0][0] * lst[1][0] + np.sum(lst[1])


def augmented_is_followed(x):
    lst = []
    b = x * 2.0
    lst.append(b)
    b += x[0]
    return np.sum(lst[0] ** 2)


@pytest.mark.parametrize("fn", [written_through_the_list, written_before_it_is_stored,
                                augmented_is_followed], ids=lambda f: f.__name__)
def test_the_rewrites(fn):
    check(fn, (X,))
