"""A NumPy function that writes into its first argument, called through a
partial or inside an expression: ``p = functools.partial(np.putmask, y);
p(m, v)``, ``t = np.putmask(y, m, v)``, ``print(np.putmask(y, m, v))``.

``np.putmask(y, m, v)`` as a statement of its own is refused (its change
cannot be followed) and ``np.copyto(y, v)`` is followed as ``y[...] = v``.
Through a named partial, the call was inlined as a value, ``t1 =
np.putmask(y_bound, m, v)``, taken for a pure call whose unused result could go:
the gradient read ``y`` as it was before the call, silently wrong ([0.8, 1.9,
3.1] where Python's gradient is [0.8, 0.5, 0.5]); so was ``t = np.putmask(y,
m, v)`` behind another name of ``y``, and ``print(np.putmask(y, m, v))``
(print being harmless, what it printed was not looked at).  Now such a call
is made the statement it is wherever it appears (normalize/none_results.py,
:meth:`.calls.Calls.written_in_place`), its value None as in Python, and a
print of one is no longer harmless (ad/in_place.py): followed where the
statement is (copyto, a ufunc's at), refused, located and in the user's
names, where it is not.
"""

from __future__ import annotations

import functools
from functools import partial

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.2, 0.7, 1.3])


# -- refused: the change cannot be followed -------------------------------------------

def named_partial(x):  # [0.8, 1.9, 3.1] where Python's gradient is [0.8, 0.5, 0.5]
    y = x * 2.0
    p = functools.partial(np.putmask, y)
    p(y > 1.0, 0.5)
    return np.sum(y * x)


def named_partial_all_bound(x):
    y = x * 2.0
    p = partial(np.putmask, y, y > 1.0, 0.5)
    p()
    return np.sum(y * x)


def partial_result_bound(x):
    y = x * 2.0
    p = partial(np.putmask, y)
    t = p(y > 1.0, 0.5)  # noqa: F841
    return np.sum(y * x)


def partial_result_printed(x):
    y = x * 2.0
    p = partial(np.putmask, y)
    print(p(y > 1.0, 0.5))
    return np.sum(y * x)


def result_bound_through_another_name(x):
    y = x * 2.0
    z = y
    t = np.putmask(z, z > 1.0, 0.5)  # noqa: F841
    return np.sum(y * x)


def result_printed(x):
    y = x * 2.0
    print(np.putmask(y, y > 1.0, 0.5))
    return np.sum(y * x)


def named_partial_of_put(x):
    y = x * 2.0
    p = partial(np.put, y)
    p([0], 0.5)
    return np.sum(y * x)


def named_partial_in_a_loop(x):
    y = x * 2.0
    p = partial(np.putmask, y)
    for i in range(2):
        p(y > 1.0 + i, 0.5)
    return np.sum(y * x)


def named_partial_in_a_branch(x):
    y = x * 2.0
    p = partial(np.putmask, y)
    if np.sum(x) > 1.0:
        p(y > 1.0, 0.5)
    return np.sum(y * x)


def masked(y):
    p = partial(np.putmask, y)
    p(y > 1.0, 0.5)
    return y


def named_partial_in_a_helper(x):
    y = masked(x * 2.0)
    return np.sum(y * x)


def copied(y, v):
    p = partial(np.copyto, y)
    p(v)
    return y


def partial_of_copyto_in_a_helper(x):
    # refused, not wrong: np.copyto(y, v) written in the helper is followed, but the
    # scan of what a helper writes into its parameters (argument_updates.py) does
    # not see it through the partial
    return np.sum(copied(x * 2.0, np.cos(x)) * x)


REFUSED = [named_partial, named_partial_all_bound, partial_result_bound,
           partial_result_printed, result_bound_through_another_name, result_printed,
           named_partial_of_put, named_partial_in_a_loop, named_partial_in_a_branch,
           named_partial_in_a_helper, partial_of_copyto_in_a_helper]


@pytest.mark.parametrize("fn", REFUSED, ids=lambda f: f.__name__)
def test_refused_in_both_modes(fn, capsys):
    for run in (lambda: srcgrad.grad(fn)(X.copy()),
                lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),))):
        with pytest.raises(UnsupportedSyntaxError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and err.lineno, err
        assert "np.put" in err.message or "np.copyto" in err.message, err.message
        assert "_bound" not in err.message, err.message  # the user's names


def test_the_message_shows_the_call_as_the_user_would_write_it():
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(named_partial)(X.copy())
    assert "'np.putmask(y, y > 1.0, 0.5)' may change 'y' in place" in info.value.message
    assert info.value.lineno == named_partial.__code__.co_firstlineno + 3


# -- followed: the statement's change is one srcgrad follows ---------------------------

def partial_of_copyto_in_a_loop(x):
    y = x * 2.0
    p = partial(np.copyto, y)
    for i in range(2):
        p(x[i] * x)
    return np.sum(y * x)


def partial_of_add_at(x):
    y = np.zeros(3)
    p = partial(np.add.at, y)
    p([0, 0, 2], x * x)
    return np.sum(y * x)


def copyto_result_bound(x):
    y = x * 1.0
    t = np.copyto(y, x[1] * x)
    return np.sum(y * x) + (0.0 if t is None else 1.0)


def partial_of_copyto_in_a_branch(x):
    y = x * 2.0
    if np.sum(x) > 1.0:
        functools.partial(np.copyto, y)(np.sin(x))
    return np.sum(y * x)


def mask_of_a_constant_buffer(x):
    buf = np.ones(3)
    t = np.putmask(buf, buf > 0.5, 2.0)
    return np.sum(buf * x) + (0.0 if t is None else 1.0)


FOLLOWED = [partial_of_copyto_in_a_loop, partial_of_add_at, copyto_result_bound,
            partial_of_copyto_in_a_branch, mask_of_a_constant_buffer]


@pytest.mark.parametrize("fn", FOLLOWED, ids=lambda f: f.__name__)
def test_followed_under_every_policy_and_jvp(fn):
    check(fn, (X,))
    given = X.copy()
    srcgrad.grad(fn)(given)
    np.testing.assert_array_equal(given, X)  # the caller's array is left alone


def test_followed_values():
    value, grad = srcgrad.value_and_grad(partial_of_copyto_in_a_loop)(X)
    assert_bit_identical(value, partial_of_copyto_in_a_loop(X.copy()))
    assert_close(grad, numeric_grad(partial_of_copyto_in_a_loop, [X], 0))
    # y holds x[1] * x at the end: d/dx sum(x[1] * x * x) = 2 x[1] x + e1 * sum(x * x)
    want = 2 * X[1] * X + np.array([0.0, 1.0, 0.0]) * np.sum(X * X)
    assert_close(grad, want)


def test_autograd_agrees_where_it_runs():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def twin(x):  # partial_of_copyto_in_a_loop, as autograd can run it
        y = x * 2.0
        for i in range(2):
            y = x[i] * x
        return anp.sum(y * x)

    assert_close(srcgrad.grad(partial_of_copyto_in_a_loop)(X), autograd.grad(twin)(X))
