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


# --- found by a review of the first version (np.concatenate / np.column_stack):
# NumPy's own array now, whatever the items

def float32_with_a_number(y):
    return np.sum(np.r_[y, 0.1] * 3.0)


def a_name_holding_the_items(x):
    t = (x, x ** 2)
    return np.sum(np.r_[t] * np.arange(6.0))


def three_dimensional_columns(A):
    return np.sum(np.c_[A, A ** 2] ** 2)


def test_a_number_takes_the_arrays_dtype():
    y = np.array([1.5, -0.5], dtype=np.float32)
    value, grad = srcgrad.value_and_grad(float32_with_a_number)(y)
    assert value == float32_with_a_number(y) and value.dtype == np.float32
    assert_close(grad, np.full(2, 3.0), rtol=1e-6)


def test_a_name_holding_a_tuple_of_items():
    check_every_policy(a_name_holding_the_items, (X.copy(),), 0)


def test_three_dimensional_items_of_c_join_on_the_last_axis():
    check_every_policy(three_dimensional_columns, (np.arange(4.0).reshape(1, 2, 2) / 4,), 0)
