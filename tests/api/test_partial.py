"""grad and value_and_grad of a functools.partial (API.md: ``fn`` may be a
partial): the result is called like the partial, ``wrt`` counts the partial's
own arguments, its fixed arguments and keywords are constants."""

import functools

import numpy as np
import pytest

import srcgrad
from srcgrad import SrcGradError


def loss(x, scale, y=1.0):
    return np.sum(np.tanh(x) * scale) * y


X = np.linspace(0.1, 0.5, 3)


def test_keywords_fixed_by_the_partial():
    g = srcgrad.grad(functools.partial(loss, scale=2.0))
    np.testing.assert_array_equal(g(X), srcgrad.grad(loss)(X, 2.0))
    np.testing.assert_array_equal(g(X, y=3.0), srcgrad.grad(loss)(X, 2.0, 3.0))
    assert "def grad_loss(x, scale, y=1.0)" in g.source


def test_positional_arguments_fixed_and_wrt_counted_from_the_partials_own():
    g = srcgrad.grad(functools.partial(loss, X), wrt=0)  # d/d scale
    assert g(2.0) == pytest.approx(np.sum(np.tanh(X)))
    nested = functools.partial(functools.partial(loss, X), 2.0)
    value, d_y = srcgrad.value_and_grad(nested)(3.0)
    assert value == loss(X, 2.0, 3.0)
    assert d_y == pytest.approx(2.0 * np.sum(np.tanh(X)))
    both = srcgrad.grad(functools.partial(loss, X), wrt=(0, 1))(2.0, 3.0)
    assert both == pytest.approx((3.0 * np.sum(np.tanh(X)), 2.0 * np.sum(np.tanh(X))))


def test_the_callers_arrays_are_not_changed_and_check_mode_validates():
    x = X.copy()
    g = srcgrad.grad(functools.partial(loss, scale=2.0), check=True)
    g(x)
    np.testing.assert_array_equal(x, X)


def scaled(x, scale, y):
    return np.sum(np.tanh(x) * scale) * y


def test_other_transformations_say_what_to_write():
    # y is left keyword-only without a default: no def with positional parameters
    # stands for the partial
    with pytest.raises(SrcGradError, match="differentiate scaled itself"):
        srcgrad.jvp(functools.partial(scaled, scale=2.0), (X,), (np.ones(3),))
    with pytest.raises(SrcGradError, match="position >= 0"):
        srcgrad.grad(functools.partial(loss, scale=2.0), wrt=-1)



def test_a_keyword_only_default_left_by_the_partial_is_passed():
    # partial(loss, scale=2.0) leaves y keyword-only with its default 1.0, which the
    # def standing for the partial passes (refused before session 34)
    value, tangent = srcgrad.jvp(functools.partial(loss, scale=2.0), (X,), (np.ones(3),))
    assert value == loss(X, scale=2.0)
    assert tangent == pytest.approx(np.sum(2.0 * (1 - np.tanh(X) ** 2)))
