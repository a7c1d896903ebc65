"""Calls that may return their input's memory, and calls that write into an array.

``z = y.astype(np.float64, copy=False)``, ``np.array(y, copy=False)``,
``y.conj()`` of a real array, ``np.asarray(y)``: NumPy returns ``y`` itself, so
``z[0] = 5.0`` changes ``y`` too.  Each such program either works -- the value
bit for bit, the gradient and the tangent against central differences, the
caller's array untouched -- or is refused with a located srcgrad error; never a
silently wrong number (found by review: the gradient flowed through the old
``y[0]``).  ``np.nan_to_num(y, copy=False)`` changes ``y`` in place, and
``np.copyto(y, v)`` or ``out=y`` into an int array raise NumPy's own error
where NumPy does (the element write srcgrad makes of them would truncate)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_refused_both_modes, check_both_modes

import srcgrad
from srcgrad.errors import AliasedUpdateError, SrcGradError, UnsupportedSyntaxError

X = np.array([0.31, 0.72, 1.13, 0.94])


def _check(fn, x=X):
    """``check_both_modes``, with NumPy's warnings of invalid values and division
    by zero off: the programs here make NaNs on purpose (``np.nan_to_num``)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        check_both_modes(fn, x)


_refused = functools.partial(assert_refused_both_modes, x=X)


# -- calls that may return their operand itself: followed ----------------------------

def astype_no_copy(x):
    y = x * 2.0
    z = y.astype(np.float64, copy=False)
    z[0] = 5.0
    return np.sum(y * x)


def astype_own_dtype(x):
    y = x * 2.0
    z = y.astype(y.dtype, copy=False)
    z[0] = 5.0
    return np.sum(y * x)


def astype_function_no_copy(x):
    y = x * 2.0
    z = np.astype(y, np.float64, copy=False)
    z[0] = 5.0
    return np.sum(y * x)


def astype_float32_is_a_copy(x):
    y = x * 2.0
    z = y.astype(np.float32, copy=False)  # another dtype: a new array
    z[0] = 5.0
    return np.sum(y * x)  # (float32 values are too coarse for central differences)


def array_no_copy(x):
    y = x * 2.0
    z = np.array(y, copy=False)
    z[0] = 5.0
    return np.sum(y * x)


def array_copy_if_needed(x):
    y = x * 2.0
    z = np.array(y, copy=None)
    z[0] = 5.0
    return np.sum(y * x)


def conj_of_real(x):
    y = x * 2.0
    z = y.conj()  # a real array's conj() is the array itself
    z[0] = 5.0
    return np.sum(y * x)


def conjugate_of_real(x):
    y = x * 2.0
    z = y.conjugate()
    z[0] = 5.0
    return np.sum(y * x)


def asarray_of_array(x):
    y = x * 2.0
    z = np.asarray(y)
    z[0] = 5.0
    return np.sum(y * x)


def real_of_real(x):
    y = x * 2.0
    z = y.real
    z[1] = 5.0
    w = np.real(y)
    w[2] = 3.0
    return np.sum(y * x)


def float64_of_array(x):
    y = x * 2.0
    z = np.float64(y)
    z[0] = 5.0
    return np.sum(y * x)


def base_updated_then_alias_read(x):
    y = x * 2.0
    z = y.astype(np.float64, copy=False)
    w = y.conj()
    y[0] = 5.0
    return np.sum(z * x) + np.sum(w * w)


def argument_no_copy(x):
    z = x.astype(np.float64, copy=False)
    z[0] = 5.0
    return np.sum(x * x)


def argument_conj(x):
    z = x.conj()
    z[1] = 0.5
    return np.sum(x * x)


def argument_array_no_copy(x):
    z = np.array(x, copy=False)
    z[2] = 0.5
    return np.sum(x * np.sin(x))


def in_a_branch(x):
    y = x * 2.0
    if x[0] > 0:
        z = y.astype(np.float64, copy=False)
    else:
        z = y * 1.0
    z[0] = 5.0
    return np.sum(y * x)


def in_a_loop(x):
    y = x * 2.0
    for i in range(3):
        z = np.asarray(y)
        z[i] = z[i] * x[i]
    return np.sum(y * x)


def _scaled_first(a):
    b = a.conj()
    b[0] = b[0] * 3.0
    return b


def through_a_helper(x):
    y = x * 2.0
    t = y * 1.0
    w = _scaled_first(t)
    return np.sum(y * x) + np.sum(w * x)


@pytest.mark.parametrize("fn", [
    astype_no_copy, astype_own_dtype, astype_float32_is_a_copy, array_no_copy,
    array_copy_if_needed, conj_of_real, conjugate_of_real, asarray_of_array, real_of_real,
    float64_of_array, base_updated_then_alias_read, argument_no_copy, argument_conj,
    argument_array_no_copy, in_a_branch, in_a_loop, through_a_helper,
], ids=lambda f: f.__name__)
def test_calls_returning_their_operand_are_followed(fn):
    _check(fn)


