"""``p = dataclasses.replace(p, b=...)`` in a loop, ``p`` an argument passed a
dataclass object: refused ("... its class is known when srcgrad compiles: an
argument of the function ...", which p is), where once, twice, or
``p = Par(p.W, ...)`` in the loop were right (review s35, R3-6).  A parameter
every binding of which is ``replace`` of itself holds an object of its class
throughout (normalize/records.py); a parameter rebound otherwise too is still
refused."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pytest
from numeric import assert_close, check_every_policy, numeric_grad

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError


@dataclass(frozen=True)
class Frozen:
    W: np.ndarray
    b: np.ndarray


@dataclass
class Plain:
    W: np.ndarray
    b: np.ndarray


RS = np.random.RandomState(0)
X = RS.randn(3)
W0, B0 = RS.randn(3, 2), RS.randn(2)


def carried(p, x):
    for i in range(3):
        p = dataclasses.replace(p, b=np.sin(p.b) + 0.1 * i)
        if i == 1:
            p = dataclasses.replace(p, W=p.W * 0.5)
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


@pytest.mark.parametrize("kind", [Frozen, Plain], ids=lambda k: k.__name__)
def test_replace_carried_by_a_loop_is_followed(kind):
    p = kind(W0.copy(), B0.copy())
    check_every_policy(carried, (p, X), 1)
    grad = srcgrad.grad(carried)(p, X)
    assert_close(grad.b, numeric_grad(lambda b: carried(kind(W0.copy(), b), X), [B0.copy()], 0))
    assert_close(grad.W, numeric_grad(lambda w: carried(kind(w, B0.copy()), X), [W0.copy()], 0))


def rebound_otherwise(p, x, q):
    for i in range(2):
        p = dataclasses.replace(p, b=np.sin(p.b))
        p = q
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


def test_a_parameter_rebound_otherwise_too_is_still_refused():
    p = Plain(W0.copy(), B0.copy())
    with pytest.raises(UnsupportedSyntaxError, match="dataclasses.replace"):
        srcgrad.grad(rebound_otherwise, wrt=1)(p, X, p)
