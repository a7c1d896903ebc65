"""``np.bincount(idx, weights=w)`` with differentiated weights (reviewer s33, F18).

A segment sum -- messages summed by destination node in graph code, forces by
element in finite elements -- was refused (MissingRuleError).  It is linear
in the weights: each weight gets the cotangent of its bin; the tangent is the
bincount of the weights' tangents (rules/reductions.py).  Each program: value
bit for bit and gradient against differences under every policy, jvp against
differences; in a loop, a branch and a
helper; hvp against differences of the gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -1.2, 0.8, 2.0, -0.4])
SRC = np.array([0, 1, 2, 3, 4, 0, 2])
DST = np.array([1, 2, 0, 4, 3, 3, 1])


def segment_sum(x):
    return np.sum(np.bincount(DST, weights=np.tanh(x[SRC]), minlength=6) ** 2)


def positional(x):
    counts = np.bincount(DST, x[SRC] * 2.0)
    return np.sum(counts * np.arange(len(counts)))


def message_passing(x):  # a loop of graph convolutions
    h = x * 1.0
    for _ in range(3):
        agg = np.bincount(DST, weights=np.tanh(h[SRC]), minlength=len(h))
        h = 0.5 * h + agg
    return np.sum(h ** 2)


def in_a_branch(x):
    if x[0] > 0:
        b = np.bincount(DST, weights=x[SRC] ** 2)
    else:
        b = np.bincount(SRC, weights=np.sin(x[DST]), minlength=7)
    return np.sum(b * b[0])


def _aggregate(h, w):
    return np.bincount(DST, weights=h[SRC] * w, minlength=len(h))


def in_a_helper(x):
    return np.sum(_aggregate(x, 2.0) * _aggregate(x ** 2, x[1]))


PROGRAMS = [segment_sum, positional, message_passing, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))


@pytest.mark.parametrize("fn", [segment_sum, message_passing], ids=lambda f: f.__name__)
def test_hvp_against_differences_of_the_gradient(fn):
    v, eps = np.linspace(-1.0, 1.0, 5), 1e-6
    g = srcgrad.grad(fn)
    fd = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X.copy(), v), fd, rtol=1e-5, atol=1e-7)
