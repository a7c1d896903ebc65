"""Dict displays whose keys are not constants (review s35 R3-11).

``{name: v}``, ``{KEY: v}`` with a module constant, ``{f"h{i}": v}`` in a loop,
``{**out, k: v}``: were refused ("dict displays need constant keys") although
the same dict built by ``d[k] = v`` or a comprehension was followed.  They are
differentiated as ``dict([(k, v), ...])``, which keeps Python's order of
evaluation and its treatment of a repeated key.  Each program: value bit for
bit and gradient/jvp against differences under every policy.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

KEY = "w"


def by_argument_name(x, name):
    d = {name: x ** 2, "b": x * 2}
    return np.sum(d[name] * d["b"])


def module_constant_key(x):
    d = {KEY: x * 3, "v": np.sin(x)}
    return np.sum(d["w"] * d["v"])


def local_key(x):
    k = "a"
    d = {k: x, "b": x * 2}
    return np.sum(d["a"] * d["b"])


def formatted_keys_in_a_loop(x):
    out = {}
    for i in range(3):
        out = {**out, f"h{i}": np.tanh(x * i)}
    return sum(np.sum(v ** 2) for v in out.values())


def repeated_key_keeps_the_last_value(x):
    k = "a"
    d = {k: x ** 2, "a": np.cos(x), "z": x}
    return np.sum(d["a"] * d["z"]) + len(d)


def keys_from_a_call_in_a_branch(x):
    if np.sum(x) > 0:
        d = {str(1): x * 2, str(2): x ** 3}
    else:
        d = {str(2): x, str(1): -x}
    return np.sum(d["1"] * d["2"])


def _layer(h, i):
    return {f"pre{i}": h, f"post{i}": np.tanh(h)}


def keys_built_in_a_helper(x):
    h, acts = x, {}
    for i in range(2):
        acts = {**acts, **_layer(h, i)}
        h = acts[f"post{i}"] * 1.5
    return np.sum(h) + np.sum(acts["pre1"] ** 2)


def integer_keys(x):
    d = {}
    for i in range(3):
        d = {**d, i: x * (i + 1)}
    n = 2
    e = {n: d[n] ** 2, n - 1: d[0]}
    return np.sum(e[2] + e[1])


PROGRAMS = [by_argument_name, module_constant_key, local_key, formatted_keys_in_a_loop,
            repeated_key_keeps_the_last_value, keys_from_a_call_in_a_branch,
            keys_built_in_a_helper, integer_keys]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_dict_displays_with_variable_keys_are_followed(fn):
    x = np.array([0.3, -0.5, 0.9])
    args = (x, "w") if fn is by_argument_name else (x,)
    check_every_policy(fn, args, 0)


def test_the_order_of_evaluation_is_pythons():
    import srcgrad
    seen = []

    def key(k):
        seen.append(k)
        return k

    def f(x):
        d = {key("a"): x * 2, key("b"): x ** 2}
        return np.sum(d["a"] + d["b"])

    x = np.array([0.5, 1.5])
    want = f(x)
    seen.clear()
    value, grad = srcgrad.value_and_grad(f)(x)
    assert value == want and seen == ["a", "b"]
    np.testing.assert_allclose(grad, 2 + 2 * x)
