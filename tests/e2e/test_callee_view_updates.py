"""A called function updating its argument through a view or an element of it.

``def cal(a): t = a[0]; t += 1.0`` called as ``cal(y)`` with ``y`` a matrix:
``t`` is a row of ``y`` and Python changes ``y`` in place, while srcgrad's code
for ``cal`` makes a new array for ``t`` -- a caller reading ``y`` afterwards got
the old values, silently (8.04 for 11.04).  The called function now checks
each such update as it runs and raises a located ``AliasedUpdateError`` where
``t`` turns out an array sharing the argument's memory; where ``t`` is a number
(``t = b[2]`` of a vector) nothing changes in place and the code runs.  The
differentiated function itself copies what it updates and never changes its
caller's arrays: no check there."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad
from srcgrad.errors import AliasedUpdateError

X = np.array([0.3, 0.7, 1.1])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


def _check(fn, x=X, policy="save"):
    """Value bit for bit, gradient and tangent against central differences, the
    caller's array left alone."""
    expected = pure(fn)(x)
    given = x.copy()
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(given)
    assert_bit_identical(value, expected)
    assert_close(grad, numeric_grad(pure(fn), [x], 0), what=f"{fn.__name__} gradient")
    np.testing.assert_array_equal(given, x)
    direction = np.linspace(0.5, 1.5, x.size)
    value, tangent = srcgrad.jvp(fn, (given,), (direction,))
    assert_bit_identical(value, expected)
    assert_close(tangent, jvp_fd(pure(fn), [x], [0], [direction]),
                 what=f"{fn.__name__} tangent")


def _refused(fn, *words, x=X, policy="save"):
    """Refused as the code runs, located at the update, in grad and jvp."""
    for run in (lambda: srcgrad.value_and_grad(fn, policy=policy)(x.copy()),
                lambda: srcgrad.jvp(fn, (x.copy(),), (np.ones(x.shape),))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and err.lineno, err
        for word in words:
            assert word in err.message, err.message


# -- helpers updating a part of their argument ------------------------------------------

def row_plus(a):
    t = a[0]
    t += 1.0
    return np.sum(t)


def tail_times(a):
    t = a[1:]
    t *= 2.0
    return np.sum(t * t)


def transposed_plus(a):
    t = a.T
    t += 0.5
    return np.sum(t[0])


def rows_plus(a):
    s = 0.0
    for r in a:
        r += 1.0
        s = s + np.sum(r * r)
    return s


def element_plus(b):  # t = b[2] of a vector: a number, nothing changes in place
    t = b[2]
    t += 1.0
    return t * t


def through(a):  # a helper passing its argument on
    return row_plus(a) * 2.0


def caller_row(x):
    y = np.outer(x, x)
    s = row_plus(y)
    return s + np.sum(y)


def caller_tail(x):
    y = np.outer(x, x)
    s = tail_times(y)
    return s + np.sum(y * y)


def caller_transposed(x):
    y = np.outer(x, x)
    s = transposed_plus(y)
    return s + np.sum(y)


def caller_rows(x):
    y = np.outer(x, x)
    s = rows_plus(y)
    return s + np.sum(y)


def caller_tail_vector(x):  # a[1:] of a vector is a view too
    y = x * 2.0
    s = tail_times(y)
    return s + np.sum(y)


def caller_nested(x):
    y = np.outer(x, x)
    s = through(y)
    return s + np.sum(y)


def caller_in_loop(x):
    y = np.outer(x, x)
    s = 0.0
    for i in range(2):
        s = s + row_plus(y)
    return s + np.sum(y)


def caller_in_branch(x):
    y = np.outer(x, x)
    s = 0.0
    if x[0] > 0.0:
        s = row_plus(y)
    return s + np.sum(y)


def caller_copy(x):  # refused too: the called function cannot tell its caller's copy
    y = np.outer(x, x)
    s = row_plus(y.copy())
    return s + np.sum(y)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [caller_row, caller_tail, caller_transposed, caller_rows,
                                caller_tail_vector, caller_nested, caller_in_loop,
                                caller_in_branch, caller_copy], ids=lambda f: f.__name__)
