"""np.lib.stride_tricks.sliding_window_view, the usual im2col of a convolution
(review s36 R4-13: refused with MissingRuleError).  Its windows overlap, so its
adjoint adds each window offset's cotangent back; it is a view of its operand,
so a write to the operand after the view is taken changes the windows, which
the gradient must see (it did not: the element written over kept a gradient)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import srcgrad


def convolution(x, w):
    return np.sum((sliding_window_view(x, 3) @ w) ** 2)


def convolution_2d(x, w):
    return np.sum(np.tanh(np.einsum("ijkl,kl->ij", sliding_window_view(x, (2, 2)), w)))


def written_after_the_view(x, w):
    y = x * 1.0
    windows = sliding_window_view(y, 3)
    y[0] = 10.0  # changes the first window
    return np.sum((windows @ w) ** 2)


def writeable_windows(x):
    windows = sliding_window_view(x, 2, writeable=True)
    return np.sum(windows ** 2)


RNG = np.random.default_rng(3)
X, W = RNG.standard_normal(7), RNG.standard_normal(3)
X2, W2 = RNG.standard_normal((4, 5)), RNG.standard_normal((2, 2))


def _differences(fn, args, i, eps=1e-6):
    out = np.zeros_like(args[i])
    for j in np.ndindex(out.shape):
        step = np.zeros_like(args[i])
        step[j] = eps
        up = [a + step if k == i else a for k, a in enumerate(args)]
        down = [a - step if k == i else a for k, a in enumerate(args)]
        out[j] = (fn(*up) - fn(*down)) / (2 * eps)
    return out


@pytest.mark.parametrize(("fn", "args"), [(convolution, (X, W)), (convolution_2d, (X2, W2)),
                                          (written_after_the_view, (X, W))],
                         ids=["1d", "2d", "written-after-the-view"])
def test_windows_in_both_modes(fn, args):
    grads = srcgrad.grad(fn, wrt=(0, 1))(*args)
    for i in (0, 1):
        np.testing.assert_allclose(grads[i], _differences(fn, args, i), rtol=1e-6, atol=1e-7)
    v = RNG.standard_normal(args[0].shape)
    _, t = srcgrad.jvp(fn, args, (v, None))
    assert t == pytest.approx(float(np.sum(grads[0] * v)), rel=1e-8)
    if fn is not written_after_the_view:
        g = srcgrad.grad(fn)
        h = srcgrad.hvp(fn)(*args, v)
        numeric = (g(args[0] + 1e-5 * v, args[1]) - g(args[0] - 1e-5 * v, args[1])) / 2e-5
        np.testing.assert_allclose(h, numeric, rtol=1e-5, atol=1e-6)


def test_writeable_windows_are_refused():
    """writeable=True is not a parameter of the rule: a write through the view
    would change the operand where srcgrad cannot see it."""
    with pytest.raises(srcgrad.SrcGradError, match="writeable"):
        srcgrad.grad(writeable_windows)(X)
