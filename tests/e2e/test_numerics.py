"""Rules at the edges of their domains: stable, and the documented subgradients.

Large logits must not overflow; log1p/expm1 keep their precision near 0; at
the kinks, abs and norm take the subgradient 0 (never NaN); sqrt at 0 has the
infinite slope that is its true derivative.  The same holds in forward mode,
and float32 inputs give float32 derivatives.
"""

from __future__ import annotations

import numerics_fns as fns
import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad


def _softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


@pytest.mark.parametrize("scale", [1.0, 1e3, 1e300])
def test_logsumexp_of_large_logits_is_the_softmax(scale):
    x = np.array([1.0, -1.0, 0.999]) * scale
    g = srcgrad.grad(fns.logsumexp)(x)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, _softmax(x), rtol=1e-12, atol=1e-300)
    _, t = srcgrad.jvp(fns.logsumexp, (x,), (np.ones(3),))
    assert t == pytest.approx(1.0)  # the softmax sums to one


def test_softmax_cross_entropy_with_large_logits():
    logits = np.array([[1000.0, 0.0, -1000.0], [3.0, 2.0, 1.0]])
    onehot = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    g = srcgrad.grad(fns.softmax_xent)(logits, onehot)
    expected = np.stack([_softmax(row) for row in logits]) - onehot
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-15)


def test_log1p_and_expm1_keep_precision_near_zero():
    x = np.array([1e-12, -1e-12, 1e-300])
    g = srcgrad.grad(fns.near_zero)(x)
    np.testing.assert_allclose(g, 1 / (1 + x) + np.exp(x), rtol=1e-15)


def test_abs_and_norm_at_zero_take_the_zero_subgradient_in_both_modes():
    zero = np.zeros(3)
    for fn in (fns.abs_sum, fns.norm):
        g = srcgrad.grad(fn)(zero)
        assert np.array_equal(g, zero), fn.__name__
        _, t = srcgrad.jvp(fn, (zero,), (np.ones(3),))
        assert t == 0.0, fn.__name__
    x = np.array([1.0, 2.0, 3.0])
    assert np.array_equal(srcgrad.grad(fns.l2_of_difference)(x, x.copy()), np.zeros(3))


def test_sqrt_at_zero_has_its_infinite_slope_not_nan():
    with np.errstate(divide="ignore"):
        g = srcgrad.grad(fns.root_sum)(np.array([0.0, 4.0]))
    assert g[0] == np.inf and g[1] == pytest.approx(0.25)


@pytest.mark.parametrize("fn", [fns.logsumexp, fns.norm, fns.abs_sum, fns.near_zero])
def test_float32_in_float32_out_in_both_modes(fn):
    x = np.array([0.5, -0.25, 0.125], dtype=np.float32)
    assert srcgrad.grad(fn)(x).dtype == np.float32
    value, tangent = srcgrad.jvp(fn, (x,), (np.ones(3, dtype=np.float32),))
    assert np.asarray(tangent).dtype == np.asarray(value).dtype


@pytest.mark.parametrize("d", [0.0, 1e-12, 1e-8, 1e-4, 0.3, -2.5])
def test_sinc_derivatives_at_and_near_zero(d):
    """np.sinc is analytic at 0, where its derivative rule's closed form divides
    by 0: the second derivative there was 0.0 (true -pi**2 / 3), -9.87 at 1e-12
    (review s36 R4-4); the first lost its digits below ~1e-8."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40

    def exact(k):
        return float(mp.diff(lambda t: mp.sinc(mp.pi * t), d, k))

    assert srcgrad.grad(fns.sinc)(d) == pytest.approx(exact(1), rel=1e-13, abs=1e-15)
    assert srcgrad.jvp(fns.sinc, (d,), (1.0,))[1] == pytest.approx(exact(1), rel=1e-13,
                                                                  abs=1e-15)
    second = exact(2)
    assert srcgrad.grad(srcgrad.grad(fns.sinc))(d) == pytest.approx(second, rel=1e-12)
    assert float(srcgrad.hessian(fns.sinc)(d)) == pytest.approx(second, rel=1e-12)
    assert float(srcgrad.hvp(fns.sinc)(d, 1.0)) == pytest.approx(second, rel=1e-12)
    third = srcgrad.grad(srcgrad.grad(srcgrad.grad(fns.sinc)))(d)
    assert third == pytest.approx(exact(3), rel=1e-11, abs=1e-12)


def test_sinc_filter_newton_step_on_the_delay():
    """At d = 0 the filter's second derivative in the delay was 1.444, of the
    wrong sign (differences of the gradient: -1.845)."""
    grad = srcgrad.grad(fns.sinc_filter)
    e = 1e-5
    expected = (grad(e) - grad(-e)) / (2 * e)
    assert float(srcgrad.hvp(fns.sinc_filter)(0.0, 1.0)) == pytest.approx(expected, rel=1e-6)
    assert float(srcgrad.hessian(fns.sinc_filter)(0.0)) == pytest.approx(expected, rel=1e-6)


POINTS = np.array([[0.0, 0.0], [1.0, 0.5], [0.3, -0.7]])


@pytest.mark.parametrize("fn", [fns.pair_energy_hypot, fns.pair_angles])
def test_hypot_and_arctan2_at_the_origin_behind_a_mask(fn):
    """np.hypot(0, 0) and np.arctan2(0, 0) on a masked diagonal: the rules divided a
    zero cotangent (tangent) by 0, and every entry of the gradient was NaN (review s36
    R4-10; differences: [2.789, -2.454, ...]).  Now their derivative at the origin is 0,
    as np.linalg.norm's."""
    with np.errstate(all="raise"):
        check_every_policy(fn, (POINTS.copy(),))
        hvp = srcgrad.hvp(fn)(POINTS.copy(), np.ones((3, 2)))
    assert np.all(np.isfinite(hvp))


def test_math_hypot_and_atan2_at_the_origin():
    """Python floats: ZeroDivisionError from the generated code before."""
    assert srcgrad.grad(fns.float_polar, wrt=(0, 1))(0.0, 0.0) == (0.0, 0.0)
    assert srcgrad.jvp(fns.float_polar, (0.0, 0.0), (1.0, 1.0))[1] == 0.0
    check_every_policy(fns.float_polar, (0.0, 0.0))
    check_every_policy(fns.float_polar, (0.3, -0.4), wrt=1)
