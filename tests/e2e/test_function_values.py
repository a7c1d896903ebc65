"""Functions held as values and called: ``ACTS[name](h)``, ``for f in FNS: x = f(x)``.

Notebook and autograd-style code keeps activations in a dict, transforms in a
list, picks one with ``np.sin if odd else np.cos``.  All of these were refused
("it holds a function only known when the code runs").  A call of such a
value is now one branch per function it may be -- those the function names
as values and those its global lists and dicts hold -- chosen by identity,
after a located guard for any other (normalize/function_values.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numeric import assert_close, check_every_policy, numeric_grad

import srcgrad
from srcgrad import SrcGradError


def softplus(v):
    return np.log1p(np.exp(v))


ACTS = {"relu": lambda v: np.maximum(v, 0.0), "tanh": np.tanh, "softplus": softplus}
TRANSFORMS = [np.sin, lambda v: v * 2.0, np.exp]
WEIGHTED = [(np.sin, 0.5), (np.cos, 2.0), (softplus, -1.0)]


def table_lookup(x, kind="softplus"):
    return np.sum(ACTS[kind](x) * x)


def each_in_turn(x):
    for f in TRANSFORMS:
        x = f(x)
    return np.sum(x)


def by_index_in_a_loop(x):
    s = 0.0
    for i in range(len(TRANSFORMS)):
        s = s + np.sum(TRANSFORMS[i](x) * (i + 1))
    return s


def local_list_of_named_functions(x):
    fns = [np.sin, np.cos, softplus]
    s = 0.0
    for f in fns:
        s = s + np.sum(f(x) ** 2)
    return s


def pairs_of_function_and_weight(x):
    s = 0.0
    for f, w in WEIGHTED:
        s = s + w * np.sum(f(x))
    return s


def chosen_by_a_branch(x, odd):
    f = np.sin if odd else np.cos
    return np.sum(f(x * 3.0))


def items_of_a_dict(x):
    s = 0.0
    for name, act in ACTS.items():
        if name != "relu":
            s = s + np.sum(act(x))
    return s


def through_a_helper(x, names):
    h = x
    for name in names:
        h = apply(name, h)
    return np.sum(h ** 2)


def apply(name, v):
    return ACTS[name](v) + 0.1 * v


def mlp(params, x, acts=("tanh", "softplus")):
    h = x
    for (W, b), name in zip(params, acts):
        h = ACTS[name](h @ W + b)
    return np.sum(h ** 2)


def math_functions(a):
    s = 0.0
    for f in (math.sin, math.exp, math.tanh):
        s = s + f(a * 0.5)
    return s


X = np.array([0.3, -0.5, 1.2])


@pytest.mark.parametrize("fn, args", [
    (table_lookup, (X,)),
    (table_lookup, (X, "tanh")),
    (each_in_turn, (X,)),
    (by_index_in_a_loop, (X,)),
    (local_list_of_named_functions, (X,)),
    (pairs_of_function_and_weight, (X,)),
    (chosen_by_a_branch, (X, True)),
    (chosen_by_a_branch, (X, False)),
    (items_of_a_dict, (X,)),
    (through_a_helper, (X, ("tanh", "relu", "softplus"))),
])
def test_calls_of_functions_held_as_values(fn, args):
    check_every_policy(fn, args, 0)


def test_a_python_float_through_math_functions_in_a_tuple():
    check_every_policy(math_functions, (0.7,), 0)


def test_an_mlp_whose_activations_a_dict_names():
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(3, 4)), rng.normal(size=4)),
              (rng.normal(size=(4, 2)), rng.normal(size=2))]
    x = rng.normal(size=(5, 3))
    value, grads = srcgrad.value_and_grad(mlp)(params, x)
    assert value == mlp(params, x)
    for layer in range(2):
        for k in range(2):
            def part(p, layer=layer, k=k):
                ps = [list(q) for q in params]
                ps[layer][k] = p
                return mlp([tuple(q) for q in ps], x)
            assert_close(grads[layer][k], numeric_grad(part, [params[layer][k]], 0), rtol=1e-6)


def test_the_code_shows_one_branch_per_function():
    source = srcgrad.grad(table_lookup).source
    assert "t1 = ACTS[kind]" in source
    assert "if t1 is relu_fn" in source or "t1 is relu_fn" in source
    assert "np.tanh(x)" in source


def test_a_function_added_to_the_list_later_gets_new_code():
    g = srcgrad.grad(each_in_turn)
    before = g(X)
    TRANSFORMS.append(np.tanh)
    try:
        after = g(X)  # the list changed: new code, as for a rebound global
        assert_close(after, numeric_grad(each_in_turn, [X], 0), rtol=1e-6)
    finally:
        TRANSFORMS.pop()
    assert_close(g(X), before, rtol=0, atol=0)


def test_a_function_it_did_not_see_is_a_located_error():
    def other(v):
        return v * 3.0

    code = srcgrad.grad(each_in_turn)._get().functions[0]  # the code as compiled
    TRANSFORMS.append(other)
    try:
        with pytest.raises(SrcGradError, match=r"TRANSFORMS\[0\]") as caught:
            code(X)
    finally:
        TRANSFORMS.pop()
    assert "test_function_values.py" in str(caught.value)


def each_passed(x, fns):
    for f in fns:
        x = f(x)
    return np.sum(x)


def layers_with_their_activations(params, x):
    h = x
    for W, b, act in params:
        h = act(h @ W + b)
    return np.sum(h ** 2)


@pytest.mark.parametrize("fns", [[np.sin, np.cos], [np.tanh], (np.exp, softplus),
                                 {"a": np.tanh, "b": ACTS["relu"]}.values, [softplus, np.sin]],
                         ids=["sin-cos", "tanh", "tuple", "dict-values", "user-function"])
def test_functions_in_a_list_passed_as_an_argument(fns):
    fns = list(fns()) if callable(fns) and not isinstance(fns, (list, tuple)) else fns
    check_every_policy(each_passed, (X, fns), 0)


def test_each_list_passed_gets_code_of_its_own():
    g = srcgrad.grad(each_passed)
    assert_close(g(X, [np.sin]), np.cos(X), rtol=1e-15)
    assert_close(g(X, [np.tanh]), 1 - np.tanh(X) ** 2, rtol=1e-15)  # not the first list's code
    assert "Specialised for fns=[np.tanh]" in g.source


def test_layers_holding_their_activation():
    rng = np.random.default_rng(3)
    params = [(rng.normal(size=(3, 4)), rng.normal(size=4), np.tanh),
              (rng.normal(size=(4, 2)), rng.normal(size=2), softplus)]
    x = rng.normal(size=(5, 3))
    value, grads = srcgrad.value_and_grad(layers_with_their_activations)(params, x)
    assert value == layers_with_their_activations(params, x)
    assert grads[0][2] is None and grads[1][2] is None  # a function has no gradient (D-20)
    for layer in range(2):
        for k in range(2):
            def part(p, layer=layer, k=k):
                ps = [list(q) for q in params]
                ps[layer][k] = p
                return layers_with_their_activations([tuple(q) for q in ps], x)
            assert_close(grads[layer][k], numeric_grad(part, [params[layer][k]], 0), rtol=1e-6)


def test_a_function_that_cannot_take_the_arguments_is_no_choice():
    pair = [np.sin, np.add]

    def f(x):
        s = 0.0
        for g in pair[:1]:
            s = s + np.sum(g(x))
        return s + np.sum(pair[1](x, x))

    check_every_policy(f, (X,), 0)


PAIRS = [(np.sin, 1.0), (np.cos, 2.0)]


def weighted_pairs(x):
    s = 0.0
    for fn, w in PAIRS:
        s = s + np.sum(fn(x)) * w
    return s


def test_a_pair_replaced_in_a_global_list_gets_new_code():
    # review s37 D-24: the tuples' functions were not watched; the old code's guard refused
    g = srcgrad.grad(weighted_pairs)
    g(X)
    PAIRS[0] = (np.exp, 1.0)
    try:
        assert_close(g(X), np.exp(X) - 2.0 * np.sin(X), rtol=1e-12)
    finally:
        PAIRS[0] = (np.sin, 1.0)
