"""hvp's refusals name what the user wrote, not the temporaries of srcgrad's
tangent code it differentiates again (outside tester T2 #9, #17): a loop over
``zip(y, y[1:])`` writing ``y[2]`` said "'y' is an item of 't2' ... (for i in
range(len(t2)): t2[i][...] = ...)", a loop over ``M.T`` writing ``col[0]`` said
"a view of 't2'".  In that code (a file srcgrad made, ``<srcgrad:...>``) a
name t2 is srcgrad's, shown as the expression it is first bound to (``y[1:]``,
through ``sequence(...)`` to ``M.T``).  Refused, located at the user's line.
"""

import numpy as np
import pytest

import srcgrad

X = np.array([0.3, -0.5, 0.7])


def zipped(x):  # T2 #9
    y = x * 1.0
    total = 0.0
    for a, b in zip(y, y[1:]):
        total += a * b
        y[2] = total
    return total


def columns(x):  # T2 #17
    M = np.outer(x, x) + 0.0
    for col in M.T:
        col[0] = 1.0
    return np.sum(M * np.arange(9).reshape(3, 3))


@pytest.mark.parametrize("fn, words", [(zipped, ("'y[1:]'",)), (columns, ("'M.T'", "'col"))])
def test_hvp_refusal_names_the_users_expressions(fn, words):
    with pytest.raises(srcgrad.AliasedUpdateError) as info:
        srcgrad.hvp(fn)(X.copy(), np.ones(3))
    err = info.value
    assert err.filename.endswith("test_hvp_refusal_names.py") and err.lineno, err
    for word in words:
        assert word in err.message, err.message
    for temporary in ("'t1", "'t2", "'t3", "(t2", "t2["):
        assert temporary not in err.message, err.message
