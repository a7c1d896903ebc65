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
from numeric import assert_close, numeric_grad
from numeric import check_every_policy as check

import srcgrad



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
    with pytest.raises(srcgrad.SrcGradError, match=r"layer.__call__\(...\)' on objects of the classes Lin,"):
        srcgrad.grad(call_each, wrt=1)([Lin(W), np.tanh], np.ones(2))


# -- dict.get, np.fill_diagonal, and the new rules in loops and helpers -------------------


def use_get(x):
    d = {"a": x[0]}
    return d.get("a", 0.0) * 2 + d.get("b", x[1]) * 3


def get_in_loop(x):
    d = {"w": x[0], "b": x[1]}
    s = 0.0
    for k in ["w", "b", "c"]:
        v = d.get(k)
        if v is not None:
            s = s + np.sin(v) * d.get(k, 1.0)
        else:
            s = s + d.get("w") * x[2]
    return s


def get_array(x):
    st = {"h": np.tanh(x)}
    return np.sum(st.get("h") ** 2) + np.sum(st.get("z", x))


def get_default_with_effects(x):
    # Python evaluates the default of d.get whether or not the key is there: the
    # pop and the draw happen on every call (review 5: they were skipped)
    rng = np.random.default_rng(0)
    d = {"a": x[0], "b": x[1]}
    xs = [x[2], x[1], x[0]]
    s = 0.0
    for k in ["a", "c"]:
        s = s + d.get(k, xs.pop()) * 2.0 + d.get(k, rng.normal()) * x[2]
    return s + sum(xs) + rng.normal() * x[0]


def get_key_from_a_call(x):
    d = {"a": x[0], "b": x[1]}
    ks = ["b", "a", "z"]
    s = 0.0
    for i in range(3):
        s = s + d.get(ks.pop(), 0.0) * x[i]
    return s


def zero_diagonal(x):
    D = np.outer(x, x)
    np.fill_diagonal(D, 0.0)
    return np.sum(D * D)


def tall_diagonal(x):
    D = np.outer(x, x[:2]) + 1.0
    np.fill_diagonal(D, np.sin(x[:2]))
    return np.sum(np.tanh(D))


def diagonal_in_loop(x):
    s = 0.0
    for i in range(3):
        M = np.outer(x, x) * (i + 1)
        if i > 0:
            np.fill_diagonal(M, x[i])
        s = s + np.sum(M ** 2)
    return s


def pairwise(x):
    return np.add.reduce(np.subtract.outer(x, x) ** 2, axis=None)


def ufunc_methods_in_loop(x):
    s = 0.0
    for i in range(3):
        if i % 2 == 0:
            s = s + np.sum(np.multiply.accumulate(x * (i + 1)))
        else:
            s = s + np.logaddexp.reduce(x) + np.maximum.reduce(x) * np.add.accumulate(x)[-1]
    return s + pairwise(x) + np.sum(np.multiply.outer(x, x[:2]) / np.divide.outer(x, 2.0 + x[1:]))


def picks_and_integrals(x):
    t = np.cumsum(np.abs(x) + 0.5)
    s = np.trapezoid(np.sin(x), t) + np.trapezoid(x ** 2, dx=0.3)
    for i in range(2):
        s = s + np.sum(np.take(x, [i, 2, 2])) * np.sum(np.take(np.outer(x, x), [0, 1], axis=1))
    return s


def array_api_names(x):
    M = np.reshape(x, (2, 2)) + np.eye(2)
    return (np.linalg.trace(np.linalg.matmul(M, np.linalg.matrix_transpose(M)))
            + np.sum(np.linalg.vecdot(M, M)) + np.sum(np.linalg.outer(x, x))
            + np.sum(np.linalg.diagonal(M) * np.vecdot(x, x)))


@pytest.mark.parametrize("fn", [use_get, get_in_loop, get_array, get_default_with_effects,
                                get_key_from_a_call, zero_diagonal, tall_diagonal,
                                diagonal_in_loop, ufunc_methods_in_loop, picks_and_integrals])
def test_dict_get_fill_diagonal_and_the_new_rules(fn):
    check(fn, (np.array([0.1, 0.2, 0.3]),))


@pytest.mark.skipif(not hasattr(np.linalg, "vecdot"), reason="NumPy 2's names")
def test_numpy_2_array_api_names():
    check(array_api_names, (np.array([0.1, 0.2, 0.3, -0.4]),))


def test_autograd_agrees_on_the_ufunc_methods():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    x = np.array([0.1, 0.2, 0.3])

    def reference(x):
        return anp.sum((x[:, None] - x[None, :]) ** 2)

    assert_close(srcgrad.grad(pairwise)(x), autograd.grad(reference)(x), rtol=1e-12, atol=1e-14)
