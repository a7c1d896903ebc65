"""Dict comprehensions: ``params = {k: params[k] - lr * grads[k] for k in params}``.

The fence refused every one ("dict comprehensions are not supported yet"),
though it is how people update a dict of parameters (outside tester H4,
session 32).  normalize/dict_comprehensions.py writes one as the loop that
fills a new dict, before its statement.  Each program: value bit for bit and
gradient against central differences under every policy, jvp against
differences, autograd where it runs the program; the comprehension at top
level, in a loop, in a branch, in a helper (returned), with a condition, two
generators, int keys, keys drawn before their values, zip, in loop and branch
conditions, a name of the function's own that the comprehension's variable
shadows; one evaluated later (in a lambda) is refused, located.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad
from srcgrad import UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.1])


def scaled_items(x):
    params = {"a": x[0], "b": x[1], "c": x[2]}
    scaled = {k: v * 2.0 for k, v in params.items()}
    return sum(scaled[k] ** 2 for k in sorted(scaled)) + scaled["a"] * scaled["c"]


def sgd(params, grads, lr=0.1):
    return {k: params[k] - lr * grads[k] for k in params}


def sgd_steps(x):  # a helper returning the comprehension, called in a loop
    p = {"w": x[:2], "b": x[2]}
    for _ in range(3):
        g = {"w": 2 * p["w"] + np.sin(p["b"]), "b": np.sin(p["b"]) * p["w"][0]}
        p = sgd(p, g)
    return np.sum(p["w"] ** 2) + p["b"]


def in_the_loop(x):  # the comprehension in a loop body, reading the loop's variable
    p = {"u": x[0], "v": x[1:]}
    for t in range(3):
        p = {k: np.tanh(v * (t + 1)) + x[2] for k, v in p.items()}
    return p["u"] + np.sum(p["v"] ** 2)


def in_a_branch(x):
    p = {"u": x[0], "v": x[1]}
    if x[2] > 0:
        p = {k: v ** 2 for k, v in p.items()}
    else:
        p = {k: -v for k, v in p.items()}
    return p["u"] * p["v"] + x[2]


def filtered(x):  # a condition, and the function's own k and v left as they were
    k, v = 5, x[0]
    p = {"w": x[:2], "b": x[2]}
    p = {k: p[k] * v for k in p if k != "b"}
    return np.sum(p["w"]) + k * v + len(p)


def int_keys(x):  # int keys, two generators, a condition on both
    d = {i: x[i] ** 2 for i in range(3)}
    e = {i: d[i] * d[j] for i in range(3) for j in range(i) if j > 0}
    return d[0] + d[2] + sum(e.values())


def zipped(x):
    names = ["a", "b", "c"]
    d = {n: np.exp(v) for n, v in zip(names, x)}
    return d["a"] * d["c"] - d["b"]


def in_conditions(x):  # in a while and an if test (run as written) and a call's argument
    d = {"a": x[0], "b": x[1]}
    n = 0
    while {k: v * n for k, v in d.items()}["a"] < 1.0 and n < 5:
        n += 1
    if {k: -v for k, v in d.items()}["b"] > 0:
        n += 1
    return x[0] * n + sum({k: v ** 2 for k, v in d.items()}.values())


def drawn_keys(x):  # the key drawn before the value, as Python evaluates them
    rng = np.random.default_rng(3)
    d = {int(rng.integers(100)): rng.normal() * x[i] for i in range(3)}
    return sum(k * v for k, v in d.items())


PROGRAMS = [scaled_items, sgd_steps, in_the_loop, in_a_branch, filtered, int_keys, zipped,
            in_conditions, drawn_keys]


@pytest.mark.parametrize("fn", PROGRAMS)
def test_every_policy_and_jvp(fn):
    check(fn, (X.copy(),), 0)
    other = X * np.array([1.0, 1.0, -1.0])  # the other branch of in_a_branch
    check(fn, (other,), 0)


def _autograd_version(fn):
    source_globals = {**fn.__globals__, "np": anp}
    return type(fn)(fn.__code__, source_globals, fn.__name__, fn.__defaults__)


@pytest.mark.parametrize("fn", [scaled_items, in_the_loop, in_a_branch, int_keys, zipped])
def test_autograd_agrees(fn):
    assert_close(srcgrad.grad(fn)(X.copy()), autograd.grad(_autograd_version(fn))(X.copy()),
                 rtol=1e-10, atol=1e-12)


def test_hvp_against_differences_of_the_gradient():
    v = np.array([0.5, -1.0, 0.25])
    eps = 1e-6
    g = srcgrad.grad(sgd_steps)
    fd = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(sgd_steps)(X.copy(), v), fd, rtol=1e-5, atol=1e-7)


def deferred(x):
    make = lambda s: {k: s * v for k, v in zip("ab", x)}  # noqa: E731
    return make(2.0)["a"]


def test_a_comprehension_evaluated_later_is_refused_located():
    with pytest.raises(UnsupportedSyntaxError, match="dict comprehension inside a lambda") \
            as info:
        srcgrad.grad(deferred)(X.copy())
    assert info.value.filename == __file__ and info.value.lineno == deferred.__code__.co_firstlineno + 1
