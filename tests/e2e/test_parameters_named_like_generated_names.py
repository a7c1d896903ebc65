"""A parameter named ``np`` or ``math``, the names the generated code calls modules by (review s37 R5-3).

``def f(x, np=4)`` (np: a number of points, NumPy imported as ``N``) shadowed
the generated code's ``np``: hvp and hessian gave zeros, silently; grad and
jvp raised raw AttributeErrors ('int' object has no attribute 'multiply').
The program now calls such a parameter ``np_1``; the generated function
takes ``np`` (a keyword call works), copies it on its first line and reaches
NumPy as ``numpy`` (normalize/module_parameters.py).  Each: value bit for bit
under every policy and in jvp, gradient and tangent against differences, and
the Hessian-vector product against the analytic one.
"""

from __future__ import annotations

import math as M

import numpy as N
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

X = N.array([0.37, -0.81, 1.23])
V = N.array([1.0, 0.5, -0.2])


def count_named_np(x, np=4):
    return N.sum(N.tanh(x) ** 2) * np


def hvp_of_count(x, v, np=4):
    t = N.tanh(x)
    return np * (2 * (1 - t ** 2) ** 2 - 4 * t ** 2 * (1 - t ** 2)) * v


def numpy_as_np_default(x, np=N):  # an array-namespace parameter
    return np.sum(np.cos(x) * x)


def differentiated_np(np, x):
    return N.sum(N.sin(x) * np ** 2)


def nested_reads(x, np=3.0):
    scale = lambda v: v * np  # noqa: E731
    ys = [scale(v) for v in x]

    def inner(np):  # binds np itself: its own
        return np * 2.0
    return N.sum(N.exp(N.stack(ys))) + inner(1.5) + sum(np * v for v in x)


def named_math(x, math=2.0):
    return N.sum(x ** 2) * math + M.pi


def _helper(v, np=2.0):
    return N.tanh(v) * np


def calls_a_helper(x):
    return N.sum(_helper(x) ** 2)


@pytest.mark.parametrize("fn", [count_named_np, numpy_as_np_default, nested_reads, named_math,
                                calls_a_helper])
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (X.copy(),))


def test_a_differentiated_parameter_named_np():
    check_every_policy(differentiated_np, (1.7, X.copy()))
    check_every_policy(differentiated_np, (1.7, X.copy()), wrt=1)


def test_hvp_and_hessian_of_a_count_named_np():
    assert_close(srcgrad.hvp(count_named_np)(X, V), hvp_of_count(X, V), rtol=1e-10)
    assert_close(srcgrad.hessian(count_named_np)(X) @ V, hvp_of_count(X, V), rtol=1e-10)
    assert_close(srcgrad.hvp(count_named_np)(X, 3, V), hvp_of_count(X, V, 3), rtol=1e-10)


def test_hvp_of_numpy_passed_as_np():
    # d^2/dx^2 of x cos x: -2 sin x - x cos x
    assert_close(srcgrad.hvp(numpy_as_np_default)(X, V), (-2 * N.sin(X) - X * N.cos(X)) * V,
                 rtol=1e-10)


def test_the_parameter_keeps_its_name_for_keyword_calls():
    g = srcgrad.grad(count_named_np)
    assert "def grad_count_named_np(x, np=4):" in g.source
    assert_close(g(X, np=3), g(X, 3))
    assert_close(g(X, np=3), 0.75 * g(X), rtol=1e-12)
    value, tangent = srcgrad.jvp(count_named_np, (X, 3), (V, None))
    assert value == count_named_np(X, 3)
