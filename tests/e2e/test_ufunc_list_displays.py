"""A list or tuple display of differentiated numbers given to a NumPy ufunc:
``np.maximum([p[0], p[1]], 0.1)`` (outside tester T3, F3-7).

NumPy takes the display as an array; the generated adjoint compared the
Python list itself (``[t1, t2] > 0.1``): a raw TypeError in grad and jvp.  A
ufunc's display argument is now ``np.array(display)`` (the same numbers, the
same dtype: what the ufunc makes of it), which the rules differentiate
(normalize/calls.displays_as_arrays).  Each program: value bit for bit under
every policy and in jvp, gradient and tangent against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad

P = np.array([0.7, -0.4, 1.3])


def clipped(p):  # T3's program
    return np.sum(np.maximum([p[0], p[1]], 0.1))


def tuple_and_list(p):
    return np.sum(np.exp((p[0], p[1] * 2.0, 0.5)) * np.add([p[1], 1.0, p[2]], p))


def in_a_loop(p):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.multiply([p[i], p[i + 1]], [p[2], 2.0]))
    return s


def in_a_branch(p):
    if p[0] > 0:
        return np.sum(np.minimum([p[0] * p[1], p[2]], 0.5))
    return np.sum(p)


def helper(a, b):
    return np.hypot([a, b], 1.0)


def in_a_helper(p):
    return np.sum(helper(p[0], p[2]) ** 2)


@pytest.mark.parametrize("fn", [clipped, tuple_and_list, in_a_loop, in_a_branch, in_a_helper],
                         ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (P,))


def test_the_testers_value():
    np.testing.assert_array_equal(srcgrad.grad(clipped)(np.array([0.7, -0.4])), [1.0, 0.0])
