"""Lists of differentiated values that NumPy takes as arrays (outside tester T3,
F3-6): ``y[0] = [x[0], x[1], 1.0]`` of an array ``y``, ``M @ [a, b]``,
``np.linalg.solve(A, [a, 1.0])``, ``np.where(c, [a, b], 0.0)``, hvp of
``np.max([x[0] ** 2, x[1]])``.

NumPy converts the list to an array before it computes; srcgrad's adjoints
took the Python list for a sequence (a raw, unlocated run-time refusal, and
``'*' of a tuple or list`` in hvp).  The display is now ``np.array(display)``
wherever NumPy certainly makes that array of it (normalize/array_operands.py,
which generalises the ufunc case of dd00b73): an ``array_like`` argument of a
NumPy function, an operand of ``-``, ``/``, ``**``, ``@`` (and of ``+``, ``*``
beside a NumPy value), the value written into an element of a local array.
A list's item written with a display stays a list.  Each program: value bit
for bit under every policy and in jvp, gradient and tangent against central
differences; autograd where it runs the program.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, numeric_grad
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.7, -0.4, 1.3])
M = np.array([[1.0, 2.0], [0.5, -1.0]])
A = np.array([[3.0, 1.0], [0.5, 2.0]])


def row_written(x):  # T3's program
    y = np.zeros((3, 3))
    y[0] = [x[0], x[1], 1.0]
    return np.sum(y * y) + y[0, 1]


def rows_in_a_loop(x):
    y = np.ones((3, 2))
    for i in range(3):
        y[i] = [x[i] * 2.0, np.sin(x[i])]
    return np.sum(y ** 2)


def row_in_a_branch(x):
    y = np.zeros((2, 3))
    if x[0] > 0:
        y[1, :] = (x[2], 1.0, x[0] * x[1])
    else:
        y[1, :] = (1.0, x[1], x[2])
    return np.sum(np.tanh(y))


def filled(a, b):
    z = np.full(3, 0.5)
    z[1:] = [a * b, b]
    return z


def row_in_a_helper(x):
    return np.sum(filled(x[0], x[2]) ** 3)


def matmul_of_a_list(x):  # T3's program
    a = x[0] * 2.0
    b = np.sin(x[1])
    return np.sum(M @ [a, b])


def list_matmul_in_a_loop(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum([x[i], x[i + 1] ** 2] @ M)
    return s


def solved(x):  # T3's program
    a = x[0] * x[1]
    return np.sum(np.linalg.solve(A, [a, 1.0]))


def where_of_a_list(x):  # T3's program
    a = x[0]
    b = x[1] ** 2
    return np.sum(np.where(x[:2] > 0, [a, b], 0.0))


def solved_in_a_branch(x):
    if x[2] > 0:
        r = np.linalg.solve(A, (x[0], x[2]))
    else:
        r = np.dot(M, (x[1], 1.0))
    return r[0] * r[1]


def max_of_a_list(x):  # T3's program (its hvp)
    return np.max([x[0] ** 2, x[1]])


def arithmetic(x):
    y = np.sin(x[:2]) * 3.0  # certainly an array: y * [...] is NumPy's
    d = y - [x[2], 1.0]
    e = y * [x[0], x[1]]
    return np.sum(d ** 2 + e / [2.0, x[2]]) + np.sum([x[2], x[0]] ** y)


def by_keywords(x):
    return np.linalg.norm(x=[x[0], x[2]]) + np.dot(b=[x[1], 1.0], a=[x[0], x[2]]) \
        + np.sum(np.clip(a=[x[0], x[1]], a_min=-0.1, a_max=[x[2], 0.5]))


PROGRAMS = [row_written, rows_in_a_loop, row_in_a_branch, row_in_a_helper, matmul_of_a_list,
            list_matmul_in_a_loop, solved, where_of_a_list, solved_in_a_branch, max_of_a_list,
            arithmetic, by_keywords]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X,))


def test_the_other_branch():
    check(row_in_a_branch, (-X,))
    check(solved_in_a_branch, (-X,))


@pytest.mark.parametrize("fn", [max_of_a_list, matmul_of_a_list, solved, row_written,
                                arithmetic], ids=lambda f: f.__name__)
def test_hvp(fn):
    v = np.array([0.3, -1.0, 0.5])
    eps = 1e-5
    want = (numeric_grad(fn, [X + eps * v], 0) - numeric_grad(fn, [X - eps * v], 0)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, v), want, rtol=1e-4, atol=1e-4, what=fn.__name__)


def test_max_hvp_is_the_testers():
    np.testing.assert_array_equal(srcgrad.hvp(max_of_a_list)(X, np.ones(3)), [2.0, 0.0, 0.0])


@pytest.mark.parametrize("fn", [matmul_of_a_list, where_of_a_list, max_of_a_list],
                         ids=lambda f: f.__name__)
def test_autograd_agrees(fn):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    theirs = type(fn)(fn.__code__, dict(fn.__globals__, np=anp), fn.__name__)
    assert_close(srcgrad.grad(fn)(X), autograd.grad(theirs)(X), rtol=1e-12, atol=1e-12)


def list_item_written(x):
    lst = [x[0], x[1]]
    lst[0] = [x[1], x[2]]  # a list's item: stays a list
    return lst[0][1] * x[0] + len(lst[0])


def repeated(x):
    ys = [x[0], x[1]] * 2  # a list repeated, not NumPy arithmetic
    return ys[3] * ys[0]


def test_lists_stay_lists():
    check(list_item_written, (X,))
    check(repeated, (X,))
    for fn in (list_item_written, repeated):
        gradient = srcgrad.grad(fn)
        gradient(X)
        assert "np.array" not in gradient.source


def unknown_times_a_list(x):
    y = x[:2]  # a list where x is one: y * [...] may repeat it
    return np.sum(y * [x[0], x[1]])


def test_times_a_list_of_an_unknown_value_refused_located():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(unknown_times_a_list)(X)
    assert info.value.lineno == unknown_times_a_list.__code__.co_firstlineno + 2
    assert "np.asarray" in str(info.value)


def written_into_an_unknown(w):
    y = w.copy()  # an array, which srcgrad cannot tell from a list of lists here
    y[0] = [w[0, 0] * 2.0, w[1, 1] ** 2]
    return np.sum(y ** 2)


def test_a_list_written_into_an_unknown_array_is_refused_located():
    # (was a raw, unlocated refusal from inside the adjoint)
    w = np.array([[0.5, 1.0], [2.0, -1.0]])
    for run in (lambda: srcgrad.grad(written_into_an_unknown)(w),
                lambda: srcgrad.jvp(written_into_an_unknown, (w,), (np.ones((2, 2)),))):
        with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
            run()
        assert info.value.lineno == written_into_an_unknown.__code__.co_firstlineno + 2
        assert "np.array([...])" in str(info.value)


def rows_of_a_list_of_lists(x):
    grid = [[0.0, 0.0], [1.0, 1.0]]
    grid[0] = [x[0], x[1] * x[2]]  # a list's item: no check, stays a list
    return grid[0][1] * grid[1][0] + grid[0][0]


def test_a_list_of_lists_row():
    check(rows_of_a_list_of_lists, (X,))
    gradient = srcgrad.grad(rows_of_a_list_of_lists)
    gradient(X)
    assert "list_written" not in gradient.source
