"""The derivative of ``np.linalg.det`` at a singular matrix (outside tester T1, session 30, #6).

``d det(A) / dA`` is the cofactor matrix ``adj(A)^T``, finite everywhere (zero
below rank n - 1); the rules wrote it ``det(A) inv(A)^T`` and the tangent
``det(A) tr(solve(A, dA))``, so grad and jvp at a singular matrix raised a raw
``LinAlgError: Singular matrix``.  The adjoint now falls back to the cofactors
from the singular value decomposition where ``inv`` cannot be used
(runtime.det_grad), and the tangent contracts the cofactors with the direction
(runtime.det_cofactor, whose own rules let hvp differentiate it again at an
invertible matrix).  ``slogdet``'s adjoint adds nothing where only the sign
is read.  Each program: value bit for bit under every policy and in jvp,
gradient and tangent against differences; autograd (which fails at a
singular matrix too) at an invertible one.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

S = np.array([[1.0, 2.0], [2.0, 4.0]])        # det 0, rank 1
S3 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.5], [0.5, -1.0, 2.0]])
S3[1] = 2.0 * S3[0]                          # rank 2
STACK = np.stack([S3, S3 + np.eye(3)])       # one singular matrix in a stack


def det_only(a):
    return np.linalg.det(a)


def squared(a):
    return np.linalg.det(a) ** 2 + np.linalg.det(a * 2.0)


def in_a_loop(a):
    s = 0.0
    for k in range(3):
        s = s + np.linalg.det(a) * float(k + 1)
    return s


def in_a_branch(a):
    if np.sum(a) > 0:
        return np.linalg.det(a) * 3.0
    return np.sum(a)


def area(a):
    return np.linalg.det(a) * 0.5


def in_a_helper(a):
    return area(a) + np.sum(a ** 2)


def stacked(a):
    return np.sum(np.linalg.det(a) * np.array([1.0, 2.0]))


def sign_only(a):
    s, _ = np.linalg.slogdet(a)
    return s * np.sum(a)


@pytest.mark.parametrize("fn", [det_only, squared, in_a_loop, in_a_branch, in_a_helper],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("a", [S, S3], ids=["rank1", "rank2of3"])
def test_det_at_a_singular_matrix(fn, a):
    check(fn, (a,))


def test_a_stack_with_one_singular_matrix():
    check(stacked, (STACK,))


def test_the_testers_numbers():
    assert_close(srcgrad.grad(det_only)(S.copy()), np.array([[4.0, -2.0], [-2.0, 1.0]]))
    value, tangent = srcgrad.jvp(det_only, (S.copy(),), (np.ones((2, 2)),))
    assert value == det_only(S)
    assert_close(tangent, 1.0)


def test_only_the_sign_read():
    assert_close(srcgrad.grad(sign_only)(S.copy()), np.zeros((2, 2)))


def test_hvp_at_an_invertible_matrix():
    a = S3 + np.eye(3)
    v = np.arange(9.0).reshape(3, 3) / 10
    g = srcgrad.grad(squared)
    eps = 1e-6
    assert_close(srcgrad.hvp(squared)(a, v), (g(a + eps * v) - g(a - eps * v)) / (2 * eps),
                 rtol=1e-5, atol=1e-6)


def test_autograd_agrees_where_it_runs():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    a = S3 + np.eye(3)
    assert_close(srcgrad.grad(squared)(a),
                 autograd.grad(lambda m: anp.linalg.det(m) ** 2 + anp.linalg.det(m * 2.0))(a),
                 what="autograd")
