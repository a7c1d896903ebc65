"""A ufunc applied to a list or tuple the function builds (review s36 R4-3).

``vals = []; vals.append(...); np.cos(vals)`` and ``np.tanh(list(x))``: NumPy
makes an array of the list.  Reverse mode was right; forward mode kept the
list's tangent a list, so the generated ``-d_vals * np.sin(vals)`` raised a
raw TypeError, and hvp/hessian (reverse over that code) refused ``'*' of a
tuple or list``.  The operand is now the ``np.array`` NumPy makes of it
(normalize/array_operands.py ``certainly_sequence``): value bit for bit,
gradient and jvp under every policy, hvp against differences of the gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad


def appended(x):
    vals = []
    for i in range(3):
        vals.append(x[i] * (i + 1))
    return np.sum(np.cos(vals))


def displayed(x):
    vals = [x[0], x[1] * 2, x[2] ** 2]
    return np.sum(np.tanh(vals) * np.exp(vals))


def converted_calls(x):
    return np.sum(np.sin(list(x)) + np.cos(tuple(x * 2.0)) + np.exp(sorted([x[0], x[2], x[1]])))


def in_a_branch(x):
    vals = [x[0]]
    if np.sum(x) > 0:
        vals = [v * 2.0 for v in x]
    return np.sum(np.log1p(np.square(vals)))


def kept_a_list(x):
    """The list is still a list where the code uses it as one."""
    vals = [x[0], x[1]]
    vals = vals + [x[2]]
    return np.sum(np.sqrt(np.add(vals, 2.0))) * len(vals)


X = np.array([0.3, -0.5, 0.8])


@pytest.mark.parametrize("fn", [appended, displayed, converted_calls, in_a_branch,
                                kept_a_list])
def test_ufunc_of_a_list_in_both_modes(fn):
    check_every_policy(fn, (X.copy(),), 0)


@pytest.mark.parametrize("fn", [appended, displayed, converted_calls])
def test_hvp_of_a_ufunc_of_a_list(fn):
    v = np.array([1.0, 0.5, -0.2])
    eps = 1e-6
    g = srcgrad.grad(fn)
    want = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, v), want, rtol=1e-6, atol=1e-7)


def reductions_of_a_list(x):
    vals = [x[0], x[1] ** 2, x[2]]
    return np.prod(vals) + np.std(vals) + np.linalg.norm(vals) + np.dot(vals, vals)


def ufunc_of_a_tuple(x):
    vals = (x[0], x[1])
    return np.sum(np.tanh(vals)) + np.hypot(*vals)


@pytest.mark.parametrize("fn", [reductions_of_a_list, ufunc_of_a_tuple])
def test_numpy_functions_of_a_list_or_tuple_in_every_mode(fn):
    """hvp refused "'*' of a tuple or list and 'others'" (review s36, R4-3b): the
    list or tuple a NumPy function takes as array_like is now the array too."""
    check_every_policy(fn, (X.copy(),), 0)
    v = np.array([1.0, 0.5, -0.2])
    eps = 1e-6
    g = srcgrad.grad(fn)
    want = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, v), want, rtol=1e-6, atol=1e-7)
