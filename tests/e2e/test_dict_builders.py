"""``dict(k=v)`` and ``d.update(...)`` holding a differentiated value, and
``copy.deepcopy`` of a dict or list of arrays.

Each was refused: ``dict(a=x)`` ("no adjoint rule for 'builtins.dict'"),
``d.update(b=x ** 2)`` ("'d.update(...)' may change 'd' in place ... in a way
srcgrad cannot follow"), ``copy.deepcopy(p)`` ("no adjoint rule for
'copy.deepcopy'").  ``dict(a=x)`` is now read as the display ``{'a': x}``
(normalize/sugar.py), ``d.update({'a': x}, b=y)`` on a local dict as the item
writes ``d['a'] = x; d['b'] = y`` (normalize/statements.py ``dict_update``),
and ``copy.deepcopy`` has the rules of a copy (rules/containers.py).  Each
program: value bit for bit under every policy and in jvp, gradient and
tangent against differences; autograd where it runs the program.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -1.2, 0.7])


def built_by_dict(x):
    d = dict(a=x, b=x ** 2)
    return np.sum(d['a'] * d['b'])


def updated(x):
    d = {'a': x}
    d.update(b=x ** 2, c=np.sin(x))
    d.update({'e': x * 3.0, 'a': d['a'] * 2.0})
    return np.sum(d['a'] * d['b']) + np.sum(d['c'] + d['e'])


def in_a_loop(x):
    d = dict(h=x * 1.0)
    for k in range(3):
        d.update(h=np.tanh(d['h'] * (k + 1.0)))
    return np.sum(d['h'] ** 2)


def in_a_branch(x):
    d = dict(s=x)
    if np.sum(x) > 0:
        d.update(s=d['s'] ** 2)
    else:
        d.update({'s': np.cos(d['s'])})
    return np.sum(d['s'])


def make(x):
    d = dict(w=x * 2.0)
    d.update(b=np.exp(x))
    d.update(w=d['w'] + d['b'])
    return d


def in_a_helper(x):
    p = make(x)
    return np.sum(p['w'] * p['b']) + np.sum(make(x ** 2)['w'])


def deep_copied(x):
    p = {'w': x * 2.0, 'b': [x, x ** 2]}
    q = copy.deepcopy(p)
    q['w'] = q['w'] + 1.0
    q['b'][1][0] = 3.0 * x[2]
    return np.sum(q['w'] * p['w']) + np.sum(q['b'][1] * p['b'][1])


def deep_copied_list(x):
    p = [x * 2.0, np.sin(x)]
    q = copy.deepcopy(p)
    q[0] *= 2.0
    return np.sum(q[0] * q[1]) + np.sum(p[0])


PROGRAMS = [built_by_dict, updated, in_a_loop, in_a_branch, in_a_helper, deep_copied,
            deep_copied_list]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_dict_builders(fn):
    x = X.copy()
    check(fn, (x,))
    np.testing.assert_array_equal(x, X)


def test_the_other_branch():
    check(in_a_branch, (-X,))


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    for fn in (built_by_dict, in_a_branch):
        plain = fn.__wrapped__ if hasattr(fn, "__wrapped__") else fn
        try:
            want = autograd.grad(plain)(X)
        except Exception:  # noqa: BLE001 - autograd runs numpy, not autograd.numpy, here
            continue
        assert_close(srcgrad.grad(fn)(X), want, what="autograd")


def test_an_update_of_an_object_stays_as_written():
    class Box:
        def __init__(self):
            self.seen = {}

        def update(self, **kw):
            self.seen.update(kw)

    box = Box()

    def f(x):
        d = box
        d.update(a=1.0)
        return np.sum(x ** 2)

    assert_close(srcgrad.grad(f)(X), 2 * X)
    assert box.seen == {"a": 1.0}
