"""Containers and objects: lists, tuples and dicts of arrays inside differentiated
code, and gradients with respect to structured arguments, which come back in
the argument's own structure."""

from __future__ import annotations

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import srcgrad

from numeric import assert_close

RNG = np.random.default_rng(3)


def flatten(tree):
    """Float leaves of a structure, in a fixed order."""
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in flatten(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in flatten(item)]
    if isinstance(tree, (float, np.ndarray)):
        return [tree]
    if hasattr(tree, "__dict__"):
        return [leaf for k in sorted(vars(tree)) for leaf in flatten(vars(tree)[k])]
    return []


def rebuild(tree, leaves):
    """``tree`` with its float leaves replaced, in ``flatten``'s order."""
    it = iter(leaves)

    def go(t):
        if isinstance(t, dict):
            return type(t)({k: go(t[k]) for k in sorted(t)})
        if isinstance(t, tuple) and hasattr(t, "_fields"):
            return type(t)(*[go(x) for x in t])
        if isinstance(t, (list, tuple)):
            return type(t)(go(x) for x in t)
        if isinstance(t, (float, np.ndarray)):
            return next(it)
        if hasattr(t, "__dict__"):
            new = dataclasses.replace(t) if dataclasses.is_dataclass(t) else type(t).__new__(type(t))
            for k in sorted(vars(t)):
                object.__setattr__(new, k, go(vars(t)[k]))
            return new
        return t
    return go(tree)


def check_structured_grad(fn, arg, *rest, eps=1e-6):
    g = srcgrad.grad(fn)(arg, *rest)
    assert type(g) is type(arg)
    leaves, grads = flatten(arg), flatten(g)
    assert len(leaves) == len(grads)
    for i, (leaf, grad) in enumerate(zip(leaves, grads)):
        assert np.shape(grad) == np.shape(leaf)
        flat = np.array(leaf, dtype=float).ravel()
        numeric = np.zeros_like(flat)
        for j in range(flat.size):
            for sign in (1, -1):
                moved = flat.copy()
                moved[j] += sign * eps
                new_leaf = moved.reshape(np.shape(leaf)) if isinstance(leaf, np.ndarray) \
                    else float(moved[0])
                new_leaves = list(leaves)
                new_leaves[i] = new_leaf
                numeric[j] += sign * fn(rebuild(arg, new_leaves), *rest) / (2 * eps)
        assert_close(np.ravel(grad), numeric, rtol=1e-5, atol=1e-6)
    return g


def dict_params(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return np.sum(h ** 2) * params["scale"]


def list_params(layers, x):
    for W in layers:
        x = np.tanh(W @ x)
    return np.sum(x)


def tuple_params(pair, x):
    W, b = pair
    return np.sum((W @ x + b) ** 2)


Pair = namedtuple("Pair", ["W", "b"])


@dataclasses.dataclass
class Linear:
    W: np.ndarray
    b: np.ndarray
    name: str = "layer"


def object_params(model, x):
    return np.sum(np.sin(model.W @ x + model.b))


def test_dict_argument():
    params = {"W": RNG.standard_normal((2, 3)), "b": RNG.standard_normal(2), "scale": 1.5}
    g = check_structured_grad(dict_params, params, RNG.standard_normal(3))
    assert set(g) == {"W", "b", "scale"} and isinstance(g["scale"], float)


def test_list_argument():
    layers = [RNG.standard_normal((3, 3)) * 0.5 for _ in range(3)]
    check_structured_grad(list_params, layers, RNG.standard_normal(3))


def test_tuple_and_namedtuple_arguments():
    x = RNG.standard_normal(3)
    check_structured_grad(tuple_params, (RNG.standard_normal((2, 3)), RNG.standard_normal(2)), x)
    g = check_structured_grad(tuple_params, Pair(RNG.standard_normal((2, 3)),
                                                 RNG.standard_normal(2)), x)
    assert isinstance(g, Pair)


def test_dataclass_argument():
    model = Linear(RNG.standard_normal((2, 3)), RNG.standard_normal(2))
    g = check_structured_grad(object_params, model, RNG.standard_normal(3))
    assert isinstance(g, Linear) and g.name == "layer"


def built_containers(x, y):
    t = (x, y * 2.0)
    a, b = t
    hs = []
    for i in range(3):
        hs.append(np.sin(a * i) + b)
    sq = [h ** 2 for h in hs if np.sum(h) > -100]
    total = sum(np.sum(h) for h in sq)
    d = {"w": x, "v": y}
    pairs = [(u, v) for u in hs for v in (x, y)]
    extra = sum(np.sum(u * v) for u, v in pairs)
    return total + np.sum(d["w"] * d["v"]) + np.sum(sum(hs)) + extra * 0.1 + len(hs)


def test_containers_built_inside():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    assert srcgrad.gradcheck(built_containers, x, y, wrt=(0, 1))


def dict_iteration(params):
    total = 0.0
    for key, value in params.items():
        total = total + np.sum(value ** 2)
    for key in params:
        total = total + np.sum(params[key])
    return total


def test_iterating_over_a_dict():
    params = {"a": RNG.standard_normal(2), "b": RNG.standard_normal(3)}
    check_structured_grad(dict_iteration, params)


def mutates_a_list_argument(xs):
    xs.append(xs[0] * 2.0)
    return sum(np.sum(x ** 2) for x in xs)


def test_list_argument_is_not_modified():
    xs = [RNG.standard_normal(2), RNG.standard_normal(2)]
    g = srcgrad.grad(mutates_a_list_argument)(xs)
    assert len(xs) == 2 and len(g) == 2
    assert_close(g[0], 2 * xs[0] + 2 * 2 * (2 * xs[0]))
