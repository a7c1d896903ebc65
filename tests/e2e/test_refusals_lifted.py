"""Valid code srcgrad refused, found by review 5, now differentiated.

Each function runs under every policy (value bit for bit the function's own,
gradient against central differences) and in forward mode (the tangent
against differences along a direction), and against autograd where it runs
the program, with at least one case inside a loop, a branch or a helper:

- ``p = upd(p, s)`` where ``upd`` returns ``p._replace(W=...)``, and
  ``_replace`` on a named tuple passed to the function or returned by a
  helper: a class only known when the code runs, so ``p._replace(W=v)`` is
  the runtime primitive ``replaced(("W",), p, v)``, with rules of its own;
- two or more augmented updates of a loop's row (``row = Y[t]; row *= a; row
  += b``, element writes between them), ``Y`` read afterwards: each is written
  into the view as the first one was (the second was refused with
  AliasedUpdateError).
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest
from numeric import (
    POLICIES,
    assert_bit_identical,
    assert_close,
    jvp_fd,
    numeric_grad,
    pure,
)

import srcgrad


def check(fn, args, wrt=0):
    want = pure(fn)(*args)
    fd = numeric_grad(pure(fn), list(args), wrt)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy)(*args)
        assert_bit_identical(value, want, f"{fn.__name__}, policy {policy!r}")
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, policy {policy!r}")
    direction = np.linspace(-1.0, 1.5, np.size(args[wrt])).reshape(np.shape(args[wrt]))
    value, tangent = srcgrad.jvp(fn, wrt=[wrt])(*args, direction)
    assert_bit_identical(value, want, f"{fn.__name__}, jvp")
    assert_close(tangent, jvp_fd(pure(fn), list(args), [wrt], [direction]), rtol=1e-6,
                 atol=1e-8, what=f"{fn.__name__}, jvp")
    return grad


def against_autograd(fn, args, grad, wrt=0):
    autograd = pytest.importorskip("autograd")
    assert_close(grad, autograd.grad(fn, wrt)(*args), rtol=1e-10, atol=1e-12,
                 what=f"{fn.__name__}, autograd")


# -- p = upd(p, s), upd returning p._replace(...) ---------------------------------------

P = namedtuple("P", "w b")


class Q(NamedTuple):
    w: np.ndarray
    b: float = 0.5


def scaled(p, s):
    return p._replace(w=p.w * s)


def rebound_by_helper(x):
    p = P(x[0], x[1])
    for i in range(2):
        p = scaled(p, 1.5)
    return p.w * p.b


def made(x):
    return Q(x * 2.0)


def from_helper(x):
    q = made(x)
    for i in range(3):
        q = q._replace(w=np.tanh(q.w) + q.b)
    return np.sum(q.w ** 2)


def from_argument(x, q):
    q = q._replace(w=q.w * x, b=np.sin(x[0]))
    if x[1] > 0:
        q = q._replace(b=q.b * 2.0)
    return np.sum(q.w) * q.b


X = np.array([0.5, 1.2, -0.7])


@pytest.mark.parametrize("fn", [rebound_by_helper, from_helper])
def test_replace_of_a_named_tuple_a_helper_returns(fn):
    against_autograd(fn, (X,), check(fn, (X,)))


def test_replace_of_a_named_tuple_argument():
    q = Q(np.array([1.0, 2.0, -0.5]), 0.3)
    against_autograd(from_argument, (X, q), check(from_argument, (X, q)))


def test_gradient_with_respect_to_a_named_tuple_whose_field_is_replaced():
    q = Q(np.array([1.0, 2.0, -0.5]), 0.3)
    value, grad = srcgrad.value_and_grad(from_argument, wrt=1)(X, q)
    assert type(grad) is Q
    assert_bit_identical(value, from_argument(X, q), "from_argument")
    # w is replaced by w * x: its cotangent reaches q.w; b is replaced outright: none
    want = np.full(3, from_argument(X, q) / np.sum(q.w * X)) * X
    assert_close(grad.w, want, rtol=1e-12, atol=0, what="d q.w")
    assert grad.b == 0.0


def test_hessian_vector_product_through_replace():
    """The tangent of ``replaced`` (``replaced_tangent``) has rules of its own, so
    the tangent code is differentiated again."""
    v, eps = np.array([0.3, -1.0, 0.8]), 1e-6
    grad = srcgrad.grad(from_helper)
    fd = (grad(X + eps * v) - grad(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(from_helper)(X, v), fd, rtol=1e-5, atol=1e-7, what="hvp")


# -- row = Y[t]; row *= a; row += b ------------------------------------------------------


def rows_twice(x):
    Y = np.zeros((2, 3)) + x
    for row in Y:
        row *= 2.0
        row += x
    return np.sum(Y ** 2)


def row_three_times(x):
    Y = np.outer(np.arange(1.0, 4.0), x)
    for t in range(3):
        row = Y[t]
        row *= x
        row += np.sin(x)
        row -= 0.5 * x
    return np.sum(Y ** 2)


def row_read_between(x):
    Y = np.outer(np.arange(1.0, 4.0), x)
    s = 0.0
    for t in range(3):
        row = Y[t]
        row *= x
        s = s + np.sum(Y)
        row[0] = x[1] * 3.0
        row += 1.0
    return s + np.sum(Y * Y) + np.sum(row)


def row_of_previous(x):
    Y = np.outer(np.arange(1.0, 4.0), x)
    for t in range(1, 3):
        row = Y[t]
        row *= Y[t - 1]
        row += Y[t - 1] * x
    return np.sum(Y ** 2)


def block_of_rows(x):
    Y = np.outer(np.arange(1.0, 4.0), x)
    for t in range(1, 3):
        rows = Y[t - 1:t + 1]
        rows *= 1.5
        rows += x
        rows /= 2.0
    return np.sum(Y ** 2)


def element_twice(x):
    y = x * 2.0  # 1-D: y[t] is a number, which += rebinds
    for t in range(3):
        a = y[t]
        a *= 3.0
        a += x[0]
    return np.sum(y ** 2) + a


def rows_in_a_branch(x):
    Y = np.outer(np.arange(1.0, 3.0), x)
    if x[0] > 0:
        for row in Y:
            row *= x
            row += 1.0
    return np.sum(np.tanh(Y))


def scaled_rows(x):
    Y = np.ones((2, 3)) + x
    for row in Y:
        row *= x
        row += x * x
    return Y


def rows_in_a_helper(x):
    return np.sum(scaled_rows(x) ** 2) + np.sum(scaled_rows(x * 0.5))


@pytest.mark.parametrize("fn", [rows_twice, row_three_times, row_read_between, row_of_previous,
                                block_of_rows, element_twice, rows_in_a_branch,
                                rows_in_a_helper])
def test_several_updates_of_a_row_view(fn):
    check(fn, (X,))


def test_several_updates_of_a_row_view_against_autograd():
    def plain(x):  # the same function, written without updates in place
        Y = np.zeros((2, 3)) + x
        return np.sum((Y * 2.0 + x) ** 2)
    autograd = pytest.importorskip("autograd")
    assert_close(srcgrad.grad(rows_twice)(X), autograd.grad(plain)(X), rtol=1e-12, atol=0,
                 what="autograd")
