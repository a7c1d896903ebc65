"""A refusal of a helper's update read after the call names no name srcgrad
made (outside tester T2 #8): a recursive helper returning its argument on one
path (``if n == 0: return y``) has its returns joined into srcgrad's ``result``,
and the refusal said "this function reads 'result' (line ?)".  It now says the
function returns a value that shares the memory.  The tester's helper, which
copies first, is no longer refused at all (3bb8055): it runs, under every
policy and in jvp; one that updates before it copies is refused, located, in
grad and jvp, in a loop and a branch of the caller too, naming no internal name.
"""

import numpy as np
import pytest
from numeric import POLICIES, check_every_policy

import srcgrad

X = np.array([0.3, -0.5])


def _rec(y, n):
    if n == 0:
        return y
    y = y.copy()
    y[0] = np.sin(y[1])
    return _rec(y, n - 1)


def _rec_updating_first(y, n):
    if n == 0:
        return y
    y[0] = np.sin(y[1])
    y = y.copy()
    return _rec_updating_first(y, n - 1)


def recursive(x):  # T2 #8
    return np.sum(_rec(x * 1.0, 2) ** 2)


def recursive_in_loop(x):
    s = 0.0
    for i in range(2):
        if x[0] > 0:
            s = s + np.sum(_rec(x * 1.0, 1))
    return s


def updating_first(x):
    y = x * 1.0
    z = _rec_updating_first(y, 2)
    return np.sum(z ** 2) + np.sum(y)


def updating_first_in_loop(x):
    s = 0.0
    for i in range(2):
        if x[0] > 0:
            y = x * 1.0
            s = s + np.sum(_rec_updating_first(y, 1)) + np.sum(y)
    return s


@pytest.mark.parametrize("fn", [recursive, recursive_in_loop])
def test_a_recursive_helper_copying_first_runs(fn):
    check_every_policy(fn, (X.copy(),))


@pytest.mark.parametrize("fn", [updating_first, updating_first_in_loop])
def test_no_internal_name_in_the_message(fn):
    runs = [lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(2),))]
    runs += [lambda p=p: srcgrad.value_and_grad(fn, policy=p)(X.copy()) for p in POLICIES]
    for run in runs:
        with pytest.raises(srcgrad.SrcGradError) as info:
            run()
        err = info.value
        assert err.filename and err.filename.endswith(".py") and err.lineno, err
        assert "'result'" not in err.message and "line ?" not in err.message, err.message
