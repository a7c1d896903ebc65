"""A class attribute holding a function Python does not bind (review s35 R3-35).

``class M: act = np.tanh`` (or a partial, ``staticmethod(np.tanh)``) and
``self.act(z)``: Python calls ``np.tanh(z)`` -- a ufunc, a builtin or a
partial is no descriptor -- while srcgrad refused it as a method without a
rule.  It is now that function called with the arguments given: value bit
for bit, gradient/jvp against differences under every policy; an object whose
own attribute hides it is refused as for a method (test_instance_overrides.py).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad

W = np.eye(3) * 0.7 + 0.1


class Model:
    act = np.tanh
    scaled = functools.partial(np.multiply, 3.0)
    squash = staticmethod(np.arctan)

    def __init__(self, w):
        self.w = w

    def ufunc(self, x):
        return np.sum(self.act(x @ self.w) ** 2)

    def partial(self, x):
        return np.sum(self.scaled(x @ self.w) ** 2)

    def static(self, x):
        return np.sum(self.squash(x @ self.w))

    def looped(self, x):
        for _ in range(3):
            x = self.act(x @ self.w) + 0.1
        return np.sum(x ** 2)


def through_an_argument(m, x):
    if np.sum(x) > 0:
        return np.sum(m.act(x) * m.scaled(x))
    return np.sum(m.squash(x))


@pytest.mark.parametrize("name", ["ufunc", "partial", "static", "looped"])
def test_a_function_held_by_the_class_is_called_with_the_arguments_given(name):
    check_every_policy(getattr(Model(W), name), (np.array([0.3, -0.5, 0.9]),), 0)


def test_through_an_argument_in_a_branch():
    check_every_policy(through_an_argument, (Model(W), np.array([0.3, -0.5, 0.9])), 1)


def test_an_object_hiding_it_is_refused():
    m = Model(W)
    m.act = np.sin
    with pytest.raises(srcgrad.SrcGradError, match="is set on the object itself"):
        srcgrad.grad(m.ufunc)(np.array([0.3, -0.5, 0.9]))
