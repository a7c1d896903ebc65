"""The gradient with respect to an object whose attributes are computed when
read (review s35 R3-14).

A ``@property`` was refused ("computed by a getter that srcgrad does not
differentiate"); ``__getattr__`` (a constrained-parameter wrapper, ``o.W`` is
``exp(raw["W"])``) and other descriptors (``W = ExpParam()``) were not: the
gradient of the stored attributes they read was silently zero.  They are
refused the same way, located at the code that computes them; a stored
attribute, a class constant and the gradient with respect to other arguments
are followed.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad

X = np.array([0.3, -0.5, 0.9])


class Positive:
    def __init__(self, raw):
        self.raw = raw

    def __getattr__(self, name):
        if name.startswith("__") or name == "raw":
            raise AttributeError(name)
        return np.exp(self.raw[name])


class ExpParam:
    def __get__(self, obj, objtype=None):
        return np.exp(obj.raw) * 3.0


class WithDescriptor:
    W = ExpParam()
    scale = 2.0

    def __init__(self, raw):
        self.raw = raw


def through_getattr(o, x):
    return np.sum(o.W * x) + np.sum(o.b)


def through_descriptor(o, x):
    return np.sum(o.W * x) * o.scale


def stored_only(o, x):
    return np.sum(np.exp(o.raw) * x) * o.scale


@pytest.mark.parametrize("fn, obj, where", [
    (through_getattr, Positive({"W": np.array([0.1, 0.2, 0.3]), "b": np.array([0.5])}),
     "def __getattr__"),
    (through_descriptor, WithDescriptor(np.array([0.1, 0.2, 0.3])), "def __get__")],
    ids=["getattr", "descriptor"])
def test_the_gradient_through_a_computed_attribute_is_refused_located(fn, obj, where):
    with pytest.raises(srcgrad.MissingRuleError, match=r"computes \.[Wb] when it is read") as err:
        srcgrad.grad(fn, wrt=0)(obj, X)
    assert where in str(err.value)


def test_other_arguments_and_stored_attributes_are_followed():
    o = WithDescriptor(np.array([0.1, 0.2, 0.3]))
    check_every_policy(through_descriptor, (o, X), 1)
    g = srcgrad.grad(stored_only, wrt=0)(o, X)
    np.testing.assert_allclose(g.raw, np.exp(o.raw) * X * 2.0)


def test_the_tangent_through_a_computed_attribute_is_refused_located():
    """The forward-mode half of R3-14: a tangent on ``raw`` gave 0.0 through the
    descriptor (differences: 2.807)."""
    o = WithDescriptor(np.array([0.1, 0.2, 0.3]))
    with pytest.raises(srcgrad.MissingRuleError, match=r"computes \.W when it is read"):
        srcgrad.jvp(through_descriptor, (o, X), (WithDescriptor(np.ones(3)), None))
