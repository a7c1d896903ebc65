"""``.append`` on a list reached through an index: ``log['trace'].append(v)``,
``hist[0].append(v)``, ``d.setdefault(k, []).append(v)`` (outside tester T1
#9: the history and trace logging of training loops).

``xs.append(v)`` on a local list worked, but a list reached through a
subscript was refused ("may change 'log['trace']' in place ... in a way
srcgrad cannot follow").  The normaliser now writes the append as Python runs
it, ``part = log['trace']; part.append(v)`` (``d.setdefault(k, v)`` as ``if k
not in d: d[k] = v`` first, then ``d[k]``), and the alias check follows an
append to an item of a container as it follows a write into one
(analysis/slot_writes.py element_writes): a copy of the list, appended to,
stored back, with the other names for the old list bound to the copy where
they are that list, and refused, located, where they share it otherwise (a
list holding the same list twice).  Each program runs under every policy
(value bit for bit, gradient against central differences) and in forward
mode; autograd agrees.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import AliasedUpdateError

X = np.array([0.5, 2.0, -0.3])


def trace(x):  # T1 #9
    log = {'trace': []}
    for i in range(3):
        log['trace'].append(np.sum(x ** (i + 1)))
    return sum(log['trace'])


def history(x):  # T1 #9: hist[0].append(x * 2)
    hist = [[], [], []]
    h = x
    for i in range(4):
        h = np.tanh(h * 1.5 + 0.1)
        hist[i % 2].append(h)
        hist[2].append(np.sum(h))
    return np.sum(hist[0][-1] * hist[1][0]) + hist[2][2] * sum(hist[2])


def by_key(x):  # T1 #9: d.setdefault(k, []).append(v)
    d = {}
    for i, k in enumerate(['a', 'b', 'a']):
        d.setdefault(k, []).append(x * (i + 1.0))
    return np.sum(d['a'][0] * d['a'][1]) + np.sum(d['b'][0])


def in_a_branch(x):
    log = {'loss': [], 'norm': []}
    for i in range(3):
        v = np.sum(np.sin(x * i))
        if v > 0:
            log['loss'].append(v)
        else:
            log['norm'].append(v * 2.0)
    return sum(log['loss']) + sum(log['norm']) * 3.0


def train(w):  # a training loop keeping its history in a state dict
    state = {'w': w, 'hist': [], 'grads': []}
    for _ in range(3):
        g = 2.0 * state['w'] - 1.0
        state['w'] = state['w'] - 0.1 * g
        state['grads'].append(g)
        state['hist'].append(np.sum(state['w'] ** 2))
    return state['hist'][-1] + np.sum(state['grads'][0] * state['grads'][2])


def another_name_for_the_list(x):  # t is log['trace'] itself: Python's t sees the append
    log = {'trace': [x]}
    t = log['trace']
    log['trace'].append(x * 3.0)
    log['trace'].append(np.sin(x))
    return np.sum(t[1] * t[2]) + len(t)


def a_list_also_named(x):  # hs is the list log['t'] holds: Python's hs sees the append
    hs = [x]
    log = {'t': hs}
    for i in range(2):
        log['t'].append(x * (2.0 + i))
    return np.sum(hs[1] * hs[2]) + len(hs)


def written_out(x):  # what the normaliser writes, written by hand
    log = {'trace': []}
    t = log['trace']
    t.append(x * 2.0)
    return np.sum(log['trace'][0] * x)


def rollout(x, n):
    log = {'states': [], 'energy': []}
    h = x
    for _ in range(n):
        h = np.sin(h) + x
        log['states'].append(h)
        log['energy'].append(np.sum(h ** 2))
    return log


def in_a_helper(x):
    log = rollout(x, 3)
    return np.sum(log['states'][-1] * log['states'][0]) + sum(log['energy'])


PROGRAMS = [trace, history, by_key, in_a_branch, train, another_name_for_the_list,
            a_list_also_named, written_out, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_appending_to_a_list_held_in_a_container(fn):
    check(fn, (X,))


def test_the_testers_values():
    x = np.array([0.5, 2.0])
    value, grad = srcgrad.value_and_grad(trace)(x)
    assert value == trace(x) == 14.875
    assert_close(grad, 1 + 2 * x + 3 * x ** 2)


def twice_held(x):  # the same list twice: Python's append shows through both keys
    xs = []
    log = {'a': xs, 'b': xs}
    log['a'].append(x * 2.0)
    return np.sum(log['b'][0])


def repeated(x):  # [[]] * 2: one list twice
    hist = [[]] * 2
    hist[0].append(x * 2.0)
    return np.sum(hist[1][0])


@pytest.mark.parametrize("fn", [twice_held, repeated], ids=lambda f: f.__name__)
def test_a_list_held_twice_is_refused_located(fn):
    for run in (lambda: srcgrad.grad(fn)(X.copy()),
                lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        assert info.value.lineno and ".append(...)" in info.value.message, info.value.message


def nested(x):  # a list in a dict in a dict: still refused, naming it
    log = {'a': {'b': []}}
    log['a']['b'].append(x * 2)
    return np.sum(log['a']['b'][0])


def test_a_list_two_indices_deep_is_refused_naming_it():
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.grad(nested)(X.copy())
    assert info.value.lineno and "'log['a']['b']'" in info.value.message, info.value.message


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    for fn in (trace, history, by_key, train):
        assert_close(srcgrad.grad(fn)(X), autograd.grad(fn)(X), what=f"{fn.__name__} autograd")
