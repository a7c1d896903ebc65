"""``np.r_[...]`` and ``np.c_[...]``: concatenation written as indexing (review s36 R4-8).

Taken for an indexing read of a constant, they gave a zero gradient, jvp
and hvp, silently.  Each is now the call it stands for
(srcgrad/normalize/index_tricks.py): value bit for bit, gradient and jvp
against differences under every policy, in loops, branches and helpers; a
string directive is refused, located.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy
from numpy import c_, r_

import srcgrad


def joined(x):
    z = np.r_[x, x ** 2]
    return np.sum(z * np.arange(6.0))


def columns(x):
    return np.sum(np.c_[x, np.sin(x)] @ np.array([1.0, -2.0]) ** 2)


def with_scalars_and_ranges(x):
    return np.sum(np.r_[x[0], 2.0 * x, 0:3, 0.0:1.0:3j] * np.linspace(1.0, 2.0, 10))


def imported_names(x):
    return np.sum(r_[x, x[::-1]] ** 2) + np.sum(c_[x, x] ** 3)


def in_a_loop(x):
    acc = np.zeros(1)
    for i in range(3):
        if np.sum(x) > 0:
            acc = np.r_[acc, np.tanh(x[i] * acc[-1] + x[i])]
        else:
            acc = np.r_[acc, x[i]]
    return np.sum(acc ** 2)


def rows(X):
    return np.sum(np.r_[X, 2.0 * X] @ X.T)


def helper(v):
    return np.c_[v, v ** 2]


def through_a_helper(x):
    return np.sum(helper(x) ** 2)


X = np.array([0.3, -0.5, 0.8])


@pytest.mark.parametrize("fn", [joined, columns, with_scalars_and_ranges, imported_names,
                                in_a_loop, through_a_helper])
def test_concatenation_by_index_tricks(fn):
    check_every_policy(fn, (X.copy(),), 0)


def test_two_dimensional_items_join_along_the_first_axis():
    check_every_policy(rows, (np.array([[0.3, -0.5], [0.8, 0.1]]),), 0)


def test_hvp_is_not_zero():
    hv = srcgrad.hvp(joined)(X, np.ones(3))
    assert_close(hv, np.array([0, 0, 0]) + 2 * np.arange(3.0, 6.0), rtol=1e-12)


def directive(x):
    return np.sum(np.r_['0,2', x, x])


def test_a_directive_is_refused_located():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(directive)(X)
    assert info.value.lineno == directive.__code__.co_firstlineno + 1
    assert "np.concatenate" in info.value.message
