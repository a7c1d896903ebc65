"""Element writes into nested lists, and slice assignments into lists.

An outside tester found both failing as the generated code ran, with an
unlocated error about '+' from ``unbroadcast``: ``grid[0][1] = v`` is lowered
to ``t = snapshot(grid[0]); t[1] = v; grid[0] = t``, and the adjoint of the
write-back treated the list item ``t`` as an array to sum a cotangent down to
(``L[1:3] = [a, b]`` the same).  A list's item is stored as it is: its
cotangent passes through.  A slice assignment may also change a list's
length (``L[1:3] = [v]``); the adjoint then puts the old elements back first
(``restore_part``) and works out from the length before where the new ones
went.  A slice held in a name is followed where it cannot have moved the
elements, and refused, located, where it may have."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_both_modes

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.5, -1.2, 0.7])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


def nested(x):  # the tester's program: Python gives -0.84, gradient [0, 0.7, -1.2]
    grid = [[x[0], x[1]], [x[2], x[0]]]
    grid[0][1] = grid[0][1] * grid[1][0]
    return grid[0][1]


def slice_assign(x):  # the tester's program: -34.6, gradient [0, 30, 2]
    L = [x[0], x[1], x[2], x[0]]
    L[1:3] = [x[2] * 2, x[1] * 3]
    return L[1] + 10 * L[2]


def in_loops(x):
    grid = [[x[0], x[1], x[2]], [x[2], x[0], x[1]]]
    for i in range(2):
        for j in range(1, 3):
            grid[i][j] = grid[i][j - 1] * grid[1 - i][j] + x[j]
    return grid[0][2] * grid[1][2] + grid[1][0]


def in_branch(x):
    grid = [[x[0], x[1]], [x[2], x[0]]]
    if x[0] > 0:
        grid[1][1] = np.sin(grid[0][0]) * grid[1][0]
    else:
        grid[1][0] = 2.0
    return grid[1][1] + grid[1][0] * grid[0][1]


def _put(grid, x):
    grid[0][0] = grid[1][1] * x[1]
    return grid


def via_helper(x):
    grid = [[x[0], x[1]], [x[2], x[0]]]
    g = _put(grid, x)
    return g[0][0] * g[0][1]


def three_deep(x):
    t = [[[x[0], x[1]], [x[2]]], [[x[1]]]]
    t[0][0][1] = t[0][1][0] * t[1][0][0]
    return t[0][0][1] + t[0][0][0]


def arrays_in_a_list(x):
    rows = [x * 1.0, x ** 2]
    rows[1][0] = rows[0][2] * rows[1][1]
    return np.sum(rows[0] * rows[1])


def items_replaced(x):
    L = [[x[0], x[1]], (x[2], x[0])]
    L[0] = [L[0][1] * x[2], L[1][0]]
    L[1] = (L[0][0] * x[1], L[1][1])
    return L[1][0] + L[0][0] * L[1][1]


def slices_in_a_loop(x):
    L = [x[0], x[1], x[2], x[0]]
    for k in range(2):
        L[k:k + 2] = [L[k + 1] * x[2], L[k] * 3]
    L[::2] = [L[3] * 2, L[0] * x[1]]
    return L[0] + 2 * L[1] + 3 * L[2] + L[3]


def shrinks(x):
    L = [x[0], x[1], x[2], x[0] * x[1]]
    L[1:3] = [x[2] * 2]
    return L[1] + 10 * L[2] + L[0]


def grows_in_the_middle(x):  # same length seen on the list after: the elements after moved
    L = [x[0], x[1], x[2], x[0] * x[1]]
    L[1:-1] = [x[2] * 2, x[1], x[0]]
    return L[1] + L[0] * L[2] + L[4]


def open_ended(x):
    L = [x[0], x[1], x[2], x[0]]
    L[1:] = [x[2] * 2]
    M = [x[0], x[1], x[2], x[1]]
    M[-3:-1] = [x[2] * 2, x[1], x[0] * x[2]]
    M[2:10] = [M[4] * x[0], M[1]]
    return L[1] + L[0] + M[1] + M[0] * M[2] + M[3]


def grows_in_a_loop(x):
    L = [x[0]]
    for i in range(3):
        L[len(L):] = [L[-1] * x[i], x[i]]
        if x[i] > 0:
            L[0:2] = [L[1] * 2]
    return L[0] + sum(L) * L[-1]


def array_slices(x):  # the same adjoint on arrays
    y = np.zeros(5)
    y[1:4] = x * 2
    y[::2] = y[1:4] * x
    y[:] = y * y[0]
    return np.sum(y * y)


PROGRAMS = [nested, slice_assign, in_loops, in_branch, via_helper, three_deep,
            arrays_in_a_list, items_replaced, slices_in_a_loop, shrinks, grows_in_the_middle,
            open_ended, grows_in_a_loop, array_slices]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn", PROGRAMS)
def test_list_writes_are_differentiated(fn, policy):
    for x in (X, -X):  # both branches
        check_both_modes(fn, x, policy=policy)


def test_the_testers_values():
    value, grad = srcgrad.value_and_grad(nested)(X)
    assert value == nested(X)
    np.testing.assert_allclose(grad, [0.0, X[2], X[1]], rtol=1e-15)
    value, grad = srcgrad.value_and_grad(slice_assign)(X)
    assert value == slice_assign(X)
    np.testing.assert_allclose(grad, [0.0, 30.0, 2.0], rtol=1e-15)


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")

    def plain(x):  # autograd's boxes in a list: the same program
        L = [x[0], x[1], x[2], x[0] * x[1]]
        L[1:3] = [x[2] * 2]
        grid = [[L[0], L[1]], [L[2], x[0]]]
        grid[0][1] = grid[0][1] * grid[1][0]
        return grid[0][1] + L[0]
    np.testing.assert_allclose(srcgrad.grad(plain)(X), autograd.grad(plain)(X), rtol=1e-14)


def through_a_named_slice(x, s):
    L = [x[0], x[1], x[2], x[0] * x[1]]
    L[s] = [x[2] * 2, x[1]]
    return L[1] + L[0] * L[2] + L[3]


def test_a_named_slice_that_keeps_the_length_is_followed():
    for s in (slice(1, 3), slice(-3, -1), slice(0, 4, 2)):
        value, grad = srcgrad.value_and_grad(through_a_named_slice)(X, s)
        assert value == through_a_named_slice(X, s)
        want = [(through_a_named_slice(X + e, s) - through_a_named_slice(X - e, s)) / 2e-6
                for e in np.eye(3) * 1e-6]
        np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("s", [slice(1, 2), slice(3, None), slice(2, 10)])
def test_a_named_slice_that_may_move_the_elements_is_refused_located(s):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(through_a_named_slice)(X, s)
    err = info.value
    assert err.filename.endswith("test_nested_list_writes.py") and err.lineno
    assert "L[a:b] = v" in err.message
    # forward mode follows the length change as Python makes it
    value, tangent = srcgrad.jvp(through_a_named_slice, (X, s), (np.ones(3), None))
    assert value == through_a_named_slice(X, s)
    step = np.ones(3) * 1e-6
    want = (through_a_named_slice(X + step, s) - through_a_named_slice(X - step, s)) / 2e-6
    np.testing.assert_allclose(tangent, want, rtol=1e-6)


# An array on the right of a list slice assignment: Python stores its rows as
# the list's items (L[0:2] = x[1:] * 2.0).  The adjoint handed the array's
# cotangent back as a list, and the next rule failed with a raw TypeError
# ("can't multiply sequence by non-int of type 'float'") under every policy.
def array_rows_same_length(x):  # the reviewer's program: gradient [0, -0.8, 2.8, 6]
    L = [x[0], x[1], x[2]]
    L[0:2] = x[1:] * 2.0
    return L[0] * L[1] + L[2] * 3.0


def array_rows_resize(x):  # the reviewer's program: gradient [0, 0.2, 2.8, 6]
    L = [x[0], x[1], x[2]]
    L[0:1] = x[1:] * 2.0
    return L[0] * L[1] + L[2] * 3.0 + L[3]


def array_rows_in_a_loop(x):
    L = [x[0], x[1], x[2], x[3]]
    for k in range(3):
        if x[k] > 0:
            L[k:k + 2] = np.sin(x[k:k + 2]) * L[k]
        else:
            L[k:k + 1] = x[:2] * x[3]
    return L[0] * L[1] + L[2] * L[-1] + len(L)


def array_of_rows(x):  # a 2-D array: the list holds its rows
    M = np.outer(x[:2], x[2:])
    L = [x, x * 2.0]
    L[1:2] = M * 3.0
    return np.sum(L[0] * L[1][0]) + np.sum(L[2] ** 2)


def _rows_into(L, v):
    L[1:3] = v * v
    return L


def array_rows_via_helper(x):
    L = _rows_into([x[0], x[1], x[2], x[3]], x[:2])
    return L[1] * L[2] + L[3]


X4 = np.array([0.3, 0.7, -0.2, 0.5])
ARRAY_ROWS = [array_rows_same_length, array_rows_resize, array_rows_in_a_loop,
              array_of_rows, array_rows_via_helper]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn", ARRAY_ROWS)
def test_list_slice_assigned_from_an_array(fn, policy):
    for x in (X4, -X4, np.array([0.3, -0.7, 0.2, 0.5])):  # both branches
        check_both_modes(fn, x, policy=policy)


def test_list_slice_assigned_from_an_array_values_and_second_order():
    np.testing.assert_allclose(srcgrad.grad(array_rows_same_length)(X4), [0, -0.8, 2.8, 6],
                               atol=1e-14)
    np.testing.assert_allclose(srcgrad.grad(array_rows_resize)(X4), [0, 0.2, 2.8, 6],
                               atol=1e-14)
    v = np.array([1.0, -0.5, 0.25, 2.0])
    for fn in ARRAY_ROWS:
        g = srcgrad.grad(fn)
        want = (g(X4 + 1e-6 * v) - g(X4 - 1e-6 * v)) / 2e-6
        np.testing.assert_allclose(srcgrad.hvp(fn)(X4, v), want, rtol=1e-6, atol=1e-7)


def test_list_slice_assigned_from_an_array_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    for fn in (array_rows_same_length, array_rows_resize):
        np.testing.assert_allclose(srcgrad.grad(fn)(X4), autograd.grad(fn)(X4), rtol=1e-14)
