"""A call whose result is new memory does not join its arguments (outside
tester T1 #1).

``g = half(params, x)``, ``half`` returning ``p['w'] * 0.5``, made ``x`` "share
the memory of" ``params`` in the look at what a later call changes: a user
function's result was taken as possibly any of its arguments, and so all of
them as one memory.  ``params = step(params, g)``, which updates ``params`` in
place and returns it, was then refused because the function reads ``x``
afterwards.  A helper every ``return`` of which makes a new value (no
parameter, part of one or container holding one) now relates its result to
nothing it is passed; a helper that may return an argument still joins them.
Each program runs under every policy (value bit for bit, gradient against
central differences) and in forward mode, in a loop, a branch and a helper;
autograd agrees.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import SrcGradError

W0 = np.array([1.0, 2.0])
X = np.array([0.5, 0.3])


def step(params, g):
    params['w'] = params['w'] - g
    return params


def half(p, x):
    return p['w'] * 0.5  # a fresh array; x unused


def grads(p, x):
    r = p['w'] * x - 1.0
    return r * x


def one_step(w0, x):  # T1 #1
    params = {'w': w0}
    g = half(params, x)
    params = step(params, g)
    return np.sum(params['w'] * x)


def steps_in_a_loop(w0, x):
    params = {'w': w0 * 1.0}
    for _ in range(3):
        g = grads(params, x)
        params = step(params, 0.1 * g)
    return np.sum(params['w'] ** 2 * x)


def step_in_a_branch(w0, x):
    params = {'w': np.sin(w0)}
    g = grads(params, x)
    if np.sum(g) > 0:
        params = step(params, g)
    else:
        params = step(params, -g)
    return np.sum(params['w'] * x)


def train(w0, x):
    params = {'w': w0 * 2.0}
    g = half(params, x)
    params = step(params, g)
    return params['w']


def in_a_helper(w0, x):
    return np.sum(train(w0, x) * x)


PROGRAMS = [one_step, steps_in_a_loop, step_in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_a_fresh_result_joins_no_arguments(fn, wrt):
    check(fn, (W0, X), wrt=wrt)


def test_the_testers_gradient():
    assert_close(srcgrad.grad(one_step)(W0.copy(), X.copy()), [0.25, 0.15])


def pick(p, x):
    return p['w']  # the array params holds: step changes it in place


def held_result(w0, x):
    params = {'w': w0 * 1.0}
    g = pick(params, x)
    params = step(params, x)
    return np.sum(g * x) + np.sum(params['w'])


def test_a_result_that_may_be_an_argument_still_joins_them():
    # pick may return what it is passed: x stays joined to params, refused as before
    with pytest.raises(SrcGradError) as info:
        srcgrad.grad(held_result)(W0.copy(), X.copy())
    assert info.value.lineno and "step() updates its argument 'params'" in info.value.message


def picked_then_updated(w0, x):
    params = {'w': w0 * 1.0}
    g = pick(params, x)
    params['w'] *= 2.0       # in place: g is that array
    return np.sum(g * x)


def test_an_update_through_a_returned_argument_is_seen():
    try:
        value, grad = srcgrad.value_and_grad(picked_then_updated)(W0.copy(), X.copy())
    except SrcGradError as err:  # refused, located: never a wrong answer
        assert err.lineno
        return
    assert value == picked_then_updated(W0.copy(), X.copy())
    assert_close(grad, 2.0 * X)


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    for fn in (one_step, steps_in_a_loop, in_a_helper):
        assert_close(srcgrad.grad(fn)(W0.copy(), X.copy()), autograd.grad(fn)(W0, X),
                     what=fn.__name__)
