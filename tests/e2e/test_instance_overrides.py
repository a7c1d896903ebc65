"""An attribute of an object that hides a method of its class (review s35 R3-19).

``layer.activation = np.sin`` (or a lambda, a partial) where ``Layer`` defines
``activation``: Python calls the object's own attribute, srcgrad resolved the
call by the class and differentiated ``Layer.activation`` -- value and gradient
of tanh where the function computes sin, silently.  The call is now preceded
by a check, in the generated code, that the object holds no attribute of that
name: a SrcGradError located at the call, raised when an object that does is
passed (also after the code was made for one that did not).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad

W = np.array([[0.5, -0.3], [0.1, 0.8], [-0.4, 0.3]])
X = np.array([0.3, -0.5, 0.9])


class Layer:
    def __init__(self, w):
        self.w = w

    def activation(self, z):
        return np.tanh(z)

    def __call__(self, x):
        return self.activation(x @ self.w)


def through_call(layer, x):
    return np.sum(layer(x) ** 2)


def direct(layer, x):
    return np.sum(layer.activation(x @ layer.w) ** 2)


def in_a_loop(layer, x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(layer(x * (k + 1)))
    return total


OVERRIDES = {"ufunc": np.sin, "lambda": lambda z: z ** 3,
             "partial": functools.partial(np.multiply, 2.0)}


@pytest.mark.parametrize("fn", [through_call, direct, in_a_loop], ids=lambda f: f.__name__)
def test_the_class_method_is_followed_where_nothing_hides_it(fn):
    check_every_policy(fn, (Layer(W), X), 1)


@pytest.mark.parametrize("kind", sorted(OVERRIDES))
@pytest.mark.parametrize("fn", [through_call, direct, in_a_loop], ids=lambda f: f.__name__)
def test_an_attribute_hiding_the_method_is_refused_located(fn, kind):
    layer = Layer(W)
    layer.activation = OVERRIDES[kind]
    with pytest.raises(srcgrad.SrcGradError, match="is set on the object itself") as err:
        srcgrad.value_and_grad(fn, wrt=1)(layer, X)
    assert "test_instance_overrides.py" in str(err.value)


def test_an_override_set_after_the_code_was_made_is_seen():
    layer = Layer(W)
    g = srcgrad.grad(through_call, wrt=1)
    g(layer, X)                      # compiled, then remembered for these kinds
    layer.activation = np.sin
    with pytest.raises(srcgrad.SrcGradError, match="hides the method Layer.activation"):
        g(layer, X)
