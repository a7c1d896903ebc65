"""scipy.stats densities review s37 found refused (R5-13): ``expon``,
``laplace`` and ``cauchy`` ``logpdf`` in x, loc and scale, ``binom.logpmf``
in p.  The message named SciPy's private base class's method
('scipy.stats._distn_infrastructure.rv_continuous.logpdf'); a distribution
still without a rule is now named as SciPy holds it (rules/registry.display_name).
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad

st = pytest.importorskip("scipy.stats")

T = np.array([0.3, -0.4])


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
