"""A write through a view of a whole local array made in the target itself:
``y.T[1] = v``, ``y.T[1] += v``, ``y.reshape(9)[4] = v``, ``y.swapaxes(0,
1)[i] = v``, ``y.ravel()[0] = v`` (outside tester T3's family of F3-6).

Refused before ("only elements of a local variable can be assigned"), where
``v = y.T; v[1] = a`` was followed (analysis/refresh.py writes the view back
into ``y``, behind its run-time test that the view is that window on ``y``).
The normaliser now names the view, ``t = y.T; t[1] = a``
(normalize/chained_writes.view_assign), so the same write-back follows it; a
``ravel`` or ``reshape`` that had to copy writes into the copy, which Python
loses, and so does the generated code.  An argument's view written so stays
refused, located.  Each program: value bit for bit under every policy and in
jvp, gradient and tangent against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.7, -0.4, 1.3])


def transposed(x):  # T3's program
    y = np.zeros((2, 3))
    y.T[1] = x[:2]
    return np.sum(y ** 2) + y[1, 1]


def transposed_augmented(x):
    y = np.ones((2, 3)) * x[2]
    y.T[1] += x[:2]
    return np.sum(y ** 2)


def reshaped(x):
    y = np.outer(x, x)
    y.reshape(9)[4] = np.sin(x[0])
    return np.sum(y ** 2)


def ravel_of_a_copy(x):
    y = np.outer(x, x)[:, :2]  # not contiguous: ravel copies, the write is lost
    y.ravel()[0] = 5.0 * x[1]
    return np.sum(y ** 2)


def swapped_in_a_loop(x):
    y = np.zeros((3, 2))
    for i in range(2):
        y.swapaxes(0, 1)[i] = x * (i + 1.0)
    return np.sum(np.tanh(y))


def in_a_branch(x):
    y = np.outer(x, x)
    if x[0] > 0:
        y.T[0] = np.cos(x)
    else:
        y.transpose()[2, 1:] *= x[1]
    return np.sum(y * y[0])


def column(y, v):
    z = y * 1.0
    z.T[1] = v
    return z


def in_a_helper(x):
    y = np.outer(x, x)
    z = column(y, x[2] * x)
    return np.sum(z ** 2) + np.sum(y)


PROGRAMS = [transposed, transposed_augmented, reshaped, ravel_of_a_copy, swapped_in_a_loop,
            in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X,))


def test_the_other_branch():
    check(in_a_branch, (-X,))


def argument_written(M):
    M.T[0] = 1.0
    return np.sum(M ** 2)


def test_an_arguments_view_written_is_refused_located():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(argument_written)(np.ones((2, 2)))
    assert info.value.lineno == argument_written.__code__.co_firstlineno + 1
