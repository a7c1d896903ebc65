"""Calls of callable objects that are not hashable (review s36 R4-14).

``P(x)`` of a module-level ``np.poly1d`` raised a raw ``TypeError: unhashable
type: 'poly1d'`` from the compiler (registry.display_name); so did any object
whose class defines ``__eq__`` without ``__hash__``.  A polynomial's call is
now ``np.polyval(P.coeffs, x)`` (normalize/numpy_callables.py), and a user's
such object is followed through its ``__call__``.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad
from srcgrad.rules.registry import display_name

P = np.poly1d([1.0, -2.0, 3.0])
X = np.array([0.3, -0.5, 1.2])


class Scaled:
    """Callable, and unhashable: __eq__ without __hash__."""

    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return isinstance(other, Scaled) and other.k == self.k

    def __call__(self, x):
        return self.k * np.sin(x)


S = Scaled(2.0)


def poly_global(x):
    return np.sum(P(x) ** 2)


def poly_in_a_loop(x):
    y = x
    for _ in range(3):
        y = P(y) * 0.1
    return np.sum(y)


def poly_passed(x, q):
    return np.sum(q(x) * x)


def unhashable_object(x):
    return np.sum(S(x) * x)


@pytest.mark.parametrize("fn", [poly_global, poly_in_a_loop, unhashable_object])
def test_a_module_level_callable_object(fn):
    check_every_policy(fn, (X.copy(),))


def test_a_polynomial_passed_and_another_after_it():
    check_every_policy(poly_passed, (X.copy(), P))
    g = srcgrad.grad(poly_passed)
    q = np.poly1d([0.5, 0.0, 1.0, -1.0])
    assert_close(g(X.copy(), q), q.deriv()(X) * X + q(X), rtol=1e-12, atol=0)


def test_an_unhashable_primitive_has_a_display_name():
    assert "poly1d" in display_name(P)
