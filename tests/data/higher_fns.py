"""Functions for tests/api/test_higher.py, in a module of their own (srcgrad reads their
source, and the tests need module-level globals for hooks and rules)."""

import math

import numpy as np

import srcgrad


def quartic(x, a):
    y = np.tanh(x) * a
    return np.sum(y * y * x) + np.sum(np.sin(x)) * 0.5


def looped(x, n):
    """A scalar function with a loop and a branch on the data."""
    s = 0.0
    for i in range(n):
        if s < 1.0:
            s = s + math.sin(x * (i + 1))
        else:
            s = s * x
    return s * s + x


def mat_fn(W, v):
    h = np.tanh(W @ v)
    return np.sum(h ** 2) + np.sum(W * W) * 0.1


def vector_out(x, W):
    return np.tanh(W @ x) * 2.0


class Layer:
    def __init__(self, W):
        self.W = W

    def energy(self, x):
        return np.sum(np.tanh(self.W @ x) ** 2)


def with_object(layer, x):
    return layer.energy(x) + np.sum(x ** 3)


def clip_hook(g):
    return np.clip(g, -0.05, 0.05)


def rnn_clipped(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        h = srcgrad.on_grad(h, clip_hook)
    return np.sum(h * h)


class Opaque:
    """A callable srcgrad cannot see into: its source is not read."""

    def __call__(self, x):
        return np.log1p(np.exp(x))


softplus = Opaque()


def softplus_vjp(out, d_out, x):
    return d_out / (1.0 + np.exp(-x))


def softplus_jvp(out, x, d_x):
    return d_x / (1.0 + np.exp(-x))


def uses_softplus(x, w):
    return np.sum(softplus(x * w) * x)


@srcgrad.custom_vjp
def scaled_tanh(x):
    return np.tanh(x)


def scaled_tanh_fwd(x):
    y = np.tanh(x)
    return y, y


def scaled_tanh_bwd(y, d_out):
    return (d_out * (1.0 - y * y),)


scaled_tanh.defvjp(scaled_tanh_fwd, scaled_tanh_bwd)


def uses_custom(x):
    return np.sum(scaled_tanh(x * 2.0) ** 2)


def split(x):
    return np.sin(x), np.cos(x) * x


def unpacks(x):
    s, c = split(x)
    return np.sum(s * c)
