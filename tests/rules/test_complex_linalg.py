"""Real functions of genuinely complex matrices through ``np.linalg`` and the
moments (review 3, finding 24: silently wrong gradients and tangents).

The convention of every complex rule (docs/supported.md, Fourier transforms):
the cotangent of ``z = x + iy`` is ``dL/dx - i dL/dy``.  A real result of a
complex ``z`` (a norm, a variance, singular values, the eigenvalues of a
Hermitian matrix) changes by ``Re(conj(z) dz)``-like terms, so its adjoint has
a conjugate that a real rule does not show.  Before, ``psi / norm(psi)`` (a
normalised wavefunction), ``np.var``/``np.std``, the singular values and
``eigvalsh`` got the imaginary parts' derivatives with the wrong sign (and
``eigvalsh`` its diagonal terms wrong), in grad and jvp alike, as were
``pinv`` and ``lstsq`` of a non-square matrix; ``cholesky`` (Hermitian, either
triangle), ``qr`` (tall, square, wide), the eigenvectors of ``eigh`` and the
singular vectors of ``svd`` (for a loss that does not depend on their phases)
have their complex rules now too.

Each function below is checked against central differences on the real
parameters that build the real and imaginary parts separately, in grad and
jvp, and against JAX where it imports.  The full factors of a non-square matrix
(``full_matrices=True``) have extra singular vectors that are not unique: they
refuse with a located MissingRuleError in both modes, never a wrong number.
"""

import numpy as np
import pytest

import srcgrad


def gen(x):
    return np.array([[x[0] + 1j * x[1], x[2]], [1j * x[3], x[0] * x[2] + 2.0]])


def herm(x):
    return np.array([[x[0], x[1] + 1j * x[3]], [x[1] - 1j * x[3], x[2]]])


def wavefunction(x):
    psi = x[:2] + 1j * x[2:]
    psi = psi / np.linalg.norm(psi)
    return np.abs(psi[0]) ** 2


def norm_default(x):
    return np.linalg.norm(x[:2] + 1j * x[2:] ** 2)


def norm_vector_orders(x):
    z = x * (1.0 - 0.5j) + 1j * x[::-1] ** 2
    return (np.linalg.norm(z, 1) + np.linalg.norm(z, np.inf) + np.linalg.norm(z, 3)
            + np.linalg.norm(z, 2) + np.linalg.norm(z, -np.inf))


def norm_matrix_orders(x):
    a = gen(x)
    return (np.linalg.norm(a) + np.linalg.norm(a, "fro") + np.linalg.norm(a, "nuc")
            + np.linalg.norm(a, 2) + np.linalg.norm(a, -2) + np.linalg.norm(a, 1)
            + np.linalg.norm(a, np.inf))


def norm_axis(x):
    a = gen(x)
    return np.sum(np.linalg.norm(a, axis=1) ** 3) + np.sum(np.linalg.norm(a, axis=0, keepdims=True))


def var(x):
    return np.var(x + 1j * x[::-1] ** 2)


def var_std_axis(x):
    a = gen(x)
    return np.sum(np.std(a, axis=0)) + np.sum(np.var(a, axis=1, ddof=1) * x[:2])


def svd_values(x):
    return np.sum(np.linalg.svd(gen(x), compute_uv=False) ** 2)


def svd_values_of_factors(x):
    _u, s, _vh = np.linalg.svd(gen(x) @ herm(x))
    return s[0] * s[1] ** 2


def svdvals(x):
    return np.sum(np.linalg.svdvals(gen(x)) ** 3)


def eigvalsh(x):
    return np.sum(np.linalg.eigvalsh(herm(x)) ** 2)


def eigvalsh_upper(x):
    w = np.linalg.eigvalsh(herm(x) + 1j * np.tril(herm(x), -1), UPLO="U")
    return w[0] * w[1] ** 2


def eigh_values(x):
    w, _v = np.linalg.eigh(herm(x))
    return w[0] ** 3 - w[1]


def complex_cotangents(x):
    """Real results scaling complex values: their cotangents arrive complex, and
    only the real part is theirs."""
    psi = x[:2] + 1j * x[2:]
    a = gen(x)
    return np.imag(np.sum(psi / np.linalg.norm(psi)) + np.sum(a * np.std(a))
                   + np.sum(psi * np.linalg.norm(psi, 1)))


def complex_cotangents_svd(x):
    a = gen(x)
    return np.imag(np.sum(a / np.linalg.svd(a, compute_uv=False)[0])
                   + np.sum(a * np.linalg.norm(a, 2)))


