"""Arguments that share memory (``f(x, x)``, ``helper(y[:3], y[1:])``), and
calls whose callee updates what it is passed.

srcgrad's code never changes the caller's arrays: an argument the function
updates in place is copied (or, for ``t += v``, a new array is made).  That
gives another value than Python's only where another argument sharing the
memory -- or the caller, after the call -- reads it after the update.  Those
are refused with a located ``AliasedUpdateError`` (or ``UnsupportedSyntaxError``
at the call); the rest runs, its value bit for bit the function's own, its
gradient against central differences (fuzzer seed 1900038: ``t = b[2]; t *=
v`` of a row ``b`` overlapping another argument was refused, though ``t`` is a
number and nothing changes in place).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, jvp_fd, numeric_grad, pure

import srcgrad
from srcgrad import AliasedUpdateError, UnsupportedSyntaxError


def _check(fn, x):
    """Value bit for bit, gradient vs central differences, tangent vs differences;
    the caller's array unchanged."""
    before = x.copy()
    value, grad = srcgrad.value_and_grad(fn, check=True)(x)
    assert np.array_equal(x, before)
    assert_bit_identical(value, fn(x.copy()), fn.__name__)
    np.testing.assert_allclose(grad, numeric_grad(pure(fn), (x,), 0), rtol=1e-6, atol=1e-8)
    direction = np.linspace(0.5, -0.5, x.size).reshape(x.shape)
    tangent_value, tangent = srcgrad.jvp(fn, (x,), (direction,))
    assert_bit_identical(tangent_value, fn(x.copy()), fn.__name__)
    np.testing.assert_allclose(tangent, jvp_fd(pure(fn), (x,), (0,), (direction,)),
                               rtol=1e-6, atol=1e-8)
    assert np.array_equal(x, before)


# -- two overlapping slices, a helper that updates one -------------------------------

def update_after_reading(a, b):
    s = np.sum(a * a)  # a read before the update only
    b[0] = 2.0 * s
    return np.sum(b * b)


def overlapping_slices(x):
    y = x * 1.5
    return update_after_reading(y[:3], y[1:])


def overlapping_slices_in_a_loop(x):
    total = 0.0
    for k in range(2):
        y = np.sin(x) + k
        total = total + update_after_reading(y[:3], y[1:])
    return total


def scaled_element(a, b):
    t = b[2]  # a number where b is a row: t *= v rebinds it
    t *= np.cos(np.sum(a) - t)
    return np.sum(np.exp(0.5 * a) * b) + t


def rows_and_columns(x):
    h = np.outer(x[:3], x[:3]) + 1.0
    return scaled_element(h[:, 0], h[1])


def rows_and_columns_in_a_branch(x):
    h = np.outer(x[:3], x[1:]) + 1.0
    s = 0.0
    for k in range(3):
        if x[k] > 0.5:
            s = s + scaled_element(h[:, k], h[k])
    return s


@pytest.mark.parametrize("fn", [overlapping_slices, overlapping_slices_in_a_loop,
                                rows_and_columns, rows_and_columns_in_a_branch])
def test_overlapping_arguments_of_a_helper_that_updates_one(fn):
    _check(fn, np.array([0.3, 0.7, 1.1, 1.9]))


def test_overlapping_views_passed_directly():
    x = np.array([0.3, 0.7, 1.1, 1.9])
    a, b = x[:3], x[1:]
    value, (ga, gb) = srcgrad.value_and_grad(update_after_reading, wrt=(0, 1))(a, b)
    assert np.array_equal(x, [0.3, 0.7, 1.1, 1.9])
    assert_bit_identical(value, update_after_reading(a.copy(), b.copy()))
    np.testing.assert_allclose(ga, 16.0 * np.sum(a * a) * a, rtol=1e-12)
    np.testing.assert_allclose(gb, [0.0, 2.0 * b[1], 2.0 * b[2]], rtol=1e-12)
    h = np.outer(x[:3], x[:3]) + 1.0
    value, g = srcgrad.value_and_grad(scaled_element, wrt=(0, 1))(h[:, 0], h[1])
    assert_bit_identical(value, scaled_element(h[:, 0].copy(), h[1].copy()))
    for position in (0, 1):
        expected = numeric_grad(pure(scaled_element), (h[:, 0].copy(), h[1].copy()), position)
        np.testing.assert_allclose(g[position], expected, rtol=1e-6, atol=1e-8)


