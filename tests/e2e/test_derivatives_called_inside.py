"""A derivative srcgrad made (``srcgrad.hessian(nll)``, ``hvp``,
``jacobian``) called inside the function differentiated (review s37 R5-16):
a Laplace evidence's ``log det H(w)``, a Newton step.  Its derivative is one
order higher (a third derivative for a Hessian), which srcgrad computes as a
dense tensor (``jacobian(hessian(f))``), not through the call.  The refusal
spoke of "library code without a rule" and "a spline's" derivative; now it
says what the object is, why, and what computes that derivative.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


def nll(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * w @ w


H_OF = srcgrad.hessian(nll)
HVP_OF = srcgrad.hvp(nll)


def laplace_evidence(w, X, y):
    H = H_OF(w, X, y)
    s, ld = np.linalg.slogdet(H)
    return nll(w, X, y) + 0.5 * ld


def curvature_along(w, X, y):
    return np.sum(HVP_OF(w, X, y, w))


RS = np.random.RandomState(0)
X = RS.randn(6, 2)
Y = (RS.rand(6) > 0.5) * 1.0
W = RS.randn(2) * 0.3


@pytest.mark.parametrize("fn, name, what, kind", [
    (laplace_evidence, "H_OF", "the Hessian", "hessian"),
    (curvature_along, "HVP_OF", "the Hessian-vector product", "hvp"),
])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_derivative_called_inside_is_refused_saying_why(fn, name, what, kind, mode):
    with pytest.raises(srcgrad.MissingRuleError) as info:
        if mode == "grad":
            srcgrad.grad(fn)(W, X, Y)
        else:
            srcgrad.jvp(fn, (W, X, Y), (np.ones(2), None, None))
    error = info.value
    assert error.message == (
        f"calling '{name}', {what} of nll that srcgrad made (srcgrad.{kind}), with a value "
        f"being differentiated: its derivative is a derivative of nll one order higher (for "
        f"a Hessian, the third), which srcgrad does not take through a call inside another "
        f"function's gradient (a gradient made by srcgrad.grad or value_and_grad is "
        f"differentiated there); srcgrad.jacobian(srcgrad.hessian(nll)) gives it as a dense "
        f"tensor, to combine by hand (d log det H = trace(H^-1 dH)), or wrap the argument "
        f"in srcgrad.stop_gradient if no gradient should flow through the call")
    assert error.filename == __file__
    assert error.lineno == fn.__code__.co_firstlineno + 1
    assert "spline" not in error.message


def test_what_the_message_points_at_gives_the_derivative():
    # d/dw 0.5 log det H(w) = 0.5 trace(H^-1 dH/dw_k), from the third-derivative tensor
    T = srcgrad.jacobian(srcgrad.hessian(nll))(W, X, Y)
    H = H_OF(W, X, Y)
    got = srcgrad.grad(nll)(W, X, Y) + 0.5 * np.einsum("ij,jik->k", np.linalg.inv(H), T)
    eps = 1e-6
    want = [(laplace_evidence(W + eps * e, X, Y) - laplace_evidence(W - eps * e, X, Y))
            / (2 * eps) for e in np.eye(2)]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8)
