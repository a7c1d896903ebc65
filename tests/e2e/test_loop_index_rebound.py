"""A loop whose body rebinds its own index (found by review): the adjoint loop
set the index back to each step's own value, so reads after the rebinding
took the wrong row -- every cotangent one row early, under every policy."""

import numpy as np
import pytest

import srcgrad


def shifted(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        i = i + 1
        s = s + np.sin(x[i])
    return s


def enumerated(x, w):
    s = 0.0
    for i, v in enumerate(w):
        s = s + v * x[i]
        i += 2
        s = s + np.tanh(x[i % x.shape[0]]) * v
    return s


def stepped(x):
    total = 0.0
    for i in range(0, x.shape[0], 2):
        if x[i] > 0.3:
            i = i + 1
        total = total + x[i] * x[i]
    return total


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt"])
@pytest.mark.parametrize("fn", [shifted, enumerated, stepped])
def test_reads_after_the_index_is_rebound(fn, policy):
    x = np.linspace(0.1, 1.0, 6)
    args = (x, np.array([0.5, -1.0, 2.0])) if fn is enumerated else (x,)
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(*args)
    assert value == fn(*args)
    eps = 1e-6
    numeric = [(fn(x + eps * e, *args[1:]) - fn(x - eps * e, *args[1:])) / (2 * eps)
               for e in np.eye(6)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-9)
