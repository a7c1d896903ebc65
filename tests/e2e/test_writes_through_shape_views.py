"""Element writes through a view of a whole local array by its shape.

``v = y.reshape(2, 3); v[0] = a`` (also ``np.reshape``, ``y.swapaxes(0, 1)``,
``y.T``, ``y.transpose()``, ``y.view()``), then ``y`` read: NumPy changed ``y``
through ``v``.  Refused before ("'v' is updated in place while 'y' shares its
memory and is read afterwards"); only a window by basic indexing (``r =
y[1:]``) was written back.  analysis/refresh.py now writes such a view back
too, ``y[...] = np.reshape(v, np.shape(y))`` (its axes swapped back,
transposed back, or ``v`` itself), behind the run-time test that ``v`` is that
window on ``y`` (a reshape that had to copy changes nothing in ``y``, as in
NumPy).  Each program: value bit for bit under every policy and in jvp,
gradient and tangent against differences; the caller's array left alone.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -1.2, 0.7, 1.5, -0.4, 0.9])


def reshaped(x):
    y = x * 2.0
    v = y.reshape(2, 3)
    v[0] = np.sin(x[:3])
    return np.sum(y ** 2)


def np_reshaped_and_added(x):
    y = x * 2.0
    v = np.reshape(y, (3, 2))
    v[:, 0] += x[:3]
    return np.sum(y ** 2)


def raveled(x):
    y = (x * 2.0).reshape(2, 3)
    v = y.ravel()
    v[1] = x[0] ** 2
    return np.sum(y ** 2)


def swapped(x):
    y = (x * 2.0).reshape(2, 3)
    v = y.swapaxes(0, 1)
    v[0] = x[:2] ** 2
    return np.sum(y ** 3)


def transposed(x):
    y = (x * 2.0).reshape(2, 3)
    v = y.T
    v[2, 1] = x[5] * x[0]
    w = np.transpose(y)
    w[0] *= 3.0
    return np.sum(np.tanh(y))


def viewed(x):
    y = x * 2.0
    v = y.view()
    v[2] = x[0] * x[1]
    return np.sum(y ** 2) + np.sum(v)


def a_copy_not_a_view(x):  # the reshape of a strided array copies: y is left alone
    y = (x * 2.0)[::2]
    v = y.reshape(3, 1)
    v[0] = 7.0 * x[1]
    return np.sum(y ** 2) + np.sum(v)


def in_a_loop(x):
    y = x * 1.0
    v = y.reshape(2, 3)
    for k in range(3):
        v[k % 2, k] = v[k % 2, k] * x[k] + 1.0
    return np.sum(y ** 2)


def in_a_branch(x):
    y = x * 2.0
    v = y.reshape(3, 2)
    if np.sum(x) > 0:
        v[1] = x[4:]
    else:
        v[2] = np.cos(x[:2])
    return np.sum(y * x)


def halve_rows(y):
    v = y.reshape(2, -1)
    v[0] = v[0] * 0.5
    return y


def in_a_helper(x):
    return np.sum(halve_rows(x * 3.0) ** 2)


PROGRAMS = [reshaped, np_reshaped_and_added, raveled, swapped, transposed, viewed,
            a_copy_not_a_view, in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_writes_through_views(fn):
    x = X.copy()
    check(fn, (x,))
    np.testing.assert_array_equal(x, X)


def test_the_other_branch():
    check(in_a_branch, (-X,))


def test_hvp():
    v = np.linspace(-0.5, 1.0, X.size)
    for fn in (reshaped, np_reshaped_and_added):  # (in a loop, swapaxes: hvp refuses, located)
        got = srcgrad.hvp(fn)(X, v)
        g = srcgrad.grad(fn)
        eps = 1e-6
        assert_close(got, (g(X + eps * v) - g(X - eps * v)) / (2 * eps), rtol=1e-5, atol=1e-6,
                     what=fn.__name__)


def through_an_attribute(x):
    y = (x * 2.0).reshape(2, 3)
    y.T[1] = x[:2]
    return np.sum(y ** 2)


def test_a_write_through_an_attribute():
    # refused before; the view is named now (t = y.T; t[1] = ...), and written back
    # (tests/e2e/test_writes_through_view_targets.py)
    check(through_an_attribute, (X,))
