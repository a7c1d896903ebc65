"""Dicts and lists the outside tester (t1) found differentiated wrongly.

- ``a | b`` and ``a |= b`` of dicts (t1 5): differentiated as a bitwise or,
  the gradient was silently zero; now a merge, each item's derivative from the
  dict it came from (normalize/dict_merges.py).
- ``b = a.copy()`` of a list or dict, then ``b[0] = ...`` (t1 6): the tangent
  of ``a.copy()`` was ``np.copy`` of the list's tangent, an array that the
  write made into zeros (jvp 2.0 for 6.0), a dict's lost, a list of arrays of
  different shapes refused with a raw ValueError; now a copy of its own kind.
- ``d = {}; for k in keys: d[k] = ...`` (t1 8): the forward sweep saved
  ``d[k]`` before the write, a key not there yet (raw KeyError); now the item
  or its absence, and the adjoint sweep removes the key again.

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


def copy_then_write(x):  # the tester's program
    a = [x[0], x[1]]
    b = a.copy()
    b[0] = x[2] * 5
    return a[0] + 2 * a[1] + 3 * b[0] + 4 * b[1]


def dict_copy_then_write(x):
    a = {'u': x[0], 'v': x[1]}
    b = a.copy()
    b['u'] = x[2] * 5
    return a['u'] + 2 * a['v'] + 3 * b['u'] + 4 * b['v'] * b['u']


def copy_of_arrays_of_different_shapes(x):
    a = [x[:2], x[2]]
    b = a.copy()
    b[1] = b[1] * x[0]
    return np.sum(b[0] * a[1]) * b[1]


def copy_in_a_loop(x):
    a = [x[0], x[1], x[2]]
    for i in range(3):
        b = a.copy()
        b[i] = a[i] * x[i]
        if i == 1:
            b[0] = b[0] + a[2]
        a = b
    return a[0] + a[1] * a[2]


def _copied_and_set(a, v):
    b = a.copy()
    b[0] = v
    return b


def copy_in_a_helper(x):
    a = [x[0], x[1]]
    b = _copied_and_set(a, x[2] ** 2)
    return a[0] * b[1] + b[0] * a[1]


def dict_built_in_a_loop(x):  # the tester's program
    d = {}
    for i, k in enumerate(['a', 'b', 'c']):
        d[k] = x[i] ** 2
    return d['a'] + d['c']


def dict_built_over_keys_then_get(x):
    d = {}
    j = 0
    for k in ['a', 'b', 'c']:
        d[k] = x[j] * x[2 - j]
        j = j + 1
    return d.get('a', 0.0) * 2 + d.get('z', 1.0) + d['b']


def dict_written_twice_in_a_loop(x):
    d = {'a': x[0]}
    for i in range(3):
        k = 'a' if i % 2 == 0 else 'b'
        d[k] = d.get(k, 1.0) * x[i] + 1.0
    return d['a'] * d['b']


def _table(x, keys):
    d = {}
    for i, k in enumerate(keys):
        d[k] = np.sin(x[i])
    return d


def dict_built_in_a_helper(x):
    d = _table(x, [3, 1, 2])
    return d[3] * d[1] + d[2]


def dict_copied_then_built_in_a_loop(x):
    base = {'a': x[0]}
    d = base.copy()
    for i, k in enumerate(['b', 'c']):
        d[k] = x[i + 1] ** 2 * d['a']
    return d['a'] + d['c'] * d['b']


def list_written_by_a_name(x):
    xs = list(x)
    for i in range(3):
        xs[i] = xs[i] * xs[2 - i]
    return xs[0] + xs[1] * xs[2]


MORE = [copy_then_write, dict_copy_then_write, copy_of_arrays_of_different_shapes,
        copy_in_a_loop, copy_in_a_helper, dict_built_in_a_loop, dict_built_over_keys_then_get,
        dict_written_twice_in_a_loop, dict_built_in_a_helper, dict_copied_then_built_in_a_loop,
        list_written_by_a_name]


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", MORE, ids=lambda f: f.__name__)
def test_copies_and_dicts_built_in_loops_gradient(fn, policy):
    _, grad = srcgrad.value_and_grad(fn, policy=policy, check=True)(X)
    assert_close(grad, numeric_grad(pure(fn), [X], 0), what=f"{fn.__name__}, {policy}")


@pytest.mark.parametrize("fn", MORE, ids=lambda f: f.__name__)
def test_copies_and_dicts_built_in_loops_tangent_and_hvp(fn):
    test_merge_tangent_and_hvp(fn)
