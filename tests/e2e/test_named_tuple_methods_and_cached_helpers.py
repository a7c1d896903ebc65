"""Methods of a ``typing.NamedTuple`` argument and helpers cached with
``functools.lru_cache`` / ``functools.cache`` (review s37 R5-11).

- ``class Params(NamedTuple): W; b; def apply(self, x): ...`` with
  ``loss(p, x) = np.sum(p.apply(x) ** 2)`` was refused: "no adjoint rule for
  'p.apply(...)': srcgrad finds the methods of an object by its class where it
  knows the class when it compiles -- an argument of the function
  differentiated" -- p was one.  Named tuples were left out of the argument
  classes whose methods are resolved (api/arguments.object_classes); dataclass
  and plain-class arguments were not.
- a memoised coefficient helper (``@functools.lru_cache def scaled(a, n)``)
  given a differentiated float: "no adjoint rule for '...scaled'".  A call of
  the cache gives what the function it caches computes, so srcgrad now
  differentiates that function (normalize/calls.py).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import pytest
from numeric import assert_close, check_every_policy, numeric_grad

import srcgrad


class Params(NamedTuple):
    W: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.tanh(x @ self.W + self.b)

    def penalty(self):
        return 0.1 * np.sum(self.W ** 2)


def loss(p, x):
    return np.sum(p.apply(x) ** 2) + p.penalty()


def loss_in_loop(x, p):
    h = x
    for _ in range(2):
        h = p.apply(h @ np.ones((2, 3)) * 0.5)
    return np.sum(h * h)


@functools.lru_cache(maxsize=None)
def scaled(a, n):
    return a / (n + 1) ** 2


@functools.cache
def weight(a, n):
    return np.sin(a) * n + a ** 2


def series(a):
    s = 0.0
    for i in range(4):
        s += scaled(a, i) * np.sin(a * i)
        if i % 2:
            s = s + weight(a, i)
    return s


def series_of_array(x):
    return np.sum(np.tanh(x) * scaled(float(x[0]), 3)) + scaled(2.0, 1) * np.sum(x)


RS = np.random.RandomState(0)
P = Params(RS.randn(3, 2), RS.randn(2))
X = RS.randn(4, 3)


def _flat_grad(fn, p, x):
    """The gradient with respect to a Params, by differences on each field."""
    fields = []
    for k, field in enumerate(p):
        def of_field(v, k=k):
            return fn(Params(*[v if j == k else f for j, f in enumerate(p)]), x)
        fields.append(numeric_grad(of_field, [field], 0))
    return Params(*fields)


def test_methods_of_a_named_tuple_argument_wrt_the_tuple():
    for policy in ["save", "recompute", "sqrt", ("revolve", 2)]:
        got = srcgrad.grad(loss, policy=policy)(P, X)
        assert isinstance(got, Params)
        want = _flat_grad(loss, P, X)
        for g, w in zip(got, want):
            assert_close(g, w, rtol=1e-6, atol=1e-8)
    value, _ = srcgrad.value_and_grad(loss)(P, X)
    assert value == loss(P, X)


@pytest.mark.parametrize("fn, args", [(loss, (P, X)), (loss_in_loop, (X[:, :2], P))])
def test_methods_of_a_named_tuple_argument_wrt_other_arguments(fn, args):
    wrt = 1 if fn is loss else 0
    check_every_policy(fn, args, wrt)


@pytest.mark.parametrize("fn, arg", [(series, 0.7), (series_of_array, np.array([0.3, -0.4]))])
def test_a_cached_helper_is_differentiated_as_the_function_it_caches(fn, arg):
    check_every_policy(fn, (arg,), 0)


def test_hvp_through_a_cached_helper():
    second = srcgrad.grad(srcgrad.grad(series))(0.7)
    eps = 1e-5
    first = srcgrad.grad(series)
    assert_close(second, (first(0.7 + eps) - first(0.7 - eps)) / (2 * eps), rtol=1e-6,
                 atol=1e-8)


def test_a_method_of_an_argument_compiled_alone_says_why_without_contradiction():
    # g.source compiles loss alone, where p's class is not known: the message used to
    # say the class is known for "an argument of the function differentiated"
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(loss).source  # noqa: B018 - the property compiles
    error = info.value
    assert "here the code was compiled without such an object ('.source', srcgrad show " \
           "and export compile the function alone" in error.message
    assert "grad(loss)(..., p, ...)" in error.message
    assert error.filename == __file__ and error.lineno == loss.__code__.co_firstlineno + 1
