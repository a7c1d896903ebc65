"""An infinite derivative past the point a selection cut off (review s37 R5-15).

``np.sqrt(np.maximum(x, 0.0))`` -- the "safe sqrt" -- is constant where
``x < 0``, so its derivative there is 0; srcgrad gave NaN: the adjoint of
``np.maximum`` multiplied sqrt's infinite slope at 0 by the mask, ``inf * 0``,
and in forward mode sqrt's tangent rule multiplied the zero tangent below the
cut by it.  The ``np.where`` form was right in reverse and NaN in forward.
Now a selection passes a (co)tangent with ``only_where`` (exactly 0 where the
other operand was taken) and the tangent rules of functions with an
infinite slope somewhere (sqrt, cbrt, arcsin, arccos, arccosh) keep a zero
tangent zero.  Checked under every policy, in jvp and hvp, against central
differences (the function is smooth near each point tested).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

stats = pytest.importorskip("scipy.stats")
stats_special = pytest.importorskip("scipy.special")


def safe_sqrt(x):
    return np.sum(np.sqrt(np.maximum(x, 0.0)))


def safe_sqrt_where(x):
    return np.sum(np.sqrt(np.where(x > 0, x, 0.0)))


def safe_sqrt_clip(x):
    return np.sum(np.sqrt(np.clip(x, 0.0, None)))


def clipped_arcsin(x):
    return np.sum(np.arcsin(np.clip(x, -1.0, 1.0)))


def smooth_hinge(x):
    return np.sum(np.maximum(x, 0.0) ** 1.5)


def clipped_cbrt_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.cbrt(np.minimum(x - i, 0.0)) * (i + 1))
    return s


def builtin_max_per_element(x):
    # review s37 D-6: Python's max/min selections multiplied inf by False
    s = 0.0
    for i in range(len(x)):
        s = s + np.sqrt(max(x[i], 0.0)) + np.sqrt(-min(x[i], 0.0))
    return s


def math_sqrt_of_a_clamped_float(a):
    return math.sqrt(max(a, 0.0)) + a


X = np.array([0.5, 1.0, -2.0])


@pytest.mark.parametrize("fn, x", [
    (safe_sqrt, X), (safe_sqrt_where, X), (safe_sqrt_clip, X),
    (clipped_arcsin, np.array([0.5, 1.5, -3.0])),
    (smooth_hinge, X),
    (clipped_cbrt_in_a_loop, np.array([-0.5, 1.5, 3.5])),
    (builtin_max_per_element, X),
    (math_sqrt_of_a_clamped_float, -0.3),
])
def test_a_cut_off_singularity_gives_zero(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own 1/0 at the cut
        grad = check_every_policy(fn, (x,), 0)
    assert np.all(np.isfinite(grad))


def test_second_derivative_of_a_smooth_hinge():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hv = srcgrad.hvp(smooth_hinge)(X, np.ones(3))
    assert_close(hv, [0.75 / np.sqrt(0.5), 0.75, 0.0], rtol=1e-12)


def test_the_slope_at_the_singularity_itself_is_still_infinite():
    # sqrt's derivative at 0 is inf: a moving input there gives inf, not 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert srcgrad.grad(lambda x: np.sum(np.sqrt(x)))(np.array([0.0]))[0] == np.inf
        _, tangent = srcgrad.jvp(lambda x: np.sum(np.sqrt(x)), (np.array([0.0]),),
                                 (np.array([1.0]),))
    assert tangent == np.inf


def cdfs_outside_their_support(x):
    # diff review s37 D-30: the density was written with log(z), NaN where z <= 0
    return (np.sum(stats.gamma.cdf(x, 2.0)) + np.sum(stats.chi2.cdf(x, 3.0))
            + np.sum(stats.beta.cdf(x, 2.0, 3.0)))


def test_cdfs_are_constant_outside_their_support():
    pytest.importorskip("scipy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        grad = check_every_policy(cdfs_outside_their_support, (np.array([-0.5, 0.4, 1.5]),), 0)
        hv = srcgrad.hvp(cdfs_outside_their_support)(np.array([-0.5, 0.4, 1.5]), np.ones(3))
    assert grad[0] == 0.0 and np.all(np.isfinite(grad)) and np.all(np.isfinite(hv))


def entropies_of_a_cut_value(x):
    # diff review s37 D-33: the tangent d_x * (log(x / y) + 1) was 0 * -inf at the cut
    from_zero = np.maximum(x, 0.0)
    special = stats_special
    return (np.sum(special.rel_entr(from_zero, 0.5)) + np.sum(special.entr(from_zero))
            + np.sum(special.xlogy(from_zero + 1.0, from_zero + 0.5)))


def test_entropies_of_a_cut_value_in_forward_mode():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        grad = check_every_policy(entropies_of_a_cut_value, (np.array([0.5, -1.3, 2.0]),), 0)
    assert grad[1] == 0.0

