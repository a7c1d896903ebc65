"""Adjoints of scipy.linalg.sqrtm and solve_sylvester where the result is complex
(diff review s37 D-15, D-16).

Their adjoints solved at the conjugate transposes ``s^H`` / ``a^H, b^H``; a
complex cotangent in srcgrad is autograd's, for which a holomorphic map's
adjoint is its transpose: the gradient of the imaginary part of a real
matrix's complex square root came out sign-flipped, and solve_sylvester's
``a``/``b`` cotangents were wrong whenever the solution was complex.  jvp and
the all-real cases were right.  Checked against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad

sl = pytest.importorskip("scipy.linalg")

WEIGHTS = np.array([[1.0, 2.0], [3.0, 4.0]])
X = np.array([-1.0, 0.3, 0.2, 2.0])  # a matrix with eigenvalues near -1.02 and 2.02


def imaginary_part(x):
    return np.sum(np.imag(sl.sqrtm(x.reshape(2, 2))))


def weighted_real_part(x):
    return np.sum(np.real(sl.sqrtm(x.reshape(2, 2))) * WEIGHTS)


def squared_modulus(x):
    return np.sum(np.abs(sl.sqrtm(x.reshape(2, 2))) ** 2)


def of_a_complex_matrix(x):
    return np.sum(np.imag(sl.sqrtm(x.reshape(2, 2) * (1 + 1j))))


Q = np.array([[1.0 + 0.5j, 0.2 - 0.3j], [0.4j, 1.0]])


def sylvester_complex_q(x):
    a = x.reshape(2, 2) + 3.0 * np.eye(2)
    return np.sum(np.abs(sl.solve_sylvester(a, a.T, Q)) ** 2)


def sylvester_complex_a(x):
    a = (x.reshape(2, 2) + 3.0 * np.eye(2)) * (1 + 0.3j)
    return np.sum(np.real(sl.solve_sylvester(a, np.eye(2), WEIGHTS)))


def differences(f, x, eps=1e-6):
    return np.array([(f(x + e) - f(x - e)) / (2 * eps) for e in np.eye(x.size) * eps])


@pytest.mark.parametrize("f", [imaginary_part, weighted_real_part, squared_modulus,
                               of_a_complex_matrix, sylvester_complex_q, sylvester_complex_a])
def test_gradient_where_the_result_is_complex(f):
    want = differences(f, X)
    np.testing.assert_allclose(srcgrad.grad(f)(X), want, atol=1e-6)
    tangents = [srcgrad.jvp(f, (X,), (e,))[1] for e in np.eye(4)]
    np.testing.assert_allclose(tangents, want, atol=1e-6)
