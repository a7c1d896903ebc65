"""jvp and hvp of an int step counter carried in a dict through a helper in a
loop (outside tester T1 #19: Adam's bias correction ``1 - b1 ** t`` with ``t``
in the optimiser's state dict).

The helper's forward-mode code returns the tangent of ``{'t': t}`` built like
the value (runtime ``tangent_like``), where an int has no tangent: None.  A
tuple or list got the zero there, a dict kept None, so the next iteration's
``t = s['t'] + 1`` read None and the power rule's exponent term raised a raw
``TypeError: NoneType * float`` in the generated code (grad was right).  A
dict now gets the zero too.  Each program: value bit for bit under every
policy and in jvp, gradient and tangent against differences, hvp against
differences of the gradient, autograd.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, numeric_grad
from numeric import check_every_policy as check

import srcgrad

W = np.array([1.0, -2.0])


def update(w, s):  # T1 #19
    t = s['t'] + 1
    return w * (1 - 0.9 ** t), {'t': t}


def counter_in_a_dict(w):
    s = {'t': 0}
    for _ in range(2):
        w, s = update(w, s)
    return np.sum(w ** 2)


def adam_step(w, state, lr=0.1, b1=0.9, b2=0.999):
    g = 2.0 * w + np.sin(w)
    t = state['t'] + 1
    m = b1 * state['m'] + (1 - b1) * g
    v = b2 * state['v'] + (1 - b2) * g * g
    mhat = m / (1 - b1 ** t)
    vhat = v / (1 - b2 ** t)
    return w - lr * mhat / (np.sqrt(vhat) + 1e-8), {'m': m, 'v': v, 't': t}


def adam(w):
    state = {'m': np.zeros_like(w), 'v': np.zeros_like(w), 't': 0}
    for _ in range(3):
        w, state = adam_step(w, state)
    return np.sum(w ** 2)


def in_a_branch(w):
    s = {'t': 0}
    for i in range(3):
        if i % 2 == 0:
            w, s = update(w, s)
        else:
            w = w * 1.1
    return np.sum(w ** 2) + float(s['t'])


def nested_state(w):
    s = {'opt': {'t': 0, 'scale': 1.0}}
    for _ in range(2):
        w, inner = update(w, s['opt'])
        s = {'opt': {'t': inner['t'], 'scale': s['opt']['scale'] * 0.5}}
    return np.sum(w ** 2) * s['opt']['scale']


def twice(w, s):  # the helper's helper carries the counter
    w, s = update(w, s)
    return update(w, s)


def through_two_helpers(w):
    s = {'t': 0}
    for _ in range(2):
        w, s = twice(w, s)
    return np.sum(w ** 2)


PROGRAMS = [counter_in_a_dict, adam, in_a_branch, nested_state, through_two_helpers]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_value_gradient_and_tangent(fn):
    check(fn, (W,))


def test_the_testers_numbers():
    value, tangent = srcgrad.jvp(counter_in_a_dict, (W.copy(),), (np.ones(2),))
    assert_close(value, 0.001805)
    assert_close(tangent, -0.000722)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_hvp_against_differences_of_the_gradient(fn):
    v = np.array([0.3, -0.7])
    eps = 1e-5
    grad = srcgrad.grad(fn)
    fd = (grad(W + eps * v) - grad(W - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(W.copy(), v), fd, rtol=1e-4, atol=1e-6, what=fn.__name__)


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(w):
        for t in (1, 2):
            w = w * (1 - 0.9 ** t)
        return anp.sum(w ** 2)

    assert_close(srcgrad.grad(counter_in_a_dict)(W.copy()), autograd.grad(plain)(W))
    assert_close(numeric_grad(counter_in_a_dict, [W], 0), autograd.grad(plain)(W), rtol=1e-5)