@pytest.mark.skipif(not hasattr(np, "astype"), reason="np.astype is NumPy 2's")
def test_astype_function_without_copy():
    _check(astype_function_no_copy)


# -- pieces and holders of the array: refused, located ------------------------------

def split_piece(x):
    y = x * 2.0
    z = np.split(y, 2)[0]
    z[0] = 5.0
    return np.sum(y * x)


def hsplit_piece(x):
    y = x * 2.0
    z = np.hsplit(y, 2)[1]
    z[0] = 5.0
    return np.sum(y * x)


def dict_item(x):
    y = x * 2.0
    z = dict(a=y)["a"]  # noqa: C408 - the call, not a display, is the case
    z[0] = 5.0
    return np.sum(y * x)


def flat_iterator(x):
    y = x * 2.0
    z = y.flat
    z[0] = 5.0
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [split_piece, hsplit_piece], ids=lambda f: f.__name__)
def test_pieces_of_the_array_are_refused(fn):
    _refused(fn, AliasedUpdateError, "shares its memory", "copy")


def test_an_item_of_a_dict_built_by_dict_is_followed():
    # dict(a=y) is read as the display {'a': y} (normalize/sugar.py), whose item
    # is y itself: the write through it is followed in both modes, as for the
    # display (refused before: no rule for dict())
    from numeric import check_every_policy  # noqa: PLC0415
    check_every_policy(dict_item, (X.copy(),))


def test_flat_iterator_is_refused():
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.grad(flat_iterator)(X.copy())
    assert info.value.lineno and "copy" in info.value.message
    with pytest.raises(SrcGradError):  # no tangent rule for .flat: refused, located
        srcgrad.jvp(flat_iterator, (X.copy(),), (np.ones(4),))


def split_piece_not_read_back(x):
    y = x * 2.0
    z = np.split(y, 2)[0]
    z[0] = 5.0
    return np.sum(z * x[:2])


def test_a_piece_updated_without_its_base_read_works():
    _check(split_piece_not_read_back)


# -- np.nan_to_num(y, copy=False): y changes in place -------------------------------

def nan_to_num_value(x):
    y = np.log(x - 0.5)  # NaN where x < 0.5
    z = np.nan_to_num(y, copy=False, nan=0.0)
    return np.sum(y * x) + np.sum(z)


def nan_to_num_statement(x):
    y = np.log(x - 0.5)
    np.nan_to_num(y, copy=False, nan=0.25)
    return np.sum(y * x)


def nan_to_num_positional(x):
    y = np.log(x - 0.5)
    np.nan_to_num(y, False, 0.5)
    return np.sum(y * x)


def nan_to_num_in_a_loop(x):
    y = x * 1.0
    for _ in range(3):
        y = np.log(y)
        np.nan_to_num(y, copy=False, nan=1.0, neginf=2.0)
    return np.sum(y * x)


def nan_to_num_copy(x):
    y = np.log(x - 0.5)
    z = np.nan_to_num(y, copy=True)
    return np.sum(np.nan_to_num(y) * x) + np.sum(z)


@pytest.mark.parametrize("fn", [nan_to_num_value, nan_to_num_statement, nan_to_num_positional,
                                nan_to_num_in_a_loop, nan_to_num_copy],
                         ids=lambda f: f.__name__)
def test_nan_to_num_without_copy_changes_its_array(fn):
    _check(fn)


def nan_to_num_nested(x):
    y = np.log(x - 0.5)
    s = np.sum(np.nan_to_num(y, copy=False))
    return s + np.sum(y * x)


def nan_to_num_copy_unknown(x, copy=False):
    y = np.log(x - 0.5)
    np.nan_to_num(y, copy=copy)
    return np.sum(y * x)


def out_nested(x):
    y = np.zeros(4)
    s = np.sum(np.add(x, x, out=y))
    return s + np.sum(y * x)


def test_in_place_calls_inside_expressions_are_refused():
    _refused(nan_to_num_nested, UnsupportedSyntaxError, "statement of its own")
    _refused(nan_to_num_copy_unknown, UnsupportedSyntaxError, "copy=False")
    _refused(out_nested, UnsupportedSyntaxError, "out=", "statement of its own")


# -- out= and np.copyto: written in, with NumPy's casting check ----------------------

def out_value(x):
    y = np.zeros(4)
    z = np.multiply(x, x, out=y)
    z[1] = 0.5
    return np.sum(y * x)


def clip_out(x):
    y = x * 2.0
    z = np.clip(y, 0.0, 2.0, out=y)
    z[0] = 5.0
    return np.sum(y * x)


