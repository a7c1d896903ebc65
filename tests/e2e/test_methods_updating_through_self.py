"""A callable object or method whose code updates its argument through another
method of the same object (``def __call__(self, p): return self.set(p)``).

A fixer found ``via(box, y)`` (``via`` calling ``box(a)``) giving 15.0 where
Python gives 25.0, no error: the summary of what a called function changes in
place skipped ``self.m(p)`` calls, so ``__call__`` seemed to change nothing and
the caller read ``y`` back unchanged.  The summary now follows ``self.m(p)``
to the method of the receiver's class (a callable object's, a bound method's,
the class a loop dispatches on), and counts it as updating what it passes
where that class is not known: refused, located, or run where the caller
does not read the array again -- never a wrong value."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_refused_both_modes, check_every_policy

from srcgrad.errors import SrcGradError


class Box:
    def set(self, p):
        p[0] = p[1] * 3.0
        return p[2]

    def __call__(self, p):
        return self.set(p)

    def run(self, p):
        return self.set(p) * 2.0


class Keeps(Box):
    """Its own ``set`` changes nothing: ``self.set`` is resolved by the
    receiver's class, not by where ``__call__`` is written."""

    def set(self, p):
        return p[2] * p[1]


def via(box, a):
    return box(a)


BOX, KEEPS = Box(), Keeps()


def through_helper(x):
    y = x * 1.0
    r = via(BOX, y)
    return r + np.sum(y * 2.0)


def bound_method(x):
    y = x * 1.0
    r = BOX.run(y)
    return r + np.sum(y * 2.0)


@pytest.mark.parametrize("fn", [through_helper, bound_method])
def test_update_through_self_is_refused_where_read_again(fn):
    x = np.array([1.0, 2.0, 3.0])
    assert_refused_both_modes(fn, SrcGradError, "'y'", x=x)
    assert np.array_equal(x, [1.0, 2.0, 3.0])


def subclass_keeps(x):
    y = x * 1.0
    r = via(KEEPS, y) + KEEPS.run(y)
    return r + np.sum(y * 2.0)


def buffer_not_read_again(x):
    y = x * 1.0
    r = via(BOX, y)
    return r * x[1]


def test_subclass_changing_nothing_runs():
    check_every_policy(subclass_keeps, (np.array([1.0, 2.0, 3.0]),))


def test_update_not_read_again_runs():
    x = np.array([1.0, 2.0, 3.0])
    check_every_policy(buffer_not_read_again, (x,))
    assert np.array_equal(x, [1.0, 2.0, 3.0])


def argument_object(x, box):
    y = x * 1.0
    r = via(box, y)
    return r + np.sum(y * 2.0)


def called_directly(x, box):
    y = x * 1.0
    r = box(y)
    return r + np.sum(y * 2.0)


@pytest.mark.parametrize("fn", [argument_object, called_directly])
def test_object_passed_as_argument(fn):
    """The repro: the object an argument of the differentiated function."""
    import srcgrad
    x = np.array([1.0, 2.0, 3.0])
    for run in (lambda: srcgrad.value_and_grad(fn)(x.copy(), Box()),
                lambda: srcgrad.jvp(fn, wrt=[0])(x.copy(), Box(), np.ones(3))):
        with pytest.raises(SrcGradError) as info:
            run()
        assert info.value.lineno and "'y'" in info.value.message
    check_every_policy(fn, (x, Keeps()))
