"""Derivatives that run the function more than once see the noise of one run.

A pullback called twice reruns the forward function for fresh residuals, a
Jacobian takes one pullback per row or one tangent per column, a Hessian one
Hessian-vector product per column: each run drew again from the generator the
function draws from (``rng`` passed in, NumPy's global one, a module's
``RNG``), so the second pullback, every Jacobian row after the first and every
Hessian column after the first belonged to other noise -- silently wrong
(outside tester: a Jacobian entry 1.063 for -0.492).  Each rerun now starts
from the generators' states before the first run, and the generators end as
one call of the function leaves them (api/draws.py)."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close

import srcgrad

X = np.linspace(-1.0, 1.0, 4)
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
RNG = np.random.default_rng(11)  # a module's generator, read as a global


def noisy(x, rng):  # an SDE step: noise times a function of the state
    h = x
    for _ in range(3):
        h = h + 0.5 * rng.normal(size=h.shape) * np.sin(h)
    return h


def noisy_sum(x, rng):
    return np.sum(noisy(x, rng) ** 2)


def noisy_global(x):  # NumPy's global generator
    h = x
    for _ in range(3):
        h = h + 0.5 * np.random.normal(size=h.shape) * np.sin(h)
    return np.sum(h ** 2)


def noisy_module_rng(x):
    h = x * 1.0
    for _ in range(2):
        h = h * (1.0 + 0.3 * RNG.standard_normal(h.shape))
    return np.sum(np.tanh(h) ** 2)


def widening(x, rng):  # 2 inputs, 4 outputs: the Jacobian goes by columns (tangents)
    w = rng.normal(size=(4, 2))
    return np.tanh(w @ x) * (1.0 + rng.normal())


def _jacobian_fd(fn, x, seed):
    h = 1e-6
    cols = [(fn(x + h * e, np.random.default_rng(seed)) - fn(x - h * e, np.random.default_rng(seed)))
            / (2 * h) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_second_pullback_sees_the_first_runs_noise(policy):
    rng = np.random.default_rng(3)
    value, pullback = srcgrad.vjp(noisy, X, rng, wrt=0, policy=policy)
    np.testing.assert_array_equal(value, noisy(X, np.random.default_rng(3)))
    cotangent = 2 * value
    first = pullback(cotangent)[0]
    again = pullback(cotangent)[0]
    np.testing.assert_array_equal(first, again)
    assert_close(first, _jacobian_fd(noisy, X, 3).T @ cotangent, what="pullback")
    after_one_call = np.random.default_rng(3)
    noisy(X, after_one_call)
    assert rng.normal() == after_one_call.normal()  # the caller's generator: one call's draws


def test_jacobian_rows_and_columns_share_one_runs_noise():
    rng = np.random.default_rng(3)
    J = srcgrad.jacobian(noisy)(X, rng)
    assert_close(J, _jacobian_fd(noisy, X, 3), what="jacobian by rows")
    reference = np.random.default_rng(3)
    noisy(X, reference)
    assert rng.normal() == reference.normal()
    x2 = np.array([0.3, -0.7])
    rng = np.random.default_rng(5)
    J = srcgrad.jacobian(widening)(x2, rng)
    assert_close(J, _jacobian_fd(widening, x2, 5), what="jacobian by columns")
    reference = np.random.default_rng(5)
    widening(x2, reference)
    assert rng.normal() == reference.normal()


def test_hessian_columns_share_one_runs_noise():
    H = srcgrad.hessian(noisy_sum)(X, np.random.default_rng(3))
    g = srcgrad.grad(noisy_sum)
    expected = np.stack([(g(X + 1e-5 * e, np.random.default_rng(3))
                          - g(X - 1e-5 * e, np.random.default_rng(3))) / 2e-5
                         for e in np.eye(X.size)], axis=-1)
    assert_close(H, expected, what="hessian")
    T = srcgrad.jacobian(srcgrad.hessian(noisy_sum))(X, np.random.default_rng(3))
    e = np.eye(X.size)[1]
    hess = srcgrad.hessian(noisy_sum)
    expected = (hess(X + 1e-5 * e, np.random.default_rng(3))
                - hess(X - 1e-5 * e, np.random.default_rng(3))) / 2e-5
    assert_close(T[:, :, 1], expected, what="third derivative", rtol=1e-4)


@pytest.mark.parametrize("fn", [noisy_global, noisy_module_rng])
def test_global_generators_are_rewound_too(fn):
    state = RNG.bit_generator.state
    np.random.seed(7)
    H = srcgrad.hessian(fn)(X)

    def grad_at(x):
        np.random.seed(7)
        RNG.bit_generator.state = state
        return srcgrad.grad(fn)(x)
    expected = np.stack([(grad_at(X + 1e-5 * e) - grad_at(X - 1e-5 * e)) / 2e-5
                         for e in np.eye(X.size)], axis=-1)
    assert_close(H, expected, what="hessian", rtol=1e-5)


def _noise(shape):  # a helper reading the module's generator
    return RNG.normal(size=shape)


def through_helper(x):
    return np.sum(np.tanh(x * (1.0 + 0.5 * _noise(x.shape))) ** 2)


def _closing_over(rng):
    def g(x):
        return np.sum(np.tanh(x * (1.0 + 0.5 * rng.normal(size=x.shape))) ** 2)
    return g


def python_random(x, r):  # r: a random.Random
    h = x * 1.0
    for i in range(3):
        h = h + r.gauss(0.0, 0.3) * np.sin(h)
    return np.sum(h ** 2)


def _hessian_fd(fn, reset, *rest):
    def grad_at(x):
        reset()
        return srcgrad.grad(fn)(x, *rest)
    return np.stack([(grad_at(X + 1e-5 * e) - grad_at(X - 1e-5 * e)) / 2e-5
                     for e in np.eye(X.size)], axis=-1)


def test_generators_a_helper_or_a_closure_reads_are_rewound():
    start = RNG.bit_generator.state

    def reset():
        RNG.bit_generator.state = start
    reset()
    H = srcgrad.hessian(through_helper)(X)
    assert_close(H, _hessian_fd(through_helper, reset), what="hessian, helper's RNG", rtol=1e-5)
    rng = np.random.default_rng(5)
    g = _closing_over(rng)

    def reset_closure():
        rng.bit_generator.state = np.random.default_rng(5).bit_generator.state
    reset_closure()
    H = srcgrad.hessian(g)(X)
    assert_close(H, _hessian_fd(g, reset_closure), what="hessian, closure's RNG", rtol=1e-5)


def test_a_python_random_instance_is_rewound():
    import random
    r = random.Random(4)
    H = srcgrad.hessian(python_random)(X, r)
    after = random.Random(4)
    python_random(X, after)
    assert r.random() == after.random()  # one call's draws

    def reset():
        r.seed(4)
    expected = _hessian_fd(python_random, reset, r)
    assert_close(H, expected, what="hessian, random.Random", rtol=1e-5)


def test_the_callers_draws_between_pullbacks_are_kept():
    rng = np.random.default_rng(3)
    _, pullback = srcgrad.vjp(noisy, X, rng, wrt=0)
    seen = []
    for _ in range(4):
        pullback(np.ones(X.size))
        seen.append(rng.normal())  # the caller draws between pullbacks
    reference = np.random.default_rng(3)
    noisy(X, reference)
    assert seen == [reference.normal() for _ in range(4)]
