"""backend="numba": a second name for an array stays that array.

``z = y; z += x`` changes ``y`` too.  The fusion of elementwise statements
made ``z = y`` a statement of its kernel, which writes each result into a new
array: ``z`` became a copy, and ``y`` missed the update (outside tester: 10.68
for 21.36 and half the gradient; the NumPy backend was right).  A statement
that only binds a name to another name now ends a fused run."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad

import srcgrad

pytest.importorskip("numba")

X = np.array([0.5, -1.0, 2.0, 0.3])


def alias_then_update(x):
    y = x.copy()
    z = y
    z += x
    return np.sum(y * z)


def alias_in_loop(x):
    y = x * 1.0
    h = y
    for _ in range(3):
        h += x
        h = h * 0.5
    return np.sum(y * h)


def alias_chain(x):
    a = x * 2.0
    b = a
    c = b
    c += 1.0
    return np.sum(a * c * x)


def alias_subtract(x):
    y = x + 0.0
    z = y
    z -= x * x
    return np.sum(y * z + z)


@pytest.mark.parametrize("fn", [alias_then_update, alias_in_loop, alias_chain, alias_subtract])
def test_an_alias_stays_an_alias(fn):
    expected = fn(X)
    value, grad = srcgrad.value_and_grad(fn, backend="numba")(X.copy())
    assert_bit_identical(value, expected)
    np.testing.assert_array_equal(grad, srcgrad.grad(fn)(X))  # the NumPy backend's, bit for bit
    assert_close(grad, numeric_grad(fn, [X], 0), what=f"{fn.__name__} gradient")
