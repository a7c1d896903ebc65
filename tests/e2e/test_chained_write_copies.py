"""``y[a][b] = v`` where ``a`` is a name: a view, an item, or NumPy's copy.

With an int, a slice or a tuple of them, ``y[a]`` is a view of ``y`` and the
write reaches ``y``; with a mask or an integer array (``m = y > 0``,
``idx = np.array([1, 2])``, an index passed in), ``y[a]`` is a copy and
Python's write is lost.  srcgrad writes the part back into ``y``, which is
right for a view and an item and would change ``y`` for a copy: the value
(30.0 for 5.25) and the gradient were silently wrong (found by an outside
tester).  Only the index's value can tell, so a check runs before the write
and refuses the copy, located; views and items are differentiated as before."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, assert_refused_both_modes, \
    check_both_modes, numeric_grad

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.5, -1.0, 2.0, 0.75])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


def masked(x):
    y = x.copy()
    m = y > 0
    y[m][0] = 100.0 * x[0]  # a copy: no effect in Python
    return np.sum(y * x)


def integer_array(x):
    y = x.copy()
    idx = np.array([1, 2])
    y[idx][0] = 100.0 * x[0]
    return np.sum(y * x)


def masked_column(x):
    A = np.outer(x, x)
    m = np.array([True, False, True, False])
    A[m][:, 1] = 0.0
    return np.sum(A)


def _into_part(y, x, sel):  # a helper: the index is its argument
    y[sel][0] = x[1] * 3.0
    return y


def via_helper(x):
    y = x * 2.0
    sel = x > 0.6
    return np.sum(_into_part(y, x, sel) * x)


def shifted_integer_array(x):  # an index expression that is an array
    A = np.outer(x, x)
    m = np.array([0, 1])
    A[m + 1][0] = 5.0 * x[0]
    return np.sum(A)


@pytest.mark.parametrize("fn", [masked, integer_array, masked_column, via_helper,
                                shifted_integer_array])
def test_a_write_into_a_copy_is_refused_located(fn):
    assert_refused_both_modes(fn, UnsupportedSyntaxError, "is a copy", "advanced indexing",
                              x=X)


def rows_in_loop(x):  # Y[t] is a view: the write reaches Y
    Y = np.outer(x, x)
    for t in range(x.size):
        Y[t][t] = x[t] * 3.0
    return np.sum(Y * Y)


def sliced(x):
    Y = np.outer(x, x)
    lo, hi = 1, 3
    s = slice(lo, hi)
    Y[s][0] = np.sin(x[:4])
    return np.sum(Y ** 2)


def tuple_index(x):
    Y = np.stack([np.outer(x, x), np.outer(x, x[::-1])])
    i, j = 1, 2
    Y[i, j][1] = x[0] * x[3]
    return np.sum(Y * Y)


def index_expressions(x):  # A[t + 1][0] = v was refused ("only elements of a local...")
    A = np.outer(x, x)
    for t in range(2):
        A[t + 1][0] = A[t][1] * x[t]
        A[2 * t][t - 1] = np.sin(A[t + 1][0])
    return np.sum(A ** 2)


def list_items(x):
    grid = [x * 1.0, x * 2.0]
    for i in range(2):
        if x[i] > 0:
            grid[i][0] = grid[i][1] * x[2]
    return np.sum(grid[0] * grid[1])


def dict_items(x):
    st = {"h": x * 1.0, "c": x ** 2}
    for k in ("h", "c"):
        st[k][1] = st[k][2] * x[0]
    return np.sum(st["h"] + st["c"])


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn", [rows_in_loop, sliced, tuple_index, list_items, dict_items,
                                index_expressions])
def test_views_and_items_are_followed(fn, policy):
    check_both_modes(fn, X, policy=policy)


def _part(A, sel, x):
    B = A.copy()
    B[sel][0] = x[2] * 5.0
    return np.sum(B * A)


@pytest.mark.parametrize("sel", [slice(0, 2), 1, (1, slice(None))])
def test_an_index_passed_in_that_gives_a_view(sel):
    fn = functools.partial(_part, sel=sel)
    A = np.outer(X, X[:3])

    def f(x):
        return _part(A * x[0], sel, x)
    value, grad = srcgrad.value_and_grad(f)(X.copy())
    assert_bit_identical(value, f(X))
    assert_close(grad, numeric_grad(f, [X], 0), what="gradient")
    assert fn is not None


@pytest.mark.parametrize("sel", [[0, 2], np.array([0, 2]), np.array([True, False, True, False])])
def test_an_index_passed_in_that_gives_a_copy_is_refused(sel):
    A = np.outer(X, X[:3])

    def f(x, s):
        B = A * x[0]
        B[s][0] = x[2] * 5.0
        return np.sum(B)
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(f)(X.copy(), sel)
    assert info.value.lineno and "is a copy" in info.value.message
