"""A helper that writes into its parameter, called on an argument of the
differentiated function that is not differentiated: ``zero_(x)`` with ``def
zero_(a): a[0] = 0.0`` in ``f(w, x)``, gradient with respect to ``w``.

The call ran as written on the caller's own array: the value and gradient were
right, but the caller's ``x`` came back changed ([0, 5, 6] where it was passed
[4, 5, 6]) -- generated code never changes the caller's arrays, and the same
update written in ``f`` itself (``x[0] = 0.0``) makes it work on a copy.  The
scan of what a function updates in place (normalize/argument_updates.py) saw
``np.putmask(x, m, v)`` as an update of ``x`` but not a call of a user function
that updates its parameter; such a call is now one, so ``x`` is copied at the
entry (the list and the arrays it holds where the helper changes a list's
items) and checked, as for the function's own update, against the other
arguments and against its other items: ``f(w, [z, z])`` updating the first and
reading the second, where Python's second item shows the change and a copy
would not, is refused, located, not hidden by the copy.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import AliasedUpdateError

W = np.array([1.0, 2.0, 3.0])
Z = np.array([4.0, 5.0, 6.0])


def zero_(a):
    a[0] = 0.0


def scale_(a, k):
    a *= k


def zero_all(xs):
    for a in xs:
        a[0] = 0.0


def zeroed(w, x):  # x came back [0, 5, 6]
    zero_(x)
    return np.sum(w * x)


def scaled(w, x):
    scale_(x, 2.0)
    return np.sum(w * x)


def zeroed_in_a_loop(w, x):
    for i in range(2):
        zero_(x[i:])
    return np.sum(w * x)


def zeroed_in_a_branch(w, x):
    if np.sum(w) > 0:
        zero_(x)
    return np.sum(np.sin(w) * x)


def through(x):
    zero_(x)


def zeroed_in_a_helper(w, x):
    through(x)
    return np.sum(w * x)


def items_zeroed(w, xs):
    zero_all(xs)
    return np.sum(w * xs[0]) + np.sum(w * xs[1])


def first_item_zeroed(w, ps):
    zero_(ps[0])
    return np.sum(w * ps[1])


def own_write(w, x):  # the same update in the function itself: worked on a copy already
    x[0] = 0.0
    return np.sum(w * x)


ARRAY = [zeroed, scaled, zeroed_in_a_loop, zeroed_in_a_branch, zeroed_in_a_helper, own_write]


@pytest.mark.parametrize("fn", ARRAY, ids=lambda f: f.__name__)
def test_the_callers_array_is_left_alone(fn):
    w, x = W.copy(), Z.copy()
    check(fn, (w, x))
    srcgrad.grad(fn)(w, x)
    srcgrad.jvp(fn, wrt=[0])(w, x, np.ones(3))
    np.testing.assert_array_equal(x, np.array([4.0, 5.0, 6.0]))
    np.testing.assert_array_equal(w, np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("fn", [items_zeroed, first_item_zeroed], ids=lambda f: f.__name__)
def test_the_callers_list_and_its_arrays_are_left_alone(fn):
    xs = [Z.copy(), Z * 2.0]
    want = fn(W.copy(), copy.deepcopy(xs))
    for policy in ("save", "recompute", "sqrt", ("revolve", 2)):
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(W, xs)
        assert value == want
        # d/dw of sum(w * b) for b the items as the helper left them
        left = copy.deepcopy(xs)
        fn(W.copy(), left)
        expected = left[1] if fn is first_item_zeroed else left[0] + left[1]
        np.testing.assert_array_equal(grad, expected)
    value, tangent = srcgrad.jvp(fn, wrt=[0])(W, xs, np.ones(3))
    assert value == want
    np.testing.assert_allclose(tangent, np.sum(expected))
    np.testing.assert_array_equal(xs[0], Z)
    np.testing.assert_array_equal(xs[1], Z * 2.0)


def test_an_item_shared_with_another_is_refused_not_hidden_by_the_copy():
    # Python: ps[1] is ps[0], so it shows the zero; a copy of each would not
    z = Z.copy()
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.grad(first_item_zeroed)(W, [z, z])
    assert info.value.filename == __file__ and info.value.lineno
    assert "ps[0]" in info.value.message and "ps[1]" in info.value.message
    np.testing.assert_array_equal(z, Z)


def test_an_argument_shared_with_the_differentiated_one_is_refused():
    z = Z.copy()
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.grad(zeroed)(z, z)
    assert "'x'" in info.value.message and "'w'" in info.value.message
    np.testing.assert_array_equal(z, Z)


def test_values():
    grad = srcgrad.grad(zeroed)(W, Z.copy())
    np.testing.assert_array_equal(grad, np.array([0.0, 5.0, 6.0]))
    grad = srcgrad.grad(scaled)(W, Z.copy())
    np.testing.assert_array_equal(grad, 2.0 * Z)
