"""backend="numba": a run dividing by a number literal is fused, and compiles.

``z = y / 2`` in a run of elementwise statements made the fusion's choice of
the inputs that must be arrays loop forever (outside tester): the divisor's
inputs were an empty set no choice could meet.  A literal needs no input."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad

import srcgrad

pytest.importorskip("numba")

X = np.array([0.5, -1.0, 2.0, 0.3])


def halves(x):
    y = x * 3.0
    z = y / 2
    w = z * y
    return np.sum(w)


def chained_divisions(x):
    y = np.sin(x)
    z = (y / 2.0) / 4 + y * y
    return np.sum(z / 0.5 - y)


@pytest.mark.parametrize("fn", [halves, chained_divisions])
def test_a_literal_divisor_is_fused(fn):
    g = srcgrad.value_and_grad(fn, backend="numba")
    value, grad = g(X.copy())
    assert_bit_identical(value, fn(X))
    np.testing.assert_array_equal(grad, srcgrad.grad(fn)(X))
    assert_close(grad, numeric_grad(fn, [X], 0), what=f"{fn.__name__} gradient")
    assert "def fused_" in g.source
