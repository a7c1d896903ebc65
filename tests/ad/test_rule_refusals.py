"""A rule's refusal of the arguments it has no derivative for (``assert`` in
its code: np.pad's maximum mode, np.linalg.qr's complete mode) is a located
MissingRuleError at compile time where the call's literals decide it, and a
``raise`` in the generated code where the code's values do: never an
``assert`` there, which ``python -O`` strips (the tangent of np.pad's maximum
mode was then silently wrong, reviewer s33 F25)."""

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import MissingRuleError

X = np.array([0.3, -1.2, 2.0, 0.5, 0.9])
T = np.array([1.0, -2.0, 0.5, 3.0, -1.0])
MODE = "maximum"


def padded_max(x):
    return np.sum(np.pad(x, (2, 3), mode="maximum") * np.arange(10.0))


def padded_by(x):
    m = MODE if x[0] > 10.0 else "edge"
    return np.sum(np.pad(x, (2, 3), mode=m) * np.arange(10.0))


def qr_complete(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(r * r)


@pytest.mark.parametrize("transform", ["jvp", "hvp", "grad"])
def test_a_literal_refused_where_the_call_is(transform):
    with pytest.raises(MissingRuleError) as info:
        if transform == "jvp":
            srcgrad.jvp(padded_max, wrt=0)(X, T)
        elif transform == "hvp":
            srcgrad.hvp(padded_max)(X, T)
        else:
            srcgrad.grad(padded_max)(X)
    assert info.value.lineno == padded_max.__code__.co_firstlineno + 1
    assert "np.pad" in str(info.value)


def test_qr_mode_refused_in_forward_mode():
    a = np.arange(12.0).reshape(4, 3) + np.eye(4, 3)
    with pytest.raises(MissingRuleError) as info:
        srcgrad.jvp(qr_complete, wrt=0)(a, np.ones_like(a))
    assert info.value.lineno == qr_complete.__code__.co_firstlineno + 1


def test_a_mode_decided_as_the_code_runs_raises_there():
    jvp = srcgrad.jvp(padded_by, wrt=0)
    assert "assert" not in jvp.source
    assert "raise error_at('MissingRuleError'" in jvp.source
    value, tangent = jvp(X, T)  # the edge mode: a tangent
    h = 1e-6
    expected = (padded_by(X + h * T) - padded_by(X - h * T)) / (2 * h)
    assert value == padded_by(X)
    assert tangent == pytest.approx(expected, rel=1e-7)
    with pytest.raises(MissingRuleError, match="np.pad"):
        jvp(X + 20.0, T)  # the maximum mode: refused, with or without -O
