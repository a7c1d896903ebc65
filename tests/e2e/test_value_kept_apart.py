"""The value a generated function returns is the one the source computed, even
when the adjoint sweep later puts overwritten elements back into that array
(``y[()] = 3 * t; return y``): ``value_and_grad`` returned the array after the
restores, and ``vjp``'s value changed when the pullback ran."""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


def overwrites_its_output(y):
    t = np.sin(y)
    y[()] = 3 * t
    return y


def returns_a_view_of_an_updated_array(x):
    t = x * 1.0
    t[0] = np.sin(x[1])
    return t[0:2]


def returns_a_list_it_appended_to(x):
    out = []
    for i in range(2):
        out.append(x * (i + 1.0))
    return out


CASES = [(overwrites_its_output, np.array(0.5)),
         (returns_a_view_of_an_updated_array, np.array([0.5, -1.0, 2.0])),
         (returns_a_list_it_appended_to, np.array([0.5, -1.0]))]


def _seed(value):
    if isinstance(value, (tuple, list)):
        return type(value)(np.ones_like(v) for v in value)
    return np.ones_like(value)


def _items(value):
    return value if isinstance(value, (tuple, list)) else (value,)


@pytest.mark.parametrize("check", [True, False])
def test_value_and_grad_returns_the_computed_value(check):
    x = np.array(0.5)
    value, grad = srcgrad.value_and_grad(overwrites_its_output, check=check)(x.copy())
    assert value == 3 * np.sin(0.5)
    assert grad == 3 * np.cos(0.5)


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("fn,x", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_vjp_value_survives_the_pullback(fn, x, check):
    expected = fn(x.copy())
    value, pullback = srcgrad.vjp(fn, x.copy(), check=check)
    pullback(_seed(expected))
    assert len(_items(value)) == len(_items(expected))
    for got, want in zip(_items(value), _items(expected)):
        np.testing.assert_array_equal(got, want)
