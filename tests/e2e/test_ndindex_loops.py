"""Loops over ``np.ndindex`` and ``np.ndenumerate`` (an outside tester's finding).

``for i, j in np.ndindex(2, 2)`` crashed with a raw TypeError inside the
generated code (``len()`` of the iterator); ``for idx, v in np.ndenumerate(X)``
was refused (no adjoint rule).  A class whose objects are iterators without
``len`` is now listed before the loop like ``iter(...)``
(srcgrad/normalize/control.py, ``makes_iterator``), and ``np.ndenumerate(a)``
is a loop over ``np.ndindex(np.shape(a))`` reading ``a[idx]`` where the loop
gets to it (``enumerated_array``).  Each program runs under every policy
(value bit for bit, gradient against differences), in forward mode and
against autograd, with cases in a branch and a helper called in a loop.
"""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check


def weighted(X):
    out = 0.0
    for i, j in np.ndindex(2, 2):
        out = out + X[i, j] * (i + 2 * j)
    return out


def off_diagonal(X):
    out = 0.0
    for idx in np.ndindex(X.shape):
        if idx[0] != idx[1]:
            out = out + np.sin(X[idx]) * idx[1]
    return out


def helper_in_loop(X):
    s = 0.0
    for k in range(2):
        s = s + off_diagonal(X * (k + 1))
    return s


def enumerated(X):
    out = 0.0
    for (i, j), v in np.ndenumerate(X):
        out = out + np.cos(v) * (i + 1) + v * j
    for idx, v in np.ndenumerate(X):
        if v > 1.0:
            out = out + v ** 2
    return out


def enumerated_updated(X):
    Y = X * 1.0
    for idx, v in np.ndenumerate(Y):  # NumPy's iterator reads each element when it gets to it
        if idx[0] + 1 < Y.shape[0]:
            Y[idx[0] + 1, idx[1]] = Y[idx[0] + 1, idx[1]] + v * 0.5
    return np.sum(Y ** 2)


@pytest.mark.parametrize("fn", [weighted, off_diagonal, helper_in_loop, enumerated,
                                enumerated_updated], ids=lambda f: f.__name__)
def test_index_loops(fn):
    X = np.arange(6.0).reshape(3, 2) * 0.4 + 0.3
    if fn is weighted:
        X = X[:2]
    grad = check(fn, (X,))
    if fn is not enumerated_updated:  # autograd does not run item assignment
        assert_close(grad, autograd.grad(fn)(X), what=f"{fn.__name__}, autograd")