def complex_cotangents_eig(x):
    h = herm(x)
    return np.imag(np.sum(h * np.linalg.eigvalsh(h)[1]) + np.sum(h * np.linalg.eigh(h)[0][0]))


def _tall(x):
    return np.array([[x[0] + 1j * x[1], x[2]], [1j * x[3], x[0] * x[2] + 2.0],
                     [x[1] * x[3], 1j * x[0]]])


def pinv_tall(x):
    """A non-square pinv: its dA^H terms do not vanish as a square one's do."""
    return np.sum(np.abs(np.linalg.pinv(_tall(x)) * np.array([[1, 2j, 3], [0.5, -1, 1j]])) ** 2)


def lstsq_parts(x):
    sol = np.linalg.lstsq(_tall(x), np.array([[1.0], [2j], [0.5]]), rcond=None)
    return (np.sum(np.abs(sol[0] * np.array([[1], [2j]])) ** 2) + 3 * np.sum(sol[1])
            + np.sum(sol[3] ** 2))


def _herm3(x):
    return np.array([[x[0] + 4, x[1] + 1j * x[3], 0.2j],
                     [x[1] - 1j * x[3], x[2] + 5, x[0] - 0.5j * x[2]],
                     [-0.2j, x[0] + 0.5j * x[2], 6.0 + x[0] * x[2]]])


_W = np.array([[1, 2j, 3], [0.5, -1, 1j], [0.3 + 1j, 2, -1j]])


def cholesky_lower(x):
    """Only the lower triangle is read, the diagonal's imaginary part not at all."""
    a = np.tril(_herm3(x)) + 1j * np.triu(_herm3(x), 1) + 0.3j * np.eye(3)
    return np.sum(np.abs(np.linalg.cholesky(a) * _W) ** 2)


def cholesky_upper(x):
    a = np.triu(_herm3(x)) + 1j * np.tril(_herm3(x), -1)
    return np.real(np.sum(np.linalg.cholesky(a, upper=True) * _W))


_W3 = np.array([[1, 2j], [0.5, -1], [0.3 + 1j, 2]])
_W2 = np.array([[1, 2j], [0.5, -1 + 0.2j]])
_W23 = np.array([[1, 2j, 0.3], [0.5, -1 + 0.2j, 1j]])


def qr_tall(x):
    q, r = np.linalg.qr(_tall(x))
    return np.real(np.sum(q * _W3)) + np.sum(np.abs(r * _W2) ** 2) + np.imag(np.sum(r * _W2))


def qr_square(x):
    q, r = np.linalg.qr(gen(x))
    return np.real(np.sum(q * _W2)) + np.imag(np.sum(r * _W2))


def qr_wide(x):
    q, r = np.linalg.qr(_tall(x).T)
    return np.real(np.sum(q * _W2)) + np.imag(np.sum(r * _W23))


def eigh_vectors(x):
    _w, v = np.linalg.eigh(herm(x))
    return np.abs(v[0, 0]) ** 2


def eigh_projector(x):
    """Eigenvectors are fixed up to a phase: a projector does not depend on it."""
    a = np.triu(_herm3(x)) + 1j * np.tril(_herm3(x), -1) + 0.2j * np.eye(3)
    w, v = np.linalg.eigh(a, UPLO="U")
    p = np.outer(v[:, 0], np.conj(v[:, 0]))
    return np.real(np.sum(p * _W)) + np.imag(np.sum(p * _W)) + w[1] * w[2]


def svd_vectors(x):
    u, s, _vh = np.linalg.svd(gen(x))
    return np.abs(u[0, 1]) ** 2 + s[0]


def svd_pairs(x):
    """A tall and a wide matrix's reduced factors: each pair u_k, v_k shares one
    phase, which u_k v_k^H and |u|, |v| do not depend on."""
    u, s, vh = np.linalg.svd(_tall(x), full_matrices=False)
    u2, _s2, vh2 = np.linalg.svd(_tall(x).T, full_matrices=False)
    return (np.sum(np.abs(u * _W3) ** 2) + np.sum(np.abs(vh * _W2)) + s[0]
            + np.real(np.sum((u[:, :1] @ vh[:1]) * _W3))
            + np.imag(np.sum(np.outer(u2[:, 1], vh2[1]) * _W3.T)) + np.sum(np.abs(vh2) ** 3))