def out_then_copyto(x):
    y = np.zeros(4)
    np.add(x, x, out=y)
    np.copyto(y, x * 3.0)
    return np.sum(y * x)


def copyto_int_into_int(x):
    y = np.zeros(4, dtype=int)
    np.copyto(y, 2)
    np.multiply(y, 3, out=y)
    return np.sum(y * x)


def copyto_in_a_loop(x):
    y = np.zeros(4)
    acc = 0.0
    for i in range(3):
        np.copyto(y, x * i)
        np.sin(y, out=y)
        acc = acc + np.sum(y * x)
    return acc


@pytest.mark.parametrize("fn", [out_value, clip_out, out_then_copyto, copyto_int_into_int,
                                copyto_in_a_loop], ids=lambda f: f.__name__)
def test_writes_into_an_array_differentiate(fn):
    _check(fn)


def copyto_float_into_int(x):
    y = np.zeros(4, dtype=int)
    np.copyto(y, x)
    return np.sum(y * x)


def out_float_into_int(x):
    y = np.zeros(4, dtype=int)
    np.add(x, x, out=y)
    return np.sum(y * x)


def copyto_scalar_into_int(x):
    y = np.zeros(4, dtype=np.int8)
    np.copyto(y, 1.5)
    return np.sum(y * x)


def out_float32(x):
    y = np.zeros(4, dtype=np.float32)
    np.add(x, x, out=y)
    np.copyto(y, x * 3.0)
    return np.sum(y * x)


def test_casts_numpy_allows_keep_its_values():
    value, _ = srcgrad.value_and_grad(out_float32)(X.copy())
    assert_bit_identical(value, out_float32(X.copy()))
    value, _ = srcgrad.jvp(out_float32, (X.copy(),), (np.ones(4),))
    assert_bit_identical(value, out_float32(X.copy()))


@pytest.mark.parametrize("fn", [copyto_float_into_int, out_float_into_int,
                                copyto_scalar_into_int], ids=lambda f: f.__name__)
def test_casts_numpy_refuses_raise_as_in_numpy(fn):
    with pytest.raises(TypeError) as python:
        fn(X.copy())
    for run in (lambda: srcgrad.value_and_grad(fn)(X.copy()),
                lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(4),))):
        with pytest.raises(type(python.value)) as ours:
            run()
        assert str(ours.value) == str(python.value)


# -- an update seen through another name, and tangents that share memory --------------

def tangent_of_a_sum_read_after_an_update(x):
    y = x * 2.0
    z = y + 1.0  # its tangent is d_y itself: d_y[0] = 0.0 must leave it alone
    y[0] = 5.0
    return np.sum(z * y)


def tangent_of_a_copy_read_after_an_update(x):
    y = x * 2.0
    z = y.flatten()
    w = y.astype(np.float64)
    v = +y
    y[0] = 5.0
    return np.sum(z * y) + np.sum(w * v)


def tangent_read_after_updates_in_a_loop(x):
    h = np.zeros((4, 2))
    for i in range(1, 4):
        row = h[i - 1] + 0.0  # d_h[i - 1] itself, then d_h[i - 1, 0] changes
        h[i - 1, 0] = x[i] * 2.0
        h[i] = np.tanh(row * x[i] + x[i - 1])
    return np.sum(h)


def name_updated_then_other_updated(x):
    y = x * 2.0
    z = y
    z += 0.5  # y is that array
    y[0] = 5.0  # and so is z
    return np.sum(z * x)


def asarray_updated_then_base_updated(x):
    y = x * 2.0
    z = np.asarray(y)
    z += 1.0
    y[1] = 5.0
    return np.sum(z * x)


@pytest.mark.parametrize("fn", [
    tangent_of_a_sum_read_after_an_update, tangent_of_a_copy_read_after_an_update,
    tangent_read_after_updates_in_a_loop, name_updated_then_other_updated,
    asarray_updated_then_base_updated,
], ids=lambda f: f.__name__)
def test_updates_seen_through_another_name(fn):
    _check(fn)


def view_updated_after_its_base_was_augmented(x):
    y = x * 2.0
    r = y[1:]
    y *= 3.0  # r now views the array srcgrad names anew
    r[0] = 5.0
    return np.sum(y * x)


def test_a_view_updated_after_an_augmented_base_is_refused():
    # (it gave the gradient of y[1] as if r[0] = 5.0 had not happened)
    _refused(view_updated_after_its_base_was_augmented, AliasedUpdateError, "copy")


def matrix_transposed_view(x):
    y = x * 2.0
    z = y[None].mT
    z[0, 0] = 5.0
    return np.sum(y * x)


def unstacked_piece(x):
    y = x * 2.0
    z = np.unstack(y[None])[0]
    z[0] = 5.0
    return np.sum(y * x)


