"""A rule registered for a function srcgrad could read (review s35 R3-25).

``register_vjp(softclip, ste_vjp)`` for a function of the user's own module (a
straight-through estimator: forward ``tanh``, backward the identity) was
accepted and ignored -- srcgrad differentiated the source -- and a rule
registered for ``scipy.special.logsumexp`` before the scipy family of built-in
rules loaded was replaced by the built-in one.  The user's rule now wins, in
the mode it is registered for (the other mode still reads the source), under
every policy; the value stays the function's own.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close

import srcgrad
from srcgrad.rules import registry

X = np.array([0.3, -0.5, 0.9])


def softclip(x):
    return np.tanh(x)


def ste_vjp(out, d_out, x):
    return d_out * 1.0


def ste_jvp(out, x, d_x):
    return d_x * 1.0


def loss(x):
    return np.sum(softclip(x * 2.0) ** 2)


def loss_in_a_loop(x):
    h = x
    for _ in range(3):
        h = softclip(h * 1.5) + 0.1
    return np.sum(h ** 2)


@pytest.fixture
def restore():
    back = registry.restore_point()
    yield
    back()


def test_a_vjp_registered_for_a_users_function_replaces_its_source(restore):
    srcgrad.register_vjp(softclip, ste_vjp)
    want = 4 * np.tanh(2 * X)          # d/dx sum(t**2) with dt/dz taken as 1, z = 2x
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(loss, policy=policy)(X)
        assert_bit_identical(value, loss(X), f"policy {policy!r}")
        assert_close(grad, want, rtol=1e-12, atol=0, what=f"policy {policy!r}")
    # forward mode has no rule registered: it differentiates the source
    _, tangent = srcgrad.jvp(loss, (X,), (np.ones(3),))
    t = np.tanh(2 * X)
    assert tangent == pytest.approx(np.sum(4 * t * (1 - t ** 2)))


def test_in_a_loop_under_every_policy(restore):
    srcgrad.register_vjp(softclip, ste_vjp)
    h1 = np.tanh(X * 1.5) + 0.1
    h2 = np.tanh(h1 * 1.5) + 0.1
    h3 = np.tanh(h2 * 1.5) + 0.1
    want = 2 * h3 * 1.5 ** 3           # each step's derivative taken as 1.5
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(loss_in_a_loop, policy=policy)(X)
        assert_bit_identical(value, loss_in_a_loop(X), f"policy {policy!r}")
        assert_close(grad, want, rtol=1e-12, atol=0, what=f"policy {policy!r}")


def test_a_jvp_registered_for_a_users_function(restore):
    srcgrad.register_jvp(softclip, ste_jvp)
    value, tangent = srcgrad.jvp(loss, (X,), (np.ones(3),))
    assert value == loss(X)
    assert tangent == pytest.approx(np.sum(4 * np.tanh(2 * X)))
    # reverse mode has no rule registered: the source's derivative
    t = np.tanh(2 * X)
    assert_close(srcgrad.grad(loss)(X), 4 * t * (1 - t ** 2), rtol=1e-12, atol=0)


def test_a_users_rule_is_not_replaced_by_a_family_loaded_later(restore):
    special = pytest.importorskip("scipy.special")

    def lse_vjp(out, d_out, a, axis=None, b=None, keepdims=False, return_sign=False):
        return d_out * 100.0 * np.ones_like(a)

    srcgrad.register_vjp(special.logsumexp, lse_vjp, wrt=("a",))
    registry.load_lazy(force=True)
    np.testing.assert_array_equal(srcgrad.grad(lambda a: special.logsumexp(a))(X),
                                  np.full(3, 100.0))
