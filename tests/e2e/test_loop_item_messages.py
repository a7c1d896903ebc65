"""Refusals of a write through a loop's variable name what the user wrote
(outside tester T2 #17, #20), not srcgrad's temporaries.

``for col in M.T: col[0] = 1.0`` said "'t2' is updated in place while 'M'
shares its memory ... make a copy (t2 = t2.copy())", t2 being the sequence the
desugared loop runs over; it now names the user's update of ``col``, the loop's
variable over ``M.T``, and says to write into ``M`` by index.  ``for a in arrs: a[0] = ...``
over a tuple (``*arrs``, or a tuple passed) said "'t1' is updated in place
while 'arrs' shares its memory"; it now says 'a' is an item of the tuple
'arrs', which srcgrad cannot change (hold the arrays in a list, or return new
arrays).  Both refused, located at the update, in grad and jvp under every
policy, in a branch and a loop too (a loop over a list passed to a helper,
refused as before, is named the same way); the same loop over ``M`` itself still
differentiates (value bit for bit, gradient and tangent against
differences; autograd does not run element assignment).
"""

import numpy as np
import pytest
from numeric import POLICIES, check_every_policy

import srcgrad

X = np.array([0.6, -1.1, 0.9])


def columns(x):  # T2 #17
    M = np.outer(x, x) + 0.0
    for col in M.T:
        col[0] = 1.0
    return np.sum(M * np.arange(9).reshape(3, 3))


def columns_in_branch(x):
    M = np.outer(x, x) + 0.0
    if x[0] > 0:
        for col in M.T:
            col[1] = col[2] * 2.0
    return np.sum(M * np.arange(9).reshape(3, 3))


def _upd(*arrs):  # T2 #20
    for a in arrs:
        a[0] = a[1] * 2.0
    return arrs


def star_items(x):
    out = _upd(x * 1.0)
    return np.sum(out[0] * np.arange(3))


def _upd_tuple(arrs):
    for a in arrs:
        a[0] = a[1] * 2.0
    return arrs


def tuple_items(x):
    out = _upd_tuple((x * 1.0, x * 2.0))
    return np.sum(out[0] * np.arange(3))


def rows(x):  # over M itself: followed
    M = np.outer(x, x) + 0.0
    for row in M:
        row[0] = row[1] * 3.0
    return np.sum(M * np.arange(9).reshape(3, 3))


def _upd_list(arrs):
    for a in arrs:
        a[0] = a[1] * 2.0
    return arrs


def list_items(x):  # over a list passed to a helper: refused (as before), named
    out = _upd_list([x * 1.0, x * 2.0])
    return np.sum(out[0] * np.arange(3)) + np.sum(out[1])


def _refused(fn, *words):
    runs = [lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),))]
    runs += [lambda p=p: srcgrad.value_and_grad(fn, policy=p)(X.copy()) for p in POLICIES]
    for run in runs:
        with pytest.raises(srcgrad.AliasedUpdateError) as info:
            run()
        err = info.value
        assert err.filename and err.filename.endswith(".py") and err.lineno, err
        for word in words:
            assert word in err.message, err.message
        for temporary in ("'t1", "'t2", "'t3", "_1'"):
            assert temporary not in err.message, err.message
    return err


@pytest.mark.parametrize("fn", [columns, columns_in_branch])
def test_columns_of_a_transpose(fn):
    err = _refused(fn, "'col[...] = ...'", "the loop's variable over 'M.T'",
                   "'M' shares its memory",
                   "write into 'M' by index")
    assert "col[" in err.source_line


@pytest.mark.parametrize("fn", [star_items, tuple_items])
def test_items_of_a_tuple(fn):
    err = _refused(fn, "'a[...] = ...'", "an item of the tuple 'arrs'",
                   "hold the arrays in a list")
    assert "a[0] = a[1] * 2.0" in err.source_line


def test_items_of_a_list_passed_named():
    _refused(list_items, "'a[...] = ...'", "the loop's variable over 'arrs'",
             "'arrs' shares its memory")


@pytest.mark.parametrize("fn", [rows])
def test_rows_and_list_items_followed(fn):
    check_every_policy(fn, (X.copy(),))
