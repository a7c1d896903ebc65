"""``scipy.linalg.solve`` (review s37 R5-2): ``solve(K, y, assume_a="pos")``, the
GP log-likelihood's solve, was refused ("no adjoint rule for
'scipy.linalg.solve'") where ``np.linalg.solve``, ``cho_solve`` and
``solve_triangular`` worked.  Its rules (rules/scipy_linalg.py) give each
structure's cotangent to the entries SciPy reads; the spec table checks every
``assume_a``; here in programs under every policy, jvp and hvp.  And
``scipy.linalg.toeplitz`` (R5-21), a stationary kernel's covariance from its
first column (and row).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

sla = pytest.importorskip("scipy.linalg")

RS = np.random.RandomState(0)
X = RS.randn(5, 2)
Y = RS.randn(5)
THETA = np.array([0.2, -0.3, -1.0])


def gp_nll(theta):
    d = X[:, None, :] - X[None, :, :]
    K = np.exp(theta[0]) * np.exp(-0.5 * np.sum(d ** 2, axis=-1) / np.exp(2 * theta[1]))
    K = K + np.exp(theta[2]) * np.eye(5)
    alpha = sla.solve(K, Y, assume_a="pos")
    return 0.5 * Y @ alpha + 0.5 * np.linalg.slogdet(K)[1]


def structured_solves(theta):
    A = np.eye(3) * 2.0 + np.outer(theta, theta)
    total = 0.0
    for structure in ("gen", "sym", "lower triangular"):
        total = total + np.sum(sla.solve(A, theta + 1.0, assume_a=structure) ** 2)
    return total + np.sum(sla.solve(A, np.ones((3, 2)), transposed=True))


def stationary_covariance(theta):
    column = np.exp(theta[0]) * np.exp(-np.arange(4.0) ** 2 / np.exp(theta[1])) \
        + np.exp(theta[2]) * (np.arange(4.0) == 0)
    K = sla.toeplitz(column)
    A = sla.toeplitz(column[:3], np.concatenate([column, column[:1]]) * 0.5)
    return np.linalg.slogdet(K)[1] + np.sum(A ** 2)


@pytest.mark.parametrize("fn", [gp_nll, structured_solves, stationary_covariance],
                         ids=lambda f: f.__name__)
def test_scipy_solve_in_programs(fn):
    check_every_policy(fn, (THETA,), 0)


@pytest.mark.parametrize("fn", [gp_nll, stationary_covariance], ids=lambda f: f.__name__)
def test_hvp(fn):
    v = np.array([0.5, -0.2, 0.3])
    gradient = srcgrad.grad(fn)
    eps = 1e-6
    want = (gradient(THETA + eps * v) - gradient(THETA - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(THETA, v), want, rtol=1e-5, atol=1e-7)
