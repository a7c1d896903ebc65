"""``functools.reduce`` and ``max``/``min`` with ``key=`` (issue 15).

``functools.reduce(f, xs, init)`` is the loop ``acc = init; for item in xs:
acc = f(acc, item)`` (``f`` a lambda, an ``operator`` function, a def, a
function passed as an argument); ``max(xs, key=k)`` is the first item of the
largest key, whose value flows while the key only orders.  Each: the value bit
for bit the function's own, the gradient against finite differences.
"""

from __future__ import annotations

import functools
import operator
from functools import reduce

import numpy as np
import pytest
from numeric import assert_close, bit_identical, numeric_grad

import srcgrad

RNG = np.random.default_rng(515)
X = RNG.uniform(0.5, 1.5, 4)


def step(h, x):
    return np.tanh(0.5 * h + x)


def product(x):
    return functools.reduce(lambda a, b: a * b, [x[0], x[1], x[2], x[3]], 1.0)


def summed_squares(x):
    return reduce(operator.add, [v ** 2 for v in x])


def rnn(W, xs):
    h = functools.reduce(lambda h, x: np.tanh(W @ h + x), xs, np.zeros(2))
    return np.sum(h ** 2)


def with_a_def(x):
    return np.sum(functools.reduce(step, [x, 2.0 * x, x ** 2]))


def folds(f, x):
    return np.sum(functools.reduce(f, [x, np.sin(x), x * 3.0], x))


def in_a_branch(x, deep):
    if deep:
        total = functools.reduce(operator.mul, [x, x, x])
    else:
        total = x
    return np.sum(total)


def largest_norm(xs):
    best = max(xs, key=lambda v: np.sum(v ** 2))
    return np.sum(best * np.arange(1.0, 4.0))


def smallest_magnitude(a, b, c):
    return min([a, b, c], key=abs) * 3.0


def by_a_def(x):
    rows = [x[:2], x[1:3], x[2:]]
    return np.sum(max(rows, key=np.sum) ** 2) + min(x[0], x[1])


def first_of_ties(x):
    return max([x[0], x[1], x[2]], key=lambda v: 1.0) * 2.0


@pytest.mark.parametrize("fn", [product, summed_squares, with_a_def])
def test_reduce_is_the_loop(fn):
    value, g = srcgrad.value_and_grad(fn)(X)
    assert bit_identical(value, fn(X))
    assert_close(g, numeric_grad(fn, (X,), 0), rtol=1e-6, atol=1e-9)


def test_reduce_over_a_list_of_arrays_is_a_recurrence():
    W = 0.5 * RNG.standard_normal((2, 2))
    xs = [RNG.standard_normal(2) for _ in range(5)]
    value, g = srcgrad.value_and_grad(rnn)(W, xs)
    assert bit_identical(value, rnn(W, xs))
    assert_close(g, numeric_grad(rnn, (W, xs), 0), rtol=1e-6, atol=1e-9)
    assert "for " in srcgrad.grad(rnn).source


@pytest.mark.parametrize("f", [np.add, operator.mul, np.maximum, lambda a, b: a * np.cos(b)],
                         ids=["np.add", "operator.mul", "np.maximum", "lambda"])
def test_reduce_with_a_function_passed_as_an_argument(f):
    value, g = srcgrad.value_and_grad(folds, wrt=1)(f, X)
    assert bit_identical(value, folds(f, X))
    assert_close(g, numeric_grad(folds, (f, X), 1), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("deep", [True, False])
def test_reduce_in_a_branch_runs_only_there(deep):
    assert_close(srcgrad.grad(in_a_branch)(X, deep), 3 * X ** 2 if deep else np.ones(4))


def test_max_with_a_key_passes_the_gradient_to_the_item_selected():
    xs = [RNG.standard_normal(3) for _ in range(4)]
    value, g = srcgrad.value_and_grad(largest_norm)(xs)
    assert bit_identical(value, largest_norm(xs))
    chosen = int(np.argmax([np.sum(v ** 2) for v in xs]))
    for i, gi in enumerate(g):
        assert_close(gi, np.arange(1.0, 4.0) if i == chosen else np.zeros(3))


def test_min_with_a_builtin_key():
    args = (0.7, -0.2, 1.5)
    value, g = srcgrad.value_and_grad(smallest_magnitude, wrt=(0, 1, 2))(*args)
    assert value == smallest_magnitude(*args) and g == (0.0, 3.0, 0.0)


def test_max_with_a_numpy_key_beside_a_two_argument_min():
    value, g = srcgrad.value_and_grad(by_a_def)(X)
    assert bit_identical(value, by_a_def(X))
    assert_close(g, numeric_grad(by_a_def, (X,), 0), rtol=1e-6, atol=1e-9)


def test_ties_go_to_the_first_item_as_in_python():
    assert srcgrad.grad(first_of_ties)(X).tolist() == [2.0, 0.0, 0.0, 0.0]
