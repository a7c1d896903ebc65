"""An array held by a named tuple or an object, changed in place through another
name (outside tester T2 #16).

``a = p.W; a[1] = v`` changes the array ``p.W`` holds; srcgrad's code works on a
copy of the attribute, so ``p.W`` read afterwards kept the old value: value and
gradient wrong, no error (#16).  It is now refused at compile time, located at
the update, before any warning (the false ZeroGradientWarning for ``a = m.W;
a *= x`` came first), in a loop, a branch and a helper.  Reading only another field, or
changing a copy, still differentiates: value bit for bit, gradient against
differences under every policy and in jvp.  (autograd does not run programs
that assign array elements, so it is not compared here.)
"""

import warnings
from collections import namedtuple

import numpy as np
import pytest

import srcgrad
from numeric import POLICIES, check_every_policy

P = namedtuple("P", "W b")


class Model:
    def __init__(self):
        self.W = np.array([1.0, 2.0, 3.0])
        self.b = np.array([0.5, -1.0, 2.0])

    def loss(self, x):
        a = self.W
        a[1] = self.b[0] * x
        return np.sum(self.W ** 2)


def field_argument(p):
    a = p.W
    a[1] = p.b[0] * 3.0
    return np.sum(p.W ** 2)


def field_built(x):
    p = P(x * 1.0, x * 2.0)
    a = p.W
    a[1] = p.b[0] * 3.0
    return np.sum(p.W ** 2)


def field_in_loop(x):
    p = P(x * 1.0, x * 2.0)
    s = 0.0
    for k in range(2):
        a = p.W
        a[k] = p.b[2] * 3.0
        s = s + np.sum(p.W)
    return s


def field_in_branch(x):
    p = P(x * 1.0, x * 2.0)
    if x[0] > 0:
        a = p.W
        a *= 2.0
    return np.sum(p.W * x)


def _field_helper(p):
    a = p.W
    a[0] = p.b[1]
    return np.sum(p.W)


def field_through_helper(x):
    return _field_helper(P(x * 1.0, x * 2.0)) * 2.0


def object_augmented(m, x):
    a = m.W
    a *= x
    return np.sum(m.W)


def field_other_read(x):  # p.W never read again: a copy is right
    p = P(x * 1.0, x * 2.0)
    a = p.W
    a[1] = p.b[0] * 3.0
    return np.sum(p.b * a)


def field_copied(x):
    p = P(x * 1.0, x * 2.0)
    a = p.W.copy()
    a[1] = p.b[0] * 3.0
    return np.sum(p.W ** 2) + np.sum(a * x)


X = np.array([0.3, -1.2, 0.8])


def _runs(fn, args, tangents):
    yield lambda: srcgrad.jvp(fn, args, tangents)
    for policy in POLICIES:
        yield lambda policy=policy: srcgrad.value_and_grad(fn, policy=policy)(*args)


def _refused(fn, args, tangents, *words):
    for run in _runs(fn, args, tangents):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # refused before any warning
            with pytest.raises(srcgrad.AliasedUpdateError) as info:
                run()
        err = info.value
        assert err.filename and err.filename.endswith(".py") and err.lineno, err
        for word in words:
            assert word in err.message, err.message
        assert "t1" not in err.message and "_1" not in err.message, err.message


@pytest.mark.parametrize("fn", [field_built, field_in_loop, field_in_branch,
                                field_through_helper])
def test_field_changed_through_another_name_refused(fn):
    _refused(fn, (X.copy(),), (np.ones(3),), "'p.W'", "read afterwards")


def test_field_of_argument_refused_and_left_alone():
    p = P(X.copy(), X * 2.0)
    _refused(field_argument, (p,), (P(np.ones(3), np.ones(3)),), "'p.W'")
    assert np.array_equal(p.W, X) and np.array_equal(p.b, X * 2.0)


def test_object_fields_refused_before_a_warning():
    m = Model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(srcgrad.AliasedUpdateError, match="'self.W'"):
            srcgrad.grad(m.loss)(2.0)
        with pytest.raises(srcgrad.AliasedUpdateError, match=r"'a \*= \.\.\.'.*'m.W'") as info:
            srcgrad.grad(object_augmented, wrt=1)(Model(), 2.0)
    assert info.value.lineno == object_augmented.__code__.co_firstlineno + 2
    assert np.array_equal(m.W, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("fn", [field_other_read, field_copied])
def test_field_copy_or_other_field_differentiated(fn):
    check_every_policy(fn, (X.copy(),))
