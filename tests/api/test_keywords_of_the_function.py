"""Keywords for the differentiated function's other parameters, given to
hvp, hessian, jacobian and vjp (outside tester T3, F3-11).

``grad(f)(x, n=2)`` takes them; ``hvp(f)(x, v, n=2)``, ``hessian(f)(x, n=2)``
and ``jacobian(...)(x, n=2)`` raised a raw TypeError about srcgrad's own
``Derivative.__call__``, and ``vjp(f, x, n=2)`` one about ``vjp()``.  vjp now
differentiates ``functools.partial(f, n=2)``; the others say, as a
SrcGradError, to pass the arguments in order or differentiate the partial.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import srcgrad

X = np.array([0.3, -0.7])


def f(x, scale=2.0, n=3):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x ** 2) * scale
    return s


def test_vjp_takes_the_functions_keywords():
    value, pullback = srcgrad.vjp(f, X, n=2)
    assert value == f(X, n=2)
    (g,) = pullback(1.0)
    np.testing.assert_allclose(g, 8.0 * X)


@pytest.mark.parametrize("call", [
    lambda: srcgrad.hvp(f)(X, np.ones(2), n=2),
    lambda: srcgrad.hessian(f)(X, n=2),
    lambda: srcgrad.jacobian(srcgrad.grad(f))(X, n=2),
], ids=["hvp", "hessian", "jacobian"])
def test_the_others_say_what_to_do(call):
    with pytest.raises(srcgrad.SrcGradError, match="by position only") as info:
        call()
    assert "'n'" in info.value.message


def test_what_they_say_works():
    np.testing.assert_allclose(srcgrad.hvp(functools.partial(f, n=2))(X, np.ones(2)), [8.0, 8.0])
    np.testing.assert_allclose(srcgrad.hessian(f)(X, 2.0, 2), 8.0 * np.eye(2))
