"""``np.histogram`` of a differentiated array (review s33 F18).

It had no rule ("no adjoint rule for 'np.histogram'").  Its counts are
piecewise constant in the data (no derivative, as ``np.digitize``'s bin
numbers), but a weighted histogram's sums are linear in the weights, each
weight in its bin, and the edges NumPy spaces between the data's extremes
(``bins`` a number, no ``range``) move with those extremes -- so the rule is
not "non-differentiable": both are followed (runtime ``histogram_grads``;
the tangent bins the weights' tangents in the same edges).  ``density=True``
is refused, located.  Value bit for bit, gradient against differences under
every policy, jvp, hvp; in a loop, a branch and a helper.  The data sit away
from the edges (a difference across an edge jumps a count).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import MissingRuleError

X = np.array([0.3, -1.2, 2.0, 0.45, 0.9, -0.35])


def counts_and_edges(x):  # the edges move with min(x) and max(x)
    counts, edges = np.histogram(x, bins=3)
    return np.sum(x ** 2) * counts[0] + np.sum(edges * np.arange(4.0))


def weighted_given_edges(x):
    h, _ = np.histogram(x[:3], bins=[-2.0, 0.0, 0.5, 3.0], weights=x[3:] ** 2)
    return np.sum(h * np.array([1.0, 2.0, 3.0]))


def weighted_in_a_range(x):
    h, e = np.histogram(x, bins=4, range=(-1.1, 1.3), weights=np.sin(x))
    return np.sum(h ** 2) + np.sum(e)


def a_rule_of_bins(x):
    _, edges = np.histogram(x * 2.0, bins="sturges")
    return np.sum(edges ** 2)


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        h, e = np.histogram(x, bins=2 + i, weights=x * (i + 1.0))
        s = s + np.sum(h * h) + e[-1] * e[0]
    return s


def in_a_branch(x):
    h, e = np.histogram(x, bins=3, weights=np.cos(x))
    if h[0] > 0.0:
        return np.sum(h) * e[1]
    return np.sum(e)


def helper(v, w):
    return np.histogram(v, bins=2, weights=w)


def in_a_helper(x):
    h, e = helper(x, x ** 3)
    return np.sum(h) + np.sum(e ** 2)


PROGRAMS = [counts_and_edges, weighted_given_edges, weighted_in_a_range, a_rule_of_bins,
            in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS)
def test_every_policy(fn):
    check(fn, (X.copy(),))


@pytest.mark.parametrize("fn", [counts_and_edges, weighted_given_edges, in_a_loop, in_a_helper])
def test_hvp(fn):
    v = np.linspace(-0.5, 1.0, X.size) * 1e-2
    eps = 1e-4
    grad = srcgrad.grad(fn)
    fd = (grad(X + eps * v) - grad(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X.copy(), v), fd, rtol=1e-5, atol=1e-7, what=fn.__name__)


def with_density(x):
    h, _ = np.histogram(x, bins=3, density=True)
    return np.sum(h * x[:3])


def test_density_is_refused_located():
    for run in (lambda: srcgrad.grad(with_density)(X.copy()),
                lambda: srcgrad.jvp(with_density)(X.copy(), np.ones(X.size))):
        with pytest.raises(MissingRuleError) as info:
            run()
        assert info.value.lineno == with_density.__code__.co_firstlineno + 1
        assert "density=True" in info.value.message
