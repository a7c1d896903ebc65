"""A method of an object another object holds: ``self.enc.forward(x)`` (R3-34).

A model built from parts (``self.enc = Linear(W1)``, ``self.dec = ...``) calls
its parts' methods through its own attributes.  srcgrad resolved ``self.m(x)``
by ``self``'s class and ``self.l1(x)`` of a held callable object, but refused
``self.enc.forward(x)`` as a method without a rule.  It is now the method of
the held object's class (the classes of the objects held are part of what the
code is specialised on), behind a run-time check of that class: value bit for
bit, gradient and jvp against differences under every policy, with respect
to the input and to the model; a part swapped for an object of another class
after the code was made is refused, located, never run as the old class.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy, numeric_grad

import srcgrad

RNG = np.random.default_rng(3)


class Linear:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.tanh(x @ self.w)


class Scaled:
    def __init__(self, s):
        self.s = s

    def forward(self, x):
        return self.s * np.sin(x)


class AutoEncoder:
    def __init__(self, w1, w2):
        self.enc = Linear(w1)
        self.dec = Linear(w2)

    def loss(self, x):
        h = self.enc.forward(x)
        return np.sum((self.dec.forward(h) - x) ** 2)

    def looped(self, x):
        for _ in range(3):
            x = self.enc.forward(x) + 0.1 * x
            if np.sum(x) > 0:
                x = self.dec.forward(x)
        return np.sum(x ** 2)


def model_loss(model, x):
    return model.loss(x)


def model_looped(model, x):
    return model.looped(x)


def make():
    return AutoEncoder(RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(3, 3)) * 0.5)


X = RNG.normal(size=(4, 3))


@pytest.mark.parametrize("fn", [model_loss, model_looped])
def test_held_object_method_with_respect_to_the_input(fn):
    check_every_policy(fn, (make(), X), 1)


@pytest.mark.parametrize("name", ["loss", "looped"])
def test_held_object_method_of_a_bound_method(name):
    check_every_policy(getattr(make(), name), (X,), 0)


def test_gradient_with_respect_to_the_model_reaches_the_held_parts():
    model = make()
    d = srcgrad.grad(model_loss)(model, X)
    for part in ("enc", "dec"):
        def of_w(w, part=part):
            held = getattr(model, part)
            old, held.w = held.w, w
            try:
                return model_loss(model, X)
            finally:
                held.w = old
        want = numeric_grad(of_w, [getattr(model, part).w.copy()], 0)
        assert_close(getattr(d, part).w, want, rtol=1e-6, atol=1e-8, what=part)


def test_the_source_shown_after_the_call_is_the_code_that_ran():
    g = srcgrad.grad(model_loss, wrt=1)
    g(make(), X)
    assert "forward_forward(" in g.source and "self.enc" not in g.source.split("def ")[0]


def test_a_part_swapped_for_another_class_gets_code_of_its_own():
    model = make()
    g = srcgrad.grad(model_loss, wrt=1)
    g(model, X)
    first = g.source
    model.enc = Scaled(2.0)
    assert_close(g(model, X), numeric_grad(lambda x: model_loss(model, x), [X], 0),
                 rtol=1e-6, atol=1e-8)
    assert g.source != first and "# Specialised for " in first


def test_the_code_made_for_one_class_refuses_another_located():
    model = make()
    g = srcgrad.grad(model_loss, wrt=1)
    g(model, X)
    model.enc = Scaled(2.0)
    run = g._shown.functions[0]  # the code made for Linear parts, run directly
    with pytest.raises(srcgrad.SrcGradError) as info:
        run(model, X)
    err = info.value
    assert err.lineno and "self.enc.forward(...)" in err.message


class DictNet:
    """A ModuleDict-style model: its parts in a dict."""

    def __init__(self, layers):
        self.layers = layers

    def by_items(self, x):
        for _, layer in self.layers.items():
            x = layer.forward(x)
        return np.sum(x ** 2)

    def by_key(self, x):
        return np.sum(self.layers["dec"].forward(self.layers["enc"].forward(x)) ** 2)


def over_values(layers, x):
    for layer in layers.values():
        if np.sum(x) > 0:
            x = layer.forward(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("name", ["by_items", "by_key"])
def test_methods_of_objects_held_in_a_dict(name):
    net = DictNet({"enc": Linear(np.eye(3) * 0.5 + 0.1), "dec": Scaled(0.7)})
    check_every_policy(getattr(net, name), (X,), 0)


def test_a_dict_of_objects_passed_dispatches_by_class():
    layers = {"enc": Linear(np.eye(3) * 0.5 + 0.1), "dec": Scaled(0.7)}
    check_every_policy(over_values, (layers, np.abs(X)), 1)
