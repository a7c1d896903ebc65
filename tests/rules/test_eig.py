"""np.linalg.eig and np.linalg.eigvals (general, non-symmetric matrices).

Checked against central differences, autograd (the same holomorphic
convention for complex matrices) and forward mode.  The losses do not depend
on each eigenvector's phase (|v|, eigenvalues): the only losses whose
gradient exists, since NumPy fixes that phase by a convention of its own.
"""

import numpy as np
import pytest

import srcgrad

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

RNG = np.random.default_rng(7)
WEIGHTS = RNG.standard_normal((4, 4))


def loss(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 2) + np.sum(np.abs(v) ** 2 * WEIGHTS) + np.sum(np.real(w) * np.arange(4))


def loss_autograd(a):
    w, v = anp.linalg.eig(a)
    return anp.sum(anp.abs(w) ** 2) + anp.sum(anp.abs(v) ** 2 * WEIGHTS) \
        + anp.sum(anp.real(w) * anp.arange(4))


def spectrum(a):
    return np.sum(np.abs(np.linalg.eigvals(a)))


def central_differences(f, a, eps=1e-6):
    out = np.zeros(a.shape)
    for index in np.ndindex(a.shape):
        step = np.zeros(a.shape)
        step[index] = eps
        out[index] = (f(a + step) - f(a - step)) / (2 * eps)
    return out


MATRICES = {
    "real eigenvalues": RNG.standard_normal((4, 4)) + 4 * np.diag(np.arange(4.0)),
    "complex pairs": RNG.standard_normal((4, 4)),
}


@pytest.mark.parametrize("name", MATRICES)
def test_eig_gradient_matches_differences_and_autograd(name):
    a = MATRICES[name]
    g = srcgrad.grad(loss)(a)
    assert g.dtype == np.float64  # a real matrix gets a real gradient
    np.testing.assert_allclose(g, central_differences(loss, a), atol=1e-6)
    np.testing.assert_allclose(g, autograd.grad(loss_autograd)(a), rtol=1e-10, atol=1e-12)


def test_eig_of_a_complex_matrix_matches_autograd():
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))

    def f(z):
        w, v = np.linalg.eig(z)
        return np.sum(np.abs(w)) + np.sum(np.abs(v[0]) ** 2)

    def fa(z):
        w, v = anp.linalg.eig(z)
        return anp.sum(anp.abs(w)) + anp.sum(anp.abs(v[0]) ** 2)

    np.testing.assert_allclose(srcgrad.grad(f)(a), autograd.grad(fa)(a), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", MATRICES)
def test_eig_forward_mode_and_hvp(name):
    a = MATRICES[name]
    d = RNG.standard_normal(a.shape)
    _, tangent = srcgrad.jvp(loss)(a, d)
    assert tangent == pytest.approx(np.sum(central_differences(loss, a) * d), rel=1e-6)
    hv = srcgrad.hvp(loss)(a, d)
    eps = 1e-5
    expected = (srcgrad.grad(loss)(a + eps * d) - srcgrad.grad(loss)(a - eps * d)) / (2 * eps)
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-6)


def test_eigvals_gradient_forward_mode_and_stacks():
    a = RNG.standard_normal((5, 5))
    np.testing.assert_allclose(srcgrad.grad(spectrum)(a), central_differences(spectrum, a), atol=1e-6)
    d = RNG.standard_normal(a.shape)
    assert srcgrad.jvp(spectrum)(a, d)[1] == pytest.approx(
        np.sum(central_differences(spectrum, a) * d), rel=1e-6)
    stack = RNG.standard_normal((2, 3, 3))
    np.testing.assert_allclose(srcgrad.grad(spectrum)(stack), central_differences(spectrum, stack),
                               atol=1e-6)
