"""Alternative constructors, ``@classmethod def from_params(cls, ...): return
cls(...)`` (review s35 R3-26).

``q = Normal.from_params(theta)`` was refused ("'cls' is a parameter: srcgrad
specialises the generated code on the function passed there"), while
``Normal(theta[:2], theta[2:])`` was followed.  ``cls`` is the class the call
names, known when srcgrad compiles: value bit for bit and gradient/jvp against
differences under every policy, for a dataclass, a named tuple, a subclass
inheriting the constructor, in a loop and a branch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest
from numeric import check_every_policy

EPS = np.array([0.7, -1.2])


@dataclass
class Normal:
    mu: np.ndarray
    log_sigma: np.ndarray

    @classmethod
    def from_params(cls, theta):
        return cls(theta[:2], theta[2:])

    @classmethod
    def standard(cls, n):
        return cls(np.zeros(n), np.zeros(n))

    def entropy(self):
        return np.sum(self.log_sigma) + 0.5 * len(self.mu) * (1 + np.log(2 * np.pi))

    def sample(self, eps):
        return self.mu + np.exp(self.log_sigma) * eps


@dataclass
class Wide(Normal):
    @classmethod
    def from_params(cls, theta):
        return cls(theta[:2] * 2.0, theta[2:] + 0.5)


class Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray

    @classmethod
    def split(cls, theta):
        return cls(theta[:2], theta[2:] ** 2)


def elbo(theta):
    q = Normal.from_params(theta)
    return np.sum(q.sample(EPS) ** 2) - q.entropy()


def subclass_constructor(theta):
    q = Wide.from_params(theta)
    return np.sum(q.sample(EPS) ** 2) - q.entropy()


def named_tuple_constructor(theta):
    p = Pair.split(theta)
    return np.sum(p.a * p.b)


def in_a_loop(theta):
    total = 0.0
    for k in range(3):
        q = Normal.from_params(theta * (k + 1))
        total = total + np.sum(q.sample(EPS) ** 2)
    return total


def in_a_branch(theta):
    if np.sum(theta) > 0:
        q = Normal.from_params(theta)
    else:
        q = Normal.standard(2)
    return np.sum(q.sample(EPS)) - q.entropy()


PROGRAMS = [elbo, subclass_constructor, named_tuple_constructor, in_a_loop, in_a_branch]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_an_alternative_constructor_builds_the_class_it_is_called_for(fn):
    check_every_policy(fn, (np.array([0.3, -0.5, 0.2, -0.1]),), 0)
