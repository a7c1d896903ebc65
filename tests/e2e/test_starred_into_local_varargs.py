"""``h(*t)`` into a local def or lambda taking ``*rest`` (review s35 R3-17).

A module-level ``def sumsq(*vs)`` called ``sumsq(*x)`` was differentiated, the
same function defined in the function or as a lambda was refused ("cannot
tell how many arguments '*x' passes").  Python binds ``rest`` to ``tuple(t)``
whatever its length, and so does srcgrad now: value bit for bit and
gradient/jvp against differences under every policy, in a loop, a branch and
with positional arguments before the star.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad


def local_def(x):
    def ss(*vs):
        return sum(v ** 2 for v in vs)
    return ss(*x)


def local_lambda(x):
    f = lambda *vs: sum(np.sin(v) for v in vs)  # noqa: E731
    return f(*x)


def positional_first(x):
    def weighted(w, *vs):
        return w * sum(v ** 3 for v in vs) + len(vs)
    return weighted(2.0, *x)


def in_a_loop(x):
    def prod(*vs):
        out = 1.0
        for v in vs:
            out = out * v
        return out
    total = 0.0
    for k in range(3):
        total = total + prod(*(x * (k + 1)))
    return total


def in_a_branch(x):
    def norm(*vs):
        return np.sqrt(sum(v * v for v in vs))
    if np.sum(x) > 0:
        return norm(*x)
    return norm(*(x[::-1] * 2.0))


def lambda_rest_indexed(x):
    g = lambda *vs: vs[0] * vs[-1] + len(vs)  # noqa: E731
    return g(*x)


PROGRAMS = [local_def, local_lambda, positional_first, in_a_loop, in_a_branch,
            lambda_rest_indexed]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_a_starred_argument_of_any_length_into_a_local_varargs_function(fn):
    check_every_policy(fn, (np.array([0.3, -0.5, 0.9]),), 0)


def test_a_star_before_the_positional_parameters_is_still_refused_located():
    def f(x):
        def h(a, b, *rest):
            return a * b + sum(rest)
        return h(*x)

    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="cannot tell how many arguments") as err:
        srcgrad.grad(f)(np.array([0.3, -0.5, 0.9]))
    assert "test_starred_into_local_varargs.py" in str(err.value)
