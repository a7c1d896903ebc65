"""A user function's residuals hold the arrays it was called with (found by
review): the caller changing one in place after the call (``c[0] = 5.0``)
gave the function's backward the changed array -- d/da 1.25 for -0.25."""

import numpy as np
import pytest

import srcgrad


def inner_mean(a, b):
    return np.mean(a @ b)


def changed_after(a, b):
    c = b * 1.0
    s = inner_mean(a, c)
    c[0] = 5.0
    return s + np.sum(c * c)


def changed_in_loop(a, b):
    c = b * 1.0
    s = 0.0
    for k in range(3):
        s = s + inner_mean(a, c)
        c[k] = c[k] * 2.0 + s
    return s


@pytest.mark.parametrize("fn", [changed_after, changed_in_loop])
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt"])
def test_the_callees_backward_reads_what_it_was_called_with(fn, policy):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(3, 5))
    value, (d_a, d_b) = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy)(a, b)
    assert value == fn(a, b)
    eps = 1e-6
    for arg, grad in ((0, d_a), (1, d_b)):
        x = (a, b)[arg]
        numeric = np.zeros(x.shape)
        for index in np.ndindex(x.shape):
            step = np.zeros(x.shape)
            step[index] = eps
            hi = fn(*[(a, b)[i] + (step if i == arg else 0) for i in range(2)])
            lo = fn(*[(a, b)[i] - (step if i == arg else 0) for i in range(2)])
            numeric[index] = (hi - lo) / (2 * eps)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
    _, pullback = srcgrad.vjp(fn, a, b)
    np.testing.assert_allclose(pullback(1.0)[0], d_a, rtol=1e-12)
