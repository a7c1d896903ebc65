"""A gradient srcgrad made, or a custom_vjp, called with lists, tuples and dicts.

Found while making F16 (grad made inside the differentiated function): the
call ``G(w, ps)`` of ``G = srcgrad.grad(loss)`` inside a differentiated
function gave a silently wrong gradient where ``ps`` was a list, tuple or dict
holding values being differentiated -- zero for them, in reverse and forward
mode ([0, 0, 0] for [25.1, 9.4, 31.4]) -- because the second-order rules
(api/gradient_calls.py) differentiated float and array arguments only; a
tuple argument then raised a raw TypeError, and a tangent of a list gradient
(``wrt`` naming the list) was concatenated, not added.  And a list display
passed to any custom_vjp (``G(w, [a, b])``, ``wsum([x, 2 * x])``) was taken
for a constant, so its items got no gradient (zero for [1.2, -0.8, 2.0]).
Each program runs under every policy and in forward mode, against central
differences, in a loop, a branch and with the gradient made inside; one
against autograd.  A dataclass or named tuple holding such values was
dropped alike ([0, 0, 0] for [14.4, 14.4, 14.4]): its derivative is now given
by field (an AttributeCotangent, a named tuple's by position).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numeric import assert_close, numeric_grad, pure
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -0.2, 0.5])
C1, C2 = np.array([0.5, 1.0, -1.0]), np.array([2.0, 0.1, 0.3])


def loss(w, ps):
    return np.sum(w * ps[0] * ps[1]) ** 2 + ps[2] * np.sum(w)


G = srcgrad.grad(loss)
G_PS = srcgrad.grad(loss, wrt=1)
G_BOTH = srcgrad.grad(loss, wrt=(0, 1))


def list_held(p0):
    ps = [p0 * 2.0, p0 + 1.0, 3]
    return np.sum(G(np.ones(3) * 0.5, ps))


def list_displayed(p0):
    return np.sum(G(p0, [p0 * 2.0, np.sin(p0), 1.5]) ** 2)


def tuple_in_a_loop(p0):
    ps = (p0 * 2.0, np.sin(p0), 1.5)
    w = p0
    for _ in range(3):
        w = w - 0.01 * G(w, ps)
    return np.sum(w ** 2)


def dloss(w, d):
    return np.sum(w * d["a"]) ** 2 + np.sum(d["b"] * w)


G_DICT = srcgrad.grad(dloss)


def dict_in_a_branch(p0):
    d = {"a": p0 * 2.0, "b": np.ones(3)}
    if np.sum(p0) > 0:
        return np.sum(G_DICT(p0, d) ** 2)
    return np.sum(G_DICT(p0 * 2.0, d))


def gradient_of_the_list(p0):
    g = G_PS(p0, [p0, p0 * 3.0, 2.0])
    return np.sum(g[0] * g[1]) + g[2]


def gradient_of_the_list_only_displayed(p0):
    g = G_PS(np.ones(3), [p0, p0 * 3.0, 2.0])
    return np.sum(g[0])


def gradient_of_a_constant_list(p0):
    g = G_PS(p0, [C1, C2, 2.0])
    return np.sum(g[0] * g[1]) + g[2]


def both_gradients(p0):
    gw, gps = G_BOTH(p0, [p0 * p0, C2, 0.5])
    return np.sum(gw * gps[0]) + np.sum(gps[1])


def made_inside(theta, xs):
    def inner(t, xs):
        return sum(np.sum((x * t[0] - t[1]) ** 2) for x in xs)
    g = srcgrad.grad(inner)
    t = theta
    for _ in range(2):
        t = t - 0.05 * g(t, [x * theta[0] for x in xs])
    return np.sum(t ** 2)


PROGRAMS = [list_held, list_displayed, tuple_in_a_loop, dict_in_a_branch, gradient_of_the_list,
            gradient_of_the_list_only_displayed, gradient_of_a_constant_list, both_gradients]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_container_arguments_get_their_gradient(fn):
    check(fn, (X.copy(),))


def test_dict_in_the_other_branch():
    check(dict_in_a_branch, (-X,))


def test_list_built_from_the_input_for_a_gradient_made_inside():
    check(made_inside, (np.array([0.7, -0.3]), [X, X[::-1] * 2.0]))


def list_held_ag(p0):
    def loss_ag(w, ps):
        return anp.sum(w * ps[0] * ps[1]) ** 2 + ps[2] * anp.sum(w)
    ps = [p0 * 2.0, anp.sin(p0), 1.5]
    return anp.sum(autograd.grad(loss_ag)(p0, ps) ** 2)


def test_list_displayed_against_autograd():
    assert_close(srcgrad.grad(list_displayed)(X.copy()), autograd.grad(list_held_ag)(X),
                 what="autograd")


@srcgrad.custom_vjp
def wsum(ps):
    return np.sum(ps[0] * ps[1])


def wsum_fwd(ps):
    return wsum(ps), (ps[0], ps[1])


def wsum_bwd(res, g):
    a, b = res
    return ([g * b, g * a],)


wsum.defvjp(wsum_fwd, wsum_bwd)


def custom_of_a_display(x):
    return wsum([x, x * 2.0]) + 1.0


def test_list_display_passed_to_a_custom_vjp():
    for policy in ("save", "recompute", "sqrt", ("revolve", 2)):
        assert_close(srcgrad.grad(custom_of_a_display, policy=policy)(X.copy()),
                     numeric_grad(pure(custom_of_a_display), [X.copy()], 0), what=str(policy))


@dataclass
class Params:
    a: np.ndarray
    b: float


class Pair(NamedTuple):
    a: np.ndarray
    b: float


def rloss(w, p):
    return np.sum(w * p.a) ** 2 * p.b


G_RECORD = srcgrad.grad(rloss)


def dataclass_built(x):
    p = Params(x * 2.0, 1.5)
    return np.sum(G_RECORD(np.ones(3), p))


def named_tuple_in_a_loop(x):
    p = Pair(x * 2.0, 1.5)
    w = x
    for _ in range(2):
        w = w - 0.1 * G_RECORD(w, p)
    return np.sum(w ** 2)


@pytest.mark.parametrize("fn", [dataclass_built, named_tuple_in_a_loop],
                         ids=lambda f: f.__name__)
def test_records_get_their_gradient(fn):
    check(fn, (X.copy(),))


def record_passed(p):
    return np.sum(G_RECORD(np.ones(3), p))


def test_record_differentiated_itself():
    got = srcgrad.grad(record_passed)(Params(X.copy(), 1.5))
    # sum_i dL/dw_i = 2 s b sum(a), s = sum(a) at w = 1: d/da = 4 s b, d/db = 2 s ** 2
    s_ = np.sum(X)
    assert_close(got.a, np.full(3, 4 * s_ * 1.5), what="a")
    assert_close(got.b, 2 * s_ ** 2, what="b")
