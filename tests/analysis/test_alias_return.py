"""The returned expression reads every alias after the last statement: an update
through another name for the array it returns must show in the value (it did
not: ``u = t; t += x; return u`` returned ``u`` as it was before the update)."""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


def returns_an_alias(x):
    t = x * 1.0
    u = t
    t += x
    return u


def returns_a_view(x):
    t = x * 1.0
    r = t[1:]
    t *= 3.0
    return r


def returns_both(x):
    t = x * 1.0
    u = t
    t += x
    return u, t


@pytest.mark.parametrize("fn", [returns_an_alias, returns_a_view, returns_both])
def test_the_returned_alias_sees_the_update(fn):
    x = np.array([0.5, -1.0, 2.0])
    expected = fn(x.copy())
    value, pullback = srcgrad.vjp(fn, x, check=True)
    for got, want in zip(value if isinstance(value, tuple) else (value,),
                         expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_array_equal(got, want)
    seed = tuple(np.ones_like(e) for e in expected) if isinstance(expected, tuple) \
        else np.ones_like(expected)
    (got,) = pullback(seed)
    eps, numeric = 1e-6, np.zeros_like(x)

    def total(v):
        out = fn(v)
        return sum(np.sum(o) for o in out) if isinstance(out, tuple) else np.sum(out)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        numeric[i] = (total(x + e) - total(x - e)) / (2 * eps)
    np.testing.assert_allclose(got, numeric, atol=1e-6)
