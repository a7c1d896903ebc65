"""A called function that writes into its argument in place: Python shows the
caller the change, while srcgrad's code for the callee works on a copy of what
it updates.  ``helper(t, x)`` followed by a read of ``t`` gave the old values
(a silently wrong value and gradient); it is now refused at the call, and the
forms that do not depend on the change -- a buffer only filled, a callee that
copies first -- still differentiate."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import numeric_grad, pure

import srcgrad
from srcgrad import UnsupportedSyntaxError


def helper(t, x):
    t[0] = np.sin(x[1])
    return np.sum(t)


def copies_first(t, x):
    t = t.copy()
    t[0] = np.sin(x[1])
    return np.sum(t)


def fill(buf, x):
    buf[:] = np.sin(x)
    return buf


def collect(out, x):
    out.append(x * 2.0)
    return len(out)


def reads_after(x):
    t = x * 2.0
    s = helper(t, x)
    return s + np.sum(t * x)


def reads_a_view(x):
    t = x * 2.0
    u = t[1:]
    s = helper(t, x)
    return s + np.sum(u)


def appends_then_reads(x):
    out = []
    n = collect(out, x)
    return np.sum(out[0]) * n


def passes_only(x):
    t = x * 2.0
    return helper(t, x)


def copy_in_callee(x):
    t = x * 2.0
    s = copies_first(t, x)
    return s + np.sum(t * x)


def fills_a_buffer(x):
    buf = np.zeros(3)
    y = fill(buf, x)
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [reads_after, reads_a_view, appends_then_reads])
def test_a_read_of_an_argument_the_callee_updates_is_refused_at_the_call(fn):
    with pytest.raises(UnsupportedSyntaxError, match="updates its argument") as info:
        srcgrad.grad(fn)(np.array([0.3, 0.7, 1.1]))
    assert info.value.filename == __file__


@pytest.mark.parametrize("fn", [passes_only, copy_in_callee, fills_a_buffer])
def test_forms_that_do_not_see_the_update_differentiate(fn):
    x = np.array([0.3, 0.7, 1.1])
    value, grad = srcgrad.value_and_grad(fn, check=True)(x.copy())
    assert value == fn(x.copy())
    np.testing.assert_allclose(grad, numeric_grad(pure(fn), (x,), 0), rtol=1e-6, atol=1e-8)


class Model:
    def helper(self, t, x):
        t[0] = np.sin(x[1])
        return np.sum(t)

    def loss(self, x):
        t = x * 2.0
        s = self.helper(t, x)
        return s + np.sum(t * x)

    def loss_with_copy(self, x):
        t = x * 2.0
        s = self.helper(t.copy(), x)
        return s + np.sum(t * x)


MODEL = Model()


def through_a_global_model(x):
    t = x * 2.0
    s = MODEL.helper(t, x)
    return s + np.sum(t * x)


def test_methods_are_checked_too():
    x = np.array([0.3, 0.7, 1.1])
    for fn in (MODEL.loss, through_a_global_model):
        with pytest.raises(UnsupportedSyntaxError, match="updates its argument 't'"):
            srcgrad.grad(fn)(x.copy())
    value, grad = srcgrad.value_and_grad(MODEL.loss_with_copy, check=True)(x.copy())
    assert value == MODEL.loss_with_copy(x.copy())
    np.testing.assert_allclose(grad, numeric_grad(MODEL.loss_with_copy, (x,), 0), rtol=1e-6)
