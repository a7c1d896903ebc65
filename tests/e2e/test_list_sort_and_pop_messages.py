"""``lst.sort()`` of a local list, and the message for a ``pop`` srcgrad does not
follow (reviewer s33, F14).

``lst.sort()`` without a key was refused where ``lst.sort(key=...)`` and
``sorted(lst)`` were followed: on a local that is certainly a list it is
``lst[:] = sorted(lst)`` as well (normalize/list_methods.py; both stable, by
``<``).  ``lst.reverse(); last = lst.pop(0)`` stays refused, but the message
said 'xs.pop()' and advised 'v = xs[-1]; xs = xs[:-1]', the *last* item, for
``pop(0)``: it now names the user's list and index and takes the same item
(``v = lst[0]; lst = lst[1:]``), a rewrite that is followed.  Each program:
value bit for bit and gradient against differences under every policy, jvp
against differences; in a loop, a branch and a helper.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES
from numeric import check_every_policy as check

import srcgrad

X = np.array([1.1, 2.5, 3.0])  # (no ties: a sort is not differentiable at one)


def sorted_in_place(x):  # the reviewer's program
    lst = [x[2], x[0] * 2.0, x[1]]
    lst.sort()
    return lst[0] * 1.0 + lst[1] * 2.0 + lst[2] * 3.0


def sorted_in_a_loop(x):
    lst = []
    for i in range(3):
        lst.append(np.sin(x[i] * (i + 1)))
        lst.sort()
    return lst[0] + 2.0 * lst[-1] * lst[1]


def sorted_in_a_branch(x):
    lst = [x[0] ** 2, x[1], -x[2]]
    if x[0] > 0:
        lst.sort()
    else:
        lst.sort(reverse=True)
    return lst[0] * 3.0 + lst[2]


def _smallest_two(x):
    lst = [x[0] * 1.5, x[1] * 1.5, np.sin(x[2])]
    lst.sort()
    return lst[0] * lst[1]


def sorted_in_a_helper(x):
    return _smallest_two(x) + _smallest_two(x ** 2)


def pop_rewritten(x):  # what the message advises for pop(0) after reverse()
    lst = [x[0], x[1], x[2]]
    lst.reverse()
    last = lst[0]
    lst = lst[1:]
    return last * 2.0 + lst[0] * lst[1]


PROGRAMS = [sorted_in_place, sorted_in_a_loop, sorted_in_a_branch, sorted_in_a_helper,
            pop_rewritten]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X.copy(),))
    check(fn, (np.array([-0.5, 2.5, 0.7]),))


def reversed_then_popped(x):
    lst = [x[0], x[1], x[2]]
    lst.reverse()
    last = lst.pop(0)
    return last * 2.0 + lst[0] * lst[1]


def test_pop_refused_naming_the_users_list_and_item():
    runs = [lambda: srcgrad.jvp(reversed_then_popped, (X.copy(),), (np.ones(3),))]
    runs += [lambda p=p: srcgrad.grad(reversed_then_popped, policy=p)(X.copy())
             for p in POLICIES]
    for run in runs:
        with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and "lst.pop(0)" in err.source_line
        assert "lst.pop(0)" in err.message and "'v = lst[0]; lst = lst[1:]'" in err.message
        assert "xs" not in err.message, err.message
