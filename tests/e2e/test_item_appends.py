"""``log['trace'].append(v)`` on a dict the function builds: appended in place.

The alias check wrote the append as a copy of the list, appended to, stored
back (slot_writes.element_writes): each step copied the whole list and the
tape kept every copy, n**2/2 element copies and as much memory for n appends
-- the gradient took 8.5x the function's time at n = 1000, 21.5x at 4000 and
68x at 16000 (issue 16, scope 5).  analysis/item_appends.py appends to the
list itself and stores it back where the alias check found no other name
for it to follow, the dict and its item are built here and the dict is read
only through its items, and its store back restores nothing: the forward
sweep and the tape are linear (the adjoint still copies the list's cotangent
each step, through the dict's cotangent: 5.9x, 8.5x, 18.8x).  Each program: value bit for bit and gradient
against central differences under every policy, jvp, autograd; those that
must keep the copy (the dict returned, the caller's list, another name for
the list read afterwards) keep it and stay right.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

W = np.array([0.3, -0.7, 1.1])
X = np.array([[0.5, 2.0, -0.3], [1.5, -0.4, 0.2], [-1.0, 0.1, 0.8], [0.3, 0.3, -2.0]])


def logged(w, x):  # the loop of the issue
    st = {'log': [], 'n': 0}
    for t in range(x.shape[0]):
        st['log'].append(np.tanh(w * x[t]))
    return np.sum(np.stack(st['log']))


def two_logs(w, x):  # a training loop's history: two lists in one state dict
    state = {'w': w, 'hist': [], 'grads': []}
    for t in range(x.shape[0]):
        g = 2.0 * state['w'] * x[t] - 1.0
        state['w'] = state['w'] - 0.1 * g
        state['grads'].append(g)
        state['hist'].append(np.sum(state['w'] ** 2))
    return state['hist'][-1] + np.sum(state['grads'][0] * state['grads'][2])


def read_each_step(w, x):  # the last item read back each step
    st = {'log': [w]}
    s = 0.0
    for t in range(x.shape[0]):
        st['log'].append(np.tanh(st['log'][-1] * x[t]))
        s = s + np.sum(st['log'][-1])
    return s


def in_a_branch(w, x):
    log = {'pos': [], 'neg': []}
    for t in range(x.shape[0]):
        v = np.sum(np.sin(w * x[t]))
        if v > 0:
            log['pos'].append(v)
        else:
            log['neg'].append(v * 2.0)
    return sum(log['pos']) + sum(log['neg']) * 3.0


def _history(w, row):
    h = {'v': []}
    for v in row:
        h['v'].append(np.tanh(w * v))
    return np.stack(h['v'])


def in_a_helper(w, x):
    return np.sum(_history(w, x[0]) * _history(w, x[1]))


def returned(w, x):  # the dict leaves the function: the copy stays
    st = {'log': []}
    for t in range(x.shape[0]):
        st['log'].append(w * x[t])
    return _total(st)


def _total(st):
    return np.sum(np.stack(st['log']) ** 2)


def another_name(w, x):  # hs is st['log']: Python's hs sees each append
    hs = []
    st = {'log': hs}
    for t in range(x.shape[0]):
        st['log'].append(w * x[t])
    return np.sum(np.stack(hs) ** 2)


PROGRAMS = [logged, two_logs, read_each_step, in_a_branch, in_a_helper, returned,
            another_name]
IN_PLACE = [logged, two_logs, read_each_step, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (W, X))


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_autograd_agrees(fn):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    namespace = dict(fn.__globals__, np=anp)
    for helper in (_history, _total):
        namespace[helper.__name__] = type(helper)(helper.__code__, namespace)
    theirs = type(fn)(fn.__code__, namespace, fn.__name__)
    assert_close(srcgrad.grad(fn)(W, X), autograd.grad(theirs)(W, X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", IN_PLACE, ids=lambda f: f.__name__)
def test_appended_in_place(fn):
    source = srcgrad.grad(fn).source
    assert "snapshot(part)" not in source and "part.append(" in source, source


@pytest.mark.parametrize("fn", [returned, another_name], ids=lambda f: f.__name__)
def test_copied_where_another_name_may_see_it(fn):
    assert "snapshot(part" in srcgrad.grad(fn).source


def test_the_callers_list_is_left_alone():
    def grow(xs, w):
        st = {'log': xs}
        for t in range(3):
            st['log'].append(w * t)
        return np.sum(np.stack(st['log']))
    given = [W.copy()]
    assert_close(srcgrad.grad(grow, wrt=1)(given, W), np.full(3, 3.0))
    assert len(given) == 1
    assert "snapshot(part" in srcgrad.grad(grow, wrt=1).source


def test_value_and_grad_returns_the_logged_values():
    def last(w, x):
        st = {'log': []}
        for t in range(x.shape[0]):
            st['log'].append(np.tanh(w * x[t]))
        return np.sum(st['log'][-1]) + np.sum(st['log'][0])
    value, _ = srcgrad.value_and_grad(last)(W, X)
    assert value == last(W, X)
