"""Every transformation takes a functools.partial, as grad does.

``jvp``, ``vjp``, ``hvp``, ``hessian`` and ``jacobian`` refused a partial
(outside tester; API.md says fn may be one).  They now differentiate the def
the partial stands for (api/partials.py): its fixed arguments are constants,
its keywords passed as the partial passes them."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad

W = np.array([0.3, -0.7, 1.1])


def scaled(a, w, power=2.0):
    return a * np.sum(np.sin(w) * w ** power)


PARTIALS = [functools.partial(scaled, 2.5), functools.partial(scaled, 2.5, power=3.0)]


def _fd_grad(p, w):
    return numeric_grad(p, [w], 0)


@pytest.mark.parametrize("p", PARTIALS, ids=["positional", "keyword"])
def test_every_transformation_takes_a_partial(p):
    g = srcgrad.grad(p)(W)
    assert_close(g, _fd_grad(p, W), what="grad")
    value, tangent = srcgrad.jvp(p, (W,), (np.ones(3),))
    assert value == p(W)
    assert_close(tangent, np.sum(g), what="jvp")
    value, pullback = srcgrad.vjp(p, W)
    assert_close(pullback(1.0)[0], g, what="vjp")
    H = srcgrad.hessian(p)(W)
    step = 1e-5
    expected = np.stack([(srcgrad.grad(p)(W + step * e) - srcgrad.grad(p)(W - step * e))
                         / (2 * step) for e in np.eye(3)], axis=-1)
    assert_close(H, expected, what="hessian", rtol=1e-5)
    assert_close(srcgrad.hvp(p)(W, np.ones(3)), H @ np.ones(3), what="hvp")
    assert_close(srcgrad.jacobian(p)(W), g, what="jacobian")


LAMBDA = functools.partial(lambda a, w: a * np.sum(np.tanh(w) * w), 1.5)  # noqa: E731


def test_a_partial_of_a_lambda():
    """A lambda's name, '<lambda>', is no name a def can call it by: the def the
    partial stands for raised a raw SyntaxError in jvp, vjp, hessian, jacobian."""
    g = srcgrad.grad(LAMBDA)(W)
    assert_close(g, _fd_grad(LAMBDA, W), what="grad")
    assert_close(srcgrad.jacobian(LAMBDA)(W), g, what="jacobian")
    value, tangent = srcgrad.jvp(LAMBDA, (W,), (np.ones(3),))
    assert value == LAMBDA(W)
    assert_close(tangent, np.sum(g), what="jvp")
    hessian = srcgrad.hessian(LAMBDA)(W)
    columns = [(srcgrad.grad(LAMBDA)(W + 1e-5 * e) - srcgrad.grad(LAMBDA)(W - 1e-5 * e)) / 2e-5
               for e in np.eye(3)]
    assert_close(hessian, np.array(columns).T, rtol=1e-4, atol=1e-6, what="hessian")


SHADOWED = functools.partial(lambda w, fn: np.sum(np.sin(fn) * w), 2.0)  # noqa: E731


def test_a_partial_whose_parameter_is_named_like_the_function():
    """Found by review: the def written for the partial called its function by the
    fallback name 'fn', which its own parameter 'fn' shadowed (refused in jvp as a
    function parameter)."""
    g = srcgrad.grad(SHADOWED)(W)
    assert_close(g, _fd_grad(SHADOWED, W), what="grad")
    value, tangent = srcgrad.jvp(SHADOWED, (W,), (np.ones(3),))
    assert value == SHADOWED(W)
    assert_close(tangent, np.sum(g), what="jvp")
