"""Complex intermediates of a real function (found by the any-order work of
issue 15): silently wrong gradients.

- A real value reached through complex arithmetic (``np.imag(u) * w`` for a
  complex ``w``) gets a complex cotangent ``g``; only ``Re(g)`` is its own
  (``dL = Re(g dr)``), but the rules of ``np.real``, ``np.imag``, ``np.angle``
  and ``np.abs`` used all of ``g``.  Fixed; checked by central differences in
  first and second order and forward mode.
- ``np.sign`` is registered non-differentiable: right for real arguments (it
  is piecewise constant), wrong for complex ones, where NumPy's ``sign(z)`` is
  ``z / |z|`` and turns with the phase of ``z``; the gradient through it is 0.
  A strict xfail until it has rules for complex arguments (the tangent
  ``1j s Im(conj(z) dz) / |z|^2``, the adjoint ``Re(1j s g) conj(1j z) /
  |z|^2``) that keep it non-differentiable for real ones (``explain`` and the
  zero-gradient warning name it as a cut).
"""

import numpy as np
import pytest

import srcgrad


def through_complex_sign(x):
    z = x * (1.0 + 2.0j) + 0.5j
    return np.real(np.sign(z) * (2.0 - 1.0j)) + x * x


def imag_times_complex(x):
    z = x * (1.0 + 2.0j) + 0.5j
    w = x * x * (0.3 - 1.0j)
    return np.real(-1j * z * np.imag(np.conj(z) * w) * (2.0 - 1.0j))


def real_abs_angle_times_complex(x):
    z = x * (1.0 + 2.0j) + 0.5j
    r = np.real(z * z) * (1.0 - 0.5j) + np.abs(z) * 2.0j + np.angle(z) * (0.5 + 1.0j)
    return np.real(r * np.conj(z))


def phase_turn(x):
    """The tangent of the sign of a complex value written out: every piece above."""
    z = x * (1.0 + 2.0j) + 0.5j
    w = x * x * (0.3 - 1.0j)
    s = np.conj(np.sign(z))
    sq = np.real(z * np.conj(z))
    t = -1j * s * np.imag(np.conj(z) * w) / np.where(sq > 0, sq, 1.0)
    return np.real(t * (2.0 - 1.0j))


def _difference(fn, x, eps=1e-6):
    return (fn(x + eps) - fn(x - eps)) / (2 * eps)


SIGN = pytest.mark.xfail(strict=True, reason="np.sign is non-differentiable, also for "
                        "complex arguments, where it is z/|z|: the gradient through it is 0")


@pytest.mark.filterwarnings("ignore::srcgrad.SrcGradWarning")
@pytest.mark.parametrize("fn", [
    imag_times_complex, real_abs_angle_times_complex,
    pytest.param(through_complex_sign, marks=SIGN), pytest.param(phase_turn, marks=SIGN)])
@pytest.mark.parametrize("x", [0.7, -0.3])
def test_real_function_of_complex_intermediates(fn, x):
    first = srcgrad.grad(fn)
    assert abs(first(x) - _difference(fn, x)) < 1e-6 * max(1.0, abs(first(x)))
    assert abs(srcgrad.jvp(fn, (x,), (1.0,))[1] - first(x)) < 1e-12 * max(1.0, abs(first(x)))
    second = srcgrad.grad(first)
    assert abs(second(x) - _difference(first, x)) < 1e-5 * max(1.0, abs(second(x)))


def built_with_complex(x, y):
    z = complex(x * 2.0, y - x) * (0.5 - 1.5j)
    return (z * z.conjugate()).real + np.real(z ** 2) + abs(complex(y))


@pytest.mark.parametrize("point", [(1.3, 0.7), (-0.4, 2.0)])
def test_the_complex_builtin_in_both_modes(point):
    """complex(real, imag) had no rules (found by review): first order against
    differences in each argument, forward mode against reverse mode."""
    value, grads = srcgrad.value_and_grad(built_with_complex, wrt=(0, 1))(*point)
    assert value == built_with_complex(*point)
    x, y = point
    numeric = (_difference(lambda t: built_with_complex(t, y), x),
               _difference(lambda t: built_with_complex(x, t), y))
    assert np.allclose(grads, numeric, rtol=1e-6, atol=1e-8)
    _, tangent = srcgrad.jvp(built_with_complex, point, (1.0, 0.5))
    assert np.isclose(tangent, grads[0] + 0.5 * grads[1], rtol=1e-12)
