"""Keywords of rules the review found refused (s33 F26).

``np.quantile(x, 0.5, method="linear")`` and ``np.percentile(..., method=
"linear")`` were refused ("cannot take these arguments"), though 'linear' is
NumPy's default, the one the rules implement; it is accepted now, and so is
any other method (s35 R3-22: differentiated as that method).
``np.ediff1d(x, to_begin=x[1], to_end=...)`` with differentiated ends was
refused, naming srcgrad's temporary 't1': the ends are copied into the
output, so they get the cotangents there (and the tangents in forward mode).  Each program: value bit for bit, gradient against differences
under every policy, jvp, hvp against differences of the gradient; in a loop,
a branch and a helper.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -1.2, 2.0, 0.5, 0.9, -0.4])


def quantile_linear(x):
    return np.quantile(x * 2.0, 0.3, method="linear") ** 2


def percentiles_linear(x):
    return np.sum(np.percentile(np.sin(x), [20, 70], method="linear") ** 2)


def quantile_axis(x):
    return np.sum(np.quantile(x.reshape(2, 3), [0.25, 0.5], axis=1, method="linear",
                              keepdims=True) ** 2)


def ends(x):
    return np.sum(np.ediff1d(x, to_begin=x[1], to_end=[x[0] * 2.0, 3.0]) ** 3)


def begin_only(x):
    return np.sum(np.ediff1d(x ** 2, to_begin=np.sin(x[:2])) ** 2)


def end_only(x):
    return np.sum(np.ediff1d(x.reshape(2, 3), to_end=x[::-1] * 0.5) ** 2)


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.quantile(x * (i + 1.0), 0.6, method="linear")
        s = s + np.sum(np.ediff1d(x, to_begin=s) ** 2)
    return s


def in_a_branch(x):
    if np.sum(x) > 0.0:
        return np.sum(np.ediff1d(x, to_end=x[:2] ** 2) ** 2)
    return np.percentile(x, 40.0, method="linear")


def helper(x, q):
    return np.quantile(x, q, method="linear") + np.sum(np.ediff1d(x, to_begin=x[0]))


def in_a_helper(x):
    return helper(x, 0.5) * helper(x ** 2, 0.2)


PROGRAMS = [quantile_linear, percentiles_linear, quantile_axis, ends, begin_only, end_only,
            in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS)
def test_every_policy(fn):
    check(fn, (X.copy(),))


def test_the_branch_not_taken():
    check(in_a_branch, (-X,))


@pytest.mark.parametrize("fn", [quantile_linear, ends, begin_only, end_only, in_a_loop])
def test_hvp(fn):
    v = np.linspace(-0.5, 1.0, X.size)
    eps = 1e-5
    grad = srcgrad.grad(fn)
    fd = (grad(X + eps * v) - grad(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X.copy(), v), fd, rtol=1e-5, atol=1e-7, what=fn.__name__)


def another_method(x):
    return np.quantile(x, 0.3, method="nearest")


def another_percentile(x):
    return np.percentile(x, 30.0, method="lower")


@pytest.mark.parametrize("fn", [another_method, another_percentile])
def test_another_method(fn):
    """Another interpolation method is differentiated as that method (s35 R3-22),
    no longer refused: an element of the sorted values here."""
    check(fn, (X.copy(),))
    v = np.linspace(-0.5, 1.0, X.size)
    eps = 1e-5
    grad = srcgrad.grad(fn)
    fd = (grad(X + eps * v) - grad(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X.copy(), v), fd, rtol=1e-5, atol=1e-7, what=fn.__name__)
