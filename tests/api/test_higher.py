"""Forward mode and higher orders: jvp, hvp, hessian, jacobian, grad(grad(f));
users' rules (register_vjp, register_jvp, custom_vjp) and gradient hooks (on_grad)."""

from __future__ import annotations

import math

import higher_fns as fns
import numpy as np
import pytest
from numeric import assert_close

import srcgrad
from srcgrad.errors import NonDifferentiableError, RuleError, SrcGradError
from srcgrad.rules import registry

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _own_rules():
    """Rules registered by a test stay in that test."""
    restore = registry.restore_point()
    yield
    restore()

EPS = 1e-6


def _fd_of_grad(fn, args, i, v):
    """(grad f(x + eps v) - grad f(x - eps v)) / 2 eps: H v by differences."""
    g = srcgrad.grad(fn, wrt=i)
    plus, minus = list(args), list(args)
    plus[i] = args[i] + EPS * v
    minus[i] = args[i] - EPS * v
    return (g(*plus) - g(*minus)) / (2 * EPS)


def test_hvp_matches_differences_of_the_gradient():
    x, a = RNG.standard_normal(5), RNG.standard_normal(5)
    v = RNG.standard_normal(5)
    hv = srcgrad.hvp(fns.quartic)(x, a, v)
    assert_close(hv, _fd_of_grad(fns.quartic, (x, a), 0, v), rtol=1e-6, atol=1e-7)


def test_hvp_of_a_matrix_argument():
    W, v = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    D = RNG.standard_normal((3, 4))
    hv = srcgrad.hvp(fns.mat_fn)(W, v, D)
    assert hv.shape == W.shape
    assert_close(hv, _fd_of_grad(fns.mat_fn, (W, v), 0, D), rtol=1e-6, atol=1e-7)


def test_hessian_is_symmetric_and_matches_differences():
    x, a = RNG.standard_normal(4), RNG.standard_normal(4)
    H = srcgrad.hessian(fns.quartic)(x, a)
    assert H.shape == (4, 4)
    assert_close(H, H.T, rtol=1e-10, atol=1e-12)
    for k in range(4):
        e = np.zeros(4)
        e[k] = 1.0
        assert_close(H[:, k], _fd_of_grad(fns.quartic, (x, a), 0, e), rtol=1e-6, atol=1e-7)


def test_grad_of_grad_through_loops_and_branches():
    gg = srcgrad.grad(srcgrad.grad(fns.looped))
    g = srcgrad.grad(fns.looped)
    for x in (0.3, 0.9, 1.7):
        numeric = (g(x + EPS, 5) - g(x - EPS, 5)) / (2 * EPS)
        assert gg(x, 5) == pytest.approx(numeric, rel=1e-6, abs=1e-7)
    assert "def tangent_looped" in gg.source


def test_grad_of_grad_needs_a_scalar_inner_gradient():
    gg = srcgrad.grad(srcgrad.grad(fns.quartic))
    with pytest.raises(NonDifferentiableError, match="hessian"):
        gg(np.ones(3), np.ones(3))


def test_jacobian_in_both_modes_matches_differences():
    x, W = RNG.standard_normal(3), RNG.standard_normal((5, 3))
    J = srcgrad.jacobian(fns.vector_out)(x, W)        # 5 outputs > 3 inputs: forward
    numeric = np.stack([(fns.vector_out(x + EPS * e, W) - fns.vector_out(x - EPS * e, W))
                        / (2 * EPS) for e in np.eye(3)], axis=-1)
    assert_close(J, numeric, rtol=1e-6, atol=1e-8)
    W2 = RNG.standard_normal((2, 3))                    # 2 outputs < 3 inputs: reverse
    J2 = srcgrad.jacobian(fns.vector_out)(x, W2)
    numeric2 = np.stack([(fns.vector_out(x + EPS * e, W2) - fns.vector_out(x - EPS * e, W2))
                         / (2 * EPS) for e in np.eye(3)], axis=-1)
    assert_close(J2, numeric2, rtol=1e-6, atol=1e-8)


def test_jacobian_of_grad_is_the_hessian():
    x, a = RNG.standard_normal(3), RNG.standard_normal(3)
    assert_close(srcgrad.jacobian(srcgrad.grad(fns.quartic))(x, a),
                 srcgrad.hessian(fns.quartic)(x, a), rtol=1e-12, atol=1e-12)


def test_hvp_through_a_method_call_and_an_object():
    layer = fns.Layer(RNG.standard_normal((3, 3)))
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    hv = srcgrad.hvp(fns.with_object, wrt=1)(layer, x, v)
    assert_close(hv, _fd_of_grad(fns.with_object, (layer, x), 1, v), rtol=1e-6, atol=1e-7)


def test_jvp_source_is_printable_and_deterministic():
    t = srcgrad.jvp(fns.quartic, wrt=0)
    assert "def jvp_quartic(x, a, d_x):" in t.source
    assert t.source == srcgrad.jvp(fns.quartic, wrt=0).source


def test_jvp_rejects_a_tangent_for_an_integer():
    with pytest.raises(NonDifferentiableError, match="None"):
        srcgrad.jvp(fns.looped, (0.5, 3), (1.0, 1))


def test_jvp_needs_one_tangent_per_primal():
    with pytest.raises(SrcGradError, match="one tangent per primal"):
        srcgrad.jvp(fns.looped, (0.5, 3), (1.0,))


# -- hooks ---------------------------------------------------------------------------