def _helper(a):
    return np.linalg.norm(a - np.mean(a))


def in_loop_and_helper(x):
    psi = x[:2] + 1j * x[2:]
    total = 0.0
    for k in range(3):
        if k % 2:
            total = total + np.std(psi * (k + 1j))
        else:
            total = total + _helper(psi * k + 1j * x[0])
        psi = psi / np.linalg.norm(psi) + 0.1j
    return total


RIGHT = [wavefunction, norm_default, norm_vector_orders, norm_matrix_orders, norm_axis,
         var, var_std_axis, svd_values, svd_values_of_factors, eigvalsh, eigvalsh_upper,
         eigh_values, complex_cotangents, complex_cotangents_svd,
         complex_cotangents_eig, pinv_tall, lstsq_parts, cholesky_lower,
         cholesky_upper, qr_tall, qr_square, qr_wide, eigh_vectors,
         eigh_projector, svd_vectors, svd_pairs, in_loop_and_helper]
if not hasattr(np.linalg, "svdvals"):
    RIGHT.remove(svdvals)
else:
    RIGHT.append(svdvals)

X = np.array([3.0, 0.7, 1.5, -0.4])
V = np.array([0.3, -0.2, 0.5, 0.7])


def _central(fn, x, eps=1e-6):
    return np.array([(fn(x + eps * e) - fn(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


@pytest.mark.parametrize("fn", RIGHT, ids=lambda f: f.__name__)
def test_grad_and_jvp_match_central_differences(fn):
    expected = _central(fn, X)
    value, g = srcgrad.value_and_grad(fn)(X)
    assert value == fn(X)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)
    value, tangent = srcgrad.jvp(fn, (X,), (V,))
    assert value == fn(X)
    assert np.isrealobj(tangent)
    np.testing.assert_allclose(tangent, expected @ V, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", [wavefunction, norm_default, var, complex_cotangents,
                                eigvalsh, eigh_projector, svd_values, in_loop_and_helper],
                         ids=lambda f: f.__name__)
def test_hvp_matches_differences_of_the_gradient(fn):
    grad = srcgrad.grad(fn)
    eps = 1e-5
    expected = (grad(X + eps * V) - grad(X - eps * V)) / (2 * eps)
    np.testing.assert_allclose(srcgrad.hvp(fn)(X, V), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)], ids=str)
def test_policies_in_a_loop(policy):
    expected = _central(in_loop_and_helper, X)
    g = srcgrad.grad(in_loop_and_helper, policy=policy)(X)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)


JAX_NAMES = ["wavefunction", "norm_default", "var", "svd_values", "eigvalsh"]


@pytest.mark.parametrize("name", JAX_NAMES)
def test_agrees_with_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    jfns = {
        "wavefunction": lambda x: jnp.abs(((x[:2] + 1j * x[2:])
                                           / jnp.linalg.norm(x[:2] + 1j * x[2:]))[0]) ** 2,
        "norm_default": lambda x: jnp.linalg.norm(x[:2] + 1j * x[2:] ** 2),
        "var": lambda x: jnp.var(x + 1j * x[::-1] ** 2),
        "svd_values": lambda x: jnp.sum(jnp.linalg.svd(
            jnp.array([[x[0] + 1j * x[1], x[2]], [1j * x[3], x[0] * x[2] + 2.0]]),
            compute_uv=False) ** 2),
        "eigvalsh": lambda x: jnp.sum(jnp.linalg.eigvalsh(
            jnp.array([[x[0], x[1] + 1j * x[3]], [x[1] - 1j * x[3], x[2]]])) ** 2),
    }
    expected = np.asarray(jax.grad(jfns[name])(jnp.asarray(X)))
    np.testing.assert_allclose(srcgrad.grad(globals()[name])(X), expected, rtol=1e-6, atol=1e-7)


# -- refused: the full factors of a non-square matrix ---------------------------------


def svd_full_vectors(x):
    u, s, _vh = np.linalg.svd(_tall(x))
    return np.abs(u[0, 2]) ** 2 + s[0]


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_full_factors_of_a_non_square_matrix_refuse_where_called(mode):
    """Their extra singular vectors are not unique (complex or real)."""
    with pytest.raises(srcgrad.MissingRuleError, match="full_matrices") as info:
        if mode == "grad":
            srcgrad.grad(svd_full_vectors)(X)
        else:
            srcgrad.jvp(svd_full_vectors, (X,), (V,))
    assert info.value.filename == __file__
