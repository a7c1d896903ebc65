"""``srcgrad.explain`` and ``srcgrad.saved`` given example arguments compile
the function as ``grad(f)(*args)`` does (review s37 R5-6).

They refused code ``grad`` differentiates: ``dataclasses.replace`` of a
dataclass argument ("its class is known when srcgrad compiles: an argument of
the function differentiated" -- it was one, and was given), a model calling
the layers it holds in a list ("calling 'layer' ... only known when the code
runs"), a function or module passed.  explain now specialises on the example
arguments (their classes, the functions and modules passed, the fields of
the objects) and passes the receiver to the compilation as the pipeline does;
without example arguments, a refusal says that explain(f, *args) compiles
for them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pytest

import srcgrad


@dataclass(frozen=True)
class Params:
    W: np.ndarray
    s: float


def frozen(p, x):
    q = dataclasses.replace(p, s=p.s * 2)
    return np.sum(np.tanh(x @ q.W) * q.s)


class Dense:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.tanh(x @ self.W)


class Net:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return np.sum(x ** 2)


def applied(x, act, xp):
    return xp.sum(act(x) ** 2) + 0.0 * np.floor(x[0])


RS = np.random.RandomState(0)
P = Params(RS.randn(3, 2), 0.7)
X = RS.randn(4, 3)
NET = Net([Dense(RS.randn(3, 4)), Dense(RS.randn(4, 2))])


def test_explain_a_dataclass_replaced_with_example_arguments():
    found = srcgrad.explain(frozen, P, X, wrt=(0, 1))
    assert found.zero == ()
    assert found["p"].flows and found["x"].flows
    assert "q = dataclasses.replace(p, s=p.s * 2)" in str(found)
    assert {s.name for s in srcgrad.saved(frozen, P, X, wrt=0)} >= {"x", "q"}


def test_explain_a_model_calling_its_layers_from_a_list():
    found = srcgrad.explain(NET, X)
    assert found["x"].flows
    assert "x = layer(x)" in str(found)


def test_explain_a_function_and_a_module_passed():
    found = srcgrad.explain(applied, X[0], np.tanh, np)
    assert found["x"].flows
    assert all(s.nbytes is not None for s in found.saved)


def test_without_example_arguments_the_refusal_says_to_give_them():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.explain(frozen)
    error = info.value
    assert error.message.endswith(
        "(explain without example arguments compiles the function alone; explain(f, *args) "
        "compiles it for what those arguments are -- their classes, the functions and "
        "modules passed -- as grad(f)(*args) does)")
    assert error.filename == __file__ and error.lineno == frozen.__code__.co_firstlineno + 1
