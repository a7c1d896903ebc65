"""A named tuple's method reading a constant set on the class after it (session 30, F1).

``class NT(NamedTuple): w: np.ndarray; def f(self): return np.sum(self.w) *
self.C`` with ``NT.C = 3.0`` after the class: grad raised a raw
``AttributeError: 'TupleCotangent' object has no attribute 'items'`` (outside
review, session 29, #14).  The adjoint of ``self.C`` gave the object an
attribute cotangent ``{'C': g}``, which cannot be added to the tuple's
cotangent that ``self.w`` gives.  A named tuple holds nothing but its fields,
so an attribute that is none of them is the class's, a constant:
``runtime.attribute_grad`` now gives it no cotangent.  Each program: value bit
for bit under every policy and in jvp, gradient and tangent against
differences, autograd on the same function written without the class.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

T = np.array([0.5, 1.0, 2.0])


class NT(NamedTuple):
    w: np.ndarray

    def f(self):
        return np.sum(self.w) * self.C

    def g(self):
        return self.w * NT.C


NT.C = 3.0


def reviewers(t):  # raised AttributeError
    return NT(t[:2]).f()


def through_the_class(t):
    return np.sum(NT(t * 2.0).g() * t)


def in_a_loop(t):
    s = 0.0
    n = NT(t)
    for _ in range(3):
        s = s + n.f()
        n = NT(n.w * 0.5 + t)
    return s


def in_a_branch(t):
    n = NT(t * 1.5)
    if np.sum(t) > 0:
        return n.f() + np.sum(n.g())
    return n.f()


def in_a_branch_other_way(t):
    return in_a_branch(-t)


def use(n, t):
    return n.f() * np.sum(t)


def in_a_helper(t):
    return use(NT(t ** 2), t)


PROGRAMS = [reviewers, through_the_class, in_a_loop, in_a_branch,
            in_a_branch_other_way, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_the_class_constant_has_no_derivative(fn):
    check(fn, (T,))


def test_the_reviewers_numbers():
    value, grad = srcgrad.value_and_grad(reviewers)(T.copy())
    assert value == reviewers(T.copy())
    assert_close(grad, np.array([3.0, 3.0, 0.0]))
    value, tangent = srcgrad.jvp(reviewers, (T.copy(),), (np.array([1.0, 0.5, 0.0]),))
    assert_close(tangent, 4.5)


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(t):  # in_a_helper without the class
        return anp.sum(t ** 2) * 3.0 * anp.sum(t)

    assert_close(srcgrad.grad(in_a_helper)(T.copy()), autograd.grad(plain)(T),
                 what="autograd")
