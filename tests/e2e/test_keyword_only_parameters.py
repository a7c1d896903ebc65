"""Keyword-only parameters of the differentiated function (review s33 F13).

``def f(x, *, scale=2.0)`` was refused by the fence ("keyword-only parameters
of the differentiated function are not supported").  Its generated function
takes every parameter by position, in order (``grad_f(x, scale)``), and the
transformation binds each call as Python binds ``f``'s
(api/transforms._by_position): a keyword given, a default left out, a
required keyword-only parameter missing is refused naming ``f``.  grad,
value_and_grad, jvp, vjp and jacobian bind them; hvp and hessian, which do
not, refuse such a function saying to differentiate a ``functools.partial``.
Value bit for bit, gradient against differences under every policy, jvp,
autograd; in a loop, a branch and a helper.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, numeric_grad

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.3, -1.2, 2.0])


def kwonly(x, *, scale=2.0):  # the review's
    return np.sum(x * scale) ** 2


def required(x, k=3, *, scale=2.0, shift):
    return np.sum(x ** k * scale + shift)


def in_a_loop(x, *, steps=3, rate=0.5):
    for _ in range(steps):
        x = x - rate * np.sin(x)
    return np.sum(x ** 2)


def in_a_branch(x, *, mode="sin"):
    if mode == "sin":
        return np.sum(np.sin(x))
    return np.sum(np.cos(x) * x)


def helper(x, *, scale):
    return x * scale


def in_a_helper(x, *, scale=1.5):
    return np.sum(helper(x, scale=scale) ** 3)


CASES = [
    (kwonly, {}), (kwonly, {"scale": 3.0}),
    (required, {"shift": 1.0}), (required, {"shift": 1.0, "scale": 0.5}),
    (in_a_loop, {}), (in_a_loop, {"steps": 2, "rate": 0.25}),
    (in_a_branch, {}), (in_a_branch, {"mode": "cos"}),
    (in_a_helper, {}), (in_a_helper, {"scale": -0.5}),
]


@pytest.mark.parametrize("fn,kw", CASES, ids=[f"{f.__name__}-{sorted(k)}" for f, k in CASES])
def test_keywords_bound_as_python_binds_them(fn, kw):
    want = fn(X.copy(), **kw)
    fd = numeric_grad(lambda x: fn(x, **kw), [X], 0)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(X.copy(), **kw)
        assert_bit_identical(value, want, f"{fn.__name__}, {policy!r}")
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, {policy!r}")
        again = srcgrad.grad(fn, policy=policy)(X.copy(), **kw)  # a second call alike
        assert_close(again, grad, rtol=0, atol=0, what="again")
    direction = np.array([1.0, -0.5, 2.0])
    value, tangent = srcgrad.jvp(fn)(X.copy(), direction, **kw)
    assert_bit_identical(value, want, f"{fn.__name__}, jvp")
    assert_close(tangent, fd @ direction, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, jvp")
    value, pullback = srcgrad.vjp(fn, X.copy(), **kw)
    assert_bit_identical(value, want, f"{fn.__name__}, vjp")
    assert_close(pullback(1.0)[0], fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, vjp")
    autograd = pytest.importorskip("autograd")
    assert_close(grad, autograd.grad(fn)(X.copy(), **kw), rtol=1e-10, atol=1e-12,
                 what=f"{fn.__name__}, autograd")


def test_the_keyword_changes_between_calls():
    g = srcgrad.grad(kwonly)
    assert_close(g(X, scale=3.0), numeric_grad(lambda x: kwonly(x, scale=3.0), [X], 0))
    assert_close(g(X), numeric_grad(kwonly, [X], 0))
    assert_close(g(X, scale=-1.0), numeric_grad(lambda x: kwonly(x, scale=-1.0), [X], 0))


def vector(x, *, scale=2.0):
    return np.sin(x) * scale


def test_jacobian_fills_the_default():
    assert_close(srcgrad.jacobian(vector)(X.copy()), np.diag(2.0 * np.cos(X)))


def test_a_missing_keyword_is_refused_naming_the_function():
    with pytest.raises(SrcGradError) as info:
        srcgrad.grad(required)(X.copy())
    assert "required" in str(info.value) and "shift" in str(info.value)


@pytest.mark.parametrize("make", [lambda: srcgrad.hvp(kwonly)(X, np.ones(3)),
                                  lambda: srcgrad.hessian(kwonly)(X, scale=3.0)])
def test_second_order_says_to_use_a_partial(make):
    with pytest.raises(SrcGradError) as info:
        make()
    assert "functools.partial(kwonly" in str(info.value)


def test_second_order_of_the_partial():
    v = np.array([1.0, -0.5, 2.0])
    f = functools.partial(kwonly, scale=3.0)
    eps = 1e-5
    fd = (srcgrad.grad(f)(X + eps * v) - srcgrad.grad(f)(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(f)(X.copy(), v), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [kwonly, in_a_loop, in_a_branch, in_a_helper],
                         ids=lambda f: f.__name__)
def test_jvp_with_primals_fills_the_keyword_only_defaults(fn):
    """Review s35 R3-23: jvp(f, primals, tangents) passed the tangent where the
    generated function takes the keyword-only parameter (a raw TypeError
    'jvp_f4() missing 1 required positional argument: d_x')."""
    v = np.array([1.0, -0.5, 2.0])
    value, tangent = srcgrad.jvp(fn, (X.copy(),), (v,))
    assert_bit_identical(value, fn(X.copy()), fn.__name__)
    eps = 1e-6
    assert_close(tangent, (fn(X + eps * v) - fn(X - eps * v)) / (2 * eps), rtol=1e-6, atol=1e-7)


def test_jvp_with_a_defaulted_positional_and_a_keyword_only_parameter():
    def f3(x, W, b=0.5, *, scale=2.0):
        return np.sum(np.tanh(x @ W + b) ** 2) * scale

    W, v = np.eye(3) * 0.7, np.array([1.0, 0.0, 0.0])
    for primals, tangents in [((X, W), (v, None)), ((X, W, 0.25), (v, None, None))]:
        value, tangent = srcgrad.jvp(f3, primals, tangents)
        assert_bit_identical(value, f3(*primals), "f3")
        eps = 1e-6
        moved = [(X + s * eps * v, *primals[1:]) for s in (1, -1)]
        assert_close(tangent, (f3(*moved[0]) - f3(*moved[1])) / (2 * eps), rtol=1e-6,
                     atol=1e-7)
