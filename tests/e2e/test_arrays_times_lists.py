"""An array being differentiated beside a list display under ``*`` or ``+``
(``x * [1.0, 2.0, 3.0]``, ``np.sort(x) * [1, 2, 3]``, ``x + [a, b]``) is
NumPy's arithmetic on the array made of the list -- plain broadcasting --
where srcgrad compiled it as a list repeated or concatenated and refused it as
the code ran (reviewer s33 F23).  An argument differentiated that the call
passed no Python float, list, tuple or object is an ndarray or a NumPy scalar
(an int is refused there), so the display is written ``np.array(...)``, and a
run-time check raises Python's TypeError where a NumPy scalar makes no array
(``np.float64(2.0) * [1.0]``), as the function raises it.  Each: value bit for
bit under every policy and jvp, gradient and tangent against differences."""

import numpy as np
import pytest

import srcgrad
from tests.data.numeric import check_every_policy

X = np.array([0.5, 0.2, 0.9])
M = np.array([[0.5, -0.2, 0.9], [1.1, 0.3, -0.7]])


def weighted(x):
    return np.sum(x * [1.0, 2.0, 3.0])


def weighted_left(x):
    return np.sum([1.0, 2.0, 3.0] * x ** 2)


def ranked(x):
    return np.sum(np.sort(x) * [1, 2, 3])


def shifted(x):
    return np.sum(np.sin(x + [x[1], 1.0, -0.5]))


def rows_scaled(m):
    return np.sum(np.tanh(m * [0.5, 1.0, 2.0]) ** 2)


def in_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(x * [1.0, float(k), 2.0]) * x[k]
    return s


def in_a_branch(x):
    if x[0] > 0.0:
        y = x * [2.0, 1.0, 0.5]
    else:
        y = x + [1.0, 1.0, 1.0]
    return np.sum(y * y)


def cumulative(x):
    return np.sum(np.cumsum(x) * [3.0, 2.0, 1.0]) + np.sum(np.diff(x) * [1.0, -1.0])


@pytest.mark.parametrize("fn", [weighted, weighted_left, ranked, shifted, in_a_loop,
                                in_a_branch, cumulative])
def test_followed_as_numpy_arithmetic(fn):
    check_every_policy(fn, (X.copy(),))


def test_a_matrix_times_a_row():
    check_every_policy(rows_scaled, (M.copy(),))


def test_the_other_branch():
    check_every_policy(in_a_branch, (-X,))


def test_a_numpy_scalar_raises_as_the_function_does():
    with pytest.raises(TypeError, match="can't multiply sequence"):
        weighted(np.float64(2.0))
    with pytest.raises(TypeError, match="can't multiply sequence"):
        srcgrad.grad(weighted)(np.float64(2.0))


def test_a_0d_array_is_an_array():
    g = srcgrad.grad(weighted)(np.array(2.0))
    assert g == 6.0
