"""``rng.uniform(a, b)``, ``rng.exponential(s)``, ``rng.gumbel(loc, scale)``
with a parameter differentiated (review s34, R2-14).

Refused before (a located MissingRuleError "no adjoint rule for the method
'.uniform()'"), while ``rng.normal(mu, s)`` was reparameterised
(test_normal_reparameterised.py).  NumPy computes each from its standard draw,
bit for bit (checked below for a Generator, a RandomState and ``np.random``):
``low + (high - low) * uniform(0, 1)``, ``scale * exponential(1)``, ``loc +
scale * gumbel(0, 1)``; analysis/sorts_in_place.py writes them so, the
standard draw drawn once and saved.  Each program: value bit for bit under
every policy and in jvp, gradient and tangent against differences with the
same draws.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad

MU = np.array([0.3, -1.2, 0.7])


def uniform_between(a):
    rng = np.random.default_rng(0)
    z = rng.uniform(a, a ** 2 + 1.0)
    return np.sum(z ** 2)


def uniform_keywords(a):
    rng = np.random.default_rng(1)
    z = rng.uniform(low=-1.0, high=np.exp(a), size=(4, 3))
    return np.sum(np.tanh(z))


def exponential_scale(a):
    rng = np.random.default_rng(2)
    return np.sum(rng.exponential(np.exp(a)) * a)


def gumbel_both(a):
    rng = np.random.RandomState(3)
    return np.sum(rng.gumbel(a, 1.0 + a ** 2) ** 2)


def module_draws(a):
    np.random.seed(4)
    return np.sum(np.random.uniform(a, 2.0) + np.random.gumbel(0.0, np.exp(a)))


def in_a_loop(a):
    rng = np.random.default_rng(5)
    total = 0.0
    for k in range(3):
        total = total + np.sum(rng.exponential(1.0 + a ** 2) * rng.uniform(a * k, 2.0))
    return total


def in_a_branch(a):
    rng = np.random.default_rng(6)
    if np.sum(a) > 0:
        return np.sum(rng.gumbel(a, 0.5) ** 2)
    return np.sum(rng.uniform(0.0, np.exp(a)))


def sample(a, b):
    rng = np.random.default_rng(7)
    return rng.uniform(a, b)


def in_a_helper(a):
    return np.sum(sample(a, a + 1.0) ** 2)


PROGRAMS = [uniform_between, uniform_keywords, exponential_scale, gumbel_both, module_draws,
            in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_reparameterised(fn):
    check(fn, (MU.copy(),))


def test_the_other_branch():
    check(in_a_branch, (-MU,))


def test_gradients_in_closed_form():
    # d/da sum(a + (b - a) u) = 1 - u; d/ds sum(s e) = e; d/dloc sum(loc + s g) = 1
    u = np.random.default_rng(8).uniform(0.0, 1.0, 3)
    e = np.random.default_rng(8).exponential(1.0, 3)
    np.testing.assert_allclose(srcgrad.grad(
        lambda a: np.sum(np.random.default_rng(8).uniform(a, 3.0)))(MU), 1.0 - u)
    np.testing.assert_allclose(srcgrad.grad(
        lambda s: np.sum(np.random.default_rng(8).exponential(s)))(np.exp(MU)), e)
    np.testing.assert_allclose(srcgrad.grad(
        lambda m: np.sum(np.random.default_rng(8).gumbel(m, 2.0)))(MU), np.ones(3))


def test_draws_are_their_standard_draws_moved_bit_for_bit():
    lo, hi = np.linspace(-2, 2, 1000), np.linspace(2.5, 9, 1000)
    for make in (np.random.default_rng, np.random.RandomState):
        np.testing.assert_array_equal(make(7).uniform(lo, hi),
                                      lo + (hi - lo) * make(7).uniform(0.0, 1.0, lo.shape))
        np.testing.assert_array_equal(make(7).exponential(hi),
                                      hi * make(7).exponential(1.0, hi.shape))
        np.testing.assert_array_equal(make(7).gumbel(lo, hi),
                                      lo + hi * make(7).gumbel(0.0, 1.0, lo.shape))
