"""Functions at the edges of their primitives' domains (tests/e2e/test_numerics.py)."""

import math

import numpy as np


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def softmax_xent(logits, onehot):
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(onehot * logp)


def root_sum(x):
    return np.sum(np.sqrt(x))


def abs_sum(x):
    return np.sum(np.abs(x))


def norm(x):
    return np.linalg.norm(x)


def near_zero(x):
    return np.sum(np.log1p(x) + np.expm1(x))


def l2_of_difference(x, y):
    return np.linalg.norm(x - y)


def sinc(d):
    return np.sinc(d)


def sinc_filter(d):
    """A fractional-delay filter: sinc taps at a delay ``d``, weighted."""
    taps = np.sinc(np.arange(-3, 4) - d)
    return np.sum(taps * np.array([0.1, -0.2, 0.3, 1.0, 0.3, -0.2, 0.1]))


def pair_energy_hypot(P):
    """Inverse pair distances, the diagonal's r = 0 masked by the double-where idiom."""
    dx = P[:, 0][:, None] - P[:, 0][None, :]
    dy = P[:, 1][:, None] - P[:, 1][None, :]
    r = np.hypot(dx, dy)
    return np.sum(np.where(r > 0, 1.0 / np.where(r > 0, r, 1.0), 0.0))


def pair_angles(P):
    """Pair bearings, arctan2(0, 0) on the diagonal masked."""
    dx = P[:, 0][:, None] - P[:, 0][None, :]
    dy = P[:, 1][:, None] - P[:, 1][None, :]
    return np.sum(np.where(dx ** 2 + dy ** 2 > 0, np.sin(np.arctan2(dy, dx)) * dx, 0.0))


def float_polar(a, b):
    """math.hypot and math.atan2 of Python floats, at the origin in the test."""
    r = math.hypot(a, b)
    return r * r + math.atan2(b, a) * 0.0
