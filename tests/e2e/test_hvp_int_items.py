"""hvp / hessian of a loss whose parameter dict also holds an int
hyper-parameter used in range() (``for i in range(params["n_layers"])``):
grad and jvp were right, hvp raised MissingRuleError "no adjoint rule for
'builtins.range'" about srcgrad's own tangent code, which binds the range
before its loop (review s35, R3-7).  range takes ints only, so nothing it
makes carries a derivative: it is non-differentiable, as len and int are."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

RS = np.random.RandomState(0)
W = [RS.randn(3, 3) * 0.5, RS.randn(3, 3) * 0.5]
X = RS.randn(3)


def layered(params, x):
    h = x
    for i in range(params["n_layers"]):
        h = np.tanh(h @ params["W"][i])
    return np.sum(h ** 2)


def stepped(params, x):
    h = x
    for i in range(0, 2 * params["n"], 2):
        h = np.sin(h * params["w"][i // 2])
    return np.sum(h ** 2)


def _hvp_fd(fn, params, x, direction, key):
    eps = 1e-6
    plus = dict(params, **{key: [w + eps * d for w, d in zip(params[key], direction[key])]})
    minus = dict(params, **{key: [w - eps * d for w, d in zip(params[key], direction[key])]})
    return [(a - b) / (2 * eps) for a, b in zip(srcgrad.grad(fn)(plus, x)[key],
                                                 srcgrad.grad(fn)(minus, x)[key])]


@pytest.mark.parametrize("fn, params, key", [
    (layered, {"W": W, "n_layers": 2}, "W"),
    (stepped, {"w": [X.copy(), 2.0 * X], "n": 2}, "w"),
], ids=["range of an item", "range with a start and a step"])
def test_hvp_with_an_int_item_in_the_parameters(fn, params, key):
    direction = {key: [np.ones_like(w) for w in params[key]]}
    got = srcgrad.hvp(fn)(params, X, direction)
    for g, want in zip(got[key], _hvp_fd(fn, params, X, direction, key)):
        assert_close(g, want, rtol=1e-5, atol=1e-6)


def test_the_first_order_code_is_unchanged_in_value_and_gradient():
    check_every_policy(lambda x: layered({"W": W, "n_layers": 2}, x), (X,), 0)
