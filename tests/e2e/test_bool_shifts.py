"""A bool passed where NumPy takes an int: ``np.roll(x, True)`` rolls by 1.

The adjoint rolled the cotangent back by ``np.negative(shift)``, which NumPy
refuses for a bool: a raw TypeError ("The numpy boolean negative, the `-`
operator, is not supported") from grad.  runtime.unroll now negates the
shift as the ints NumPy takes it for.  Each program: value bit for bit under
every policy and in jvp, gradient and tangent against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.5, -1.25, 2.0, 0.75])
M = np.arange(6.0).reshape(2, 3) * 0.5 - 1.0


def rolled(x, k):
    return np.sum(np.roll(x, k) * x)


def rolled_by_a_numpy_bool(x, k):
    return np.sum(np.roll(x, np.bool_(k)) * np.sin(x))


def rolled_by_bools_on_two_axes(m, k):
    return np.sum(np.roll(m, (k, not k), axis=(0, 1)) * m)


def rolled_in_a_loop(x, k):
    s = 0.0
    for i in range(3):
        x = np.roll(x, k) * 0.5 + x
        s = s + np.sum(x ** 2)
    return s


def rolled_in_a_branch(x, k):
    if np.sum(x) > 0:
        return np.sum(np.roll(x, k) ** 3)
    return np.sum(x)


def roll_helper(x, k):
    return np.roll(x, k)


def rolled_in_a_helper(x, k):
    return np.sum(roll_helper(x, k) * np.cos(x))


@pytest.mark.parametrize("fn", [rolled, rolled_by_a_numpy_bool, rolled_in_a_loop,
                                rolled_in_a_branch, rolled_in_a_helper],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("k", [True, False])
def test_a_bool_shift(fn, k):
    check(fn, (X, k))


@pytest.mark.parametrize("k", [True, False])
def test_bool_shifts_on_two_axes(k):
    check(rolled_by_bools_on_two_axes, (M, k))


def test_values():
    # d/dx sum(roll(x, 1) * x) = roll(x, -1) + roll(x, 1)
    np.testing.assert_array_equal(srcgrad.grad(rolled)(X, True),
                                  np.roll(X, -1) + np.roll(X, 1))
    np.testing.assert_array_equal(srcgrad.grad(rolled)(X, False), 2.0 * X)
