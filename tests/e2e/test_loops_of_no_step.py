"""A name bound before a ``for`` loop over a range that runs no step, read
after it (outside tester T3, F3-2): ``i = 0; for i in range(len(x) - 3):
...; return x[i] * 3.0`` with a short ``x``.

Python keeps ``i = 0``; the generated loop bound a new name for ``i`` that a
loop of no step never set, and both modes raised a raw UnboundLocalError.
The loop's index now starts as the name's earlier value (``i_1 = i``, before
the loop; normalize/control.py), so a loop of no step leaves it, as Python
does.  A name a loop bound first (no earlier value) stays unbound after a
loop of no step, as in Python.  Each program: value bit for bit under every
policy and in jvp, gradient and tangent against central differences, with
the loop of no step and with steps.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad

SHORT = np.array([1.0, 2.0])
LONG = np.array([1.0, 2.0, 0.5, -1.5, 0.25])


def kept(x):  # T3's program
    i = 0
    for i in range(len(x) - 3):
        pass
    return x[i] * 3.0


def kept_with_a_body(x):
    i = 1
    for i in range(len(x) - 3):
        x = x * 2.0
    return x[i] * 3.0 + np.sum(np.sin(x))


def kept_in_a_branch(x):
    i = 0
    if np.sum(x) > 0:
        for i in range(len(x) - 3):
            x = np.tanh(x) + x
    return x[i] ** 2 + np.sum(x)


def last_index(x, n):
    k = n - 1
    for k in range(n, len(x) - 3):
        x = x * 1.5
    return x[k]


def kept_in_a_helper(x):
    return last_index(x, 1) * x[0]


def enumerated(x):
    i = 0
    for i, v in enumerate(x[3:]):
        x = x * v
    return x[i] * 2.0


def two_loops(x):
    s = 0.0
    for i in range(2):
        s = s + x[i]
    for i in range(len(x) - 3):
        s = s * x[i]
    return s * x[i]


PROGRAMS = [kept, kept_with_a_body, kept_in_a_branch, kept_in_a_helper, enumerated]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [SHORT, LONG], ids=["no step", "steps"])
def test_every_policy_and_jvp(fn, x):
    check(fn, (x,))


def two_loops_of_any_length(x, n):
    s = x * 1.0
    for i in range(n):
        s = s * np.sin(s)
    for i in range(len(x) - 3):
        s = s + 0.5 * s * i
    return np.sum(s) * i


def two_loops_in_a_helper(x):
    return two_loops(x) + x[0]


@pytest.mark.parametrize("x", [SHORT, LONG], ids=["no step", "steps"])
def test_a_second_loop_over_the_same_name(x):
    # a second loop of no step after a first with steps (x of length 2): i is the
    # first loop's last index, as in Python -- read only where the second loop runs
    # no step (if not t4: i_1 = i), since the first may have run none either
    check(two_loops, (x,))
    check(two_loops_in_a_helper, (x,))
    check(two_loops_of_any_length, (x, 3))


def test_two_loops_of_no_step_leave_the_name_unbound_as_in_python():
    with pytest.raises(UnboundLocalError):
        two_loops_of_any_length(SHORT, 0)
    for policy in ("save", "sqrt"):
        with pytest.raises(UnboundLocalError, match="'i'"):
            srcgrad.grad(two_loops_of_any_length, policy=policy)(SHORT, 0)
    with pytest.raises(UnboundLocalError, match="'i'"):
        srcgrad.jvp(two_loops_of_any_length, wrt=[0])(SHORT, 0, SHORT)
    check(two_loops_of_any_length, (LONG, 0))  # the second loop's steps bind it


def test_the_testers_values():
    np.testing.assert_array_equal(srcgrad.grad(kept)(SHORT), [3.0, 0.0])
    value, tangent = srcgrad.jvp(kept, (SHORT,), (SHORT,))
    assert (value, tangent) == (3.0, 3.0)


def first_bound_by_the_loop(x):
    for j in range(len(x) - 3):
        x = x * 2.0
    return x[j]


def test_a_name_only_the_loop_binds_is_unbound_after_no_step_as_in_python():
    with pytest.raises(UnboundLocalError):
        first_bound_by_the_loop(SHORT)
    with pytest.raises(UnboundLocalError):
        srcgrad.grad(first_bound_by_the_loop)(SHORT)
    check(first_bound_by_the_loop, (LONG,))


def differentiated_before(x, m):
    i = x[0] * 2.0
    for i in range(m):
        x = x * 1.5
    return i * x[1]


def differentiated_before_two_loops(x, m):
    i = x[0] * 2.0
    for i in range(m):
        x = x * 1.5
    for i in range(m - 1):
        x = x * 1.25
    return i * x[1]


def differentiated_before_read_in_the_body(x, m):
    i = x[0] * 2.0
    s = 0.0
    for i in range(m):
        s = s + i * x[2]
    return i * x[1] + s


@pytest.mark.parametrize("m", [0, 1, 3])
@pytest.mark.parametrize("fn", [differentiated_before, differentiated_before_two_loops,
                                differentiated_before_read_in_the_body],
                         ids=lambda f: f.__name__)
def test_a_value_being_differentiated_left_by_a_loop_of_no_step(fn, m):
    # i = 2 * x[0] survives a loop of no step: its cotangent reaches x[0] then, and
    # only then (findings R1-2: the kept copy was opaque, the gradient dropped it)
    check(fn, (LONG, m))
