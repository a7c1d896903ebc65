"""Second-order and forward derivatives of ``det`` and ``slogdet`` at a
singular matrix.

``hvp(det)`` at a singular matrix raised a raw ``LinAlgError: Singular
matrix``: det's tangent reads the cofactors, whose adjoint was written
``tr(inv da) C - inv^T da^T C`` (runtime.det_cofactor_grad).  The cofactors are
polynomials in the matrix's elements, defined everywhere; at a singular
matrix their derivatives are now the signed second minors
(runtime.linalg._cofactor_derivative), so hvp gives the Hessian of det there.
``jvp`` of ``slogdet``'s sign raised the same (its tangent pair computed
``tr(solve(a, da))`` for ``logabsdet``); the logabsdet tangent is now
``tr(adj(a) da) / det(a)`` where ``solve`` cannot be used -- inf, -inf or nan
as NumPy divides, with its RuntimeWarning -- and the sign's tangent is zero.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad
from srcgrad.runtime import det_cofactor

S = np.array([[1.0, 2.0], [2.0, 4.0]])        # det 0, rank 1
S3 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])   # rank 2
R1 = np.outer([1.0, -2.0, 0.5], [3.0, 1.0, -1.0])                   # rank 1
V2 = np.array([[0.3, -1.2], [0.7, 0.4]])
V3 = np.array([[0.3, -1.2, 0.5], [0.7, 0.4, -0.9], [1.1, 0.2, -0.6]])


def det_only(a):
    return np.linalg.det(a)


def det_in_a_loop(a):
    s = 0.0
    for k in range(2):
        s = s + np.linalg.det(a) * (k + 1.0)
    return s


def det_in_a_branch(a):
    if np.sum(a) > 0:
        return np.linalg.det(a) * 2.0
    return np.linalg.det(a)


def helper_det(a):
    return np.linalg.det(a)


def det_in_a_helper(a):
    return helper_det(a) + np.sum(a)


def hvp_by_differences(fn, a, v, eps=1e-6):
    g = srcgrad.grad(fn)
    return (g(a + eps * v) - g(a - eps * v)) / (2 * eps)


@pytest.mark.parametrize("fn", [det_only, det_in_a_loop, det_in_a_branch, det_in_a_helper],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize(("a", "v"), [(S, V2), (S3, V3), (R1, V3)], ids=["2x2", "rank2", "rank1"])
def test_hvp_of_det_at_a_singular_matrix(fn, a, v):
    got = srcgrad.hvp(fn)(a, v)
    assert_close(got, hvp_by_differences(fn, a, v), rtol=1e-5, atol=1e-6)


def test_hvp_of_det_values():
    # det = a d - b c: <grad, V> = V00 d - V01 c - V10 b + V11 a
    got = srcgrad.hvp(det_only)(S, V2)
    np.testing.assert_array_equal(got, np.array([[V2[1, 1], -V2[1, 0]], [-V2[0, 1], V2[0, 0]]]))
    # an invertible matrix: the formula with inv, as before
    a = S + np.eye(2)
    assert_close(srcgrad.hvp(det_only)(a, V2), hvp_by_differences(det_only, a, V2))


def sign_only(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign


def log_abs_det(a):
    return np.linalg.slogdet(a)[1]


def test_jvp_of_the_sign_at_a_singular_matrix():
    value, tangent = srcgrad.jvp(sign_only, (S,), (V2,))
    assert value == sign_only(S) and tangent == 0.0
    value, tangent = srcgrad.jvp(sign_only, (S3,), (V3,))
    assert value == sign_only(S3) and tangent == 0.0


def test_jvp_of_log_abs_det_at_a_singular_matrix_divides_as_numpy():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        value, tangent = srcgrad.jvp(log_abs_det, (S,), (V2,))
        want = np.true_divide(np.sum(det_cofactor(S) * V2), np.linalg.det(S))
    assert value == log_abs_det(S)
    np.testing.assert_array_equal(tangent, want)  # inf, -inf or nan: NumPy's quotient
    assert any(issubclass(w.category, RuntimeWarning) for w in seen)


def test_log_abs_det_at_an_invertible_matrix_is_unchanged():
    a = S3 + np.eye(3)
    value, tangent = srcgrad.jvp(log_abs_det, (a,), (V3,))
    np.testing.assert_allclose(tangent, np.trace(np.linalg.solve(a, V3)))
    assert_close(srcgrad.hvp(log_abs_det)(a, V3), hvp_by_differences(log_abs_det, a, V3),
                 rtol=1e-5, atol=1e-6)
    assert_close(srcgrad.grad(log_abs_det)(a), numeric_grad(log_abs_det, [a], 0))
