"""Functions for tests/e2e/test_ndenumerate_loops.py, NumPy imported under
another name (srcgrad reads their source, so they live in a file of their own)."""

import numpy as N


def ndenumerate_other_name(x):
    s = 0.0
    for (i, j), v in N.ndenumerate(x.reshape(2, 2)):
        s = s + N.sin(v) * (i + 2 * j + 1)
    return s
