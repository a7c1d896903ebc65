"""The rules of np.fft (and np.convolve) on complex values, in both modes.

The spec table (tests/spec.py) feeds real inputs only; here every transform
gets complex inputs and complex cotangents.  The convention is autograd's and
JAX's: the cotangent of ``z = x + iy`` is ``dL/dx - i dL/dy``, so with
``L(z) = Re(sum(u * f(z)))`` (the loss whose output cotangent is ``u``) the
adjoint rule's ``c`` satisfies ``d/dt L(z + t v) = Re(sum(c * v))`` for every
complex direction ``v``: checked by central differences along a real and an
imaginary direction, and against autograd's gradient of ``L``.  The tangent
rule must give ``d/dt f(z + t v)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from srcgrad.rules import lookup, lookup_tangent

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

H = 1e-6


def _complex(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


CASES = [
    # (primitive name, input shape, complex input, keyword arguments)
    ("fft", (6,), True, {}), ("fft", (5,), True, {"n": 8}), ("fft", (7,), True, {"n": 4}),
    ("fft", (3, 4), True, {"axis": 0, "norm": "ortho"}), ("ifft", (5,), True, {}),
    ("ifft", (2, 6), True, {"n": 4, "norm": "forward"}), ("fft2", (3, 4), True, {}),
    ("ifft2", (2, 3, 4), True, {"s": (4, 2)}), ("fftn", (2, 3, 2), True, {}),
    ("ifftn", (3, 2, 4), True, {"axes": (0, 2), "norm": "ortho"}),
    ("rfft", (6,), False, {}), ("rfft", (7,), False, {"n": 10}),
    ("rfft", (5, 3), False, {"axis": 0, "norm": "ortho"}),
    ("irfft", (4,), True, {}), ("irfft", (4,), True, {"n": 7}),
    ("irfft", (5, 2), True, {"n": 6, "axis": 0, "norm": "ortho"}),
    ("irfft", (3,), True, {"norm": "forward"}),
    ("rfft2", (4, 4), False, {}), ("rfftn", (3, 4, 2), False, {"axes": (0, 1)}),
    ("irfft2", (3, 3), True, {}), ("irfftn", (2, 3, 3), True, {"s": (4, 5), "axes": (1, 2)}),
    ("fftshift", (5,), True, {}), ("ifftshift", (3, 4), True, {"axes": 1}),
]
IDS = [f"{name}-{shape}-{kw}" for name, shape, _, kw in CASES]


def _setup(name, shape, is_complex, kw, seed):
    rng = np.random.default_rng(seed)
    prim = getattr(np.fft, name)
    z = _complex(rng, shape) if is_complex else rng.standard_normal(shape)
    out = prim(z, **kw)
    u = _complex(rng, out.shape) if np.iscomplexobj(out) else rng.standard_normal(out.shape)
    return rng, prim, z, out, u


@pytest.mark.parametrize(("name", "shape", "is_complex", "kw"), CASES, ids=IDS)
def test_adjoint_matches_differences_in_real_and_imaginary_directions(name, shape,
                                                                      is_complex, kw):
    rng, prim, z, out, u = _setup(name, shape, is_complex, kw, 0)
    c = lookup(prim).fn(out, u, z, **kw)
    assert np.shape(c) == np.shape(z)
    assert np.iscomplexobj(c) == is_complex

    def loss(x):
        return float(np.real(np.sum(u * prim(x, **kw))))

    steps = [rng.standard_normal(shape)]
    if is_complex:
        steps.append(1j * rng.standard_normal(shape))
    for v in steps:
        numeric = (loss(z + H * v) - loss(z - H * v)) / (2 * H)
        assert numeric == pytest.approx(float(np.real(np.sum(c * v))), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize(("name", "shape", "is_complex", "kw"), CASES, ids=IDS)
def test_adjoint_matches_autograd(name, shape, is_complex, kw):
    if name.endswith("shift"):
        pytest.skip("autograd has no rule for fftshift")
    _, prim, z, out, u = _setup(name, shape, is_complex, kw, 1)
    aprim = getattr(anp.fft, name)
    if name.startswith(("rfft", "irfft")) and (len(shape) > 1 and name.endswith(("2", "n"))
                                              or any(k in kw for k in ("n", "s", "norm"))):
        pytest.skip("autograd's rfft/irfft rules take neither n, s, norm nor several axes")
    expected = autograd.grad(lambda x: anp.real(anp.sum(u * aprim(x, **kw))))(z)
    np.testing.assert_allclose(lookup(prim).fn(out, u, z, **kw), expected, rtol=1e-10,
                               atol=1e-10)


@pytest.mark.parametrize(("name", "shape", "is_complex", "kw"), CASES, ids=IDS)
def test_tangent_matches_differences(name, shape, is_complex, kw):
    rng, prim, z, out, _ = _setup(name, shape, is_complex, kw, 2)
    v = _complex(rng, shape) if is_complex else rng.standard_normal(shape)
    t = lookup_tangent(prim).fn(out, z, **kw, d_a=v) if "shift" not in name \
        else lookup_tangent(prim).fn(out, z, **kw, d_x=v)
    numeric = (prim(z + H * v, **kw) - prim(z - H * v, **kw)) / (2 * H)
    np.testing.assert_allclose(t, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_of_complex_sequences(mode):
    """No conjugate: the transpose of a bilinear map (autograd has no rule to compare)."""
    rng = np.random.default_rng(3)
    a, v = _complex(rng, 5), _complex(rng, 3)
    out = np.convolve(a, v, mode)
    u = _complex(rng, out.shape)
    ga, gv = lookup(np.convolve).fn(out, u, a, v, mode)
    for step in (rng.standard_normal, lambda n: 1j * rng.standard_normal(n)):
        da, dv = step(5), step(3)
        numeric = (np.real(np.sum(u * np.convolve(a + H * da, v + H * dv, mode)))
                   - np.real(np.sum(u * np.convolve(a - H * da, v - H * dv, mode)))) / (2 * H)
        assert numeric == pytest.approx(float(np.real(np.sum(ga * da) + np.sum(gv * dv))),
                                        rel=1e-6)


def test_a_real_argument_gets_the_real_part():
    """x real, fft(x) complex: the cotangent of x is real, the derivative along x."""
    x = np.random.default_rng(4).standard_normal(6)
    g = lookup(np.fft.fft).fn(np.fft.fft(x), np.ones(6) * 1j, x)
    assert g.dtype == np.float64


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_single_precision_stays_single(dtype):
    x = np.ones(8, dtype)
    out = np.fft.fft(x)
    g = lookup(np.fft.fft).fn(out, np.ones_like(out), x)
    assert g.dtype == dtype
    assert lookup_tangent(np.fft.fft).fn(out, x, d_a=x).dtype == np.complex64
    if dtype == "float32":
        spectrum = np.fft.rfft(x)
        assert lookup(np.fft.rfft).fn(spectrum, spectrum, x).dtype == np.float32
