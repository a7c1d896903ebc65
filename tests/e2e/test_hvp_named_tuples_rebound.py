"""hvp of a function rebinding a name to a named tuple it builds (reviewer s33, F1).

``s = s0; for _ in range(2): s = State(s.pos + dt * s.vel, s.vel)``: grad and
jvp ran, hvp was refused naming srcgrad's own tangent code ("calling 'type(s)'
is not supported ... at line 29 of that generated code").  The tangent of
``s = State(...)`` is written ``d_s = type(s)(*(d_a, d_b))``, which a second
derivative reads again; ``type(s)`` was resolved only for a local every
binding of which builds the one class, and ``s = s0`` (an argument) is none.
Right after ``s = State(...)``, ``type(s)`` is ``State`` whatever else ``s``
is bound to (normalize/named_tuples.built_just_before).  Each case: hvp
against central differences of srcgrad's gradient, the gradient against
differences; first order under every policy and jvp where the argument is an
array; in a loop, a branch and a helper, a dataclass too.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest
from numeric import assert_close, numeric_grad, pure
from numeric import check_every_policy as check

import srcgrad

State = namedtuple("State", ["pos", "vel"])


@dataclass
class Body:
    pos: np.ndarray
    vel: np.ndarray


X = np.array([1.0, 2.0, 0.5, -0.5])
V = np.array([0.3, -0.5, 1.1, 0.2])


def reviewers(s0, dt):  # the reviewer's program: hvp with respect to dt
    s = s0
    for _ in range(2):
        s = State(s.pos + dt * s.vel, s.vel)
    return np.sum(s.pos ** 2)


def test_the_reviewers_program():
    s0 = State(np.array([1.0, 2.0]), np.array([0.5, -0.5]))
    grad = srcgrad.grad(reviewers, wrt=1)
    eps = 1e-6
    fd = (grad(s0, 0.1 + eps) - grad(s0, 0.1 - eps)) / (2 * eps)
    assert_close(srcgrad.hvp(reviewers, wrt=1)(s0, 0.1, 1.0), fd, rtol=1e-5, atol=1e-7)
    assert_close(srcgrad.hvp(reviewers, wrt=1)(s0, 0.1, 1.0), 4.0, rtol=1e-12)  # 8 |vel|^2


def _step(s, dt):
    return State(s.pos + dt * np.tanh(s.vel), s.vel * (1.0 - dt))


def rebound_in_a_loop(x):
    s0 = State(x[:2] * 1.0, x[2:] ** 2)
    s = s0
    for _ in range(3):
        s = State(s.pos + 0.1 * s.vel * s.pos, s.vel - 0.2 * s.pos)
    return np.sum(s.pos ** 2 * s.vel)


def rebound_in_a_branch(x):
    s = State(x[:2], x[2:])
    t = s
    if x[0] > 0:
        t = State(t.pos * t.vel, t.vel)
    else:
        t = State(t.vel, t.pos ** 2)
    return np.sum(t.pos * t.vel ** 2)


def rebound_by_a_helper(x):
    s = State(x[:2], x[2:])
    for _ in range(2):
        s = _step(s, 0.3)
    return np.sum(s.pos ** 3) + np.sum(s.vel * s.pos)


def dataclass_rebound(x):
    b0 = Body(x[:2], x[2:])
    b = b0
    for _ in range(2):
        b = Body(b.pos + 0.5 * b.vel ** 2, b.vel * b.pos)
    return np.sum(b.pos * b.vel)


FORMS = [rebound_in_a_loop, rebound_in_a_branch, rebound_by_a_helper, dataclass_rebound]


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_hvp_against_differences_of_the_gradient(fn):
    for x in (X, -X):
        grad = srcgrad.grad(fn)
        assert_close(grad(x), numeric_grad(pure(fn), [x], 0), what=f"{fn.__name__} gradient")
        eps = 1e-6
        expected = (grad(x + eps * V) - grad(x - eps * V)) / (2 * eps)
        np.testing.assert_allclose(srcgrad.hvp(fn)(x, V), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_first_order_under_every_policy(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))
