"""A shallow copy of a list or dict holds the same arrays (outside tester T2 #4).

``ks = hs.copy(); ks[0] *= 3.0`` changes ``hs[0]`` too: Python's copy of a list
(``hs.copy()``, ``copy.copy(hs)``, ``list(hs)``, ``hs[:]``, ``hs[::-1]``,
``[*hs]``) or a dict (``d.copy()``, ``dict(d)``, ``copy.copy(d)``, ``{**d}``) is
a new container of the same items.  ``hs.copy()`` was taken for an array's copy
and the update was lost: the value value_and_grad returned, the gradient and
the tangent were all wrong, with no error; ``hs[:]`` was refused as a view with
a message blaming the copy, ``dict(d)`` with MissingRuleError and ``{**d}`` as a
dict display without constant keys.  Each program runs under every policy
(value bit for bit the function's own, gradient against central differences)
and in forward mode, with cases in a loop, a branch and a helper; autograd
agrees where it runs the program (no in-place update).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.7, -1.3, 0.4])


def list_copy(x):
    hs = [x * 1.0]
    ks = hs.copy()
    ks[0] *= 3.0
    return np.sum(hs[0] * x)


def copy_copy(x):
    hs = [x * 1.0, x ** 2]
    ks = copy.copy(hs)
    ks[1] *= 3.0
    return np.sum(hs[1] * x) + np.sum(ks[0])


def dict_method_copy(x):
    d = {'a': x * 1.0}
    e = d.copy()
    e['a'] *= 3.0
    return np.sum(d['a'] * x)


def dict_call(x):
    d = {'a': x * 1.0, 'b': x * 2.0}
    e = dict(d)
    e['b'] += x
    return np.sum(d['b'] * x) + np.sum(e['a'])


def dict_copy_copy(x):
    d = {'a': np.sin(x)}
    e = copy.copy(d)
    e['a'] *= x
    return np.sum(d['a'])


def list_call(x):
    hs = [x * 1.0]
    ks = list(hs)
    ks[0] *= 3.0
    return np.sum(hs[0] * x)


def whole_slice(x):
    hs = [x * 1.0]
    ks = hs[:]
    ks[0] *= 3.0
    return np.sum(hs[0] * x)


def reversed_slice(x):
    hs = [x * 1.0, x * 2.0]
    ks = hs[::-1]
    ks[0] *= 3.0
    return np.sum(hs[1] * x) + np.sum(hs[0])


def starred_list(x):
    hs = [x * 1.0]
    ks = [*hs]
    ks[0] *= 3.0
    return np.sum(hs[0] * x)


def starred_dict(x):
    d = {'a': x * 1.0}
    e = {**d, 'b': x * 4.0}
    e['a'] *= 3.0
    return np.sum(d['a'] * x) + np.sum(e['b'])


def element_write(x):
    hs = [x * 1.0]
    ks = hs.copy()
    ks[0][0] = x[1] * 5.0
    return np.sum(hs[0] * x)


def copy_of_a_copy(x):
    hs = [x * 1.0]
    ks = hs.copy()
    ms = ks.copy()
    ms[0] *= 3.0
    return np.sum(hs[0] * x)


def copy_not_changed_by_its_own_items(x):
    hs = [x * 1.0, x * 2.0]
    ks = hs.copy()
    ks[0] = x * 5.0          # a new item of ks: hs keeps its own
    ks.append(x)
    return np.sum(hs[0] * x) + len(hs) + np.sum(ks[0])


def in_a_loop(x):
    hs = [x * 1.0, np.cos(x)]
    for t in range(3):
        ks = hs.copy()
        ks[t % 2] *= 1.5
        ks[1] += hs[0] * 0.1
    return np.sum(hs[0] * hs[1])


def in_a_branch(x):
    d = {'h': x * 1.0}
    if np.sum(x) < 0:
        e = d.copy()
        e['h'] *= 2.0
    else:
        e = dict(d)
        e['h'] -= 1.0
    return np.sum(d['h'] * x)


def scaled_first(x):
    hs = [x * 1.0, x * 2.0]
    ks = hs.copy()
    ks[0] *= 3.0
    d = dict({'h': hs[1]})
    e = d.copy()
    e['h'] += 1.0
    return hs[0] + d['h'] * ks[1]


def in_a_helper(x):
    return np.sum(scaled_first(x) * x)


PROGRAMS = [list_copy, copy_copy, dict_method_copy, dict_call, dict_copy_copy, list_call,
            whole_slice, reversed_slice, starred_list, starred_dict, element_write,
            copy_of_a_copy, copy_not_changed_by_its_own_items, in_a_loop, in_a_branch,
            in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_an_update_through_a_shallow_copy_is_seen_by_the_original(fn):
    check(fn, (X,))


def test_value_and_gradient_of_the_testers_program():
    value, grad = srcgrad.value_and_grad(list_copy)(X.copy())
    assert value == list_copy(X.copy())
    assert_close(grad, 6.0 * X)


def rebound_item(x):
    hs = [x * 1.0]
    ks = hs.copy()
    ks[0] = ks[0] * 3.0      # a new item of ks: hs[0] is left as it was
    e = dict({'a': hs[0]})
    return np.sum(hs[0] * x) + np.sum(ks[0]) + np.sum(e['a'])


def test_autograd_agrees_where_it_runs():
    autograd = pytest.importorskip("autograd")
    check(rebound_item, (X,))
    assert_close(srcgrad.grad(rebound_item)(X.copy()), autograd.grad(rebound_item)(X),
                 what="autograd")
