"""Dataclasses built inside the differentiated function (an outside tester's finding).

``m = Lin(theta[:2], theta[2])``, ``s = State(pos, vel)`` in a simulator's
loop, a list of layers built from parameters: a dataclass whose ``__init__``
``@dataclass`` wrote only stores its arguments, so building one is a display
of its fields (srcgrad/normalize/records.py, the primitive ``BUILD_RECORD``).
It was refused with "no adjoint rule for 'Lin' ... register one with
srcgrad.register_vjp".  Each program runs under every policy (value bit for
bit, gradient against differences), in forward mode, against autograd, and
the smooth ones for hvp; the cases cover a loop, a branch, a helper given the
object, methods of the object, fields named like an array's attributes
(``T``, ``shape``), defaults and ``default_factory``.  A class whose
``__init__`` does more (its own, a ``__post_init__``) stays refused, with a
message that says what to write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import autograd
import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad


@dataclass
class Lin:
    w: np.ndarray
    c: float = 0.0

    def predict(self, x):
        return self.w * x + self.c


@dataclass(frozen=True)
class State:
    pos: np.ndarray
    vel: np.ndarray


@dataclass(frozen=True, slots=True)
class Thermo:
    T: np.ndarray
    shape: float

    def energy(self):
        return np.sum(self.T ** 2) * self.shape


@dataclass
class Scaled:
    w: np.ndarray
    scales: list = field(default_factory=lambda: [1.0, 2.0])


@dataclass
class Doubled:
    w: np.ndarray

    def __post_init__(self):
        self.w = self.w * 2.0


class Plain:
    def __init__(self, w):
        self.w = w


def fields_read(th, x):
    m = Lin(th[:2], th[2])
    return np.sum((m.w * x + m.c) ** 2)


def by_keyword_with_method(th, x):
    m = Lin(c=th[2], w=th[:2])
    return np.sum(np.tanh(m.predict(x)))


def loss(m, x):
    return np.sum(m.predict(x) ** 2)


def given_to_helper(th, x):
    m = Lin(th[:2] * 2.0, th[2])
    return loss(m, x) + loss(Lin(th[:2], 1.0), x)


def simulated(th, x):
    s = State(th[:2], x * 1.0)
    for i in range(5):
        s = State(s.pos + 0.1 * s.vel, s.vel - 0.1 * np.sin(s.pos))
        if i % 2 == 0:
            s = State(s.pos * th[2], s.vel)
    return np.sum(s.pos ** 2) + np.sum(s.vel)


def fields_named_like_attributes(th, x):
    t = Thermo(th[:2] * x, th[2])
    return t.energy() + np.sum(t.T) * t.shape


def chosen_in_branch(th, x):
    if th[2] > 0:
        m = Lin(th[:2], th[2])
    else:
        m = Lin(-th[:2])
    return np.sum(m.predict(x) ** 2)


def layers_in_a_list(th, x):
    ms = []
    for k in range(3):
        ms.append(Lin(th[:2] * (k + 1), th[2]))
    total = 0.0
    for m in ms:
        total = total + np.sum(m.predict(x) ** 2)
    return total + sum(np.sum(m.w) for m in [Lin(th[:2] * 0.5)])


def factory_default(th, x):
    m = Scaled(th[:2] * x)
    return np.sum(m.w ** 2) * m.scales[1] + th[2]


PROGRAMS = [fields_read, by_keyword_with_method, given_to_helper, simulated,
            fields_named_like_attributes, chosen_in_branch, layers_in_a_list, factory_default]
TH = np.array([1.0, 2.0, 0.5])
X = np.array([0.3, -0.7])


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_built_inside_every_policy_and_jvp(fn):
    th, x = TH.copy(), X.copy()
    grad = check(fn, (th, x))
    assert np.array_equal(th, TH) and np.array_equal(x, X)
    assert_close(grad, autograd.grad(fn)(TH.copy(), X.copy()), what=f"{fn.__name__}, autograd")


@pytest.mark.parametrize("fn", [fields_read, given_to_helper, simulated, chosen_in_branch],
                         ids=lambda f: f.__name__)
def test_built_inside_hvp(fn):
    v = np.array([0.5, -1.0, 2.0])
    eps = 1e-5
    want = (srcgrad.grad(fn)(TH + eps * v, X) - srcgrad.grad(fn)(TH - eps * v, X)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(TH, X, v), want, rtol=1e-5, atol=1e-7, what=fn.__name__)


def test_generated_code_builds_the_object():
    source = srcgrad.grad(fields_read).source
    assert "m = Lin(th[:2], th[2])" in source
    assert "field_cotangents(d_m, m)" in source


def post_init(th, x):
    m = Doubled(th[:2])
    return np.sum(m.w * x)


def own_init(th, x):
    m = Plain(th[:2])
    return np.sum(m.w * x)


@pytest.mark.parametrize("fn,name,why", [
    (post_init, "dataclass Doubled", "Doubled has a __post_init__"),  # (a dataclass already:
    (own_init, "class Plain", "make Plain such a @dataclass")])     # the reason, not @dataclass)
def test_init_that_does_more_is_refused_saying_what_to_write(fn, name, why):
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(fn)(TH, X)
    message = str(info.value)
    assert name in message and why in message and "build it outside and pass it in" in message
    assert "register_vjp" not in message
    assert info.value.lineno is not None


@dataclass
class WithConstants:
    w: np.ndarray
    scale: ClassVar[float] = 5.0
    c = 2.0  # a class constant, not a field

    def f(self, x):
        return np.sum(self.w * x) * self.c


def class_constants(th, x):
    m = WithConstants(th[:2])
    return np.sum(m.w) * m.scale + m.f(x) + m.f(th[1:])


def test_class_constants_have_no_tangent():
    """The tangent of a dataclass built in the function is an object of its
    class: reading ``scale`` from it gave the class's 5.0 as a tangent (found
    by review: jvp 15.0 for 5.0, hvp [5, 5, 0] of a linear function)."""
    grad = check(class_constants, (TH.copy(), X))
    assert_close(grad, autograd.grad(class_constants)(TH.copy(), X), what="autograd")
    v, eps = np.ones(3), 1e-5
    want = (srcgrad.grad(class_constants)(TH + eps * v, X)
            - srcgrad.grad(class_constants)(TH - eps * v, X)) / (2 * eps)
    assert_close(srcgrad.hvp(class_constants)(TH, X, v), want, rtol=1e-5, atol=1e-7)


@dataclass
class WithProperties:
    w: np.ndarray
    C = np.array([1.0, -2.0])

    @property
    def energy(self):
        return np.sum(self.w * self.C) ** 2

    @property
    def count(self):
        return len(self.w)


def reads_a_float_property(th, x):
    m = WithProperties(th[:2])
    return m.energy + np.sum(m.w * x)


def reads_a_count_property(th, x):
    m = WithProperties(th[:2])
    return np.sum(m.w * x) * m.count


def test_float_property_refused_in_both_modes():
    """Found by review: jvp read a property (computed by a getter srcgrad does not
    differentiate) from the tangent object -- 0.9675 for -1.5525 -- where grad
    refuses it; both refuse it now, saying what to write."""
    for run in (lambda: srcgrad.grad(reads_a_float_property)(TH, X),
                lambda: srcgrad.jvp(reads_a_float_property, (TH, X), (np.ones(3), np.zeros(2)))):
        with pytest.raises(srcgrad.MissingRuleError, match="property WithProperties.energy"):
            run()


def test_property_giving_no_float_has_no_derivative():
    """A count or a flag read from a property carries no derivative: both modes run it
    (grad refused it before, as if the count could take a gradient)."""
    check(reads_a_count_property, (TH.copy(), X))
