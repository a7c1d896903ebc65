"""np.sign of a complex value (found by the model zoo's any-order work, issue 15).

``np.sign`` is registered non-differentiable: right for real arguments (it is
piecewise constant), wrong for complex ones, where NumPy's ``sign(z)`` is
``z / |z|`` and turns with the phase of ``z``.  The gradient through it is
then silently zero.  Kept as a strict xfail until ``np.sign`` gets rules for
complex arguments (the tangent ``1j * s * Im(conj(s) dz) / |z|``, the adjoint
in autograd's convention ``Re(1j s g) (-1j) conj(z) / |z|^2``), so that the
day it is fixed this test says so.
"""

import numpy as np
import pytest

import srcgrad


def through_complex_sign(x):
    z = x * (1.0 + 2.0j) + 0.5j
    return np.real(np.sign(z) * (2.0 - 1.0j)) + x * x


@pytest.mark.xfail(strict=True, reason="np.sign is non-differentiable, also for complex "
                   "arguments, where it is z/|z|: the gradient through it is zero")
@pytest.mark.filterwarnings("ignore::srcgrad.SrcGradWarning")
def test_gradient_through_sign_of_a_complex_value():
    x, eps = 0.7, 1e-6
    expected = (through_complex_sign(x + eps) - through_complex_sign(x - eps)) / (2 * eps)
    assert abs(srcgrad.grad(through_complex_sign)(x) - expected) < 1e-6
