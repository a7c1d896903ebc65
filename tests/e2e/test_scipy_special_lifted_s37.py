"""scipy.special functions review s37 found refused (R5-2): ``i0e`` (and its
twin ``i1e``), ``rel_entr`` (and ``kl_div``), in programs under every policy
and jvp, and hvp; the spec table checks each rule in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

sp = pytest.importorskip("scipy.special")

X = np.array([0.4, -1.3, 2.2, 0.9])


def von_mises_normaliser(kappa):
    # log I0(k) = log i0e(k) + |k|, stable for large concentrations
    return np.sum(np.log(sp.i0e(kappa)) + np.abs(kappa)) + np.sum(sp.i1e(kappa) ** 2)


def divergence(t):
    p = np.exp(t) / np.sum(np.exp(t))
    q = np.array([0.1, 0.2, 0.3, 0.4])
    total = np.sum(sp.rel_entr(p, q))
    for k in range(2):
        total = total + np.sum(sp.kl_div(q, p * (k + 1)))
    return total


@pytest.mark.parametrize("fn", [von_mises_normaliser, divergence], ids=lambda f: f.__name__)
def test_the_functions_in_programs(fn):
    check_every_policy(fn, (X,), 0)


@pytest.mark.parametrize("fn", [von_mises_normaliser, divergence], ids=lambda f: f.__name__)
def test_hvp(fn):
    v = np.array([0.3, -0.2, 0.5, 0.1])
    gradient = srcgrad.grad(fn)
    eps = 1e-6
    want = (gradient(X + eps * v) - gradient(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, v), want, rtol=1e-5, atol=1e-7)
