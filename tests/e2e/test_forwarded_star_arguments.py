"""A helper forwarding ``*args`` / ``**kwargs`` to the function it is passed.

The odeint idiom, ``def rk4(f, y, t, *args): k1 = f(y, t, *args) ...`` called
``rk4(dynamics, y, t, theta)``, was refused ("srcgrad cannot tell how many
arguments '*args' passes here"), and ``def fw(f, *args, **kw): return f(*args,
**kw)`` too ("'**' arguments are supported for a dict whose keys are known
..."): the helper's own code did not know how many items its ``*args`` held.
The call does: a helper's code is now specialised on the number of items its
``*rest`` gets, the keys of its ``**kw`` and the length of a tuple passed to a
parameter (``args=(theta,)``) -- frontend/linker.Packed, normalize/starred.py
``packed_shapes`` -- so ``f(y, t, *args)`` there is ``f(y, t, args[0])``.  Each
program: value bit for bit under every policy and in jvp, gradient and tangent
against differences, hvp against differences of the gradient, autograd.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

THETA = np.array([0.5, 1.2])
Y0 = np.array([1.0, -2.0])


def dynamics(y, t, theta):
    return -theta * y + np.sin(t) * np.tanh(y)


def rk4(f, y, t, *args):
    h = 0.1
    k1 = f(y, t, *args)
    k2 = f(y + 0.5 * h * k1, t + 0.5 * h, *args)
    k3 = f(y + 0.5 * h * k2, t + 0.5 * h, *args)
    k4 = f(y + h * k3, t + h, *args)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint(f, y0, ts, args=()):
    y = y0
    for i in range(len(ts) - 1):
        y = rk4(f, y, ts[i], *args)
    return y


def the_odeint_idiom(theta, y0):
    y = y0
    for i in range(3):
        y = rk4(dynamics, y, 0.1 * i, theta)
    return np.sum(y ** 2)


def tuple_keyword(theta, y0):
    return np.sum(odeint(dynamics, y0, [0.0, 0.1, 0.2], args=(theta,)) ** 2)


def tuple_by_name(theta, y0):
    extra = (theta,)
    return np.sum(odeint(dynamics, y0, [0.0, 0.1, 0.2], extra) ** 2)


def forward_all(f, *args, **kw):
    return f(*args, **kw)


def scaled(y, w, scale=1.0):
    return np.tanh(y * w) * scale


def keywords_forwarded(theta, y0):
    return np.sum(forward_all(scaled, y0, theta, scale=2.0)) \
        + np.sum(forward_all(scaled, y0, w=theta))


def in_a_branch(theta, y0):
    if np.sum(theta) > 0:
        y = rk4(dynamics, y0, 0.2, theta)
    else:
        y = forward_all(dynamics, y0, 0.2, theta)
    return np.sum(y * y0)


def two_items(theta, y0):
    def two(y, t, a, b):
        return a * y - b * np.sin(y + t)
    return np.sum(rk4(two, y0, 0.3, theta, theta ** 2))


def none_forwarded(theta, y0):
    def still(y, t):
        return np.cos(y + t) * y
    return np.sum(rk4(still, y0 * theta, 0.3))


def step(theta, y):
    return rk4(dynamics, y, 0.0, theta)


def in_a_helper(theta, y0):
    return np.sum(step(theta, step(theta, y0)) ** 3)


class Model:
    def __init__(self, scale):
        self.scale = scale

    def run(self, f, y, *args):
        return f(y, 0.1, *args) * self.scale


MODEL = Model(1.5)


def method_forwarding(theta, y0):
    return np.sum(MODEL.run(dynamics, y0, theta) ** 2)


PROGRAMS = [the_odeint_idiom, tuple_keyword, tuple_by_name, keywords_forwarded, in_a_branch,
            two_items, none_forwarded, in_a_helper, method_forwarding]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_forwarded_arguments(fn, wrt):
    check(fn, (THETA, Y0), wrt=wrt)
    check(fn, (-THETA, Y0), wrt=wrt)  # (the other branch)


@pytest.mark.parametrize("fn", [the_odeint_idiom, keywords_forwarded, tuple_keyword])
def test_hvp(fn):
    v = np.array([0.3, -0.7])
    got = srcgrad.hvp(fn)(THETA, Y0, v)
    g = srcgrad.grad(fn)
    eps = 1e-6
    want = (g(THETA + eps * v, Y0) - g(THETA - eps * v, Y0)) / (2 * eps)
    assert_close(got, want, rtol=1e-5, atol=1e-7, what="hvp")


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def dyn(y, t, theta):
        return -theta * y + anp.sin(t) * anp.tanh(y)

    def rk(f, y, t, *args):
        h = 0.1
        k1 = f(y, t, *args)
        k2 = f(y + 0.5 * h * k1, t + 0.5 * h, *args)
        k3 = f(y + 0.5 * h * k2, t + 0.5 * h, *args)
        k4 = f(y + h * k3, t + h, *args)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def plain(theta, y0):
        y = y0
        for i in range(3):
            y = rk(dyn, y, 0.1 * i, theta)
        return anp.sum(y ** 2)

    assert_close(srcgrad.grad(the_odeint_idiom)(THETA, Y0), autograd.grad(plain)(THETA, Y0),
                 what="autograd")


def unknown_length(theta, xs):
    return np.sum(rk4(dynamics, theta, 0.1, *xs))


def test_a_list_of_unknown_length_still_refused():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(unknown_length)(THETA, [THETA])
    assert info.value.lineno and "'*args'" in info.value.message
