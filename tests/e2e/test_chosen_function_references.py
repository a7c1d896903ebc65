"""A function chosen by a conditional expression, then called.

``f = np.sin if flag else np.cos; y = f(x)`` and ``act = np.tanh if
cfg['act'] == 'tanh' else relu`` (``relu`` a user function) were refused
("calling 'f' is not supported: it holds a function only known when the code
runs").  The conditional now keeps its test and binds the number of the branch
it takes, and each call runs the function that branch names
(normalize/chosen_functions.py, as for a local function defined in several
branches); ``f = np.sin`` in one branch and a lambda in the other alike.
Checked bit for bit under every policy and in jvp, gradient and tangent
against central differences: in a loop, in a branch, in a helper, nested
conditionals, a lambda among the choices, a function passed as a parameter."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.5, -1.0, 0.25])


def relu(v):
    return np.maximum(v, 0.0)


def by_flag(x, flag):
    f = np.sin if flag else np.cos
    return np.sum(f(x))


def by_config(x, name):
    cfg = {"act": name}
    act = np.tanh if cfg["act"] == "tanh" else relu
    return np.sum(act(x) * x)


def in_a_loop(x, flag):
    s = 0.0
    for i in range(3):
        f = np.sin if (i + flag) % 2 == 0 else np.cos
        s = s + np.sum(f(x * (i + 1.0)))
    return s


def by_value(x, flag):  # chosen by the data, called twice
    act = relu if x[0] > 0 else np.tanh
    return np.sum(act(x) ** 2 + act(2.0 * x)) * (1.0 + flag)


def in_branches(x, flag):  # a name in one branch, a lambda in the other
    if flag:
        f = np.sin
    else:
        f = lambda v: v ** 3  # noqa: E731
    return np.sum(f(x) * f(x * 2.0))


def _layer(x, k):
    g = relu if k > 1 else (np.tanh if k > 0 else (lambda v: v * x))
    return g(x * k + 0.5)


def in_a_helper(x, flag):
    s = 0.0
    for k in range(3):
        s = s + np.sum(_layer(x, k + flag))
    return s


def with_a_parameter(x, act):
    f = act if x[0] > 0 else np.exp
    return np.sum(f(x))


@pytest.mark.parametrize("flag", [0, 1])
@pytest.mark.parametrize("fn", [by_flag, in_a_loop, by_value, in_branches, in_a_helper],
                         ids=lambda f: f.__name__)
def test_the_function_the_branch_names_is_called(fn, flag):
    check_every_policy(fn, [X, flag])
    check_every_policy(fn, [-X, flag])


@pytest.mark.parametrize("name", ["tanh", "relu"])
def test_chosen_by_a_configuration_with_a_user_function(name):
    check_every_policy(by_config, [X, name])


@pytest.mark.parametrize("x", [X, -X], ids=["positive", "negative"])
def test_a_parameter_among_the_choices(x):
    check_every_policy(with_a_parameter, [x, np.tanh])


def _apply(g, v):
    return g(v)


def passed_on(x, flag):
    f = np.sin if flag else np.cos
    return np.sum(_apply(f, x))


def test_a_chosen_function_passed_as_a_value_stays_refused_located():
    with pytest.raises(SrcGradError) as info:
        srcgrad.grad(passed_on)(X, True)
    assert info.value.lineno
