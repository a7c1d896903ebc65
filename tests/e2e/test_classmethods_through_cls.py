"""A classmethod calling what its class holds through ``cls`` (review s33 F12).

``@classmethod def g(cls, z): return cls.f(z) ** 2`` with ``f`` a
staticmethod, called as ``Act.g(x)`` from the differentiated function, was
refused ("'cls.f' is a function stored in the object"): the classmethod bound
to its class was compiled with ``type`` as the class of ``cls``.  It is
compiled with the class itself now (normalize/calls.py), so ``cls.f(z)`` is
the staticmethod, ``cls.k(z)`` another classmethod (given the class), and
``cls.h(z)`` a plain function of the class called as Python calls it (``z``
first).  Value bit for bit, gradient against differences under every policy,
jvp, autograd; through the class, through ``self``, in a loop, a branch and a
helper.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

X = np.array([0.1, 0.5, -0.8])


class Act:
    scale = 2.0

    @staticmethod
    def f(z):
        return np.tanh(z) * 2

    @classmethod
    def g(cls, z):
        return cls.f(z) ** 2  # the review's program

    @classmethod
    def k(cls, z):
        return cls.g(z) * cls.scale + cls.f(z)

    def h(z):  # noqa: N805 - a plain function of the class, called through it
        return np.sin(z) * 3.0

    @classmethod
    def through_plain(cls, z):
        return cls.h(z) + cls.f(z)

    def forward(self, z):
        return self.g(z) + self.k(z)


class Sub(Act):
    @staticmethod
    def f(z):
        return np.cos(z)


def through_the_class(x):
    return np.sum(Act.g(x))


def classmethod_calling_classmethod(x):
    return np.sum(Act.k(x))


def plain_through_cls(x):
    return np.sum(Act.through_plain(x))


def subclass(x):  # cls is Sub: Sub.f
    return np.sum(Sub.g(x) + Sub.k(x))


def through_self(x):  # an object the function builds: its class known (F21)
    a = Act()
    return np.sum(a.forward(x))


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(Act.g(x * (i + 1.0)))
    return s


def in_a_branch(x):
    if np.sum(x) > 0.0:
        return np.sum(Act.g(x))
    return np.sum(Sub.g(x))


def helper(x):
    return Act.k(x) * x


def in_a_helper(x):
    return np.sum(helper(x) ** 2)


@pytest.mark.parametrize("fn", [through_the_class, classmethod_calling_classmethod,
                                plain_through_cls, subclass, through_self, in_a_loop,
                                in_a_branch, in_a_helper])
def test_a_classmethod_calls_through_cls(fn):
    grad = check(fn, (X.copy(),))
    autograd = pytest.importorskip("autograd")
    assert_close(grad, autograd.grad(fn)(X.copy()), rtol=1e-10, atol=1e-12, what=fn.__name__)


def test_the_branch_takes_the_subclass():
    check(in_a_branch, (-X,))
