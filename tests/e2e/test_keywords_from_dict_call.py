"""``f(x, **opts)`` with ``opts = dict(target=0.5, scale=2.0)`` (outside tester T1, session 30, #5).

The keys of ``dict(k=v, ...)`` are as known as those of the display ``{'k':
v}``, which ``**`` already took (normalize/keywords.py); the call form was
refused ("'**' arguments are supported for a dict whose keys are known ...").
It is now read as that display, at the top of the function or written in the
call (``**dict(axis=0)``).  Each program: value bit for bit under every policy
and in jvp, gradient and tangent against differences, autograd.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([1.0, 2.0, -0.5])


def loss_kw(x, **kw):
    return np.sum((x - kw.get('target', 0.0)) ** 2) * kw.get('scale', 1.0)


def the_testers(x):  # 5.0 at [1, 2], gradient [2, 6]
    opts = dict(target=0.5, scale=2.0)
    return loss_kw(x, **opts)


def written_in_the_call(x):
    return loss_kw(x, **dict(target=x[0], scale=2.0)) + np.sum(np.mean(x, **dict(axis=0)))


def in_a_loop(x):
    opts = dict(target=0.25, scale=0.5)
    s = 0.0
    for k in range(3):
        s = s + loss_kw(x * float(k + 1), **opts)
    return s


def in_a_branch(x):
    opts = dict(target=1.0, scale=3.0)
    if np.sum(x) > 0:
        return loss_kw(x, **opts)
    return np.sum(x ** 3)


def in_a_branch_other_way(x):
    return in_a_branch(-x)


def helper(x):
    opts = dict(axis=0, keepdims=True)
    return np.sum(np.sum(x[None, :] ** 2, **opts))


def in_a_helper(x):
    return helper(x) * loss_kw(x, **dict(scale=0.5))


PROGRAMS = [the_testers, written_in_the_call, in_a_loop, in_a_branch, in_a_branch_other_way,
            in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_keywords_of_a_dict_call(fn):
    check(fn, (X,))


def test_the_testers_numbers():
    value, grad = srcgrad.value_and_grad(the_testers)(np.array([1.0, 2.0]))
    assert value == 5.0
    assert_close(grad, np.array([2.0, 6.0]))


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):
        return anp.sum((x - 0.5) ** 2) * 2.0

    assert_close(srcgrad.grad(the_testers)(X.copy()), autograd.grad(plain)(X), what="autograd")
