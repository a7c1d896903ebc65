"""A local function name bound twice, the second after a call of the first (review s36 R4-2).

``g = lambda v: ...; x = g(x); g = lambda v: ...; x = g(x)`` (or the second
bound in a loop, or two ``def g``): each call became a choice among every
definition, and the first call's choice named the second's lambda before it
existed -- refused, naming srcgrad's ``g_2``.  A call now chooses among the
definitions that may have run before it (earlier in the source, or in a loop
around both): the first call is the first lambda's.  A call inside a lambda
still chooses among all of them, as it runs whenever the lambda is called.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy


def lambda_rebound_in_a_loop(a, x):
    g = lambda v: v * a  # noqa: E731
    x = g(x)
    for i in range(2):
        g = lambda v: v * a + i  # noqa: E731
        x = g(x)
    return np.sum(x)


def lambda_bound_twice(a, x):
    g = lambda v: v * a + np.cos(v)  # noqa: E731
    x = g(x)
    g = lambda v: v * a * np.sin(v)  # noqa: E731
    x = g(x)
    return np.sum(x)


def def_twice(a, x):
    def g(v):
        return v * a

    x = g(x)

    def g(v):  # noqa: F811
        return v + a * v ** 2

    return np.sum(g(x))


def called_later_through_a_lambda(a, x):
    g = lambda v: v * a  # noqa: E731
    later = lambda: g(x)  # noqa: E731  (runs the g bound when it is called)
    g = lambda v: np.sin(v) * a  # noqa: E731
    return np.sum(later())


@pytest.mark.parametrize("fn", [lambda_rebound_in_a_loop, lambda_bound_twice, def_twice,
                                called_later_through_a_lambda])
def test_each_call_runs_the_definition_bound_before_it(fn):
    check_every_policy(fn, (0.7, np.array([0.3, -0.5])), 0)
