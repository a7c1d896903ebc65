"""``u[k]`` on an object whose class defines ``__getitem__`` (review s35
R3-13, R3-37).

An interpolated signal ``u[t]`` (``np.interp`` in ``__getitem__``, ``t`` a float
or an array being differentiated) was differentiated as an array's indexing,
whose index carries no derivative: a zero gradient for ``t``, silently.  A
parameter store read as ``s["W"]``, or ``P[i]`` of an object applying a
transform, gave a raw AttributeError or IndexError for the gradient with
respect to the object.  Such a subscript is now the call of the class's
``__getitem__``, differentiated through its source.
"""

from __future__ import annotations

import numpy as np
import pytest
from held_tables import TABLE
from numeric import (
    POLICIES, assert_bit_identical, assert_close, check_every_policy,
    numeric_grad,
)

import srcgrad


class Signal:
    def __init__(self, ts, ys):
        self.ts, self.ys = ts, ys

    def __getitem__(self, t):
        return np.interp(t, self.ts, self.ys)


class Params:
    def __init__(self, arrs):
        self.arrs = arrs

    def __getitem__(self, i):
        return self.arrs[i] * 3.0


class PosStore:
    def __init__(self, d):
        self._d = d

    def __getitem__(self, k):
        return np.exp(self._d[k])


TS = np.linspace(0.0, 2.0, 9)
U = Signal(TS, np.sin(3 * TS) + TS ** 2)


def sampled(t, u):
    return np.sum(u[t] ** 2)


def sampled_in_a_loop(t0, u):
    total = 0.0
    for k in range(4):
        total = total + u[t0 + 0.25 * k] ** 2
    return total


def sampled_in_a_branch(t, u):
    if np.sum(t) > 1.0:
        return np.sum(u[t] * t)
    return np.sum(u[t * 0.5])


@pytest.mark.parametrize("fn, t", [(sampled, np.array([0.3, 0.8, 1.4])),
                                   (sampled_in_a_loop, 0.35),
                                   (sampled_in_a_branch, np.array([0.3, 0.8, 1.4]))],
                         ids=["array", "loop", "branch"])
def test_the_index_given_a_users_getitem_carries_its_derivative(fn, t):
    check_every_policy(fn, (t, U), 0)


def params_loss(P, x):
    return np.sum(P[0] * x) + np.sum(P[1] ** 2)


def store_loss(s, x):
    return np.sum(np.tanh(s["W"] * x) + s["b"])


def test_the_gradient_with_respect_to_an_object_read_through_its_getitem():
    x = np.array([0.3, -0.5, 0.9])
    P = Params([np.array([1.0, 2.0, -1.0]), np.array([0.5, -0.25, 1.5])])
    for policy in POLICIES:
        value, g = srcgrad.value_and_grad(params_loss, policy=policy)(P, x)
        assert_bit_identical(value, params_loss(P, x), f"policy {policy!r}")
        assert_close(g.arrs[0], 3 * x, rtol=1e-12, atol=0)
        assert_close(g.arrs[1], 18 * P.arrs[1], rtol=1e-12, atol=0)
    s = PosStore({"W": np.array([0.1, -0.5, 0.2]), "b": np.array([1.0])})
    for policy in POLICIES:
        value, g = srcgrad.value_and_grad(store_loss, policy=policy)(s, x)
        assert_bit_identical(value, store_loss(s, x), f"policy {policy!r}")
        w = np.exp(s._d["W"])
        assert_close(g._d["W"], (1 - np.tanh(w * x) ** 2) * x * w, rtol=1e-12, atol=1e-15)
        assert_close(g._d["b"], 3 * np.exp(s._d["b"]), rtol=1e-12, atol=0)


# --- an object at module level (review s36 R4-11) ----------------------------------------
# U[t] of the module's U, TABLE[t] of an object imported by name: read as an array's
# indexing, d/dt was 0.0 (differences 0.544) or missed the table's part (0.84 for 0.18).
# Now the object's class, known when srcgrad compiles, dispatches as an argument's does.

class Quadratic:
    def __init__(self, c):
        self.c = c

    def __getitem__(self, t):
        return self.c[0] + self.c[1] * t + self.c[2] * t ** 2

    def __mul__(self, t):
        return self.c[1] * t ** 3

    def __neg__(self):
        return Quadratic(-self.c)


Q = Quadratic(np.array([1.0, -2.0, 3.0]))


def sampled_global(t):
    return np.sum(U[t] ** 2)


def quadratic_global(t):
    return Q[t] ** 2 + Q * t + (-Q)[t]


def table_imported(t):
    return TABLE[t] * t



@pytest.mark.parametrize("fn, t", [(sampled_global, np.array([0.3, 0.8, 1.4])),
                                   (quadratic_global, 0.4), (table_imported, 0.33)],
                         ids=["array", "operators", "imported"])
def test_a_module_level_objects_getitem_carries_the_derivative(fn, t):
    check_every_policy(fn, (t,), 0)
    e = 1e-5
    expected = (srcgrad.grad(fn)(t + e) - srcgrad.grad(fn)(t - e)) / (2 * e)
    hvp = srcgrad.hvp(fn)(t, np.ones_like(t))
    assert_close(hvp, expected, rtol=1e-5, atol=1e-7)


def test_a_module_level_object_rebound_is_followed(monkeypatch):
    g = srcgrad.grad(quadratic_global)
    assert g(0.4) == pytest.approx(2 * 0.68 * 0.4 + 3 * -2.0 * 0.16 - 0.4, rel=1e-12)
    monkeypatch.setitem(globals(), "Q", Quadratic(np.array([0.0, 1.0, 1.0])))
    assert g(0.4) == pytest.approx(numeric_grad(quadratic_global, [0.4], 0), rel=1e-7)



# --- items of a list whose class defines __getitem__ (review s36 D-9): by class as
# the code runs, indexing for anything else

class Wave:
    def __init__(self, c):
        self.c = c

    def __getitem__(self, t):
        return np.sin(self.c * t)


WAVES = [Wave(2.0), Wave(3.0)]


def item_of_a_global_list(t):
    return WAVES[1][t] * 2.0


def items_of_a_list_passed(t, waves):
    return waves[0][t] + t


def looped_beside_arrays(t, X):
    s = 0.0
    for w in WAVES:
        s = s + w[t] * X[0, 1] + X[1][0]
    return s


@pytest.mark.parametrize("fn, args, wrt", [
    (item_of_a_global_list, (0.4,), 0),
    (items_of_a_list_passed, (0.4, WAVES), 0),
    (looped_beside_arrays, (0.4, np.array([[1.0, 2.0], [3.0, 4.0]])), 0),
    (looped_beside_arrays, (0.4, np.array([[1.0, 2.0], [3.0, 4.0]])), 1),
])
def test_items_of_lists_defining_getitem(fn, args, wrt):
    check_every_policy(fn, args, wrt)
