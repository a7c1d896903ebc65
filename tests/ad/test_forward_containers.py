"""Forward mode through containers and objects: tuples, lists built by
``append`` in a loop, dicts, and structured arguments (a dict, a list, a
dataclass) whose tangents have the argument's own structure.  Each tangent is
checked against central differences taken along the same structured
direction."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numeric import assert_close

import srcgrad

RNG = np.random.default_rng(11)


def step(value, direction, eps):
    """``value + eps * direction`` for a structured value; a dict direction
    moves an object by attribute name, and leaves without a direction stay."""
    if direction is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        return type(value)({k: step(v, direction.get(k), eps) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return type(value)(step(v, d, eps) for v, d in zip(value, direction))
    if isinstance(value, (float, np.ndarray)):
        return value + eps * direction
    moved = direction if isinstance(direction, dict) else vars(direction)
    return dataclasses.replace(value, **{k: step(getattr(value, k), d, eps)
                                         for k, d in moved.items()})


def leaves(tree):
    """The float leaves of an output, in order."""
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in leaves(item)]
    return [tree]


def check_jvp(fn, args, tangents, eps=1e-6):
    """``srcgrad.jvp`` against central differences along ``tangents``."""
    value, tangent = srcgrad.jvp(fn, args, tangents)
    plus = fn(*[step(a, t, eps) for a, t in zip(args, tangents)])
    minus = fn(*[step(a, t, -eps) for a, t in zip(args, tangents)])
    expected = fn(*args)
    assert type(value) is type(expected) and type(tangent) is type(expected)
    for v, e, t, p, m in zip(leaves(value), leaves(expected), leaves(tangent),
                             leaves(plus), leaves(minus)):
        assert_close(v, e)
        assert np.shape(t) == np.shape(e)
        assert_close(t, (np.asarray(p) - np.asarray(m)) / (2 * eps), rtol=1e-5, atol=1e-6)
    return tangent


def like(x):
    return RNG.standard_normal(np.shape(x))


# --- tuples ------------------------------------------------------------------------

def tuples(x, y):
    pair = (np.sin(x), y * x)
    a, b = pair
    swapped = (b, a)
    return swapped[0] + pair[1] * a, (a, 2.0 * b)


def tuple_argument(pair, x):
    W, b = pair
    return np.tanh(W @ x + b) * pair[1]


def test_tuples_built_inside():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    check_jvp(tuples, (x, y), (like(x), like(y)))
    check_jvp(tuples, (x, y), (like(x), None))


def test_tuple_argument_with_a_tuple_tangent():
    pair, x = (RNG.standard_normal((2, 3)), RNG.standard_normal(2)), RNG.standard_normal(3)
    check_jvp(tuple_argument, (pair, x), ((like(pair[0]), like(pair[1])), like(x)))
    check_jvp(tuple_argument, (pair, x), ((like(pair[0]), like(pair[1])), None))


# --- lists ---------------------------------------------------------------------------

def appends(x, y):
    hs = [x]
    for i in range(4):
        hs.append(np.sin(hs[-1]) * y + 0.1 * i)
    joined = np.concatenate(hs)
    return np.stack(hs) * 2.0, joined[::2], sum(hs)


def list_argument(layers, x):
    for W in layers:
        x = np.tanh(W @ x)
    return x


def list_display(x, y):
    xs = [x, y * y, x * y]
    xs.append(xs[0] + xs[2])
    return np.stack(xs, axis=-1), [xs[1], xs[3]]


def test_list_appended_in_a_loop():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    check_jvp(appends, (x, y), (like(x), like(y)))
    check_jvp(appends, (x, y), (None, like(y)))


def test_list_display_and_list_output():
    x, y = RNG.standard_normal(2), RNG.standard_normal(2)
    tangent = check_jvp(list_display, (x, y), (like(x), like(y)))
    assert isinstance(tangent[1], list)


def test_list_argument_with_a_list_tangent():
    layers = [RNG.standard_normal((3, 3)) * 0.5 for _ in range(3)]
    x = RNG.standard_normal(3)
    check_jvp(list_argument, (layers, x), ([like(W) for W in layers], like(x)))


def test_list_argument_is_not_modified():
    def extend(xs):
        xs.append(xs[0] * 2.0)
        return np.stack(xs)

    xs = [RNG.standard_normal(2), RNG.standard_normal(2)]
    ts = [like(x) for x in xs]
    _, tangent = srcgrad.jvp(extend, (xs,), (ts,))
    assert len(xs) == 2 and len(ts) == 2
    assert_close(tangent, np.stack([ts[0], ts[1], 2.0 * ts[0]]))


# --- dicts ---------------------------------------------------------------------------

def dicts(x, y):
    d = {"w": np.exp(x), "v": x * y}
    total = 0.0 * x
    weights = {"w": 0.5, "v": 2.0}
    for key, value in d.items():
        total = total + weights[key] * value * y
    return total, {"sum": d["w"] + d["v"], "w": d["w"]}


def dict_argument(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    norms = []
    for key in params:
        norms.append(params[key] * params[key])
    return h * params["scale"], norms


def test_dicts_built_inside():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    tangent = check_jvp(dicts, (x, y), (like(x), like(y)))
    assert set(tangent[1]) == {"sum", "w"}
    check_jvp(dicts, (x, y), (None, like(y)))


def test_dict_argument_with_a_dict_tangent():
    params = {"W": RNG.standard_normal((2, 3)), "b": RNG.standard_normal(2), "scale": 1.5}
    x = RNG.standard_normal(3)
    direction = {"W": like(params["W"]), "b": like(params["b"]), "scale": 0.7}
    check_jvp(dict_argument, (params, x), (direction, None))
    check_jvp(dict_argument, (params, x), (direction, like(x)))


# --- objects -------------------------------------------------------------------------

@dataclasses.dataclass
class Linear:
    W: np.ndarray
    b: np.ndarray
    name: str = "layer"


def object_argument(model, x):
    return np.sin(model.W @ x + model.b)


def two_layers(first, second, x):
    return second.W @ np.tanh(first.W @ x + first.b) + second.b


@pytest.mark.parametrize("as_dict", [False, True], ids=["dataclass", "dict"])
def test_dataclass_argument_with_a_structured_tangent(as_dict):
    model = Linear(RNG.standard_normal((2, 3)), RNG.standard_normal(2))
    x = RNG.standard_normal(3)
    direction = {"W": like(model.W), "b": like(model.b)}
    if not as_dict:
        direction = Linear(direction["W"], direction["b"])
    check_jvp(object_argument, (model, x), (direction, None))
    check_jvp(object_argument, (model, x), (direction, like(x)))


def test_objects_of_which_one_attribute_moves():
    first = Linear(RNG.standard_normal((3, 3)), RNG.standard_normal(3))
    second = Linear(RNG.standard_normal((2, 3)), RNG.standard_normal(2))
    x = RNG.standard_normal(3)
    check_jvp(two_layers, (first, second, x), (Linear(like(first.W), like(first.b)), None, None))
    check_jvp(two_layers, (first, second, x),
              (Linear(like(first.W), like(first.b)),
               {"W": like(second.W), "b": like(second.b)}, like(x)))


# --- builtin sum -----------------------------------------------------------------------

def sums(x, y):
    return sum([x * y, np.sin(x)]), sum([x, y], y[:, None] * 2.0), sum([y * y], 1.0)


def test_builtin_sum_with_and_without_start():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    check_jvp(sums, (x, y), (like(x), like(y)))
    check_jvp(sums, (x, y), (like(x), None))
