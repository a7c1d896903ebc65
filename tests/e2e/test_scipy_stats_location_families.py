"""scipy.stats densities review s37 found refused (R5-13): ``expon``,
``laplace`` and ``cauchy`` ``logpdf`` in x, loc and scale, ``binom.logpmf``
in p.  The message named SciPy's private base class's method
('scipy.stats._distn_infrastructure.rv_continuous.logpdf'); a distribution
still without a rule is now named as SciPy holds it (rules/registry.display_name).
The four have rules now (rules/scipy_stats_location.py), checked here in
programs under every policy and in jvp, and hvp against differences.
"""

from __future__ import annotations

import numpy as np
import pytest

from numeric import assert_close, check_every_policy

import srcgrad

st = pytest.importorskip("scipy.stats")

T = np.array([0.3, -0.4])
DATA = np.array([0.2, 1.4, 0.7, 2.5])


def exponential_fit(t):
    return -np.sum(st.expon.logpdf(DATA, loc=-0.5 + 0.1 * t[0], scale=np.exp(t[1])))


def robust_fits(t):
    total = 0.0
    for k in range(2):
        scale = np.exp(t[1] + 0.5 * k)
        if k:
            total = total - np.sum(st.cauchy.logpdf(DATA, t[0], scale))
        else:
            total = total - np.sum(st.laplace.logpdf(DATA, loc=t[0], scale=scale))
    return total


def coin_flips(t):
    p = 1 / (1 + np.exp(-t))
    return -np.sum(st.binom.logpmf(np.array([3, 1]), np.array([5, 4]), p))


@pytest.mark.parametrize("fn", [exponential_fit, robust_fits, coin_flips],
                         ids=lambda f: f.__name__)
def test_the_densities_in_programs(fn):
    check_every_policy(fn, (T,), 0)


@pytest.mark.parametrize("fn", [exponential_fit, robust_fits, coin_flips],
                         ids=lambda f: f.__name__)
def test_hvp_of_the_densities(fn):
    v = np.array([0.7, -0.3])
    gradient = srcgrad.grad(fn)
    eps = 1e-6
    want = (gradient(T + eps * v) - gradient(T - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(T, v), want, rtol=1e-5, atol=1e-7)


def lognormal_tail(t):
    return np.sum(st.lognorm.logpdf(np.array([1.0, 2.0]), 0.5 + t[0] ** 2, scale=np.exp(t[1])))


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_distribution_without_a_rule_is_named_as_scipy_holds_it(mode):
    with pytest.raises(srcgrad.MissingRuleError) as info:
        if mode == "grad":
            srcgrad.grad(lognormal_tail)(T)
        else:
            srcgrad.jvp(lognormal_tail, (T,), (T,))
    message = info.value.message
    assert "rule for 'scipy.stats.lognorm.logpdf'" in message
    assert "_distn_infrastructure" not in message
    assert info.value.lineno == lognormal_tail.__code__.co_firstlineno + 1
