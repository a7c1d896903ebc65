"""``np.multiply.at(y, idx, v)`` on a local array (outside tester T3's family
of F3-6): refused before ("may change 'y' in place ... in a way srcgrad cannot
follow"), where ``np.add.at`` and ``np.subtract.at`` were followed.

As for those (normalize/call_writes.accumulated_at): a list of int literals
is the element updates in order, ``y[0] *= t[0]; y[1] *= t[1]; ...``; any
other index is ``y[...] = multiplied_at(y, idx, v)``, NumPy's own unbuffered
products into a copy, stored back (runtime/scatter.py), whose rule gives
``y`` the output's cotangent times the factors put at each place and each
factor the output's times ``y`` and the other factors there -- without
dividing, so a zero factor is right too.  Each program: value bit for bit
under every policy and in jvp, gradient and tangent against central
differences, with respect to ``y``'s source and to the factors.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad
from srcgrad.runtime import multiplied_at

X = np.array([0.7, -0.4, 1.3])
W = np.array([[0.5, -1.2], [0.8, 0.3], [1.1, -0.6]])


def literal_indices(x):
    y = x * 2.0
    np.multiply.at(y, [0, 1, 0], x)
    return np.sum(y ** 2)


def index_array(x):
    y = np.cos(x)
    np.multiply.at(y, np.array([2, 0, 2, 2]), np.append(x, 0.5))
    return np.sum(y * x)


def a_zero_factor(x):
    y = x + 1.0
    np.multiply.at(y, np.array([1, 1, 0]), x * np.array([1.0, 0.0, 1.0]))
    return np.sum(y ** 2)


def rows_broadcast(w, x):
    y = w * 1.0
    np.multiply.at(y, np.array([0, 2, 0]), x[:2])  # each row times x[:2], row 0 twice
    return np.sum(np.tanh(y))


def tuple_index(w, x):
    y = w + 0.0
    np.multiply.at(y, (np.array([0, 1, 0]), 1), x)
    return np.sum(y ** 3)


def in_a_loop(x):
    y = np.ones(3)
    for k in range(3):
        np.multiply.at(y, np.array([k, (k + 1) % 3]), x[k])
    return np.sum(y * x)


def in_a_branch(x):
    y = x ** 2
    if x[0] > 0:
        np.multiply.at(y, [2, 2], x[:2])
    else:
        np.multiply.at(y, np.array([0]), x[2])
    return np.sum(y)


def scaled(y, idx, v):
    z = y * 1.0
    np.multiply.at(z, idx, v)
    return z


def in_a_helper(x):
    return np.sum(scaled(x, np.array([0, 0]), x[1:]) ** 2)


ONE = [literal_indices, index_array, a_zero_factor, in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", ONE, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X,))


def test_the_other_branch():
    check(in_a_branch, (-X,))


@pytest.mark.parametrize("fn", [rows_broadcast, tuple_index], ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_two_dimensions_with_respect_to_each(fn, wrt):
    check(fn, (W, X), wrt)


def test_the_products_are_numpys():
    y = np.array([2.0, 3.0, 5.0])
    want = y.copy()
    np.multiply.at(want, [0, 0, 2], [0.1, 0.7, 3.0])
    np.testing.assert_array_equal(multiplied_at(y, [0, 0, 2], [0.1, 0.7, 3.0]), want)
    np.testing.assert_array_equal(y, [2.0, 3.0, 5.0])


def test_hvp_of_literal_indices():
    v = np.array([0.3, -1.0, 0.5])
    eps = 1e-5
    g = srcgrad.grad(literal_indices)
    want = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
    np.testing.assert_allclose(srcgrad.hvp(literal_indices)(X, v), want, rtol=1e-5, atol=1e-6)


def test_hvp_of_an_index_array_is_refused_located():
    # the factors' tangent is a run-time helper with no rule of its own: refused,
    # naming the function and the helper, never a wrong second derivative
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.hvp(index_array)(X, np.ones(3))
    assert info.value.lineno == index_array.__code__.co_firstlineno
    assert "multiplied_at_tangent" in str(info.value)


def factors_a_display(x):
    y = x * 1.0
    np.multiply.at(y, np.array([0, 0]), [x[1], 2.0])
    return np.sum(y ** 2)


def factors_a_display_index_a_name(x):
    y = x * 1.0
    k = 2
    np.multiply.at(y, [k, 0], [x[1], 2.0])
    np.add.at(y, [k, 1], [x[3], x[0]])
    return np.sum(y ** 2)


def factors_a_display_in_a_while_loop(x):
    y = x * 1.0
    k = 0
    while k < 3:
        np.multiply.at(y, [k % 4, 0], [x[1] + 1.5, 1.1])
        k += 1
    return np.sum(y ** 2)


def on_the_argument(x):
    np.multiply.at(x, [2, 2], [x[0], x[3]])
    return np.sum(x ** 2)


@pytest.mark.parametrize("fn", [factors_a_display, factors_a_display_index_a_name,
                                factors_a_display_in_a_while_loop, on_the_argument],
                         ids=lambda f: f.__name__)
def test_values_given_as_a_display(fn):
    # ufunc.at makes an array of a list of values: a raw TypeError from
    # runtime/scatter.py, or an unlocated refusal, before (findings R1-4)
    check(fn, (np.array([0.7, -0.4, 1.3, 0.45]),))
