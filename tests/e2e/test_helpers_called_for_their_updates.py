"""Module-level helpers called as statements for what they do to their arguments:
``apply_bc(u)``, ``update(state, g)``, ``push(log, v)``.

With a value being differentiated flowing into it, such a call was refused
("'push(acc, x[i])' is run as written ... return the filled buffer from the
function", outside tester H4, session 32), though the caller means the
helper's body.  normalize/effect_calls.py inlines it where it is called, a
parameter the caller passes a variable for written as that variable.  Each
program: value bit for bit and gradient against central differences under
every policy, jvp against differences, the caller's arrays left alone; the
helper in a time loop, a branch, another helper, with a default, with a local
named like the caller's variable, passed a view, the same array twice, the
differentiated argument itself, keyword arguments out of order (evaluated in
the order written); hvp against differences of the gradient, autograd where
it runs the program.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -0.7, 1.1, 0.5, -0.2])


def apply_bc(u):
    u[0] = 0.0
    u[-1] = u[-2]


def heat(x):  # a PDE time loop: the boundary set by a helper each step
    u = x.copy()
    for _ in range(4):
        u[1:-1] = u[1:-1] + 0.2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        apply_bc(u)
    return np.sum(u ** 2)


def momentum(state, g, beta=0.9):
    state["m"] = beta * state["m"] + g
    state["x"] = state["x"] - 0.1 * state["m"]


def optimiser(x):  # a dict of state updated by a helper, with a default
    state = {"x": x.copy(), "m": np.zeros_like(x)}
    for _ in range(5):
        momentum(state, 2 * state["x"] + np.cos(state["x"]))
    return np.sum(state["x"] ** 2)


def push(log, v):
    log.append(v * 2.0)


def logged(x):  # a list filled by a helper and read after, in a branch
    acc = []
    for i in range(len(x)):
        push(acc, x[i])
        if x[i] > 0:
            push(acc, acc[-1] * x[i])
    return sum(acc) + acc[0] * acc[-1]


def shadowing(a):  # a local named like the caller's variable
    u = a[1] * 2.0
    a[0] = u


def with_a_shadowed_name(x):
    u = x * 1.5
    shadowing(u)
    return np.sum(u ** 2) + u[0]


def zero_(a):
    a[...] = 0.0


def through_a_view(x):  # the helper passed a view: the base changes
    u = x * 2.0
    zero_(u[1:3])
    return np.sum(np.sin(u) * x)


def add_into(a, b):
    a += b


def the_same_array_twice(x):
    y = x ** 2
    add_into(y, y)
    return np.sum(y * x)


def pin_(a):
    a[0] = 0.5
    zero_(a[3:])  # a helper calling another


def the_argument_itself(x):  # the differentiated argument updated by the helper
    pin_(x)
    return np.sum(x ** 2 * np.arange(1, 6))


def layer(h, w):
    return np.tanh(w * h)


def in_a_helper(x):  # the call inside a helper the function calls
    return layer(heat(x) * np.ones(2), x[0])[1]


def put_pair(buf, first, second):
    buf[0] = first
    buf[1] = second


def keywords_out_of_order(x):  # the draws in the order written: second's first
    rng = np.random.default_rng(1)
    buf = np.zeros(2)
    put_pair(buf, second=rng.normal() * x[0], first=rng.normal() * x[1])
    return np.sum(buf * x[:2])


PROGRAMS = [keywords_out_of_order, heat, optimiser, logged, with_a_shadowed_name,
            through_a_view, the_same_array_twice, the_argument_itself, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    x = X.copy()
    check(fn, (x,), 0)
    np.testing.assert_array_equal(x, X)  # the caller's array is left alone


def test_hvp_against_differences_of_the_gradient():
    v = np.linspace(-1.0, 1.0, 5)
    eps = 1e-6
    for fn in (heat, optimiser):
        g = srcgrad.grad(fn)
        fd = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
        assert_close(srcgrad.hvp(fn)(X.copy(), v), fd, rtol=1e-5, atol=1e-7)


def test_autograd_agrees_on_the_list_one():
    def push_ag(log, v):
        log.append(v * 2.0)

    def logged_ag(x):
        acc = []
        for i in range(len(x)):
            push_ag(acc, x[i])
            if x[i] > 0:
                push_ag(acc, acc[-1] * x[i])
        return sum(acc) + acc[0] * acc[-1]

    assert_close(srcgrad.grad(logged)(X.copy()), autograd.grad(logged_ag)(anp.array(X)),
                 rtol=1e-12, atol=1e-12)


def test_the_generated_code_holds_the_helpers_body():
    source = srcgrad.grad(heat).source
    assert "apply_bc(" not in source and "u[0] = 0.0" in source
