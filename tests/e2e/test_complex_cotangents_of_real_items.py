"""A real array argument indexed and fed into complex arithmetic (outside
tester T3, F3-10): the gradient, the real part of the cotangent, was right,
but srcgrad's own accumulation wrote the complex cotangent into the real
gradient buffer, so every call gave NumPy's ComplexWarning from srcgrad's
runtime -- an exception under ``-W error`` or pytest's ``filterwarnings =
error``.  runtime/accumulate.py takes the real part first.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad

THETAS = np.array([0.3, 1.1, -0.4])


def by_item(thetas):  # T3's program
    z = 1.0 + 0j
    for t in thetas:
        z = z * np.exp(1j * t) + 0.5
    return np.abs(z) ** 2


def by_index(thetas):
    z = 1.0 + 0j
    for k, t in enumerate(thetas):
        z = z * np.exp(1j * thetas[k]) + 0.5
    return np.abs(z) ** 2


def in_a_branch(thetas):
    z = 1.0 + 0j
    if thetas[0] > 0:
        z = z * np.exp(1j * thetas[1]) * thetas[2]
    return np.real(z * np.conj(z))


@pytest.mark.parametrize("fn", [by_item, by_index, in_a_branch], ids=lambda f: f.__name__)
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)], ids=str)
def test_no_warning_and_the_real_gradient(fn, policy):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(THETAS)
    assert value == fn(THETAS)
    assert grad.dtype == np.float64
    assert_close(grad, numeric_grad(fn, [THETAS], 0), rtol=1e-6, atol=1e-8)
