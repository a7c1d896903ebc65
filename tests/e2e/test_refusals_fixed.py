"""Valid code srcgrad refused, found by review, now differentiated.

Each function runs under every policy (value bit for bit the function's own,
gradient against central differences) and in forward mode (the tangent
against differences along a direction), with at least one case inside a loop,
a branch or a helper:

- ``np.random.randn(*x.shape)``, ``np.random.rand(*x.shape)``: NumPy's global
  random functions are methods of a RandomState, which a ``*x`` of unknown
  length was refused for (only a user's method needs one argument per
  parameter);
- ``*parts[1:]``, a slice of a tuple of known length, into a helper with
  ``*args``, and ``f(a, b, *t)`` for ``def f(x, *rest)``: the arguments past
  the named parameters are one star;
- ``for layer in layers: h = layer(h)``, calling objects of user classes by
  their ``__call__``, as ``layer.forward(h)`` is called: by each object's class.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import (
    POLICIES,
    assert_bit_identical,
    assert_close,
    jvp_fd,
    numeric_grad,
    pure,
)

import srcgrad


def check(fn, args, wrt=0):
    want = pure(fn)(*args)
    fd = numeric_grad(pure(fn), list(args), wrt)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy)(*args)
        assert_bit_identical(value, want, f"{fn.__name__}, policy {policy!r}")
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, policy {policy!r}")
    direction = np.linspace(-1.0, 1.5, np.size(args[wrt])).reshape(np.shape(args[wrt]))
    value, tangent = srcgrad.jvp(fn, wrt=[wrt])(*args, direction)
    assert_bit_identical(value, want, f"{fn.__name__}, jvp")
    assert_close(tangent, jvp_fd(pure(fn), list(args), [wrt], [direction]), rtol=1e-6,
                 atol=1e-8, what=f"{fn.__name__}, jvp")


# -- np.random.randn(*x.shape) ---------------------------------------------------------


def noisy(x):
    np.random.seed(0)
    return np.sum(x * np.random.randn(*x.shape))


def noisy_loop(x):
    np.random.seed(1)
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(np.sin(x) * np.random.rand(*x.shape))
    return s


def draw(x):
    return x * np.random.randn(*x.shape)


def noisy_helper(x):
    np.random.seed(2)
    return np.sum(draw(x) ** 2)


@pytest.mark.parametrize("fn", [noisy, noisy_loop, noisy_helper])
def test_global_random_functions_take_a_starred_shape(fn):
    check(fn, (np.array([[0.3, -1.2, 0.7], [0.1, 0.2, -0.4]]),))


def test_a_user_method_still_needs_its_arguments_counted():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=r"'\*x.shape'"):
        srcgrad.grad(method_with_star)(np.ones(2))


class Scaler:
    def apply(self, a, b):
        return a * b


SCALER = Scaler()


def method_with_star(x):
    return np.sum(SCALER.apply(*x.shape, x))


# -- starred slices into *args --------------------------------------------------------


def sumsq(*vals):
    return sum(v ** 2 for v in vals)


def scaled(a, *vals):
    return a * sum(np.sin(v) for v in vals)


def star_slice(x):
    parts = (x[0], x[1], x[2])
    return sumsq(x[0], *parts[1:])


def star_slices(x):
    parts = [x[0], x[1], x[2]]
    return sumsq(*parts[:-1]) + sumsq(*parts[::-2]) + sumsq(*parts[-2:5])


def star_of_unknown_length(x, ys):
    return scaled(x[0], x[1], *ys)


def star_in_loop(x):
    s = 0.0
    parts = (x[0], x[1], x[2])
    for i in range(2):
        if i == 1:
            rows = [x[j] * (j + 1) for j in range(3)]
            s = s + sumsq(x[1], *parts[1:]) + scaled(2.0, x[2], *rows) + scaled(1.0, *x)
    return s


@pytest.mark.parametrize("fn, args", [
    (star_slice, ()), (star_slices, ()), (star_of_unknown_length, ([0.5, 0.7],)),
    (star_in_loop, ())])
def test_starred_arguments_into_a_helper_with_args(fn, args):
    check(fn, (np.array([0.1, 0.2, 0.3]), *args))


# -- callable objects in a list ---------------------------------------------------------


class Lin:
    def __init__(self, W):
        self.W = W

    def forward(self, h):
        return h @ self.W

    def __call__(self, h):
        return self.forward(h)


class Tanh:
    def __call__(self, h):
        return np.tanh(h)


class Model:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return np.sum(x ** 2)


W = np.array([[0.5, -0.2], [0.1, 0.3]])
LAYERS = [Lin(W), Tanh(), Lin(W.T)]


def call_each(layers, x):
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


def call_each_global(x):
    h = x
    for i, layer in enumerate(LAYERS):
        if i % 2 == 0:
            h = layer(h) * 1.5
        else:
            h = layer(h)
    return np.sum(h)


def test_objects_in_a_list_are_called_by_their_class():
    x = np.array([1.0, -1.0])
    check(call_each, ([Lin(W), Tanh(), Lin(W.T), Tanh()], x), wrt=1)
    check(call_each_global, (x,))
    model = Model([Lin(W), Tanh(), Lin(W.T)])
    assert_close(srcgrad.grad(model)(x), numeric_grad(model, [x], 0), rtol=1e-6, atol=1e-8)


def test_an_object_of_another_class_is_refused_as_the_code_runs():
    srcgrad.grad(call_each, wrt=1)([Lin(W), Tanh()], np.ones(2))
    with pytest.raises(TypeError, match=r"layer.__call__\(...\)' on objects of the classes Lin,"):
        srcgrad.grad(call_each, wrt=1)([Lin(W), np.tanh], np.ones(2))