def test_the_check_runs_where_the_element_is_updated():
    """``t *= v`` is checked as it runs (t an array or a number), not at the entry."""
    source = srcgrad.grad(scaled_element, wrt=(0, 1)).source
    assert "unshared(" not in source
    assert "untouched(a, t" in source


# -- the same array twice, nothing updated; only a copy updated ----------------------

def reads_both(a, b):
    return np.sum(np.tanh(a) * b) + np.sum(a[1:] * b[:-1])


def updates_a_copy(a, b):
    c = a.copy()
    c[0] = 2.0 * b[1]
    c += b
    return np.sum(c * b)


def copies_on_every_path(a, b, flag):
    if flag:
        a = a.copy()
    else:
        a = a * 1.0
    a[0] = 2.0 * b[1]
    return np.sum(a * b)


def twice(x):
    return reads_both(x, x) + updates_a_copy(x, x) + copies_on_every_path(x, x, x[0] > 0.0)


@pytest.mark.parametrize("fn", [reads_both, updates_a_copy])
def test_one_array_twice(fn):
    x = np.array([0.3, 0.7, 1.1])
    value, (ga, gb) = srcgrad.value_and_grad(fn, wrt=(0, 1))(x, x)
    assert_bit_identical(value, fn(x.copy(), x.copy()))
    assert np.array_equal(x, [0.3, 0.7, 1.1])
    np.testing.assert_allclose(ga, numeric_grad(pure(fn), (x, x.copy()), 0), rtol=1e-6)
    np.testing.assert_allclose(gb, numeric_grad(pure(fn), (x.copy(), x), 1), rtol=1e-6)
    assert "unshared(" not in srcgrad.grad(fn, wrt=(0, 1)).source


def test_a_copy_on_every_path_may_be_passed_twice():
    x = np.array([0.3, 0.7, 1.1])
    for flag in (True, False):
        value, g = srcgrad.value_and_grad(copies_on_every_path, wrt=1)(x, x, flag)
        assert_bit_identical(value, copies_on_every_path(x.copy(), x.copy(), flag))
        np.testing.assert_allclose(
            g, numeric_grad(pure(copies_on_every_path), (x, x.copy(), flag), 1), rtol=1e-6)


def test_helpers_given_one_array_twice():
    _check(twice, np.array([0.3, 0.7, 1.1]))


def test_autograd_agrees_where_nothing_is_updated():
    autograd = pytest.importorskip("autograd")
    x = np.array([0.3, 0.7, 1.1])

    def both(v):
        return reads_both(v, v)

    np.testing.assert_allclose(srcgrad.grad(both)(x), autograd.grad(both)(x), rtol=1e-12)


# -- the ambiguous ones stay refused, located ----------------------------------------

def updates_what_the_other_reads(a, b):
    b[0] = 3.0 * a[0]
    return np.sum(a * b)


def row_scaled_in_place(a, b):
    t = b[1]  # a row of the matrix b: t *= v changes b, and a if it is that row
    t *= 2.0
    return np.sum(a) + t[0]


def copies_on_one_path(a, b, flag):
    if flag:
        a = a.copy()
    a[0] = 2.0 * b[1]
    return np.sum(a * b)


def test_an_update_the_other_argument_sees_is_refused():
    x = np.array([0.3, 0.7, 1.1, 1.9])
    with pytest.raises(AliasedUpdateError, match="'b' is updated in place") as info:
        srcgrad.grad(updates_what_the_other_reads, wrt=(0, 1))(x[:3], x[:3])
    assert info.value.filename == __file__ and info.value.lineno is not None
    assert np.array_equal(x, [0.3, 0.7, 1.1, 1.9])
    a, b = x[:2], x[2:]  # apart: as Python
    value, _ = srcgrad.value_and_grad(updates_what_the_other_reads, wrt=(0, 1))(a, b)
    assert_bit_identical(value, updates_what_the_other_reads(a.copy(), b.copy()))


