"""Tangents of dict, list and tuple arguments that do not match their structure
(review s37 R5-1).

``jvp(f, (ws, x), (0.0, t))`` with ``ws`` a dict of weights -- a natural try
at "no tangent for the weights" -- reached the generated code and failed
there with a raw ``TypeError: 'float' object is not subscriptable``; a list
for a dict, an array for a list, and ``hvp`` given such a vector alike.  Now
a SrcGradError says what the tangent of such an argument is (None is the
zero one), and a part of the wrong shape is named as the top-level check
names it.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad
from srcgrad import SrcGradError

RS = np.random.RandomState(0)
WS = {"a": RS.randn(3, 3), "b": RS.randn(3, 3)}
X, T = RS.randn(2, 3), RS.randn(2, 3)


def by_key(ws, x):
    for k in ["a", "b"]:
        x = np.tanh(x @ ws[k])
    return np.sum(x)


def by_item(ws, x):
    for w in ws:
        x = np.tanh(x @ w)
    return np.sum(x)


@pytest.mark.parametrize("call, words", [
    (lambda: srcgrad.jvp(by_key, (WS, X), (0.0, T)), "dict argument is a dict of some of its keys"),
    (lambda: srcgrad.jvp(by_item, (list(WS.values()), X), (0.0, T)), "a list or tuple of 2 items"),
    (lambda: srcgrad.jvp(by_key, (WS, X), ([WS["a"], WS["b"]], None)), "got a list"),
    (lambda: srcgrad.jvp(by_item, (list(WS.values()), X), (np.zeros((3, 3, 3)), None)),
     "got an array of shape (3, 3, 3)"),
    (lambda: srcgrad.hvp(by_key)(WS, X, 0.0), "got a float"),
    (lambda: srcgrad.hvp(by_key)(WS, X, [WS["a"], WS["b"]]), "got a list"),
    (lambda: srcgrad.jvp(by_key, (WS, X), ({"a": np.ones(3)}, None)),
     "a tangent of shape (3,) for an argument of shape (3, 3)"),
])
def test_a_tangent_of_another_structure_is_a_clear_error(call, words):
    with pytest.raises(SrcGradError, match=None) as caught:
        call()
    assert words in str(caught.value)


def test_none_and_dicts_of_some_keys_are_zero_tangents():
    value, tangent = srcgrad.jvp(by_key, (WS, X), (None, T))
    _, other = srcgrad.jvp(by_key, (WS, X), ({"a": np.zeros((3, 3))}, T))
    assert value == by_key(WS, X)
    np.testing.assert_allclose(tangent, other, rtol=0, atol=0)


def test_one_array_stacking_a_lists_item_tangents():
    # (as tests/e2e/test_argument_sharing.py passes np.ones_like([z, z]))
    items = list(WS.values())
    stacked = np.stack([np.ones((3, 3)), np.full((3, 3), 0.5)])
    value, tangent = srcgrad.jvp(by_item, (items, X), (stacked, None))
    _, by_parts = srcgrad.jvp(by_item, (items, X), ([stacked[0], stacked[1]], None))
    assert value == by_item(items, X)
    np.testing.assert_allclose(tangent, by_parts, rtol=0, atol=0)
