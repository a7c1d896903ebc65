"""Updates through a view of a whole array and repeated updates of one view
(reviewer s33, F2 and F3).

F3: ``B = A.copy(); Bt = B.T; Bt[0] = Bt[0] * 3.0`` (column 0 of ``B``
through its transpose) was refused as a write through an object's field,
"'B.T' is read afterwards" where ``B`` was: ``B``, a copy of an argument, was
not taken for an array, so ``B.T`` read as ``getattr(B, 'T')``.  A copy of an
argument passed no object is an array, or a list's or dict's copy, which has
no ``.T`` (normalize/attribute_reads.py, ``attributes=True``); ``B.T`` is now
the array's view, written back as ``B.transpose()`` was.  Where srcgrad still
cannot tell (a helper's parameter), the message names what is read and says
to take the view with ``B.transpose()``, which is followed.

F2: ``v = y[1:3]; v *= 2.0; v += y[0]`` was refused at the second update,
though each alone was followed: the first update's result has a name of its
own (``v_1``), which was no view.  The second now writes into the view where
the first did (analysis/augmented_views.py).  An augmented update of a whole
view (``Bt *= 2.0``, ``v = B.reshape(-1); v *= 2.0``) is written as the
element write it is, as one of ``B[k]`` was.

Each program: value bit for bit and gradient against central differences
under every policy, jvp against differences, both arms of the branches.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES
from numeric import check_every_policy as check

import srcgrad

A = np.array([[1.0, 2.0], [3.0, 4.0]])
X = np.array([1.0, 2.0, 3.0, 4.0])


def transposed(A):  # the reviewer's F3 program
    B = A.copy()
    Bt = B.T
    Bt[0] = Bt[0] * 3.0
    return np.sum(B ** 2)


def transposed_in_a_loop(A):
    B = A.copy()
    Bt = B.T
    for i in range(2):
        Bt[i] = Bt[i] * (i + 2.0) + Bt[1 - i]
    return np.sum(B ** 2 * A)


def transposed_in_a_branch(A):
    B = A.copy()
    Bt = B.T
    if A[0, 0] > 0:
        Bt[0] *= 3.0
    else:
        Bt[1] += Bt[0]
    return np.sum(B ** 3)


def _scaled_column(A):
    B = A * 1.0  # (A.copy() of a helper's parameter: the caller's check, F19's family)
    Bt = B.T
    Bt[0] = Bt[0] * 3.0
    return B


def transposed_in_a_helper(A):
    return np.sum(_scaled_column(A) ** 2 + _scaled_column(A * A))


def written_directly(A):
    B = A.copy()
    B.T[0] = B.T[0] * 3.0
    return np.sum(B ** 2)


def transposed_whole(A):  # augmented updates of all of B.T
    B = A.copy()
    Bt = B.T
    Bt *= 2.0
    Bt -= B[0]
    return np.sum(B ** 3)


def reshaped_whole(A):
    B = A.copy()
    v = B.reshape(-1)
    v *= 2.0
    v += B[0, 1]
    return np.sum(B ** 3)


def reshaped_copy(A):  # B not contiguous: the reshape is a copy, B stays as it was
    B = (A * 1.0).T
    v = B.reshape(-1)
    v *= 2.0
    return np.sum(B ** 3) + np.sum(v * np.arange(4.0))


def two_updates(x):  # the reviewer's F2 program
    y = x.copy()
    v = y[1:3]
    v *= 2.0
    v += y[0]
    return np.sum(y * np.arange(4.0))


def three_updates(x):
    y = x * 1.0
    v = y[1:]
    v *= y[0]
    v -= np.sin(v)
    v /= 2.0
    return np.sum(y ** 2)


def two_updates_in_a_loop(x):
    y = x.copy()
    for t in range(3):
        v = y[t:t + 2]
        v *= 1.5
        v += y[0] * t
    return np.sum(y ** 2)


def two_updates_in_a_branch(x):
    y = x.copy()
    if x[0] > 0:
        v = y[::2]
        v *= 2.0
        v += y[1]
    else:
        v = y[1:]
        v -= y[1]
        v *= v
    return np.sum(y * np.arange(4.0))


def _shifted(x):
    y = x.copy()
    v = y[1:3]
    v *= 2.0
    v += y[0]
    return y


def two_updates_in_a_helper(x):
    return np.sum(_shifted(x) * _shifted(x * x))


def numbers_of_a_vector(x):  # v a NumPy scalar: each update rebinds it, y is unchanged
    y = x.copy()
    v = y[1]
    v *= 2.0
    v += y[0]
    return np.sum(y) * v


PROGRAMS = [transposed, transposed_in_a_loop, transposed_in_a_branch, transposed_in_a_helper,
            written_directly, transposed_whole, reshaped_whole, reshaped_copy]
VECTOR_PROGRAMS = [two_updates, three_updates, two_updates_in_a_loop, two_updates_in_a_branch,
                   two_updates_in_a_helper, numbers_of_a_vector]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_matrix_programs(fn):
    check(fn, (A.copy(),))
    check(fn, (-A,))


@pytest.mark.parametrize("fn", VECTOR_PROGRAMS, ids=lambda f: f.__name__)
def test_vector_programs(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))


def test_the_reviewers_gradients():
    np.testing.assert_allclose(srcgrad.grad(transposed)(A.copy()),
                               np.array([[18.0, 4.0], [54.0, 8.0]]))
    np.testing.assert_allclose(srcgrad.grad(two_updates)(X.copy()), [3.0, 2.0, 4.0, 3.0])


def _transposed_column(B):
    Bt = B.T
    Bt[0] = Bt[0] * 3.0
    return B


def transposed_of_a_parameter(A):  # B a helper's parameter: an array or an object
    return np.sum(_transposed_column(A.copy()) ** 2)


def test_a_helpers_parameter_is_refused_with_a_method_to_use():
    runs = [lambda: srcgrad.jvp(transposed_of_a_parameter, (A.copy(),), (np.ones(A.shape),))]
    runs += [lambda p=p: srcgrad.grad(transposed_of_a_parameter, policy=p)(A.copy())
             for p in POLICIES]
    for run in runs:
        with pytest.raises(srcgrad.AliasedUpdateError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and "Bt[0] = Bt[0] * 3.0" in err.source_line
        assert "'B' is read afterwards (it is returned)" in err.message, err.message
        assert "Bt = B.transpose()" in err.message, err.message
