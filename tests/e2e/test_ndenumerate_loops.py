"""``for idx, v in np.ndenumerate(X)`` (review s37 R5-8): refused with "no
adjoint rule for 'np.ndenumerate'".  normalize/sugar.ndenumerated loops over
``np.ndindex`` of the array's shape and reads each element by its index: the
same indices, in the same order, the same elements.
"""

from __future__ import annotations

import numpy as np
import pytest
from ndenumerate_fns import ndenumerate_other_name
from numeric import check_every_policy

import srcgrad

X = np.array([0.37, -0.81, 1.23, -0.22])


def weighted(x):
    s = 0.0
    for idx, v in np.ndenumerate(x.reshape(2, 2)):
        s += v ** 2 * (idx[0] + 1)
    return s


def unpacked_with_a_break(x):
    s = 0.0
    M = np.outer(x, x[:2])
    for (i, j), v in np.ndenumerate(M):
        if i + j > 3:
            break
        s = s + np.tanh(v) * (j + 1)
    else:
        s = s * 2.0
    return s


def of_a_transposed_view(x):
    total = 0.0
    for k, v in np.ndenumerate(x.reshape(2, 2).T):
        total = total + v * (k[0] + 3 * k[1] + 1) + v ** 3
    return total


@pytest.mark.parametrize("fn", [weighted, unpacked_with_a_break, of_a_transposed_view,
                                ndenumerate_other_name], ids=lambda f: f.__name__)
def test_ndenumerate_loops(fn):
    check_every_policy(fn, (X,), 0)


def test_the_loop_reads_elements_by_index():
    source = srcgrad.grad(weighted).source
    assert "np.ndindex(np.shape(" in source and "np.ndenumerate" not in source