def _rnn_clipped_by_hand(W, xs, h0):
    hs = [h0]
    for t in range(xs.shape[0]):
        hs.append(np.tanh(W @ hs[-1] + xs[t]))
    d_h = 2 * hs[-1]
    d_W = np.zeros_like(W)
    for t in reversed(range(xs.shape[0])):
        d_h = np.clip(d_h, -0.05, 0.05)
        d_a = d_h * (1 - hs[t + 1] ** 2)
        d_W += np.outer(d_a, hs[t])
        d_h = W.T @ d_a
    return d_W


def test_hook_clips_gradients_inside_an_rnn_loop_like_a_hand_written_backward_pass():
    W = RNG.standard_normal((4, 4)) * 0.8
    xs, h0 = RNG.standard_normal((6, 4)), RNG.standard_normal(4)
    g = srcgrad.grad(fns.rnn_clipped)
    assert_close(g(W, xs, h0), _rnn_clipped_by_hand(W, xs, h0), rtol=1e-12, atol=1e-14)
    assert "clip_hook(" in g.source
    # the hook changes the gradient (it is not a no-op here)
    unclipped = np.zeros_like(W)
    assert not np.allclose(g(W, xs, h0), unclipped)


def test_hook_leaves_forward_mode_alone():
    W = RNG.standard_normal((4, 4)) * 0.8
    xs, h0 = RNG.standard_normal((6, 4)), RNG.standard_normal(4)
    V = RNG.standard_normal((4, 4))
    _, t = srcgrad.jvp(fns.rnn_clipped, (W, xs, h0), (V, None, None))
    numeric = (fns.rnn_clipped(W + EPS * V, xs, h0) - fns.rnn_clipped(W - EPS * V, xs, h0)) \
        / (2 * EPS)
    assert t == pytest.approx(numeric, rel=1e-6)


# -- users' rules -----------------------------------------------------------------------

def test_registered_rules_for_an_opaque_callable_work_in_both_modes_and_show_by_name():
    srcgrad.register_vjp(fns.softplus, fns.softplus_vjp)
    srcgrad.register_jvp(fns.softplus, fns.softplus_jvp)
    x, w = RNG.standard_normal(4), RNG.standard_normal(4)
    g = srcgrad.grad(fns.uses_softplus, wrt=(0, 1))
    numeric = [(fns.uses_softplus(x + EPS * e, w) - fns.uses_softplus(x - EPS * e, w))
               / (2 * EPS) for e in np.eye(4)]
    assert_close(g(x, w)[0], np.array(numeric), rtol=1e-6, atol=1e-8)
    assert "softplus_vjp" in g.source  # (a suffix if a doctest took the name)
    v = RNG.standard_normal(4)
    t = srcgrad.jvp(fns.uses_softplus, wrt=0)
    assert "softplus_jvp" in t.source
    _, tangent = srcgrad.jvp(fns.uses_softplus, (x, w), (v, None))
    assert tangent == pytest.approx(float(g(x, w)[0] @ v), rel=1e-10)


def test_a_c_function_gets_rules_without_editing_srcgrad():
    def lgamma_vjp(out, d_out, x):
        h = 1e-5
        return d_out * (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)

    def lgamma_jvp(out, x, d_x):
        h = 1e-5
        return d_x * (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)

    srcgrad.register_vjp(math.lgamma, lgamma_vjp)
    srcgrad.register_jvp(math.lgamma, lgamma_jvp)
    import higher_lgamma  # noqa: PLC0415 - defined after the rules exist
    g = srcgrad.grad(higher_lgamma.f)
    digamma = 0.7031566406452432  # psi(2.5)
    assert g(2.5) == pytest.approx(math.lgamma(2.5) + 2.5 * digamma, rel=1e-6)
    assert "lgamma_vjp(" in g.source
    _, t = srcgrad.jvp(higher_lgamma.f, (2.5,), (1.0,))
    assert t == pytest.approx(g(2.5), rel=1e-6)


def test_custom_vjp_is_called_by_name_and_forward_mode_reads_the_source():
    x = RNG.standard_normal(3)
    g = srcgrad.grad(fns.uses_custom)
    expected = 2 * np.tanh(2 * x) * (1 - np.tanh(2 * x) ** 2) * 2.0
    assert_close(g(x), expected, rtol=1e-12, atol=1e-14)
    assert "scaled_tanh_fwd(" in g.source and "scaled_tanh_bwd(" in g.source
    v = RNG.standard_normal(3)
    _, t = srcgrad.jvp(fns.uses_custom, (x,), (v,))
    assert t == pytest.approx(float(expected @ v), rel=1e-10)


def test_rules_are_validated_when_registered():
    with pytest.raises(RuleError, match="out, d_out"):
        srcgrad.register_vjp(np.sinc, lambda x, g: g)
    with pytest.raises(RuleError, match="parameters"):
        srcgrad.register_vjp(np.sinc, lambda out, d_out, y, z: d_out)
    with pytest.raises(RuleError, match="d_x"):
        srcgrad.register_jvp(np.sinc, lambda out, x, dx: dx)
    with pytest.raises(RuleError, match="backward"):
        fns.scaled_tanh.defvjp(fns.scaled_tanh_fwd, lambda d: d)


def test_missing_rule_error_mentions_registering_one():
    def f(x):
        return np.sum(np.i0(x))

    with pytest.raises(srcgrad.MissingRuleError, match="register"):
        srcgrad.grad(f)(np.ones(3))


def test_second_derivatives_through_a_callee_returning_a_tuple():
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    hv = srcgrad.hvp(fns.unpacks)(x, v)
    assert_close(hv, _fd_of_grad(fns.unpacks, (x,), 0, v), rtol=1e-6, atol=1e-7)


def test_jacobian_of_a_second_derivative_is_refused_clearly():
    with pytest.raises(SrcGradError, match="third derivative"):
        srcgrad.jacobian(srcgrad.hvp(fns.quartic))
