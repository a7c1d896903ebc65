"""A local function defined in several branches is chosen where it is called.

``if kind == "relu": act = lambda z: ...`` / ``else: def act(z): ...`` then
``act(h)`` -- how notebook code picks an activation -- was refused ("the local
function 'act' is defined more than once"; outside tester).  Each definition
now gets a name of its own and each call runs the one whose definition ran
(normalize/chosen_functions.py): value bit for bit, gradient and tangent
against central differences, every policy, in loops and helpers."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.3, -0.6, 0.9])
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [-0.6, 0.2, 0.7]])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


def network(x, kind):
    if kind == "relu":
        act = lambda z: np.maximum(z, 0.0)  # noqa: E731 - the notebook idiom
    elif kind == "tanh":
        def act(z):
            return np.tanh(z)
    else:
        act = lambda z: z * z  # noqa: E731
    h = x
    for _ in range(2):
        h = act(h @ W) + 0.1 * h
    return np.sum(act(h))


def chosen_in_a_loop(x, kind):  # redefined on every step, by the step's parity
    s = 0.0
    for i in range(3):
        if (i + len(kind)) % 2 == 0:
            act = lambda z: np.sin(z) * x[0]  # noqa: E731
        else:
            act = lambda z: z ** 3  # noqa: E731
        s = s + np.sum(act(x * (i + 1.0)))
    return s


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("kind", ["relu", "tanh", "square"])
@pytest.mark.parametrize("fn", [network, chosen_in_a_loop])
def test_the_definition_that_ran_is_called(fn, kind, policy):
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(X.copy(), kind)
    assert_bit_identical(value, fn(X, kind))
    fd = numeric_grad(lambda x: fn(x, kind), [X], 0)
    assert_close(grad, fd, what=f"{fn.__name__} ({kind}) gradient")
    _, tangent = srcgrad.jvp(fn, (X, kind), (np.ones(3), None))
    assert_close(tangent, np.sum(fd), what=f"{fn.__name__} ({kind}) tangent")


def _apply(g, v):
    return g(v)


def passed_on(x, relu):
    if relu:
        act = lambda z: np.maximum(z, 0.0)  # noqa: E731
    else:
        act = lambda z: z * z  # noqa: E731
    return np.sum(_apply(act, x))


def test_a_chosen_function_passed_as_a_value_stays_refused_located():
    with pytest.raises(SrcGradError) as info:
        srcgrad.grad(passed_on)(X, True)
    assert info.value.lineno
