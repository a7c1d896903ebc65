"""``dict(items)`` where srcgrad cannot see what ``items`` is (reviewer s33, F9).

``Q = dict(P)`` of a parameter dict -- how optimiser code copies one -- raised
MissingRuleError "no adjoint rule for 'builtins.dict'", though ``P.copy()`` and
``{**P}`` were followed: only a ``dict(d)`` of a ``d`` srcgrad saw was a dict
(a display) had the 'dict copy' rule.  ``dict(zip(names, values))`` and
``dict([(k, v), ...])``, a dict made of pairs, were refused the same way.
``builtins.dict`` now has rules that decide as the code runs, as ``dict``
itself does (runtime/dicts.py): a mapping is copied, its cotangent passes
through; pairs give each key's last value its key's cotangent.  Each program:
value bit for bit and gradient against central differences under every
policy, jvp against differences; the copy at top level, of a parameter, in a
loop, a branch and a helper; autograd agrees where it runs the program.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.7, -1.3, 0.4])


def _made(x):
    out = {}
    for k, s in (("w", 1.0), ("b", 2.0)):
        out[k] = x * s
    return out


def _filled(x, keys):
    """A dict srcgrad cannot see is one when compiling: a helper's, made by key."""
    return {k: x * (i + 1.0) for i, k in enumerate(keys)}


def copy_rebound(x):
    p = _made(x)
    q = dict(p)
    q["w"] = q["w"] * 2.0
    return np.sum(p["w"] * x) + np.sum(q["w"] ** 2) + np.sum(q["b"])


def pairs_last_wins(x):
    d = dict([("a", x), ("b", 2.0 * x), ("a", x ** 2)])  # the second 'a' is kept
    return np.sum(d["a"] * d["b"])


def pairs_as_lists(x):
    d = dict([["a", np.sin(x)], ["b", x * 3.0]])
    return np.sum(d["a"] * d["b"])


def zipped(x):
    names = ("a", "b", "c")
    d = dict(zip(names, [x[0], x[1] * x[2], np.cos(x)]))
    return d["a"] * d["b"] + np.sum(d["c"])


def tuple_of_pairs(x):
    d = dict((("u", x[0]), ("v", x[1:])))
    return d["u"] * np.sum(d["v"] ** 2)


def in_a_loop(x):
    p = _filled(x, "wb")
    for t in range(3):
        q = dict(p)
        q["w"] = q["w"] * (t + 1.0) + p["b"]
        p = q
    return np.sum(p["w"] ** 2) + np.sum(p["b"])


def in_a_branch(x):
    p = _filled(x, "ab")
    if np.sum(x) > 0:
        q = dict(p)
        q["a"] = np.tanh(q["a"])
    else:
        q = dict(zip(p, [p["b"], p["a"]]))
    return np.sum(q["a"] * q["b"])


def _sgd(params, grads, lr=0.1):
    new = dict(params)
    for k in new:
        new[k] = new[k] - lr * grads[k]
    return new


def in_a_helper(x):
    p = _filled(x, "wb")
    for _ in range(2):
        g = {"w": 2.0 * p["w"], "b": np.sin(p["b"])}
        p = _sgd(p, g)
    return np.sum(p["w"] * p["b"])


PROGRAMS = [copy_rebound, pairs_last_wins, pairs_as_lists, zipped, tuple_of_pairs, in_a_loop,
            in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))  # the other branch of in_a_branch


def _autograd_version(fn):
    return type(fn)(fn.__code__, {**fn.__globals__, "np": anp}, fn.__name__, fn.__defaults__)


@pytest.mark.parametrize("fn", [pairs_last_wins, pairs_as_lists, zipped, tuple_of_pairs])
def test_autograd_agrees(fn):
    assert_close(srcgrad.grad(fn)(X.copy()), autograd.grad(_autograd_version(fn))(X.copy()),
                 rtol=1e-10, atol=1e-12)


# -- a dict passed as the argument: the reviewer's program ----------------------------


def reviewers(P):
    Q = dict(P)                 # shallow copy of a dict of parameters
    Q["w"] = Q["w"] * 2.0
    return np.sum(Q["w"] ** 2) + np.sum(P["w"])


def sgd_of_the_argument(P):
    Q = _sgd(P, {"w": np.cos(P["w"]), "b": P["b"] * P["w"][0]})
    return np.sum(Q["w"] ** 2) * Q["b"]


def _params():
    return {"w": np.array([1.0, 2.0]), "b": np.float64(0.3)}


def _fd(fn, P, eps=1e-6):
    grad = {}
    for k, v in P.items():
        flat, g = np.array(v, dtype=float).ravel(), []
        for i in range(flat.size):
            up, down = flat.copy(), flat.copy()
            up[i] += eps
            down[i] -= eps
            g.append((fn({**P, k: up.reshape(np.shape(v))})
                      - fn({**P, k: down.reshape(np.shape(v))})) / (2 * eps))
        grad[k] = np.array(g).reshape(np.shape(v))
    return grad


@pytest.mark.parametrize("fn", [reviewers, sgd_of_the_argument], ids=lambda f: f.__name__)
def test_a_dict_argument_copied_with_dict(fn):
    P = _params()
    want = fn(_params())
    fd = _fd(fn, P)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(P)
        assert_bit_identical(value, want, f"policy {policy!r}")
        assert set(grad) == set(P)
        for k in P:
            assert_close(grad[k], fd[k], rtol=1e-6, atol=1e-8, what=f"{k}, policy {policy!r}")
    assert all(np.array_equal(P[k], v) for k, v in _params().items())  # not changed
    direction = {"w": np.array([0.5, -1.0]), "b": np.float64(2.0)}
    value, tangent = srcgrad.jvp(fn, wrt=[0])(P, direction)
    assert_bit_identical(value, want, "jvp")
    assert_close(tangent, sum(np.sum(fd[k] * direction[k]) for k in P), rtol=1e-6, atol=1e-8)


def test_the_reviewers_gradient():
    grad = srcgrad.grad(reviewers)({"w": np.array([1.0, 2.0])})
    assert_close(grad["w"], np.array([9.0, 17.0]))  # 8 w + 1


@pytest.mark.parametrize("fn", [zipped, in_a_helper, pairs_last_wins], ids=lambda f: f.__name__)
def test_hvp_against_differences_of_the_gradient(fn):
    v, eps = np.array([0.5, -1.0, 0.25]), 1e-6
    g = srcgrad.grad(fn)
    fd = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X.copy(), v), fd, rtol=1e-5, atol=1e-7)


def filled_from_empty(x):  # dict() of nothing: no derivative flows into it
    q = dict()
    for i, k in enumerate("ab"):
        q[k] = x * (i + 1.0)
    if x[0] > 0:
        q["a"] = np.sin(q["a"])
    return np.sum(q["a"] * q["b"])


def test_an_empty_dict_call():
    check(filled_from_empty, (X.copy(),))
    check(filled_from_empty, (-X,))
