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
  AliasedUpdateError);
- ``a.sort()`` of a local array (``a = x * w; a.sort()``, a row ``Y[1].sort()``)
  is the element write ``a[...] = np.sort(a)``, with ``np.sort``'s derivative
  and the old contents saved; NumPy's ``rng.shuffle(a)`` of a local array as
  ``a[...] = a[rng.permutation(len(a))]``, the same order from the same draws
  (another generator's on a copy written back; what ``rng.normal`` drew and
  nothing read yet, as written);
- lists holding one array in several slots, ``hs = [h0] * T`` then ``hs[t] =
  new``, ``[z, z]``, read, passed to a helper, a slot rebound and then written:
  differentiated (no item is updated in place; where one is, ``hs[0][1] = v``,
  it changes every slot, and tests/e2e/test_container_aliases.py keeps it
  refused).
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad
from numeric import check_every_policy as check

import srcgrad



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


# -- a.sort(), rng.shuffle(a) of a fresh array --------------------------------------------

W = np.array([0.3, -2.0, 1.1])


def sorted_once(x):
    a = x * W
    a.sort()
    return np.sum(a * np.arange(3.0))


def sorted_in_loop(x):
    h = x
    for i in range(2):
        a = h * W
        a.sort()
        h = np.tanh(a * np.arange(1.0, 4.0))
    return np.sum(h)


def sorted_after_a_read(x):
    rng = np.random.default_rng(3)
    h = x
    for i in range(3):
        a = rng.normal(size=3) + h
        h = h * a
        a.sort()
        h = np.tanh(h + a * np.arange(3.0))
    return np.sum(h)


def sorted_rows(x):
    Y = np.outer(np.arange(1.0, 3.0), x * W)
    for row in Y:
        row.sort()
    M = np.outer(x, W)
    M.sort(axis=0)
    return np.sum(Y * np.arange(6.0).reshape(2, 3)) + np.sum(M * np.arange(9.0).reshape(3, 3))


def sorted_in_a_branch(x):
    a = x * W
    b = a[1:]
    if x[0] > 0:
        a.sort()
    return np.sum(a * np.arange(3.0)) + np.sum(b * 3.0)


def sorted_copy(v):
    b = v * 2.0
    b.sort()
    return b


def sorted_in_a_helper(x):
    return np.sum(sorted_copy(x * W) * np.arange(3.0)) + np.sum(sorted_copy(x) ** 2)


@pytest.mark.parametrize("fn", [sorted_once, sorted_in_loop, sorted_after_a_read, sorted_rows,
                                sorted_in_a_branch, sorted_in_a_helper])
def test_sort_in_place_of_a_local_array(fn):
    check(fn, (X,))


def test_sort_in_place_against_autograd():
    autograd = pytest.importorskip("autograd")
    anp = autograd.numpy

    def plain(x):
        return anp.sum(anp.sort(x * W) * anp.arange(3.0))
    assert_close(srcgrad.grad(sorted_once)(X), autograd.grad(plain)(X), rtol=1e-12, atol=0,
                 what="autograd")


def shuffled_fresh(x):
    rng = np.random.default_rng(5)
    h = x
    for i in range(3):
        a = rng.normal(size=3)
        rng.shuffle(a)
        h = np.tanh(h * a)
    return np.sum(h)


def shuffled_after_a_read(x):
    rng = np.random.default_rng(5)
    h = x
    for i in range(3):
        a = np.arange(1.0, 4.0) * 0.5
        h = h * a
        rng.shuffle(a)
        h = np.tanh(h * a)
    return np.sum(h)


def shuffled_active(x):
    rng = np.random.default_rng(2)
    np.random.seed(3)
    h = x
    for i in range(3):
        a = h * W
        rng.shuffle(a)
        np.random.shuffle(a)
        h = np.tanh(h + a)
    return np.sum(h)


@pytest.mark.parametrize("fn", [shuffled_after_a_read, shuffled_active])
def test_shuffle_in_a_loop(fn):
    """NumPy's rng.shuffle(a) of a local array is a[...] = a[rng.permutation(len(a))],
    the same order from the same draws: a permutation differentiated as an
    indexing, drawn once, which a checkpointed loop's rerun reads back."""
    check(fn, (X,))


def test_shuffle_of_a_fresh_draw_in_a_loop():
    """What rng.normal drew and nothing read yet, shuffled as written: its old
    contents are read by nothing.  A checkpointed loop would run the shuffle
    again: refused, located."""
    want = shuffled_fresh(X)
    fd = numeric_grad(shuffled_fresh, [X], 0)
    for policy in ("save", "recompute"):
        value, grad = srcgrad.value_and_grad(shuffled_fresh, policy=policy)(X)
        assert_bit_identical(value, want, f"policy {policy!r}")
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=f"policy {policy!r}")
    value, tangent = srcgrad.jvp(shuffled_fresh, wrt=[0])(X, np.ones(3))
    assert_bit_identical(value, want, "jvp")
    assert_close(tangent, np.sum(fd), rtol=1e-6, atol=1e-8, what="jvp")
    for policy in ("sqrt", ("revolve", 2)):
        with pytest.raises(srcgrad.SrcGradError, match="permutation") as info:
            srcgrad.grad(shuffled_fresh, policy=policy)(X)
        assert info.value.lineno == shuffled_fresh.__code__.co_firstlineno + 5
