"""min(*x) and max(*x) (review s37 R5-8).

``min(*x) * 3 + max(*x)`` of an array argument was refused ('srcgrad cannot
tell how many arguments *x passes'): the builtins take any number.  With the
starred operand alone it is ``min(x)`` (normalize/sugar.starred_call), which
is differentiated.  Each: value bit for bit under every policy and in jvp,
gradient and tangent against differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

X = np.array([0.37, -0.81, 1.23, -0.22])


def of_an_array(x):
    return min(*x) * 3 + max(*x)


def of_a_list(x):
    xs = [x[0] * 2.0, x[1] ** 2, x[2]]
    return min(*xs) + max(*xs) ** 2


def in_a_loop(x):
    s = 0.0
    for i in range(2):
        s = s + max(*(x * float(i + 1)))
    return s


@pytest.mark.parametrize("fn", [of_an_array, of_a_list, in_a_loop])
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (X.copy(),))
