"""A write through what a helper returns unchanged or as a view of its
argument (``b = ident(buf)``, ``r = row(A, 1)``, ``np.asarray`` in a helper),
the argument read afterwards: refused, advising ``b = b.copy()`` -- which
leaves ``buf`` as it was, another result (review s34, R2-10), and at one time
calling the local ``buf`` "a module-level or closed-over value" (R2-20).  The
refusal (analysis/alias_messages.py) now says which call may return which
name, and advises the rewrites that keep the result; those are followed.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import AliasedUpdateError

X = np.array([0.3, -0.5, 0.9])


def ident(a):
    return a


def as_array(a):
    return np.asarray(a)


def row(A, i):
    return A[i]


def through_ident(x):
    buf = np.zeros(3)
    b = ident(buf)
    b[:] = np.sin(x)
    return np.sum(buf * x)


def through_asarray(x):
    buf = np.zeros(3)
    b = as_array(buf)
    b[:] = np.sin(x)
    return np.sum(buf * x)


def through_row(x):
    A = np.zeros((2, 3))
    r = row(A, 1)
    r[:] = np.sin(x)
    return np.sum(A * x)


def through_row_in_a_loop(x):
    A = np.zeros((2, 3))
    for i in range(2):
        r = row(A, i)
        r[:] = np.sin(x) * (i + 1.0)
    return np.sum(A * x)


@pytest.mark.parametrize("fn, written, read, call", [
    (through_ident, "b", "buf", "ident(buf)"),
    (through_asarray, "b", "buf", "as_array(buf)"),
    (through_row, "r", "A", "row(A, 1)"),
    (through_row_in_a_loop, "r", "A", "row(A, i)"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_write_through_a_helpers_result_is_refused_naming_the_call(fn, written, read, call):
    with pytest.raises(AliasedUpdateError) as caught:
        srcgrad.grad(fn)(X)
    error = caught.value
    lines, first = inspect.getsourcelines(fn)
    update = first + next(i for i, text in enumerate(lines) if f"{written}[:] = " in text)
    assert (error.filename, error.lineno) == (__file__, update)
    assert f"'{call}' may return '{read}' itself" in error.message
    assert f"({read}[...] = ...)" in error.message and ".copy()" not in error.message


def advised_into_the_array(x):
    buf = np.zeros(3)
    buf[...] = np.sin(x)
    return np.sum(buf * x)


def advised_view_taken_here(x):
    buf = np.zeros(3)
    b = buf[...]
    b[:] = np.sin(x)
    return np.sum(buf * x)


def advised_row_taken_here(x):
    A = np.zeros((2, 3))
    r = A[1]
    r[:] = np.sin(x)
    return np.sum(A * x)


@pytest.mark.parametrize("fn", [advised_into_the_array, advised_view_taken_here,
                                advised_row_taken_here], ids=lambda f: f.__name__)
def test_the_advised_rewrites_are_followed(fn):
    grad = check_every_policy(fn, (X,), 0)
    np.testing.assert_allclose(grad, np.sin(X) + X * np.cos(X), rtol=1e-9)
