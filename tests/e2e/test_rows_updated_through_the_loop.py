"""``for row in Y: row -= row.mean()`` (reviewer s33, F5): rows are views of
``Y``, so the loop centres ``Y``.

It was refused with advice that changed the program ("write 'row = row - ...'
or make a copy (row = row.copy())": either leaves ``Y`` as it was).  Where
``Y = X.copy()`` (an array's copy, or a list's: srcgrad cannot tell) the loop
runs over ``sequence(Y)``, which slot_writes.augmented_views did not take for
``Y``; it now indexes ``Y`` itself there (``row = Y[k]``), and the update is
written back into ``Y`` as ``for row in M`` of an array made by arithmetic
already was.  A second loop over ``Y`` with the same variable (the two arms
of a branch) made two views named ``row``, and the write-back took the last
one for both (refresh.write_back: now the one that reaches the write).  Where
it stays refused (the rows of an argument, ``Y`` rebound inside the loop, an
update under an ``if`` in the loop), the message says to update the rows by
index, ``for i in range(len(Y)): Y[i] -= ...``, which keeps the program's
meaning and is followed (checked here too).  Each program: value bit for bit
and gradient against central differences under every policy, jvp against
differences; autograd does not run in-place updates.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES
from numeric import check_every_policy as check

import srcgrad

X = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])


def centred(X):  # the reviewer's program
    Y = X.copy()
    for row in Y:
        row -= row.mean()
    return np.sum(Y ** 3)


def normalised(X):  # two updates of the row, the second reading the first's result
    Y = X.copy()
    for row in Y:
        row -= row.mean()
        row /= np.sqrt(np.sum(row ** 2))
    return np.sum(Y ** 3 * X)


def in_a_loop(X):
    Y = X.copy()
    for _ in range(2):
        for row in Y:
            row *= row[0]
    return np.sum(Y ** 2)


def in_a_branch(X):  # one loop in each arm, the same variable
    Y = X.copy()
    if X[0, 0] > 0.5:
        for row in Y:
            row -= row.mean()
    else:
        for row in Y:
            row *= row[1]
    return np.sum(Y ** 3)


def _centred_rows(X):
    Y = X.copy()
    for row in Y:
        row -= row.mean()
    return Y


def in_a_helper(X):
    return np.sum(_centred_rows(X) ** 3 + _centred_rows(X * X))


def row_read_afterwards(X):
    Y = X.copy()
    for row in Y:
        row -= row.mean()
        s = np.sum(row * X[0])
    return np.sum(Y ** 3) + s + np.sum(row)


def enumerated(X):
    Y = X.copy()
    for i, row in enumerate(Y):
        row *= i + 1.0
    return np.sum(Y ** 3)


def elements_of_a_vector(X):  # numbers: row *= 2.0 rebinds, Y is left as it was
    y = X[0].copy()
    for v in y:
        v *= 2.0
    return np.sum(y ** 3)


def matrices_of_a_stack(X):
    Y = np.stack([X, X * 2.0])
    for m in Y:
        m -= m.mean(axis=0)
    return np.sum(Y ** 3)


def rows_by_index(Y):  # what the refusals below advise, for an argument
    for i in range(len(Y)):
        Y[i] -= Y[i].mean()
    return np.sum(Y ** 3)


def rows_by_index_in_a_branch(X):
    Y = X.copy()
    for i in range(len(Y)):
        if Y[i][0] > 0.7:
            Y[i] -= Y[i].mean()
        else:
            Y[i] *= 2.0
    return np.sum(Y ** 3)


PROGRAMS = [centred, normalised, in_a_loop, in_a_branch, in_a_helper, row_read_afterwards,
            enumerated, elements_of_a_vector, matrices_of_a_stack, rows_by_index,
            rows_by_index_in_a_branch]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))  # the other arm of in_a_branch


def test_the_reviewers_gradient():
    Y = X - X.mean(axis=1, keepdims=True)
    g = 3 * Y ** 2
    want = g - g.mean(axis=1, keepdims=True)  # the centring is its own transpose
    np.testing.assert_allclose(srcgrad.grad(centred)(X.copy()), want, rtol=1e-12)


def rows_of_an_argument(Y):
    for row in Y:
        row -= row.mean()
    return np.sum(Y ** 3)


def rebound_in_the_loop(X):
    Y = X.copy()
    for row in Y:
        row -= row.mean()
        Y = Y * 2.0
    return np.sum(Y ** 3)


def under_an_if(X):
    Y = X.copy()
    for row in Y:
        if row[0] > 0.7:
            row -= row.mean()
    return np.sum(Y ** 3)


@pytest.mark.parametrize("fn", [rows_of_an_argument, rebound_in_the_loop, under_an_if],
                         ids=lambda f: f.__name__)
def test_refusals_advise_an_update_by_index(fn):
    runs = [lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(X.shape),))]
    runs += [lambda p=p: srcgrad.value_and_grad(fn, policy=p)(X.copy()) for p in POLICIES]
    for run in runs:
        with pytest.raises(srcgrad.AliasedUpdateError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and "row -= row.mean()" in err.source_line, err
        assert "for i in range(len(Y)): Y[i] -= ..." in err.message, err.message
        assert "row = row -" not in err.message and "row.copy()" not in err.message
