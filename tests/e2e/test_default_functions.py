"""A helper whose parameter defaults to a function calls that function.

``def net(params, x, last=softplus)`` called ``net(params, x)`` calls
``softplus``; the look at what called helpers change took such a call for
one of an unknown function, which may change what it is given, and refused
a caller reading ``x`` afterwards (regression of this session: the corpus
case function_valued_defaults).  A default that changes its argument in
place is followed as such, and a function the call passes still wins."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.6, 0.9])


def _softplus(z):
    return np.log1p(np.exp(z))


def _halve_first(z):
    z[0] = z[0] * 0.5
    return z


def _net(x, act=np.tanh, last=_softplus):
    return last(act(x * 2.0))


def _apply(x, g=_halve_first):
    return g(x)


def _through(x, last=_softplus):
    return last(x)


def pure_defaults(x):
    return np.sum(_net(x)) + np.sum(x * x)


def updating_default(x):
    y = x * 1.0
    s = np.sum(_apply(y))
    return s + np.sum(y)


def passed_over_default(x):
    y = x * 1.0
    s = np.sum(_through(y, last=_halve_first))
    return s + np.sum(y)


def default_on_a_new_array(x):  # the default updates what act made, not y
    y = x * 1.0
    s = np.sum(_net(y, last=_halve_first))
    return s + np.sum(y)


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)])
@pytest.mark.parametrize("fn", [pure_defaults, default_on_a_new_array])
def test_a_pure_default_is_followed(fn, policy):
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(X.copy())
    assert_bit_identical(value, fn(X))
    assert_close(grad, numeric_grad(fn, [X], 0), what="gradient")


@pytest.mark.parametrize("fn", [updating_default, passed_over_default])
def test_a_default_or_passed_function_that_updates_is_refused(fn):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(fn)(X.copy())
    assert info.value.lineno and "in place" in info.value.message
