"""Review 4's findings M8, L5, L6, L9, L10 (/work/tmp/review4), as regressions.

M8: ``y[1:] += x * 0.5`` on an integer or bool array raises NumPy's TypeError
however the array was made (np.arange, np.array of ints, np.full, astype(int), a
comparison), where srcgrad returned a number computed from truncated elements;
the dtype is checked as the code runs (``in_place``).  An element, ``y[0] += 0.5``,
is stored back truncated, as NumPy does, and an int literal keeps the dtype.
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad

X = np.array([0.7, -1.3, 0.4])
POLICIES = ("save", "recompute", "sqrt", ("revolve", 2))


def _check(fn, x=X):
    """Value bit for bit, gradient and tangent against central differences under
    every policy; the caller's array untouched."""
    expected = pure(fn)(x.copy())
    fd = numeric_grad(pure(fn), [x.copy()], 0)
    for policy in POLICIES:
        given = x.copy()
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(given)
        assert_bit_identical(value, expected, f"{fn.__name__} {policy}")
        assert_close(grad, fd, what=f"{fn.__name__} gradient, {policy}")
        np.testing.assert_array_equal(given, x)
    direction = np.linspace(0.5, 1.5, x.size)
    value, tangent = srcgrad.jvp(fn, (x.copy(),), (direction,))
    assert_bit_identical(value, expected, f"{fn.__name__} jvp")
    assert_close(tangent, jvp_fd(pure(fn), [x.copy()], [0], [direction]),
                 what=f"{fn.__name__} tangent")


def _raises_as_numpy(fn, x=X):
    """The function raises NumPy's TypeError; so does every generated one."""
    with pytest.raises(TypeError):
        fn(x.copy())
    for policy in POLICIES:
        with pytest.raises(TypeError, match="Cannot cast|cast"):
            srcgrad.value_and_grad(fn, policy=policy)(x.copy())
    with pytest.raises(TypeError, match="Cannot cast|cast"):
        srcgrad.jvp(fn, (x.copy(),), (np.ones(x.size),))


# -- M8: a float into a slice of an integer array ---------------------------------------

def arange_slice(x):
    y = np.arange(3)
    y[1:] += x[1:] * 0.5
    return np.sum(y * x)


def int_list_slice(x):
    y = np.array([1, 2, 3])
    y[1:] += x[1:] * 0.5
    return np.sum(y * x)


def full_slice(x):
    y = np.full(3, 2)
    y[:2] *= x[:2]
    return np.sum(y * x)


def astype_slice(x):
    y = (x * 10).astype(int)
    y[1:] += x[1:]
    return np.sum(y * x)


def bool_slice(x):
    y = x > 0
    y[1:] += x[1:]
    return np.sum(y * x)


def int_plus_one_slice(x):
    y = np.zeros(3, dtype=int) + 1
    y[1:] -= x[1:]
    return np.sum(y * x)


def ellipsis_update(x):
    y = np.arange(3)
    y[...] += 0.5
    return np.sum(y * x)


def fancy_update(x):
    y = np.arange(3)
    y[[0, 1]] += x[:2]
    return np.sum(y * x)


def whole_array_update(x):
    y = np.arange(3)
    y *= 2.5
    return np.sum(y * x)


def slice_update_in_loop(x):
    y = np.arange(3)
    s = 0.0
    for i in range(2):
        y[i:] += x[i:] * 0.5
        s = s + np.sum(y * x)
    return s


def slice_update_in_branch(x):
    y = np.arange(3)
    if x[0] > 0:
        y[1:] += x[1:]
    return np.sum(y * x)


def _update_tail(y, x):
    y[1:] += x[1:] * 0.5
    return y


def slice_update_in_helper(x):
    y = _update_tail(np.arange(3), x)
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [arange_slice, int_list_slice, full_slice, astype_slice,
                                bool_slice, int_plus_one_slice, ellipsis_update,
                                fancy_update, whole_array_update, slice_update_in_loop,
                                slice_update_in_branch, slice_update_in_helper],
                         ids=lambda f: f.__name__)
def test_a_float_into_an_integer_array_raises_as_numpy_does(fn):
    _raises_as_numpy(fn)


def element_of_int_array(x):
    y = np.arange(3)
    y[0] += x[0] * 0.5  # NumPy: a NumPy scalar, stored back truncated
    y[2] += 0.5
    return np.sum(y * x)


def element_in_loop(x):
    y = np.arange(3)
    for i in range(3):
        y[i] += x[i]
    return np.sum(y * x)


def int_literal_into_slice(x):
    y = np.arange(3)
    y[1:] += 1
    y[:2] *= 2
    return np.sum(y * x)


def float_copy_slice(x):
    y = np.array(x)  # dtype unknown to the compiler: checked as the code runs
    y[1:] += x[1:] * 0.5
    return np.sum(y * x)


def zeros_slice_in_loop(x):
    y = np.zeros(3)
    for i in range(2):
        y[i:] += x[i:] * x[0]
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [element_of_int_array, element_in_loop,
                                int_literal_into_slice, float_copy_slice,
                                zeros_slice_in_loop], ids=lambda f: f.__name__)
def test_what_numpy_accepts_runs_as_numpy_does(fn):
    _check(fn)


def test_a_floating_array_made_by_np_zeros_needs_no_run_time_check():
    """np.zeros(n) is float64: the update stays the plain operation."""
    assert "in_place" not in srcgrad.grad(zeros_slice_in_loop).source


# -- L9: an in-place refusal names the array changed ---------------------------------------

def put_method(x):
    y = x * 1.0
    y.put([0], x[2] ** 2)
    return np.sum(y * y)


