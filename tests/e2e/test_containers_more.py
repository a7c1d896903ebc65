"""Dicts and lists the outside tester (t1) found differentiated wrongly.

- ``a | b`` and ``a |= b`` of dicts (t1 5): differentiated as a bitwise or,
  the gradient was silently zero; now a merge, each item's derivative from the
  dict it came from (normalize/dict_merges.py).

Each case: the value bit for bit (check=True), the gradient against central
differences under every policy, the tangent against central differences and
the Hessian-vector product against differences of the gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, jvp_fd, numeric_grad, pure

import srcgrad

X = np.array([0.5, -1.2, 0.7])
DIRECTION = np.array([0.3, 1.0, 2.0])
POLICIES = ("save", "recompute", "sqrt", ("revolve", 2))


def merge(x):  # the tester's program
    a = {'u': x[0], 'v': x[1]}
    c = a | {'v': x[2] * 2}
    return c['u'] + c['v'] * 3


def merge_in_place(x):  # the tester's program
    a = {'u': x[0], 'v': x[1]}
    a |= {'u': x[1] ** 2}
    return a['u'] * 5 + a['v']


def merge_seen_through_an_alias(x):
    a = {'u': x[0], 'v': x[1]}
    c = a
    a |= {'u': x[1] ** 2}
    return c['u'] * 5 + a['v'] * c['v']


def merge_in_a_loop_and_branch(x):
    d = {'s': x[0]}
    for i in range(3):
        d = d | {'s': d['s'] * x[1] + x[2]}
        if i == 1:
            d |= {'t': x[0] * 3}
    return d['s'] + d['t']


def _step(p, g):
    return p | {'w': p['w'] - 0.1 * g}


def merge_in_a_helper(x):
    p = {'w': x[0], 'b': x[1]}
    p = _step(p, x[2] ** 2)
    return p['w'] * p['b']


def bitwise_or_of_masks_stays(x):
    m = (x > 0) | (x < -1)
    return np.sum(np.where(m, x, 0.0)) * (3 | 4)


CASES = [merge, merge_in_place, merge_seen_through_an_alias, merge_in_a_loop_and_branch,
         merge_in_a_helper, bitwise_or_of_masks_stays]


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_merge_gradient(fn, policy):
    _, grad = srcgrad.value_and_grad(fn, policy=policy, check=True)(X)
    assert_close(grad, numeric_grad(pure(fn), [X], 0), what=f"{fn.__name__}, {policy}")


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_merge_tangent_and_hvp(fn):
    value, tangent = srcgrad.jvp(fn, (X,), (DIRECTION,))
    assert value == fn(X.copy())
    assert_close(tangent, jvp_fd(pure(fn), [X], [0], [DIRECTION]), what=fn.__name__)
    grad = srcgrad.grad(fn)
    eps = 1e-5
    fd = (grad(X + eps * DIRECTION) - grad(X - eps * DIRECTION)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, DIRECTION), fd, rtol=1e-4, atol=1e-6, what=fn.__name__)


def test_merge_of_a_dict_argument():
    """``d | {...}`` with ``d`` passed in: its items' gradients, both modes."""
    def f(d, y):
        e = d | {'b': y}
        return e['a'] * e['b']
    d = {'a': 2.0, 'b': 3.0}
    grad_d, grad_y = srcgrad.grad(f, wrt=(0, 1))(d, 1.5)
    assert grad_d == {'a': 1.5, 'b': 0.0} and grad_y == 2.0
    assert srcgrad.jvp(f, (d, 1.5), ({'a': 1.0, 'b': 1.0}, 1.0))[1] == 3.5
