"""Helpers that rebind a name to a new array before updating it: they never
change the caller's arrays (outside tester T2, session 29, #13 and #8).

``h, c = state; c = c * 0.9; c[0] += x`` was said to update ``state`` in
place (the scan joins every binding of ``c``, the item of ``state`` and the new
array), with advice to pass ``st.copy()`` of a tuple; a recursive helper
copying first (``y = y.copy(); y[0] = ...; return rec_(y, n - 1)``) was said
to update ``y``, its base case ``if n == 0: return y`` read first.  The
summary of a helper now drops an update that runs only after the name is
bound anew at the body's own level, and takes a base case that only returns
the argument as no update.  The real updates are still refused."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_refused_both_modes, check_every_policy

from srcgrad.errors import SrcGradError


def cell(state, x):
    h, c = state
    c = c * 0.9  # a new array: state is never changed
    c[0] += x
    return (h, c)


def lstm_like(x):
    st = (np.zeros(2), np.ones(2))
    st = cell(st, x[0])
    st = cell(st, x[1])
    return np.sum(st[1] ** 2) + np.sum(st[0])


def cell_kept(x):
    st = (x * 1.0, x * 2.0)
    new = cell(st, x[0])
    return np.sum(new[1] * st[1]) + np.sum(st[0])


def rec_(y, n):
    if n == 0:
        return y
    y = y.copy()
    y[0] = np.sin(y[1]) * y[0]
    return rec_(y, n - 1)


def recursive(x):
    y = x * 1.0
    r = rec_(y, 2)
    return np.sum(r ** 2) + np.sum(y * 3.0)


@pytest.mark.parametrize("fn", [lstm_like, cell_kept, recursive])
def test_rebound_before_the_update_runs(fn):
    x = np.array([0.3, -0.5])
    check_every_policy(fn, (x,))
    assert np.array_equal(x, [0.3, -0.5])


def cell_updates(state, x):
    h, c = state
    c[0] += x  # the caller's array
    c = c * 0.9
    return (h, c)


def reads_state_after(x):
    st = (x * 1.0, x * 2.0)
    new = cell_updates(st, x[0])
    return np.sum(new[1]) + np.sum(st[1])


def rec_updates(y, n):
    if n == 0:
        return y
    y[0] = np.sin(y[1]) * y[0]
    return rec_updates(y, n - 1)


def recursive_updates(x):
    y = x * 1.0
    r = rec_updates(y, 2)
    return np.sum(r ** 2) + np.sum(y * 3.0)


def cell_branch(state, x):
    h, c = state
    if x > 0.0:
        c = c * 0.9
    c[0] += x  # the caller's array where x <= 0
    return (h, c)


def reads_after_branch(x):
    st = (x * 1.0, x * 2.0)
    new = cell_branch(st, x[0])
    return np.sum(new[1]) + np.sum(st[1])


@pytest.mark.parametrize("fn", [reads_state_after, recursive_updates, reads_after_branch])
def test_real_updates_still_refused(fn):
    x = np.array([0.3, -0.5])
    assert_refused_both_modes(fn, SrcGradError, "in place", x=x)
    assert np.array_equal(x, [0.3, -0.5])
