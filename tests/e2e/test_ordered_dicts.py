"""``collections.OrderedDict`` holding differentiated values (review s37 R5-8):
refused with "no adjoint rule for 'collections.OrderedDict'".  It is a dict
keeping the order it was given, differentiated as ``dict(...)`` is
(rules/containers.py); ``OrderedDict(a=x, b=y)`` is ``OrderedDict({'a': x, 'b':
y})`` (normalize/sugar.py).  The forward sweep builds the OrderedDict itself.
"""

from __future__ import annotations

import collections
from collections import OrderedDict

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

X = np.array([0.37, -0.81, 1.23, -0.22])


def by_keywords(x):
    o = collections.OrderedDict(a=x[0], b=x[1])
    return o["a"] * o["b"] + np.sin(o["a"])


def from_pairs_in_a_loop(x):
    layers = OrderedDict([("first", x[:2] * 2.0), ("second", np.tanh(x[2:]))])
    total = 0.0
    for name, h in layers.items():
        total = total + np.sum(h ** 2) * (2.0 if name == "second" else 1.0)
    return total + layers["first"] @ layers["second"]


def from_a_dict(x):
    o = OrderedDict({"w": x, "s": np.exp(x[0])})
    o["w"] = o["w"] * o["s"]
    return np.sum(o["w"] ** 2)


@pytest.mark.parametrize("fn", [by_keywords, from_pairs_in_a_loop, from_a_dict],
                         ids=lambda f: f.__name__)
def test_ordered_dicts(fn):
    check_every_policy(fn, (X,), 0)


def test_the_forward_sweep_builds_an_ordered_dict():
    source = srcgrad.grad(from_pairs_in_a_loop).source
    assert "OrderedDict(" in source


@pytest.mark.parametrize("fn", [by_keywords, from_pairs_in_a_loop], ids=lambda f: f.__name__)
def test_hvp_through_ordered_dicts(fn):
    v = np.array([0.3, -0.1, 0.2, 0.5])
    gradient = srcgrad.grad(fn)
    eps = 1e-6
    want = (gradient(X + eps * v) - gradient(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, v), want, rtol=1e-5, atol=1e-7)
