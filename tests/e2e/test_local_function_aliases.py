"""A local name bound once to a function (review s35 R3-28).

``act = np.tanh; act(x)``, ``sigmoid = sps.expit``, ``h = helper``, ``act = ACT``
(a module-level alias) were refused as "a function only known when the code
runs", while ``act = np.tanh if flag else np.sin`` was followed.  A name bound
once to a function srcgrad can name when it compiles is that function: value
bit for bit and gradient/jvp against differences under every policy, in a
loop, a branch and a helper.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

ACT = np.tanh


def helper(v):
    return v ** 3 + np.sin(v)


def numpy_function(x):
    act = np.tanh
    return np.sum(act(x) ** 2)


def user_function(x):
    h = helper
    return np.sum(h(x))


def module_alias(x):
    act = ACT
    return np.sum(act(x * 2.0) ** 2)


def in_a_loop(x):
    step = np.sin
    for _ in range(3):
        x = x + 0.5 * step(x)
    return np.sum(x ** 2)


def in_a_branch(x):
    act = np.tanh
    if np.sum(x) > 0:
        return np.sum(act(x) * x)
    return np.sum(act(-x))


def _apply(f, v):
    return f(v) * 2.0


def passed_on(x):
    act = np.cos
    return np.sum(_apply(act, x))


def in_a_helper(x):
    return np.sum(_layer(x) ** 2)


def _layer(v):
    nonlinearity = np.tanh
    return nonlinearity(v @ np.ones((3, 3)) * 0.3)


PROGRAMS = [numpy_function, user_function, module_alias, in_a_loop, in_a_branch, passed_on,
            in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_a_local_name_bound_once_to_a_function_is_that_function(fn):
    check_every_policy(fn, (np.array([0.3, -0.5, 0.9]),), 0)


def test_a_scipy_function_bound_to_a_local_name():
    special = pytest.importorskip("scipy.special")

    def f(x):
        sigmoid = special.expit
        return np.sum(sigmoid(x) ** 2)

    check_every_policy(f, (np.array([0.3, -0.5, 0.9]),), 0)