def test_a_row_updated_in_place_is_refused_where_it_runs():
    m = np.arange(6.0).reshape(2, 3) + 1.0
    with pytest.raises(AliasedUpdateError, match=r"'t \*= \.\.\.' changes the array 't'") \
            as info:
        srcgrad.grad(row_scaled_in_place, wrt=(0, 1))(m[1], m)
    assert info.value.lineno == row_scaled_in_place.__code__.co_firstlineno + 2
    assert np.array_equal(m, np.arange(6.0).reshape(2, 3) + 1.0)


def test_a_copy_on_one_path_only_is_refused():
    x = np.array([0.3, 0.7, 1.1])
    with pytest.raises(AliasedUpdateError, match="pass a copy"):
        srcgrad.grad(copies_on_one_path, wrt=1)(x, x, False)


# -- the caller reads what a callee updated ------------------------------------------

def sets_first(a, x):
    a[0] = np.sin(x[1])
    return np.sum(a)


def sets_through_a_name(a, x):
    h = a
    h[0] = np.sin(x[1])
    return np.sum(h)


def another_name_read_after(x):
    y = x * 2.0
    h = y
    s = sets_first(h, x)
    return s + np.sum(y * x)


def a_view_read_after(x):
    y = x * 2.0
    s = sets_first(y[1:], x)
    return s + np.sum(y * x)


def a_transpose_read_after(x):
    y = np.outer(x, x)
    s = sets_first(y.T, x)
    return s + np.sum(y)


def callee_updates_through_a_name(x):
    y = x * 2.0
    s = sets_through_a_name(y, x)
    return s + np.sum(y * x)


def read_in_the_next_iteration(x):
    y = x * 2.0
    s = 0.0
    for _ in range(2):
        s = s + sets_first(y, x ** 2)
    return s


@pytest.mark.parametrize("fn", [another_name_read_after, a_view_read_after,
                                a_transpose_read_after, callee_updates_through_a_name,
                                read_in_the_next_iteration])
def test_a_read_after_the_callee_updated_it_is_refused(fn):
    """These gave the old values silently (the check looked at the name passed only)."""
    with pytest.raises(UnsupportedSyntaxError, match="updates its argument 'a' in place") \
            as info:
        srcgrad.grad(fn)(np.array([0.3, 0.7, 1.1]))
    assert info.value.filename == __file__


def read_before_only(x):
    y = x * 2.0
    t = np.sum(y * y)
    s = sets_first(y, x)
    return s + t


def new_array_each_iteration(x):
    s = 0.0
    for k in range(2):
        y = x * (2.0 + k)
        u = np.sum(y)
        s = s + sets_first(y, x) * u
    return s


@pytest.mark.parametrize("fn", [read_before_only, new_array_each_iteration])
def test_reads_before_the_call_differentiate(fn):
    _check(fn, np.array([0.3, 0.7, 1.1]))


def shifted(a, d):
    a += d  # in place on an array, a new number on a float
    return np.sum(a * a)


def shifted_then_read(x):
    y = x * 2.0
    s = shifted(y, 1.0)
    return s + np.sum(y)


def shifted_number_then_read(x):
    y = float(np.sum(x))
    s = shifted(y, x[0])
    return s + y * x[1]


def shifted_and_rebound(x):
    total = 0.0
    for k in range(2):
        y = x * (2.0 + k)  # a new array each iteration: nothing reads the old one
        total = total + shifted(y, 0.5)
    return total


def test_a_callee_adding_in_place_to_an_array_read_after_is_refused():
    """``a += d`` in the callee changes the caller's array in Python (the
    generated callee makes a new one): refused as the code runs, where the
    argument turns out an array; a number runs."""
    x = np.array([0.3, 0.7, 1.1])
    with pytest.raises(AliasedUpdateError, match="updates its argument 'a' in place") as info:
        srcgrad.grad(shifted_then_read)(x)
    assert info.value.filename == __file__
    assert np.array_equal(x, [0.3, 0.7, 1.1])
    _check(shifted_number_then_read, x)


def test_a_callee_adding_in_place_where_nothing_reads_after_runs():
    _check(shifted_and_rebound, np.array([0.3, 0.7, 1.1]))
