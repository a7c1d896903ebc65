"""A collections.defaultdict built in the function: grad was right, jvp and hvp
raised a raw TypeError ("first argument must be callable or None") from
runtime/forward.zero_tangent, which built the tangent as type(x)(pairs); after
that, a KeyError (fresh_tangent made a plain dict of it).  The tangent of a
defaultdict is a defaultdict whose missing keys get the zero tangent of what
the factory makes -- zero even where the factory's value is not (review s35,
R3-5).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

X = np.array([0.3, -0.5, 0.9, 0.2])


def accumulated(x):
    d = defaultdict(float)
    for i in range(3):
        d["s"] += np.sum(x ** i)
    return d["s"]


def one():
    return 1.0


def factory_of_one(x):
    d = defaultdict(one)
    d["p"] *= np.sum(np.sin(x))
    d["q"] += np.sum(x ** 2)
    return d["p"] * d["q"]


def keys_in_a_branch(x):
    d = defaultdict(float)
    for i in range(4):
        if x[i] > 0:
            d["pos"] += x[i] ** 2
        else:
            d["neg"] += np.sin(x[i])
    return d["pos"] * 2.0 + d["neg"]


@pytest.mark.parametrize("fn", [accumulated, factory_of_one, keys_in_a_branch],
                         ids=lambda f: f.__name__)
def test_a_defaultdict_is_differentiated_in_both_modes(fn):
    check_every_policy(fn, (X,), 0)


@pytest.mark.parametrize("fn", [accumulated, factory_of_one, keys_in_a_branch],
                         ids=lambda f: f.__name__)
def test_hvp_of_a_defaultdict_program(fn):
    v = np.linspace(-1.0, 1.0, X.size)
    eps = 1e-5
    fd = (srcgrad.grad(fn)(X + eps * v) - srcgrad.grad(fn)(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, v), fd, rtol=1e-5, atol=1e-6)
