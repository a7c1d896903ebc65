"""``filter(f, xs)`` is the comprehension ``(a for a in xs if f(a))``: the
test runs, never differentiated, and the items it keeps are (``f`` a lambda, a
function, or None)."""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


def positive(v):
    return v > 0


def with_lambda(xs):
    return sum(filter(lambda v: v > 0, xs))


def with_function(xs):
    return np.sum(np.array(list(filter(positive, xs))) ** 2)


def with_none(xs):
    return sum(filter(None, xs)) * 3.0


def over_rows(W, x):
    rows = filter(lambda r: np.sum(r) > 0, W)
    return sum(np.tanh(r @ x) for r in rows)


@pytest.mark.parametrize("fn,want", [
    (with_lambda, [1.0, 0.0, 1.0, 0.0]),
    (with_function, [0.6, 0.0, 2.2, 0.0]),
    (with_none, [3.0, 3.0, 3.0, 0.0]),
])
def test_filter_keeps_the_gradient_of_the_items_it_keeps(fn, want):
    xs = [0.3, -0.7, 1.1, 0.0]
    np.testing.assert_allclose(srcgrad.grad(fn)(xs), want)


def test_filter_over_the_rows_of_an_array():
    rs = np.random.RandomState(0)
    W, x = rs.randn(5, 3), rs.randn(3)
    g = srcgrad.grad(over_rows)(W, x)
    kept = np.sum(W, axis=1) > 0
    want = np.where(kept[:, None], (1 - np.tanh(W @ x) ** 2)[:, None] * x, 0.0)
    np.testing.assert_allclose(g, want, rtol=1e-12)
