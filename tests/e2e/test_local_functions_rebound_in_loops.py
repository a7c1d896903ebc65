"""A local function called in a loop before the loop rebinds it (review s36 D-5).

``g = lambda v: v * 2.0`` before a loop whose body calls ``g(x)`` and then
binds ``g = lambda v: v ** 2``: the first step runs the first lambda, later
steps the second.  normalize/chosen_functions names each definition apart
(``g_1``, ``g_2``) and chooses at each call by the loop-carried tag
(``g_1(x) if g == 1 else g_2(x)``); the call stands before ``g_2``'s
definition, so the normaliser did not know ``g_2`` there and refused, naming
srcgrad's own 'g_2'.  It now remembers such definitions when it enters the
loop (Inlining.chosen_ahead); which one runs is still the tag's, as the code
runs (a previous attempt that hoisted the lambdas chose by the tag before the
loop: wrong values).  Each: value bit for bit under every policy and in jvp,
gradient and tangent against differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

X = np.array([1.1, -0.4, 0.7])


def rebound_lambda(x):
    g = lambda v: v * 2.0  # noqa: E731
    s = 0.0
    for i in range(3):
        s = s + g(x)
        g = lambda v: v ** 2  # noqa: E731
    return np.sum(s)


def rebound_def(x):
    def g(v):
        return v * 2.0
    s = 0.0
    for i in range(3):
        s = s + g(x)

        def g(v):
            return v ** 2
    return np.sum(s)


def called_from_a_nested_def(x):
    g = lambda v: v * 2.0  # noqa: E731

    def h(v):
        return g(v) + 1.0
    s = 0.0
    for i in range(3):
        s = s + h(x)
        g = lambda v: np.sin(v) * v  # noqa: E731
        s = s + h(x) * 0.5
    return np.sum(s)


def reading_a_variable_of_the_loop(x):
    g = lambda v: v * 2.0  # noqa: E731
    c = x * 0.0
    s = 0.0
    for i in range(4):
        s = s + g(x)
        c = c + x
        g = lambda v: v * c  # noqa: E731 - reads c when called, as Python does
    return np.sum(s)


def rebound_in_a_branch(x):
    g = lambda v: v * 2.0  # noqa: E731
    s = 0.0
    for i in range(4):
        s = s + np.tanh(g(x))
        if i == 1:
            g = lambda v: v ** 3  # noqa: E731
    return np.sum(s)


def in_a_while_loop(x):
    g = lambda v: v * 2.0  # noqa: E731
    s = 0.0
    k = 0
    while k < 3:
        s = s + g(x)
        g = lambda v: np.exp(v)  # noqa: E731
        k = k + 1
    return np.sum(s)


@pytest.mark.parametrize("fn", [rebound_lambda, rebound_def, called_from_a_nested_def,
                                reading_a_variable_of_the_loop, rebound_in_a_branch,
                                in_a_while_loop])
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (X.copy(),))
