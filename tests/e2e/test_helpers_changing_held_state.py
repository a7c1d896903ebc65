"""Helpers run as written that change state the function reads through a
container or a partial: the array a list of another module holds
(``omod.PARAMS[0].__imul__(0.8)``, ``omod.PARAMS[0] *= 0.8``), read as
``omod.PARAMS[0]`` before and after the call.  The adjoint read the state
after the change: a silently wrong gradient ([0.0439, 0.0943, 0.0777] where
differences give [0.0549, 0.1179, 0.0971]; review s34, R2-21 "f_list").
Refused now, located at the call and naming what was read, as the module's
own arrays are (test_helpers_of_other_modules_and_classes.py); a helper of
that module that changes nothing keeps running.
"""

from __future__ import annotations

import functools
import importlib
import sys
import textwrap

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

W0 = np.array([[0.5, 0.2, -0.1], [0.0, 0.4, 0.3], [0.2, -0.3, 0.6]])
X = np.array([1.76405235, 0.40015721, 0.97873798])

LMOD = textwrap.dedent('''\
    import numpy as np
    W0 = np.array([[0.5, 0.2, -0.1], [0.0, 0.4, 0.3], [0.2, -0.3, 0.6]])
    PARAMS = [W0.copy()]


    def reset():
        PARAMS[0][...] = W0


    def decay_dunder():
        PARAMS[0].__imul__(0.8)


    def decay_augmented():
        PARAMS[0] *= 0.8


    def norm():
        return float(np.sum(PARAMS[0] ** 2))
''')
lmod = None   # the module of helpers, written to a file and imported (helpers must have a source)


@pytest.fixture(autouse=True)
def _lmod(tmp_path, monkeypatch):
    global lmod
    (tmp_path / "lmod_for_tests.py").write_text(LMOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("lmod_for_tests", None)
    lmod = importlib.import_module("lmod_for_tests")
    yield
    sys.modules.pop("lmod_for_tests", None)


def list_dunder(x):
    lmod.reset()
    a = np.tanh(x @ lmod.PARAMS[0])
    lmod.decay_dunder()
    return np.sum(np.tanh(a @ lmod.PARAMS[0]) ** 2)


def list_augmented(x):
    lmod.reset()
    a = np.tanh(x @ lmod.PARAMS[0])
    lmod.decay_augmented()
    return np.sum(np.tanh(a @ lmod.PARAMS[0]) ** 2)


def list_in_loop(x):
    lmod.reset()
    for _ in range(3):
        x = np.tanh(x @ lmod.PARAMS[0])
        lmod.decay_augmented()
    return np.sum(x ** 2)


def list_in_branch(x):
    lmod.reset()
    a = np.tanh(x @ lmod.PARAMS[0])
    if x[0] > 0:
        lmod.decay_dunder()
    return np.sum(np.tanh(a @ lmod.PARAMS[0]) ** 2)


def list_read_by_a_pure_helper(x):
    lmod.reset()
    a = np.tanh(x @ lmod.PARAMS[0])
    s = lmod.norm()
    return np.sum(np.tanh(a @ lmod.PARAMS[0]) ** 2) * s


CALL_LINE = {list_dunder: 3, list_augmented: 3, list_in_loop: 4, list_in_branch: 4}


@pytest.mark.parametrize("fn", list(CALL_LINE), ids=lambda f: f.__name__)
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)], ids=str)
def test_a_module_list_array_changed_between_two_reads_is_refused_at_the_call(fn, policy):
    with pytest.raises(UnsupportedSyntaxError) as caught:
        srcgrad.grad(fn, policy=policy)(X)
    error = caught.value
    assert error.filename == __file__
    assert error.lineno == fn.__code__.co_firstlineno + CALL_LINE[fn]
    assert "lmod.PARAMS[0]" in str(error) and "may change" in str(error)


def test_what_the_refusal_advises_gives_the_gradient_of_the_function():
    def advised(x):
        lmod.reset()
        a = np.tanh(x @ lmod.PARAMS[0].copy())
        lmod.decay_dunder()
        return np.sum(np.tanh(a @ lmod.PARAMS[0]) ** 2)

    grad = check_every_policy(advised, (X,), 0)
    np.testing.assert_allclose(grad, [0.05486123, 0.11790999, 0.09712039], rtol=1e-6)


def test_a_helper_of_that_module_changing_nothing_still_runs():
    check_every_policy(list_read_by_a_pure_helper, (X,), 0)


# -- R2-21c: a functools.partial run as written that changes what it was given --

W = W0.copy()


def reset_w():
    W[...] = W0


def scale_by(a, s):
    a *= s


def decay_w_by(s):
    W[...] *= s


def scaled(a, s):
    return a * s


decay_bound = functools.partial(scale_by, W, 0.8)        # W given: changed in place
decay_keyword = functools.partial(scale_by, a=W, s=0.8)
decay_global = functools.partial(decay_w_by, 0.8)       # changes W itself
w_scaled = functools.partial(scaled, W)                 # changes nothing


def partial_bound(x):
    reset_w()
    a = np.tanh(x @ W)
    decay_bound()
    return np.sum(np.tanh(a @ W) ** 2)


def partial_keyword(x):
    reset_w()
    a = np.tanh(x @ W)
    decay_keyword()
    return np.sum(np.tanh(a @ W) ** 2)


def partial_global(x):
    reset_w()
    a = np.tanh(x @ W)
    decay_global()
    return np.sum(np.tanh(a @ W) ** 2)


def partial_in_loop(x):
    reset_w()
    for _ in range(3):
        x = np.tanh(x @ W)
        decay_bound()
    return np.sum(x ** 2)


def partial_in_branch(x):
    reset_w()
    a = np.tanh(x @ W)
    if x[0] > 0:
        decay_bound()
    return np.sum(np.tanh(a @ W) ** 2)


PARTIAL_LINE = {partial_bound: 3, partial_keyword: 3, partial_global: 3, partial_in_loop: 4,
                partial_in_branch: 4}


@pytest.mark.parametrize("fn", list(PARTIAL_LINE), ids=lambda f: f.__name__)
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)], ids=str)
def test_a_partial_changing_state_between_two_reads_is_refused_at_the_call(fn, policy):
    with pytest.raises(UnsupportedSyntaxError) as caught:
        srcgrad.grad(fn, policy=policy)(X)
    error = caught.value
    assert error.filename == __file__
    assert error.lineno == fn.__code__.co_firstlineno + PARTIAL_LINE[fn]
    assert "'W'" in str(error) and "may change" in str(error)


def partial_changing_nothing(x):
    reset_w()
    a = np.tanh(x @ W)
    b = w_scaled(0.8)
    return np.sum(np.tanh(a @ b) ** 2)


def partial_given_the_argument(x):
    reset_w()
    return np.sum(np.tanh(functools.partial(scaled, s=0.8)(x) @ W) ** 2)


def partial_changing_before_the_reads(x):
    reset_w()
    decay_bound()
    return np.sum(np.tanh(np.tanh(x @ W) @ W) ** 2)


@pytest.mark.parametrize("fn", [partial_changing_nothing, partial_given_the_argument,
                                partial_changing_before_the_reads], ids=lambda f: f.__name__)
def test_a_partial_whose_changes_nothing_reads_is_followed(fn):
    check_every_policy(fn, (X,), 0)