def test_update_of_a_view_of_an_argument_is_refused_located(fn, policy):
    """Python changes y in place: the caller's later np.sum(y) sees it."""
    _refused(fn, "part of the argument", "in place", policy=policy)


def test_the_refusal_says_what_to_write():
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.grad(caller_row)(X.copy())
    assert "t = t + ..." in info.value.message
    assert info.value.lineno == row_plus.__code__.co_firstlineno + 2


def caller_element(x):
    y = x * 2.0
    s = element_plus(y)
    return s + np.sum(y)


def caller_element_nested(x):
    y = x * 2.0
    return element_plus(y) * element_plus(y + 1.0) + np.sum(y)


def what_the_refusal_suggests(a):
    t = a[0]
    t = t + 1.0
    return np.sum(t)


def caller_suggestion(x):
    y = np.outer(x, x)
    s = what_the_refusal_suggests(y)
    return s + np.sum(y)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [caller_element, caller_element_nested, caller_suggestion],
                         ids=lambda f: f.__name__)
def test_number_elements_and_new_arrays_work(fn, policy):
    _check(fn, policy=policy)


def top_level_row(x):  # the differentiated function itself: the caller's x is left alone
    y = np.outer(x, x)
    t = y[0]
    t += 1.0
    return np.sum(t)


def top_level_parameter(a):
    t = a[1:]
    t *= 2.0
    return np.sum(t * t)


@pytest.mark.parametrize("fn", [top_level_row, top_level_parameter], ids=lambda f: f.__name__)
def test_the_differentiated_function_is_not_checked(fn):
    _check(fn)


def test_the_check_is_in_the_called_functions_code():
    source = srcgrad.grad(caller_row).source
    assert "the caller's array" in source
    assert source.count("untouched(") == 1


# -- a helper passing its argument on to one that updates it -----------------------------

def shift(p):
    p += 1.0
    return np.sum(p)


def setter(p):
    p[0] = 5.0
    return np.sum(p)


def passes_whole(a):
    return shift(a)


def passes_row(a):
    t = a[0]
    return shift(t)


def passes_to_setter(a):
    return setter(a) * 2.0


def caller_passes_whole(x):
    y = np.outer(x, x)
    s = passes_whole(y)
    return s + np.sum(y)


def caller_passes_row(x):
    y = np.outer(x, x)
    s = passes_row(y)
    return s + np.sum(y)


def caller_passes_to_setter(x):
    y = x * 2.0
    s = passes_to_setter(y)
    return s + np.sum(y)


def caller_passes_number(x):  # refused too: the caller's check cannot tell a number
    y = x * 2.0
    s = passes_row(y)
    return s + np.sum(y)


@pytest.mark.parametrize("fn", [caller_passes_whole, caller_passes_row, caller_passes_number],
                         ids=lambda f: f.__name__)
def test_passing_on_to_an_augmenting_helper_is_refused_located(fn):
    _refused(fn, "passes 'a' to")


def test_passing_on_to_a_setting_helper_is_refused_located():
    for run in (lambda: srcgrad.grad(caller_passes_to_setter)(X.copy()),
                lambda: srcgrad.jvp(caller_passes_to_setter, (X.copy(),), (np.ones(3),))):
        with pytest.raises(srcgrad.SrcGradError) as info:
            run()
        assert info.value.filename == __file__ and "passes_to_setter()" in info.value.message


def caller_passes_and_forgets(x):  # nothing read afterwards: runs
    y = x * 2.0
    z = x + 1.0
    return passes_to_setter(y) + passes_whole(z)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_passing_on_without_a_read_afterwards_works(policy):
    _check(caller_passes_and_forgets, policy=policy)
