"""A call that changes an array in place after a view of it was read for the
adjoint: refused, located, where it gave a wrong gradient (session 30, T2 #1).

``s = np.sum(np.sin(w * x[0])); zero_(x)`` (``def zero_(a): a[...] = 0.0``),
``x.sort()``, ``np.put(x, ...)``: run as written, the call changed the row
``x[0]`` the adjoint of ``*`` reads (0.0 where Python's gradient is -1.17; with
``x.sort()``, -0.50 for -1.17), no error.  No tape keeps the old elements of
an array a call changes, so memory/stale_views.py refuses such a program at
the call, naming the view as the user wrote it (never srcgrad's ``x_1`` or
``t1``) and what to write; the whole-array forms (``np.copyto(x, v)``,
``x.fill(v)``, ``out=x``) are followed instead (test_argument_whole_writes.py).
Forward mode reads nothing stale (each tangent follows its statement): jvp
still gives the derivative.  Where the view is taken after the call, nothing
is refused and the gradient is checked under every policy.  A module-level
helper such as ``zero_`` is inlined where it is called since session 32
(normalize/effect_calls.py), and its update followed like the caller's own:
those programs are checked under every policy now; one the inliner leaves a
call (a ``return`` midway) is still refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import SrcGradError, UnsupportedSyntaxError

X = np.array([[3.0, 2.0], [1.0, 4.0]])
W = 0.7


def zero_(a):
    a[...] = 0.0


def by_a_helper(w, x):  # the tester's zero_(x): 0.0 where Python gives -1.1746
    s = np.sum(np.sin(w * x[0]))
    zero_(x)
    return s


def by_sort(w, x):  # -0.4998 where Python gives -1.1746
    s = np.sum(np.sin(w * x[0]))
    x.sort()
    return s


def by_put(w, x):
    s = np.sum(np.sin(w * x[0]))
    np.put(x, [0, 1], 0.0)
    return s


def a_local_by_a_helper(w, x):
    y = x * 1.0
    s = np.sum(np.sin(w * y[0]))
    zero_(y)
    return s


def whole_by_a_helper(w, x):  # the adjoint reads x itself
    s = np.sum(np.sin(w * x))
    zero_(x)
    return s


def in_a_loop(w, xs):
    h = 0.0
    for t in range(xs.shape[0]):
        r = xs[t]
        h = np.tanh(np.sum(w * r) + 0.5 * h)
        zero_(xs)  # (row r's memory)
    return h


def in_a_branch(w, x):
    s = np.sum(np.sin(w * x[1]))
    if s > 0.0:
        zero_(x)
    return s


def inner(w, x):
    s = np.sum(np.sin(w * x[0]))
    x.sort()
    return s


def in_a_helper(w, x):
    c = np.sum(np.cos(w * x[1]))
    return inner(w, x) + c


def scale_(a, k):
    a *= k


def scaled_between_reads(w, x):  # T2 #1 (more): no view; the adjoint reads the halved x
    s = np.sum(np.sin(x * w))
    scale_(x, 0.5)
    return s + np.sum(x * w)


def a_constant_zeroed(w, x):  # T2 #1 (more): a local constant array
    c = np.ones((2, 2))
    s = np.sum(np.sin(w * c[0]))
    zero_(c)
    return s


def by_putmask(w, x):
    s = np.sum(np.sin(w * x.T[0]))
    np.putmask(x, x > 0, 0.0)
    return s


def by_add_at_indices(w, x):  # an index array: followed (test_add_at_index_arrays.py)
    s = np.sum(np.sin(w * x[0]))
    np.add.at(x, np.array([0, 0]), 1.0)
    return s


def rows_of_a_for(w, x):
    s = 0.0
    for r in x:
        s = s + np.sum(np.sin(w * r))
    zero_(x)
    return s


def reshaped(w, x):
    s = np.sum(np.sin(w * x.reshape(-1)[:3]))
    zero_(x)
    return s


def matmul_rows(w, x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.tanh(x[i] @ (w * np.eye(2))))
    zero_(x)
    return s


def zero_unless_empty(a):  # a return midway: not inlined (normalize/effect_calls.py)
    if a.size == 0:
        return
    a[...] = 0.0


def by_a_helper_returning_early(w, x):
    s = np.sum(np.sin(w * x[0]))
    zero_unless_empty(x)
    return s


# (the view, x[0], or under recompute the array, x, that the adjoint reads)
REFUSED = [(by_sort, "x.sort()", "'x"), (by_put, "np.put(x, [0, 1], 0.0)", "'x"),
           (in_a_helper, "x.sort()", "'x"), (by_putmask, "np.putmask(x,", "'x"),
           (by_a_helper_returning_early, "zero_unless_empty(x)", "'x")]

# A module-level helper called as a statement for its update (zero_(x), scale_(x, k))
# is inlined where it is called since session 32 (normalize/effect_calls.py): its
# update is the caller's own, which the tapes follow -- these were refused before.
FOLLOWED = [by_a_helper, a_local_by_a_helper, whole_by_a_helper, in_a_loop, in_a_branch,
            scaled_between_reads, a_constant_zeroed, rows_of_a_for, reshaped, matmul_rows]


@pytest.mark.parametrize("fn", FOLLOWED, ids=lambda f: f.__name__)
def test_a_helper_changing_the_array_is_followed(fn):
    x = X.copy()
    check(fn, (W, x), wrt=0)
    np.testing.assert_array_equal(x, X)  # the caller's array is left alone


@pytest.mark.parametrize("fn, call, view", REFUSED, ids=[f.__name__ for f, _, _ in REFUSED])
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt"])
def test_refused_located_naming_the_users_names(fn, call, view, policy):
    with pytest.raises(UnsupportedSyntaxError) as caught:
        srcgrad.grad(fn, policy=policy)(W, X.copy())
    error = caught.value
    assert isinstance(error, SrcGradError)
    assert call in error.message and view in error.message
    assert "x_1" not in error.message and "t1" not in error.message
    assert error.filename == __file__ and error.lineno is not None and error.col is not None
    assert "in place" in error.message and "adjoint" in error.message


@pytest.mark.parametrize("fn", [f for f, _, _ in REFUSED] + FOLLOWED, ids=lambda f: f.__name__)
def test_forward_mode_still_right(fn):
    value, tangent = srcgrad.jvp(fn, wrt=[0])(W, X.copy(), 1.0)
    assert value == pure(fn)(W, X)
    assert_close(tangent, jvp_fd(pure(fn), [W, X], [0], [1.0]), rtol=1e-6, atol=1e-8)


def sorted_first(w, x):  # the row is taken after the sort: nothing stale
    x.sort()
    return np.sum(np.sin(w * x[0]))


def zeroed_then_read(w, x):
    c = np.sum(x[1])
    zero_(x)
    return np.sum(np.sin(w * x[0])) + c


def helper_on_a_copy(w, x):
    s = np.sum(np.sin(w * x[0]))
    y = x.copy()
    zero_(y)
    return s + np.sum(y)


def loop_sorting_rows(w, xs):
    s = 0.0
    for t in range(xs.shape[0]):
        xs[t].sort()
        s = s + np.sum(np.sin(w * xs[t]))
    return s


@pytest.mark.parametrize("fn", [sorted_first, helper_on_a_copy, loop_sorting_rows],
                         ids=lambda f: f.__name__)
def test_not_refused_where_nothing_is_stale(fn):
    check(fn, (W, X.copy()), wrt=0)


def scaled_then_read(w, x):
    c = np.sum(x[1])
    scale_(x, 0.5)
    return np.sum(np.sin(w * x)) * c


@pytest.mark.parametrize("fn", [zeroed_then_read, scaled_then_read], ids=lambda f: f.__name__)
@pytest.mark.parametrize("policy", POLICIES)
def test_read_again_after_the_helper_not_refused(fn, policy):
    # (each call on a new copy: zero_(x), run as written on an argument srcgrad
    # does not differentiate, changes the caller's array as the function does;
    # "recompute" takes nothing again from x after it)
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(W, X.copy())
    assert_bit_identical(value, pure(fn)(W, X))
    assert_close(grad, numeric_grad(pure(fn), [W, X], 0), atol=1e-8)
    value, tangent = srcgrad.jvp(fn, wrt=[0])(W, X.copy(), 1.0)
    assert_bit_identical(value, pure(fn)(W, X))
    assert_close(tangent, grad, atol=1e-12)
