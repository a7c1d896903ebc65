"""``math.prod`` of values being differentiated (reviewer s33, F11).

``math.prod([a, b, 2.0])`` was refused (MissingRuleError) where ``sum``,
``math.fsum`` and ``np.prod`` were followed.  Rules in both modes
(rules/math_module.py): each factor gets the cotangent times the product of
the others and of ``start``, formed without dividing (exact at a zero
factor).  Each program: value bit for bit and gradient against differences
under every policy, jvp against differences, hvp against differences of the
gradient; numbers and arrays, ``start=``, a zero factor, in a loop, a branch
and a helper.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.5, -1.2, 2.0])


def numbers(x):  # the reviewer's form
    a = x[0] * 2.0
    return math.prod([a, x[1], 2.0]) + math.prod([x[2], x[0]], start=x[1])


def with_a_zero_factor(x):
    return math.prod([x[0], x[1] * 0.0, x[2]]) + math.prod((x[0], x[2]))


def arrays(x):
    return np.sum(math.prod([x, x * 2.0, np.cos(x)]))


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + math.prod([x[i], x[(i + 1) % 3], np.sin(x[i])])
    return s


def in_a_branch(x):
    if x[0] > 0:
        return math.prod([x[0], x[1] ** 2])
    return math.prod([x[2], x[1]], start=3.0)


def _volume(sides):
    return math.prod(sides)


def in_a_helper(x):
    return _volume([x[0], x[1], x[2]]) * _volume([x[0] ** 2, 2.0])


PROGRAMS = [numbers, with_a_zero_factor, arrays, in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_hvp_against_differences_of_the_gradient(fn):
    v, eps = np.array([0.3, 1.0, -0.5]), 1e-6
    g = srcgrad.grad(fn)
    fd = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X.copy(), v), fd, rtol=1e-5, atol=1e-6)
