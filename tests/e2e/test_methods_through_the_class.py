"""A method reached through its class, the object passed first (session 30, F1).

``Box.__call__(box, p)`` is the bound call ``box(p)``; where ``__call__``
updates ``p`` through ``self.set(p)``, the caller that reads ``p`` again must
be refused as for the bound forms (tests/e2e/test_methods_updating_through_self.py).
It was, but only because ``self.set`` could not be resolved at all: every such
call whose method calls another method of ``self`` was refused
(MissingRuleError on ``self.set(...)``), also where nothing is updated or the
update is not read again.  A call ``Cls.m(obj, ...)`` of a plain function of
``Cls`` whose first argument is a global object of ``Cls`` (or a subclass), or a
parameter passed one whose class has that same method, is now compiled and
checked as the bound call (normalize/user_methods.py ``through_the_class``):
``self.m(...)`` inside is resolved by the object's class (a subclass's
override included), and what it changes in place is followed as for
``obj.m(...)``.  Running programs: value bit for bit under every policy and in
jvp, gradient and tangent against differences, autograd; refused ones:
located, in grad and jvp, the caller's array unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, assert_refused_both_modes, check_every_policy

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([1.0, 2.0, 3.0])


class Box:
    def set(self, p):
        p[0] = p[1] * 3.0
        return p[2]

    def __call__(self, p):
        return self.set(p)

    def run(self, p):
        return self.set(p) * 2.0


class Keeps(Box):
    def set(self, p):
        return p[2] * p[1]


BOX, KEEPS = Box(), Keeps()


def not_read_again(x):  # was refused: no rule for self.set(...)
    y = x * 1.0
    r = Box.__call__(BOX, y)
    return r * x[1]


def override_changes_nothing(x):  # Keeps.set: y is read again, unchanged
    y = x * 1.0
    r = Box.__call__(KEEPS, y) + Box.run(KEEPS, y)
    return r * x[1] + np.sum(y)


def through_the_subclass(x):
    y = x * 1.0
    r = Keeps.__call__(KEEPS, y)
    return r + np.sum(y ** 2)


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        y = x * float(i + 1)
        s = s + Box.run(BOX, y) * x[0] + Box.__call__(KEEPS, y)
    return s


def in_a_branch(x):
    y = x * 2.0
    if np.sum(x) > 0:
        r = Box.__call__(BOX, y)
        return r * x[2]
    z = x * 2.0
    return Box.__call__(KEEPS, z) + np.sum(z)


def in_a_branch_other_way(x):
    return in_a_branch(-x)


def keeping(a):
    return Box.__call__(KEEPS, a)


def setting(a):
    return Box.run(BOX, a)


def in_a_helper(x):
    y = x * 1.0
    return keeping(y) + np.sum(y) + setting(x * 1.0) * x[1]


def object_passed(x, box):
    y = x * 1.0
    r = Box.__call__(box, y)
    return r * x[1] + np.sum(y)


@pytest.mark.parametrize("fn", [not_read_again, override_changes_nothing,
                                through_the_subclass, in_a_loop, in_a_branch,
                                in_a_branch_other_way, in_a_helper], ids=lambda f: f.__name__)
def test_runs_as_the_bound_call(fn):
    x = X.copy()
    check_every_policy(fn, (x,))
    assert np.array_equal(x, X)


def test_an_object_passed_whose_method_changes_nothing():
    check_every_policy(object_passed, (X.copy(), Keeps()))


def read_again(x):
    y = x * 1.0
    r = Box.__call__(BOX, y)
    return r + np.sum(y * 2.0)


def read_again_through_run(x):
    y = x * 1.0
    r = Box.run(BOX, y)
    return r + np.sum(y * 2.0)


def read_again_in_a_helper(x):
    y = x * 1.0
    r = setting(y)
    return r + np.sum(y)


@pytest.mark.parametrize("fn", [read_again, read_again_through_run, read_again_in_a_helper],
                         ids=lambda f: f.__name__)
def test_an_update_read_again_is_refused_located(fn):
    x = X.copy()
    assert_refused_both_modes(fn, SrcGradError, "'y'", x=x)
    assert np.array_equal(x, X)


def test_an_object_passed_that_updates_is_refused():
    for run in (lambda: srcgrad.value_and_grad(object_passed)(X.copy(), Box()),
                lambda: srcgrad.jvp(object_passed, wrt=[0])(X.copy(), Box(), np.ones(3))):
        with pytest.raises(SrcGradError) as info:
            run()
        assert info.value.filename == __file__ and info.value.lineno
        assert "'y'" in info.value.message


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")

    def plain(x):  # override_changes_nothing without the classes
        r = x[2] * x[1] * 3.0  # Keeps.set, then run doubling it
        return r * x[1] + x[0] + x[1] + x[2]

    assert_close(srcgrad.grad(override_changes_nothing)(X.copy()), autograd.grad(plain)(X),
                 what="autograd")
