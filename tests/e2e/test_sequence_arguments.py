"""``+`` and ``*`` of a list or tuple passed as an argument concatenate and repeat.

The generic code cannot see an argument's type, so ``ws * 2`` and ``ws + ws``
took the array rules: the gradient kept one copy's share (outside tester:
``t = ws * 2; np.sum(t[0] * t[1])`` gave [1, 2] for [2, 4]; an RNN looping
``for w in ws + ws`` a wrong gradient for every weight), while ``ws +
other`` on two arguments was refused.  A call with a list or tuple argument
now runs code specialised on it (``Options.sequences``, like Python floats):
its ``+`` and ``*`` get the sequence rules, in both modes and under every
policy."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad

import srcgrad

POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
RNG = np.random.default_rng(4)
WS = [RNG.normal(size=(3, 3)) / 2, RNG.normal(size=(3, 3)) / 2]
X = RNG.normal(size=3)


def repeated(ws, x):
    t = ws * 2
    return np.sum(t[0] * t[1]) + np.sum(t[-1] @ x)


def layers_twice(ws, x):  # an RNN that applies its layer list twice
    h = x
    for w in ws + ws:
        h = np.tanh(w @ h)
    return np.sum(h ** 2)


def rotated(ws, x):
    order = ws[1:] + ws[:1]
    h = x
    for k, w in enumerate(order):
        h = np.sin(w @ h) * (k + 1)
    return np.sum(h)


def counted(ws, x):
    h = x
    for w in 3 * tuple(ws):
        h = np.tanh(w @ h + 0.1)
    return np.sum(h)


def _list_grad_fd(fn, ws, x):
    out = []
    for k, w in enumerate(ws):
        g = np.zeros_like(w)
        for idx in np.ndindex(w.shape):
            e = np.zeros_like(w)
            e[idx] = 1e-6
            plus = [v + e if j == k else v for j, v in enumerate(ws)]
            minus = [v - e if j == k else v for j, v in enumerate(ws)]
            g[idx] = (fn(plus, x) - fn(minus, x)) / 2e-6
        out.append(g)
    return out


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn", [repeated, layers_twice, rotated, counted])
def test_a_list_argument_repeats_and_concatenates(fn, policy):
    value, grads = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy)(list(WS), X.copy())
    assert_bit_identical(value, fn(WS, X))
    for got, want in zip(grads[0], _list_grad_fd(fn, WS, X)):
        assert_close(got, want, what=f"{fn.__name__} gradient of a list item")
    assert_close(grads[1], numeric_grad(lambda x: fn(WS, x), [X], 0), what="gradient of x")


@pytest.mark.parametrize("fn", [repeated, layers_twice, rotated, counted])
def test_tuple_arguments_and_forward_mode(fn):
    value, grads = srcgrad.value_and_grad(fn)(tuple(WS), X)
    assert_bit_identical(value, fn(tuple(WS), X))
    for got, want in zip(grads, _list_grad_fd(fn, WS, X)):
        assert_close(got, want, what=f"{fn.__name__} gradient of a tuple item")
    direction = [np.ones((3, 3)), np.linspace(0, 1, 9).reshape(3, 3)]
    _, tangent = srcgrad.jvp(fn, (list(WS), X), (direction, np.zeros(3)))
    expected = sum(np.sum(g * d) for g, d in zip(_list_grad_fd(fn, WS, X), direction))
    assert_close(tangent, expected, what=f"{fn.__name__} tangent")


def test_the_float_of_a_one_item_list_repeated():
    def f(a, ws):
        t = ws * 2
        return t[0] * t[1] * a
    assert srcgrad.grad(f, wrt=1)(1.5, [3.0]) == [9.0]