def view_with_a_dtype(x):
    y = x * 2.0
    z = y.view(np.float64)  # (np was taken for an array sharing z's memory)
    z[0] = 5.0
    return np.sum(y * x)


@pytest.mark.skipif(not hasattr(np, "unstack"), reason="NumPy 2.1's")
@pytest.mark.parametrize("fn", [matrix_transposed_view, unstacked_piece, view_with_a_dtype],
                         ids=lambda f: f.__name__)
def test_numpy_2_views_are_refused(fn):
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.grad(fn)(X.copy())
    assert info.value.lineno and "shares its memory" in info.value.message
    with pytest.raises(SrcGradError) as info:  # (no tangent rule for some of them)
        srcgrad.jvp(fn, (X.copy(),), (np.ones(4),))
    assert info.value.lineno


def base_updated_then_matrix_transposed_read(x):
    y = x * 2.0
    z = y[None].mT
    y[0] = 5.0
    return np.sum(z[:, 0] * x)


def test_a_matrix_transposed_view_sees_its_base_updated():
    _check(base_updated_then_matrix_transposed_read)


def squeeze_with_nothing_to_squeeze(x):
    y = x * 2.0
    z = np.squeeze(y)  # y itself
    z[0] = 5.0
    w = np.atleast_1d(y)  # y itself
    w[1] = 3.0
    return np.sum(y * x)


def squeeze_that_is_a_view(x):
    y = x[:, None] * 2.0
    z = np.squeeze(y)  # a view of y
    z[0] = 5.0
    return np.sum(y[:, 0] * x)


def test_squeeze_of_nothing_is_followed_and_a_squeezed_view_refused():
    _check(squeeze_with_nothing_to_squeeze)
    _refused(squeeze_that_is_a_view, AliasedUpdateError, "shares its memory")


def nan_to_num_of_a_number(x):
    y = np.log(x[0] - 0.5)
    np.nan_to_num(y, copy=False)  # NumPy 2: no array to write into
    return y * x[1]


def copyto_a_renamed_array(x):
    y = x * 1.0
    y = np.zeros(4, dtype=int)  # the array copyto writes into is this one
    np.copyto(y, x)
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [nan_to_num_of_a_number, copyto_a_renamed_array],
                         ids=lambda f: f.__name__)
def test_in_place_calls_numpy_refuses_raise_its_error(fn):
    with np.errstate(invalid="ignore"):
        try:
            fn(X.copy())
        except (TypeError, ValueError) as error:
            python = error
        else:
            pytest.skip("this NumPy runs it")
        for run in (lambda: srcgrad.value_and_grad(fn)(X.copy()),
                    lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(4),))):
            with pytest.raises(type(python)) as ours:
                run()
            assert str(ours.value) == str(python)


def _fill_first(a, out):
    return a * 1.0 + out[0]


def users_function_with_an_out_parameter(x):
    buf = np.ones(4)
    z = _fill_first(x, out=buf)  # a parameter named out, not NumPy's
    z[1] = 7.0
    return np.sum(z * buf) + np.sum(z * x)


def local_function_with_an_out_parameter(x):
    def step(a, out):
        out[0] = 1.0
        return a
    buf = np.zeros(4)
    z = step(x * 2.0, out=buf)
    z[1] = 7.0
    return np.sum(z * buf) + np.sum(z * x)


def method_writing_into_out(x):
    buf = np.zeros(4)
    z = x.clip(0.0, 1.0, out=buf)
    return np.sum(z * x)


def test_out_of_users_functions_is_a_parameter():
    _check(users_function_with_an_out_parameter)
    _check(local_function_with_an_out_parameter)
    _refused(method_writing_into_out, UnsupportedSyntaxError, "out=", "np.clip(x, lo, hi, out=y)")


def int_slice_augmented_by_floats(x):
    y = np.zeros(4, dtype=int)
    y[1:] += x[1:]  # NumPy: a view updated in place, a float refused
    return np.sum(y * x)


def int_element_augmented_by_a_float(x):
    y = np.zeros(4, dtype=int)
    y[0] += x[0] * 3.0  # a NumPy scalar: added, then stored (truncated)
    y[1:] += 2
    return np.sum(y * x)


def test_augmented_slices_of_int_arrays_cast_as_numpy_does():
    with pytest.raises(TypeError):
        int_slice_augmented_by_floats(X.copy())
    for run in (lambda: srcgrad.value_and_grad(int_slice_augmented_by_floats)(X.copy()),
                lambda: srcgrad.jvp(int_slice_augmented_by_floats, (X.copy(),),
                                    (np.ones(4),))):
        with pytest.raises(TypeError):
            run()
    _check(int_element_augmented_by_a_float)
