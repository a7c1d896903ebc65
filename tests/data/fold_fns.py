"""Functions for tests/optimize/test_fold.py (srcgrad reads their source from this file)."""

import numpy as np

def norm_chain(x):
    k = np.sin(x) * x
    m = np.sqrt(k * k + 1.0)
    return np.sum(m * np.exp(-k))


def shift_and_scale(x, y):
    a = x - 3.0 * y
    b = np.tanh(-a) * 0.5
    return np.sum(b - -x)


def rnn(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)
