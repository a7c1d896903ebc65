"""``rng.normal(mu, sigma)`` with ``mu`` and ``sigma`` differentiated.

Refused before ("no adjoint rule for the method '.normal()'").  NumPy's
``normal`` computes ``loc + scale * standard_normal`` from the same draws, bit
for bit (checked below for a Generator, a RandomState and ``np.random``), so
analysis/sorts_in_place.py writes ``z = rng.standard_normal(s); t = loc +
scale * z`` (the reparameterisation), the draw drawn once and saved.  Each
program: value bit for bit under every policy and in jvp, gradient and tangent
against differences with the same draws.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

MU = np.array([0.3, -1.2, 0.7])


def generator(mu):
    rng = np.random.default_rng(0)
    s = rng.normal(mu, np.exp(mu))
    return np.sum(s ** 2)


def scalar_scale_and_size(mu):
    rng = np.random.default_rng(3)
    s = rng.normal(loc=mu, scale=0.5, size=(4, 3))
    return np.sum(np.tanh(s))


def legacy(mu):
    rng = np.random.RandomState(1)
    return np.sum(rng.normal(mu, 2.0) * mu)


def in_a_loop(mu):
    rng = np.random.default_rng(5)
    total = 0.0
    for k in range(3):
        total = total + np.sum(rng.normal(mu * k, 1.0 + mu ** 2))
    return total


def in_a_branch(mu):
    rng = np.random.default_rng(2)
    if np.sum(mu) > 0:
        return np.sum(rng.normal(mu, 1.0) ** 2)
    return np.sum(rng.normal(0.0, np.exp(mu)))


def sample(mu, sigma):
    rng = np.random.default_rng(4)
    return rng.normal(mu, sigma)


def in_a_helper(mu):
    return np.sum(sample(mu, 0.3) ** 2) + np.sum(sample(mu ** 2, np.exp(mu)))


PROGRAMS = [generator, scalar_scale_and_size, legacy, in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_reparameterised(fn):
    check(fn, (MU.copy(),))


def test_the_other_branch():
    check(in_a_branch, (-MU,))


def test_normal_is_loc_plus_scale_times_standard_normal_bit_for_bit():
    mu, sigma = np.linspace(-2, 2, 1000), np.linspace(0.1, 3, 1000)
    for make in (np.random.default_rng, np.random.RandomState):
        a = make(7).normal(mu, sigma)
        b = mu + sigma * make(7).standard_normal(mu.shape)
        np.testing.assert_array_equal(a, b)
    np.random.seed(3)
    a = np.random.normal(mu, sigma)
    np.random.seed(3)
    np.testing.assert_array_equal(a, mu + sigma * np.random.standard_normal(mu.shape))
