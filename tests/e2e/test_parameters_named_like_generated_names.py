"""A parameter named like what the generated code calls by name (review s37 R5-3, R5-4).

``def f(x, np=4)`` (np: a number of points, NumPy imported as ``N``) shadowed
the generated code's ``np``: hvp and hessian gave zeros, silently; grad and
jvp raised raw AttributeErrors ('int' object has no attribute 'multiply').
A parameter named like a runtime helper (``psi``, the digamma gammaln's
adjoint calls, for a wave function; ``expand``, ``signum``) or a builtin the
code calls (``len``) likewise raised raw TypeErrors, in the function and in
a helper it calls, a method, a keyword-only parameter.  The program now
calls such a parameter ``np_1``; where its code calls what the name means,
the generated function takes ``np`` (a keyword call works), copies it on its
first line and reaches NumPy as ``numpy`` (``psi as psi_2``,
``builtins.len``) (normalize/module_parameters.py).  Each: value bit for bit
under every policy and in jvp, gradient and tangent against differences, and
Hessian-vector products against analytic ones.
"""

from __future__ import annotations

import importlib.util
import math as M

import numpy as N
import pytest
import scipy.special as sp
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


def gamma_normaliser(psi, x):  # variational parameters named psi (R5-4)
    a = N.exp(psi)
    return N.sum(sp.gammaln(a) - (a - 1) * N.log(x) + x)


def hvp_of_gamma_normaliser(psi, x, v):
    a = N.exp(psi)
    return (a * (sp.digamma(a) - N.log(x)) + a ** 2 * sp.polygamma(1, a)) * v


def wave_density(signum, v):  # a wave function named signum: np.abs's adjoint calls signum
    return N.sum(N.abs(signum) ** 2 * v)


def spread(x, expand=True):  # a flag named like the helper broadcasting's tangent calls
    y = x[:, None] * N.ones((1, 3)) if expand else x
    return N.sum(N.sin(y))


def _helper_with_psi(x, psi):
    return sp.gammaln(N.exp(x)) * psi


def calls_a_helper_with_psi(x):
    return N.sum(_helper_with_psi(x, 2.0))


def seeded(x, *, grad_seed=1.5):
    return N.sum(N.sin(x)) * grad_seed


def counted(x, len=2.0):  # the loop's own len
    s = 0.0
    for v in [x[0], x[1]]:
        s = s + v ** 2
    return s * len


def switched_loss(x, type="l2"):  # noqa: A002 (R5-10: the loop's guards call type)
    h = x
    for i in range(3):
        h = N.tanh(h) * 1.1
    if type == "l2":
        return N.sum(h ** 2)
    return N.sum(N.abs(h))


def split_at(x, slice=2):  # noqa: A002 (the adjoint of x[:k] calls slice)
    return N.sum(x[:slice] ** 2) + N.sum(x[slice:] ** 3)


def first_terms(x, len=3):  # noqa: A002 (checkpointing and hvp call len)
    out = []
    for i in range(len):
        out.append(x[i] ** 2)
    return sum(out)


def reversible(x, reversed=False, list=None, tuple=None, isinstance=None):  # noqa: A002
    h = x
    for t in range(4):
        h = N.tanh(h * 1.3)
    return N.sum(h)


BUILTIN_NAMED = [switched_loss, split_at, first_terms, reversible]


class Model:
    def loss(self, psi):
        return N.sum(sp.gammaln(N.exp(psi)))

    def loss_np(self, x, np=3):
        return N.sum(N.tanh(x) ** 2) * np


@pytest.mark.parametrize("fn", [count_named_np, numpy_as_np_default, nested_reads, named_math,
                                calls_a_helper, spread, calls_a_helper_with_psi, seeded, counted,
                                Model().loss, Model().loss_np, *BUILTIN_NAMED])
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


@pytest.mark.parametrize("fn, x", [(gamma_normaliser, X), (wave_density, X)])
def test_a_differentiated_parameter_named_like_a_helper(fn, x):
    check_every_policy(fn, (x.copy(), N.array([1.0, 2.0, 0.5])))


def test_hvp_of_a_parameter_named_psi():
    y = N.array([1.0, 2.0, 0.5])
    assert_close(srcgrad.hvp(gamma_normaliser)(X, y, V), hvp_of_gamma_normaliser(X, y, V),
                 rtol=1e-9)
    # a method's: hvp zeros before (R5-4 via a method)
    assert_close(srcgrad.hvp(Model().loss_np)(X, V), hvp_of_count(X, V, 3), rtol=1e-10)


def test_the_helper_is_imported_under_another_name_and_exports(tmp_path):
    g = srcgrad.grad(wave_density)
    assert "def grad_wave_density(signum, v):" in g.source
    assert "signum as signum_" in g.source
    path = tmp_path / "exported.py"
    srcgrad.export(str(path), g)
    spec = importlib.util.spec_from_file_location("exported_wave", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    y = N.array([1.0, 2.0, 0.5])
    assert_close(module.grad_wave_density(X, y), 2 * X * y, rtol=1e-12)


def scaled_by_max(x, max=2.0):  # noqa: A002
    return x * max


def test_code_that_calls_nothing_by_the_name_keeps_it():
    source = srcgrad.grad(scaled_by_max).source
    assert "def grad_scaled_by_max(x, max=2.0):" in source and "max_1" not in source
    assert "t1 = x * max" in source
    assert srcgrad.grad(scaled_by_max)(3.0) == 2.0


@pytest.mark.parametrize("fn", BUILTIN_NAMED)
def test_hvp_of_parameters_named_like_builtins(fn):  # R5-10: raw TypeErrors
    x = N.array([0.37, -0.81, 1.23, 0.2])
    v = N.array([1.0, 0.5, -0.2, 0.3])
    g, eps = srcgrad.grad(fn), 1e-6
    assert_close(srcgrad.hvp(fn)(x, v), (g(x + eps * v) - g(x - eps * v)) / (2 * eps),
                 rtol=1e-5, atol=1e-7)


def np_and_numpy(x, np=3.0, numpy=None):  # the alias NumPy is reached by is a parameter too
    return N.sum(N.tanh(x * 2.0) * np)


def len_and_builtins(x, len=2, builtins=None):  # noqa: A002
    acc = 0.0
    for v in x:
        acc = acc + N.sin(v) * len
    return acc + N.sum(x[:1] ** 2)


@pytest.mark.parametrize("fn", [np_and_numpy, len_and_builtins])
def test_the_alias_is_no_other_parameter(fn):  # diff review D-3 (R5-24): hvp zeros before
    x, v, eps = N.array([0.3, 0.5]), N.array([1.0, -0.5]), 1e-6
    check_every_policy(fn, (x.copy(),))
    g = srcgrad.grad(fn)
    assert_close(srcgrad.hvp(fn)(x, v), (g(x + eps * v) - g(x - eps * v)) / (2 * eps),
                 rtol=1e-5, atol=1e-7)