def put_along_axis_call(x):
    y = x * 1.0
    np.put_along_axis(y, np.array([1]), x[0] * 3.0, axis=0)
    return np.sum(y * y)


def put_function(x):
    z = x * 1.0
    np.put(z, [0], x[1])
    return np.sum(z)


def add_at_in_loop(x):
    w = x * 1.0
    for i in range(2):
        np.add.at(w, [i], x[2])
    return np.sum(w)


def _sort_helper(v):
    v.sort()
    return v


def sort_in_helper(x):
    u = x * 2.0
    return np.sum(_sort_helper(u) * x)


@pytest.mark.parametrize("fn", [put_along_axis_call, add_at_in_loop], ids=lambda f: f.__name__)
def test_put_along_axis_and_add_at_by_a_loop_index_are_followed(fn):
    # (refused until np.put_along_axis became the assignment it makes and np.add.at
    # with an index not all literals y[...] = added_at(y, idx, v): test_picking_rules.py,
    # test_add_at_index_arrays.py)
    from numeric import check_every_policy  # noqa: PLC0415
    check_every_policy(fn, (X.copy(),))


@pytest.mark.parametrize("fn, name", [(put_method, "y"), (put_function, "z"),
                                      (sort_in_helper, "v")],
                         ids=lambda a: getattr(a, "__name__", a))
def test_an_in_place_refusal_names_the_array_changed(fn, name):
    for run in (lambda: srcgrad.grad(fn)(X.copy()),
                lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),))):
        with pytest.raises(srcgrad.SrcGradError) as info:
            run()
        assert f"may change '{name}' in place" in info.value.message, info.value.message
        assert info.value.lineno and info.value.filename.endswith("test_review4_fixes.py")


# -- L10: a function passed by keyword ---------------------------------------------------

def apply_fn(fn, x):
    return np.sum(fn(x) ** 2)


def _soft(v):
    return v / (1.0 + v * v)


def apply_in_loop(fn, x, n=2):
    s = 0.0
    for i in range(n):
        s = s + np.sum(fn(x * (i + 1.0)))
    return s


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn, target", [(np.tanh, apply_fn), (_soft, apply_fn),
                                        (np.sin, apply_in_loop)],
                         ids=["tanh", "user_function", "loop"])
def test_a_function_passed_by_keyword_is_specialised_on(fn, target, policy):
    """g(fn=np.tanh, x=x) is g(np.tanh, x), whatever the keywords' order."""
    value, grad = srcgrad.value_and_grad(target, wrt=1, policy=policy)(fn, X)
    g = srcgrad.value_and_grad(target, wrt=1, policy=policy)
    for call in (lambda: g(fn=fn, x=X), lambda: g(x=X, fn=fn), lambda: g(fn, x=X)):
        v, d = call()
        assert_bit_identical(v, value)
        assert_bit_identical(d, grad)
    assert_bit_identical(value, target(fn, X.copy()))
    assert_close(grad, numeric_grad(lambda x: target(fn, x), [X.copy()], 0))
    # another function by keyword: new code, not the first one's
    v, d = g(fn=np.cos, x=X)
    assert_bit_identical(v, target(np.cos, X.copy()))
    assert_close(d, numeric_grad(lambda x: target(np.cos, x), [X.copy()], 0))


# -- L5: p._replace(...) in a helper the caller's named tuple is passed to ------------------

P = namedtuple("P", ["a", "b"])


class Q(NamedTuple):
    w: np.ndarray
    s: float = 0.5

    def scaled(self, v):
        return self.w * v + self.s


def _replace_helper(p):
    return p._replace(a=p.b).a


def replace_in_helper(x):
    p = P(x[0], x[1])
    return _replace_helper(p) * x[2]


def _replace_and_method(q, v):
    r = q._replace(s=v * 2.0)
    return np.sum(r.scaled(v)) + q.s


def replace_in_helper_loop(x):
    q = Q(x * 1.5)
    total = 0.0
    for i in range(2):
        total = total + _replace_and_method(q, x[i])
    return total


def replace_in_helper_branch(x):
    p = P(x[0] * x[1], x[2])
    if x[0] > 0:
        return _replace_helper(p) * x[0]
    return p.a


@pytest.mark.parametrize("fn", [replace_in_helper, replace_in_helper_loop,
                                replace_in_helper_branch], ids=lambda f: f.__name__)
def test_replace_in_a_helper_of_a_local_named_tuple(fn):
    _check(fn)


# -- L6: an argument copied on every path of a first if whose test reads it -----------------

def copied_on_every_path(a, b):
    if a[0] > 0:
        a = a.copy()
    else:
        a = a * 1.0
    a[0] = 2.0 * b[1]
    return np.sum(a * b)


def copied_on_every_path_loop(a, b):
    if a[0] > 0.5 and a[1] < 2.0:
        a = np.array(a)
    else:
        a = 2.0 * a
    for i in range(2):
        a[i] = a[i + 1] * b[i]
    return np.sum(a * b)


@pytest.mark.parametrize("fn", [copied_on_every_path, copied_on_every_path_loop],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_an_argument_copied_on_every_path_may_be_passed_twice(fn, policy):
    for x in (X, -X):
        expected = fn(x.copy(), x.copy())
        given = x.copy()
        value, grad = srcgrad.value_and_grad(fn, wrt=1, policy=policy)(given, given)
        assert_bit_identical(value, expected)
        np.testing.assert_array_equal(given, x)
        # the same array passed twice: the gradient wrt the second argument alone
        assert_close(grad, numeric_grad(lambda b, x=x: fn(x.copy(), b), [x.copy()], 0))
        value, tangent = srcgrad.jvp(fn, (given, given), (None, np.ones(3)))
        assert_bit_identical(value, expected)
        np.testing.assert_array_equal(given, x)
