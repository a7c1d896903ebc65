"""Rules added from review s34, R2-14 (each a located MissingRuleError before):
``x.repeat`` (the twin of ``np.repeat``), ``x.round`` and ``np.fix``
(piecewise constant, as ``np.round``/``np.trunc``), ``x.item(i)`` /
``x.item(i, j)`` / ``x.item((i, j))``, the arithmetic dunders written as calls
(``x.__pow__(2)``, ``x.__mul__(y)``), and ``np.vdot``.  Each: value bit for bit
under every policy and in jvp, gradient and tangent against differences
(numeric.check_every_policy); in a loop, a branch and a helper where it
makes sense."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy, numeric_grad

import srcgrad

X = np.array([0.3, -0.5, 0.9])
W = np.array([[0.5, 0.2, -0.1], [0.0, 0.4, 0.3], [0.2, -0.3, 0.6]])


def repeat_method(x):
    return np.sum(x.repeat(2) * np.arange(6.0)) + np.sum(W.repeat(2, axis=0) @ x) \
        + np.sum(np.outer(x, x).repeat([1, 2, 3], axis=1) ** 2)


def round_method_and_fix(x):
    return np.sum(x.round(1) * x) + np.sum(np.fix(3.0 * x) * x ** 2)


def item_forms(x):
    A = np.outer(x, x)
    return x.item(1) * 3.0 + x.item(-1) ** 2 + A.item(1, 2) + A.item((2, 0)) * x.item(0)


def item_in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sin(x).item(i) * x.item(2 - i)
    return total


def dunders(x):
    return x.__pow__(2).sum() + x.__mul__(x).sum() + x.__radd__(1.0).sum() \
        + x.__truediv__(2.0).sum() + x.__sub__(W[0]).sum() + (-x).__neg__().sum() \
        + x.__matmul__(W).__rmul__(x).sum()


def vdot_real(x):
    return np.vdot(x, W @ x) + np.vdot(W, np.outer(x, x))


def vdot_complex(x):  # conj of the first argument: a complex intermediate
    z = x + 1j * x ** 2
    return np.real(np.vdot(z, np.exp(1j * x))) + np.imag(np.vdot(np.exp(1j * x), z * 2.0))


def helper(v):
    return np.vdot(v, v).__pow__(0.5)


def in_a_branch_and_helper(x):
    if x.item(0) > 0.0:
        return helper(x.repeat(2)) * x.round(2).item(1)
    return helper(x)


PROGRAMS = [repeat_method, round_method_and_fix, item_forms, item_in_a_loop, dunders,
            vdot_real, vdot_complex, in_a_branch_and_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, [X])


def test_the_other_branch():
    check_every_policy(in_a_branch_and_helper, [-X])


def test_closed_forms():
    # d/dx (x.item(1) * 3) = 3 e_1; d/dx vdot(x, W x) = (W + W^T) x; round/fix: 0
    assert_close(srcgrad.grad(lambda x: x.item(1) * 3.0)(X), [0.0, 3.0, 0.0])
    assert_close(srcgrad.grad(lambda x: np.vdot(x, W @ x))(X), (W + W.T) @ X)
    with pytest.warns(srcgrad.ZeroGradientWarning):
        zero = srcgrad.grad(lambda x: np.sum(x.round(1)) + np.sum(np.fix(x)))(X)
    assert_close(zero, np.zeros(3))


def test_vdot_of_a_complex_argument():
    def f(a, x):
        return np.real(np.vdot(a * x, x + 1j))
    a = np.array([1.0 + 2.0j, -0.5 + 0.1j, 0.3 - 1.0j])
    g = srcgrad.grad(f, wrt=1)(a, X)
    assert_close(g, numeric_grad(f, [a, X], 1), rtol=1e-6, atol=1e-8)
