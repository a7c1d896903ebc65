"""A callable model differentiated (at a ``wrt`` position) and handed on
(reviewer R1, findings R1-6): ``predict_(m, x)`` calling ``m(x)`` for ``m`` a
``Lin2`` (a ``__call__`` computing directly, no list of layers) was refused,
"'m' is a parameter: srcgrad specialises the generated code on the function
passed there", or, with ``x`` read after the call, "predict_() updates its
argument 'x' in place"; and a model holding its layers as attributes
(``self.l2(self.l1(x))``) was "'self.l1' is a function stored in the object".

The classes of the objects a function passes on are now handed to the
callee when no list is involved too (normalize/specialise.handed_on_classes),
the look at what a helper changes follows ``m(x)`` into them
(normalize/normalizer.py), and a callable object held as an attribute gives
its class to the dispatch (frontend/linker.held_element_classes), its call
``self.l1(x)`` a call of the local ``t = self.l1`` by its class
(normalize/user_methods.held_callable).  Each program: value bit for bit and
the gradient with respect to the model against differences under every
policy, the tangent against differences (test_callables_followed.check_object).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy
from test_callables_followed import check_object


class Lin2:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return np.tanh(self.W @ x + self.b)


class Outer:
    def __init__(self, l1, l2):
        self.l1 = l1
        self.l2 = l2

    def __call__(self, x):
        return self.l2(self.l1(x))


def predict_(m, x):
    return m(x)


def loss_via_helper(m, x, y):  # R1's program
    return np.mean((predict_(m, x) - y) ** 2)


def loss_reading_x_after(m, x, y):  # R1's second form ('updates x in place')
    return np.sum(predict_(m, x) ** 2) + np.sum(x * y)


def _twice(m, x):
    return predict_(m, predict_(m, x))


def loss_two_helpers_deep(m, x, y):
    return np.sum((_twice(m, x) - y) ** 2)


def loss_in_a_loop_and_a_branch(m, x, y):
    total = 0.0
    h = x
    for i in range(3):
        if i % 2 == 0:
            h = predict_(m, h)
        else:
            h = predict_(m, h * 0.5) + y
        total = total + np.sum(h ** 2)
    return total


def loss_of_attributes(m, x, y):  # R1's Outer
    return np.sum((m(x) - y) ** 2)


def loss_of_attributes_via_helper(m, x, y):
    return np.sum(predict_(m, x) * y)


RNG = np.random.default_rng(3)
X = RNG.normal(size=3)
Y = RNG.normal(size=3)


def _lin(seed=0):
    rng = np.random.default_rng(seed)
    return Lin2(rng.normal(size=(3, 3)), rng.normal(size=3))


def _outer():
    return Outer(_lin(1), _lin(2))


@pytest.mark.parametrize("fn", [loss_via_helper, loss_reading_x_after, loss_two_helpers_deep,
                                loss_in_a_loop_and_a_branch], ids=lambda f: f.__name__)
def test_a_model_handed_to_a_helper(fn):
    grad = check_object(fn, (_lin(), X, Y))
    assert isinstance(grad, Lin2)


@pytest.mark.parametrize("fn", [loss_of_attributes, loss_of_attributes_via_helper,
                                loss_in_a_loop_and_a_branch], ids=lambda f: f.__name__)
def test_layers_held_as_attributes(fn):
    grad = check_object(fn, (_outer(), X, Y))
    assert isinstance(grad.l1, Lin2) and isinstance(grad.l2, Lin2)


def test_the_inputs_too():
    # wrt the inputs, the model is a function passed, as before
    check_every_policy(loss_via_helper, (_lin(), X, Y), wrt=1)
    check_every_policy(loss_of_attributes, (_outer(), X, Y), wrt=1)


class Scaled:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k * np.sin(x)


def test_a_layer_of_another_class_makes_new_code():
    model = _outer()
    check_object(loss_of_attributes, (model, X, Y))
    model.l2 = Scaled(np.array([0.5, -1.0, 2.0]))  # the classes held are in the cache key
    grad = check_object(loss_of_attributes, (model, X, Y))
    assert isinstance(grad.l2, Scaled)
