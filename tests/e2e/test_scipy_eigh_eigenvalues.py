"""``scipy.linalg.eigh(K, eigvals_only=True)`` (review s37 R5-21) was refused
while ``np.linalg.eigh`` and ``eigvalsh`` worked.  Its rule is eigvalsh's on
the triangle read (``lower``); eigenvectors, a second matrix ``b`` or a
subset are refused as the code runs, saying what to write.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

sla = pytest.importorskip("scipy.linalg")

RS = np.random.RandomState(0)
B = RS.randn(4, 4)
THETA = np.array([0.3, -0.2, 0.5])


def spectrum(theta):
    K = B @ B.T * np.exp(theta[0]) + np.diag(np.exp(theta[1] * np.arange(4.0)))
    total = 0.0
    for lower in (True, False):
        w = sla.eigh(K + theta[2] * np.eye(4), lower=lower, eigvals_only=True)
        total = total + np.sum(np.log(w)) + w[-1] ** 2
    return total


def with_vectors(theta):
    K = B @ B.T * np.exp(theta[0])
    w, v = sla.eigh(K)
    return np.sum(w) + np.sum(v[:, 0] ** 2)


def test_eigenvalues_in_a_program():
    check_every_policy(spectrum, (THETA,), 0)


def test_hvp_of_the_eigenvalues():
    v = np.array([0.2, 0.4, -0.3])
    gradient = srcgrad.grad(spectrum)
    eps = 1e-6
    want = (gradient(THETA + eps * v) - gradient(THETA - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(spectrum)(THETA, v), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_eigenvectors_are_refused_saying_what_to_write(mode):
    with pytest.raises(srcgrad.MissingRuleError, match="for eigenvectors use np.linalg.eigh"):
        if mode == "grad":
            srcgrad.grad(with_vectors)(THETA)
        else:
            srcgrad.jvp(with_vectors, (THETA,), (THETA,))
