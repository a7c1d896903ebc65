"""A global functools.partial or bound method that the function calls,
rebound in the process (a notebook cell run again with a new ``k``), makes
the next call generate the code anew (outside tester T2, session 30, #7):
srcgrad inlines the partial's function with its keywords, so the global
itself was in no list of what the code depends on, and both the gradient
object made before and a new one gave the old value and gradient (1.0 where
the function gave 2.25).  The global or closure holding the partial or bound
method is now watched by identity, as a global function is."""

from __future__ import annotations

import functools

import numpy as np

import srcgrad


def scaled(z, k):
    return z * k


class Gain:
    def __init__(self, k):
        self.k = k

    def apply(self, z):
        return z * self.k


PART = functools.partial(scaled, k=2.0)
BOUND = Gain(2.0).apply


def through_partial(x):
    return np.sum(PART(x) ** 2)


def through_bound_method(x):
    return np.sum(BOUND(x) ** 2)


def test_a_rebound_partial_regenerates_the_code(monkeypatch):
    x = np.array([0.5, -1.5])
    g = srcgrad.value_and_grad(through_partial)
    value, grad = g(x)
    assert value == through_partial(x)
    np.testing.assert_allclose(grad, 8.0 * x)
    monkeypatch.setitem(globals(), "PART", functools.partial(scaled, k=3.0))
    for made in (g, srcgrad.value_and_grad(through_partial)):
        value, grad = made(x)
        assert value == through_partial(x)
        np.testing.assert_allclose(grad, 18.0 * x)


def test_a_rebound_bound_method_regenerates_the_code(monkeypatch):
    x = np.array([0.5, -1.5])
    g = srcgrad.value_and_grad(through_bound_method)
    value, grad = g(x)
    assert value == through_bound_method(x)
    np.testing.assert_allclose(grad, 8.0 * x)
    monkeypatch.setitem(globals(), "BOUND", Gain(3.0).apply)
    value, grad = g(x)
    assert value == through_bound_method(x)
    np.testing.assert_allclose(grad, 18.0 * x)


def test_an_unchanged_partial_keeps_the_code(monkeypatch):
    from srcgrad import pipeline
    made = []
    generate = pipeline.generate
    monkeypatch.setattr(pipeline, "generate", lambda *a, **k: made.append(1) or generate(*a, **k))
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    g = srcgrad.grad(through_partial)
    x = np.array([0.5, -1.5])
    for _ in range(3):
        g(x)
    assert len(made) <= 1
