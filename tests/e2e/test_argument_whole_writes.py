"""A whole write into an argument after a row of it was read (session 30, T2 #1).

``s = np.sum(np.sin(w * x[0])); np.copyto(x, 0.0)``: ``x[0]`` is a view of the
argument ``x``, which the adjoint of ``*`` reads.  srcgrad copied ``x`` at the
entry (generated code never changes the caller's array) but ran the call as
written on the copy, so the taped row read zeros and the gradient came out
0.0 (Python's: -1.17), under every policy, with no error.  ``np.copyto(x, v)``,
``np.multiply(x, v, out=x)`` and ``x.fill(v)`` on a local array were already
the element write ``x[...] = v`` srcgrad differentiates (its adjoint puts the
old elements back before the row is read); normalize/statements.py
``whole_write`` now takes a parameter copied at the entry as such a local too.
The same write of the whole ``x``, read as a whole before it, was refused with
a message naming srcgrad's ``x_1``; it now works.  A differentiated argument
written whole (``x.fill(w)``, ``np.multiply(x, w, out=x)``) was refused and now
has its derivative.  Each program: value bit for bit under every policy, with
optimize=False and in jvp, gradient and tangent against differences, and
autograd on the function written without the write (its value is the same).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad, pure
from numeric import check_every_policy as check

import srcgrad

X = np.array([[2.0, 3.0], [1.0, 4.0]])
W = 0.7


def by_copyto(w, x):  # the tester's: 0.0 where Python gives -1.1746
    s = np.sum(np.sin(w * x[0]))
    np.copyto(x, 0.0)
    return s


def by_out(w, x):
    s = np.sum(np.sin(w * x[0]))
    np.multiply(x, 0.0, out=x)
    return s


def by_fill(w, x):
    s = np.sum(np.sin(w * x[0]))
    x.fill(0.0)
    return s


def whole_then_fill(w, x):  # was refused, naming x_1
    s = np.sum(np.sin(w * x))
    x.fill(0.0)
    return s


def rows_in_a_loop(w, xs):  # the tester's RNN: its inputs cleared after the loop
    h = np.zeros(2)
    for t in range(xs.shape[0]):
        h = np.tanh(w * xs[t] + 0.5 * h)
    np.copyto(xs, 0.5)
    return np.sum(h ** 2)


def written_in_the_loop(w, xs):  # each row read, then the whole array written
    s = 0.0
    for t in range(xs.shape[0]):
        r = xs[t]
        s = s + np.sum(np.sin(w * r))
        np.multiply(xs, 0.5, out=xs)
    return s


def in_a_branch(w, x):
    s = np.sum(np.sin(w * x[1]))
    if s > 0.0:
        np.copyto(x, 0.0)
    else:
        x.fill(1.0)
    return s * np.sum(x * w)


def filler(w, x):
    s = np.sum(np.sin(w * x[0]))
    x.fill(0.0)
    return s


def through_a_helper(w, x):
    c = np.sum(np.cos(w * x[1]))
    return filler(w, x) + c


def by_add_at(w, x):  # T2 #1 (more): 7.13 where Python gives 4.01
    s = np.sum(np.sin(w * x[0]))
    np.add.at(x, [0, 0], 1.0)
    return s * np.sum(x)


PROGRAMS = [by_copyto, by_out, by_fill, whole_then_fill, rows_in_a_loop,
            written_in_the_loop, in_a_branch, through_a_helper, by_add_at]


def _without_the_write(w, x):
    return np.sum(np.sin(w * x[0]))


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    x = X.copy()
    check(fn, (W, x), wrt=0)
    assert (x == X).all()  # the caller's array is left alone
    value, grad = srcgrad.value_and_grad(fn, optimize=False)(W, x)
    assert_bit_identical(value, pure(fn)(W, x))
    assert_close(grad, numeric_grad(pure(fn), [W, x], 0), rtol=1e-6, atol=1e-8)


def test_the_testers_numbers():
    grad = srcgrad.grad(by_copyto)(W, X.copy())
    assert_close(grad, np.sum(np.cos(W * X[0]) * X[0]), rtol=1e-12)
    assert abs(grad - -1.1746040280424808) < 1e-8
    assert srcgrad.grad(by_copyto)(np.array(W), X.copy()) == pytest.approx(grad, rel=1e-12)


def _written_by_w(x, w):
    np.copyto(x, x * w)
    return np.sum(x ** 3)


def _filled(x, w):
    x.fill(w)
    return np.sum(x * x)


def _multiplied(x, w):
    s = np.sum(np.sin(x))
    np.multiply(x, w, out=x)
    return s + np.sum(x ** 2)


@pytest.mark.parametrize("fn", [_written_by_w, _filled, _multiplied], ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_differentiated_argument_written_whole(fn, wrt):
    x = np.array([0.3, 0.9, 1.0])
    check(fn, (x, 0.5), wrt=wrt)
    assert (x == np.array([0.3, 0.9, 1.0])).all()


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(w, x):
        return anp.sum(anp.sin(w * x[0]))

    want = autograd.grad(plain)(W, X)
    for fn in (by_copyto, by_out, by_fill):
        assert_close(srcgrad.grad(fn)(W, X.copy()), want, rtol=1e-12)
    assert_close(srcgrad.grad(_without_the_write)(W, X.copy()), want, rtol=1e-12)
