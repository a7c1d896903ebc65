"""A local variable named like a builtin the generated code calls (outside tester T1, session 30, #11).

``slice = x[1:] * 2.0`` made the adjoint's own ``slice(...)`` call the user's
array (raw ``TypeError: 'numpy.ndarray' object is not callable``);
``len = 3`` or ``range = 3`` after a loop made the normaliser take the loop's
own ``len``/``range`` for the user's variable (an unlocated "used before it
is assigned"), and ``reversed = 3`` broke ``[::-1]`` of a list.  A user's
local named like any builtin is now renamed where it is defined (``slice_1``;
messages still show the user's name), and the calls srcgrad writes for a loop
are marked as the builtins.  Each program: value bit for bit under every
policy and in jvp, gradient and tangent against differences; autograd on the
tester's first program.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([1.0, 2.0, 0.5])


def a_slice(x):  # T1: TypeError
    slice = x[1:] * 2.0  # noqa: A001
    return np.sum(slice ** 2)


def a_len_after_a_loop(x):  # T1: "local variable 'len' is used before it is assigned"
    s = 0.0
    for v in x:
        s = s + v ** 2
    len = 3  # noqa: A001
    return s * len


def reversed_list(x):
    reversed = 3.0  # noqa: A001
    ys = [v * 2.0 for v in x][::-1]
    return np.sum(ys[0] * reversed)


def range_after_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * float(i)
    range = 3.0  # noqa: A001
    return s * range


def many(x):
    list = [v * 2.0 for v in x]  # noqa: A001
    zip = 1.5  # noqa: A001
    sum = 0.0  # noqa: A001
    for i in range(len(x)):
        sum = sum + list[i]
    min = x[1:] * 1.0  # noqa: A001
    min[0] = min[0] * 3.0
    a, b = (x[0], x[1])
    return sum * zip + np.sum(min) + a * b


def in_a_loop(x):
    total = 0.0
    for k in range(3):
        slice = x[k:] * float(k + 1)  # noqa: A001
        len = np.sum(slice ** 2)  # noqa: A001
        total = total + len
    return total


def in_a_branch(x):
    if np.sum(x) > 0:
        range = x * 2.0  # noqa: A001
        return np.sum(range[::-1] * x)
    return np.sum(x)


def in_a_branch_other_way(x):
    return in_a_branch(-x)


def helper(x):
    slice = x[:2]  # noqa: A001
    out = 0.0
    for v in slice:
        out = out + v ** 3
    len = 2.0  # noqa: A001
    return out * len


def in_a_helper(x):
    return helper(x) + helper(x * 0.5)


PROGRAMS = [a_slice, a_len_after_a_loop, reversed_list, range_after_enumerate, many,
            in_a_loop, in_a_branch, in_a_branch_other_way, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_a_local_named_like_a_builtin(fn):
    check(fn, (X,))


def test_the_testers_numbers():
    value, grad = srcgrad.value_and_grad(a_slice)(X.copy())
    assert value == 17.0
    assert_close(grad, np.array([0.0, 16.0, 4.0]))
    value, grad = srcgrad.value_and_grad(a_len_after_a_loop)(X.copy())
    assert value == 15.75
    assert_close(grad, 6.0 * X)


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):
        return anp.sum((x[1:] * 2.0) ** 2)

    assert_close(srcgrad.grad(a_slice)(X.copy()), autograd.grad(plain)(X), what="autograd")
