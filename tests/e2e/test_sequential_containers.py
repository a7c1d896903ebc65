"""An ``nn.Sequential``-style container: an object whose ``__call__`` (or
``forward``) loops over ``self.mods``, calling each module (outside tester T1
#12).

The same loop over a list argument worked -- the code is specialised on the
classes of the list's objects (``ElementClasses``), one branch per class --
but not over a list an object holds: the method of the container was
compiled without those classes, and ``m(x)`` was refused ("it holds a
function only known when the code runs").  The classes of the objects in the
lists an object passed holds (and, through those objects, in theirs: a
Sequential of Sequentials) are now taken when the call is compiled, as for a
list argument, and a function that received such classes hands them on to
the user functions it calls: the container's method, a helper looping over
the list it is passed, a method of an element.  Each program runs under
every policy (value bit for bit, gradient against central differences) and
in forward mode; autograd agrees.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad


class Scale:
    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return x * self.s


class Tanh:
    def __call__(self, x):
        return np.tanh(x)


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return self.W @ x + self.b


class Seq:
    def __init__(self, mods):
        self.mods = mods

    def __call__(self, x):
        for m in self.mods:
            x = m(x)
        return x


class Residual:  # calls its block through a method, not __call__
    def __init__(self, blocks):
        self.blocks = blocks

    def forward(self, x):
        h = x
        for block in self.blocks:
            h = h + 0.5 * block(h)
        return h


RNG = np.random.default_rng(3)
X = np.array([0.3, -0.8])
MODS = [Scale(2.0), Tanh(), Scale(0.5)]
NET = Seq(MODS)
DEEP = Seq([Dense(RNG.normal(size=(3, 2)), RNG.normal(size=3)), Tanh(),
            Seq([Dense(RNG.normal(size=(2, 3)), RNG.normal(size=2)), Tanh()]), Scale(1.5)])
RES = Residual([Seq([Scale(0.7), Tanh()]), Tanh()])


def over_a_list(x, mods):  # T1 #12: worked before
    for m in mods:
        x = m(x)
    return np.sum(x ** 2)


def sequential(x, net):  # T1 #12
    return np.sum(net(x) ** 2)


def apply_all(mods, x):
    for m in mods:
        x = m(x)
    return x


def list_passed_to_a_helper(x, mods):
    return np.sum(apply_all(mods, x) * x)


def in_a_loop_and_a_branch(x, net):
    h = x
    for i in range(3):
        if np.sum(h) > 0:
            h = net(h) + x
        else:
            h = net(h * 0.5) - x
    return np.sum(np.sin(h))


def residual(x, res):  # a method of the container, the blocks Sequentials themselves
    return np.sum(res.forward(x) ** 2)


CASES = [(over_a_list, MODS), (sequential, NET), (sequential, DEEP),
         (list_passed_to_a_helper, MODS), (list_passed_to_a_helper, DEEP.mods),
         (in_a_loop_and_a_branch, NET), (in_a_loop_and_a_branch, DEEP), (residual, RES)]


@pytest.mark.parametrize("fn,model", CASES,
                         ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_modules_held_in_a_list(fn, model):
    check(fn, (X, model))


def test_the_testers_gradient():
    want = srcgrad.grad(over_a_list)(X, MODS)
    assert_close(want, [0.38215253, -0.13873607])
    assert_close(srcgrad.grad(sequential)(X, Seq(MODS)), want)


def test_another_class_in_the_list_makes_new_code():
    grad = srcgrad.grad(sequential)
    first = grad(X, Seq([Scale(2.0), Tanh()]))
    assert_close(grad(X, Seq([Tanh(), Dense(np.eye(2) * 2.0, np.ones(2))])),
                 srcgrad.grad(over_a_list)(X, [Tanh(), Dense(np.eye(2) * 2.0, np.ones(2))]))
    assert_close(first, srcgrad.grad(over_a_list)(X, [Scale(2.0), Tanh()]))


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    for fn, model in CASES:
        assert_close(srcgrad.grad(fn)(X, model), autograd.grad(fn)(X, model),
                     what=f"{fn.__name__} autograd")
