"""check=True (SRCGRAD_CHECK=1) on a function that draws random numbers (review r1, finding 8).

Translation validation calls the function itself after the generated code and
compares the values bit for bit.  The function drew again from generators the
generated code had moved on, computed another value, and srcgrad raised a
TranslationError calling it a srcgrad bug -- on correct code; the caller's
generator also ended advanced twice.  The function now runs from the states
the generated code started from (api/draws.Draws), and the generators are left
as one run leaves them.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, numeric_grad

import srcgrad

X = np.linspace(-1.0, 1.0, 3)

NOISE = np.random.default_rng(11)  # a module's generator, read by a helper


def noisy(x, rng):
    return np.sum(np.tanh(x * (1.0 + 0.5 * rng.normal(size=x.shape))) ** 2)


def noise(shape):
    return NOISE.normal(size=shape)


def through_a_helper(x):
    h = x
    for t in range(3):
        h = np.tanh(h + 0.1 * noise(h.shape))
        if t == 1:
            h = h * (1.0 + np.random.uniform())
    return np.sum(h ** 2)


def python_random(x, r):
    return np.sum(np.sin(x) * r.gauss(0.0, 1.0)) + random.random()


class Layer:
    def __init__(self):
        self.rng = np.random.RandomState(3)

    def loss(self, x):
        return np.sum(x * self.rng.uniform(size=3))


def states(*generators):
    """The generators' states, as text that compares equal when they are."""
    return repr([_listed(g.bit_generator.state if isinstance(g, np.random.Generator)
                         else g.get_state() if isinstance(g, np.random.RandomState)
                         else g.getstate()) for g in generators])


def _listed(state):
    if isinstance(state, np.ndarray):
        return state.tolist()
    if isinstance(state, dict):
        return {k: _listed(v) for k, v in state.items()}
    if isinstance(state, (tuple, list)):
        return [_listed(v) for v in state]
    return state


@pytest.mark.parametrize("policy", [*POLICIES, ("revolve", 3)])
def test_grad_value_and_grad_and_vjp_check_a_function_that_draws(policy):
    plain = srcgrad.grad(noisy, policy=policy)(X, np.random.default_rng(0))
    once = np.random.default_rng(0)
    want = noisy(X, once)  # the value, and the state one run leaves
    for name, call in [
            ("grad", lambda r: srcgrad.grad(noisy, policy=policy, check=True)(X, r)),
            ("value_and_grad", lambda r: srcgrad.value_and_grad(
                noisy, policy=policy, check=True)(X, r)),
            ("vjp", lambda r: srcgrad.vjp(noisy, X, r, wrt=(0,), policy=policy,
                                          check=True))]:
        rng = np.random.default_rng(0)
        out = call(rng)
        if name == "value_and_grad":
            assert_bit_identical(out[0], want)
            out = out[1]
        elif name == "vjp":
            assert_bit_identical(out[0], want)
            out = out[1](1.0)[0]
        assert_close(out, plain, rtol=1e-15, atol=0, what=name)
        assert states(rng) == states(once), f"{name}: the generator moved on twice"
    fd = numeric_grad(lambda x: noisy(x, np.random.default_rng(0)), [X], 0)
    assert_close(plain, fd, rtol=1e-5, atol=1e-7)


def test_a_helper_reading_a_module_generator_and_the_global_one(monkeypatch):
    """SRCGRAD_CHECK=1; the draws in a helper inside a loop, and in a branch."""
    monkeypatch.setenv("SRCGRAD_CHECK", "1")
    for policy in ("save", "sqrt", ("revolve", 2)):
        NOISE.bit_generator.state = np.random.default_rng(11).bit_generator.state
        np.random.seed(4)
        got = srcgrad.grad(through_a_helper, policy=policy)(X)
        after = states(NOISE, np.random.mtrand._rand)
        NOISE.bit_generator.state = np.random.default_rng(11).bit_generator.state
        np.random.seed(4)
        fd = numeric_grad(lambda x: _from_the_same_state(through_a_helper, x), [X], 0)
        NOISE.bit_generator.state = np.random.default_rng(11).bit_generator.state
        np.random.seed(4)
        through_a_helper(X)
        assert states(NOISE, np.random.mtrand._rand) == after
        assert_close(got, fd, rtol=1e-5, atol=1e-7, what=repr(policy))


def _from_the_same_state(fn, x):
    NOISE.bit_generator.state = np.random.default_rng(11).bit_generator.state
    np.random.seed(4)
    return fn(x)


def test_python_random_and_a_generator_an_object_holds():
    random.seed(1)
    got = srcgrad.value_and_grad(python_random, check=True)(X, random.Random(5))
    random.seed(1)
    assert_bit_identical(got[0], python_random(X, random.Random(5)))
    assert_close(got[1], np.cos(X) * random.Random(5).gauss(0.0, 1.0), rtol=1e-15)
    layer = Layer()
    got = srcgrad.grad(layer.loss, check=True)(X)
    assert_close(got, np.random.RandomState(3).uniform(size=3), rtol=0, atol=0)
    assert states(layer.rng) == states(_advanced_once())


def _advanced_once():
    r = np.random.RandomState(3)
    r.uniform(size=3)
    return r


def test_a_real_difference_is_still_reported():
    """Rewinding does not hide a value that differs: a function that draws
    from a generator it makes itself each call stays checked bit for bit."""
    def fresh(x):
        return np.sum(x * np.random.default_rng(7).normal(size=3))
    assert_close(srcgrad.grad(fresh, check=True)(X), np.random.default_rng(7).normal(size=3),
                 rtol=0, atol=0)
