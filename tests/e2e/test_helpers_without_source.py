"""Helpers run as written whose source srcgrad cannot read: functions made by
``exec``, a callable object of the user's, a ``functools.partial`` of a
builtin (``partial(operator.imul, W, 0.8)``).

Between two reads of a module array, one that scales it in place gave the
gradient at the changed state, silently (the callable object and the partial:
[0.0439, 0.0943, 0.0777] where differences give [0.0549, 0.1179, 0.0971]), or,
for an exec'd helper called as a statement, an unlocated SourceNotFoundError.
memory/code_writes.py reads an exec'd helper's instructions: one that stores,
calls or updates nothing changes nothing and keeps running (``pure(W)`` was
refused before); any other may change what it names and is given, and is
refused at the call, located, where that matters.  An exec'd function a value
being differentiated flows into is refused at the call, located.
"""

from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import SourceNotFoundError, UnsupportedSyntaxError

W0 = np.array([[0.5, 0.2, -0.1], [0.0, 0.4, 0.3], [0.2, -0.3, 0.6]])
W = W0.copy()
X = np.array([1.76405235, 0.40015721, 0.97873798])

exec(  # helpers made by exec, in this module's globals (they read and write its W)
    "def decay():\n"
    "    W[...] *= 0.8\n"
    "def decay_then_rate():\n"
    "    W[...] *= 0.8\n"
    "    return 0.8\n"
    "def doubled(a):\n"
    "    return 2.0 * a\n"
    "def twice(s):\n"
    "    return 2.0 * s\n"
    "def say(s):\n"
    "    print('step', s)\n", globals())


def reset():
    W[...] = W0


class Decayer:
    def __call__(self):
        W[...] *= 0.8


decay_object = Decayer()
decay_builtin = functools.partial(operator.imul, W, 0.8)


def exec_statement(x):
    reset()
    a = np.tanh(x @ W)
    decay()  # noqa: F821 (made by exec)
    return np.sum(np.tanh(a @ W) ** 2)


def exec_assigned(x):
    reset()
    a = np.tanh(x @ W)
    r = decay_then_rate()  # noqa: F821
    return np.sum(np.tanh(a @ W) ** 2) * r


def exec_in_loop(x):
    reset()
    for _ in range(3):
        x = np.tanh(x @ W)
        decay()  # noqa: F821
    return np.sum(x ** 2)


def callable_object(x):
    reset()
    a = np.tanh(x @ W)
    decay_object()
    return np.sum(np.tanh(a @ W) ** 2)


def partial_of_a_builtin(x):
    reset()
    a = np.tanh(x @ W)
    decay_builtin()
    return np.sum(np.tanh(a @ W) ** 2)


CALL_LINE = {exec_statement: 3, exec_assigned: 3, exec_in_loop: 4, callable_object: 3,
             partial_of_a_builtin: 3}


@pytest.mark.parametrize("fn", list(CALL_LINE), ids=lambda f: f.__name__)
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)], ids=str)
def test_a_helper_without_source_changing_state_between_reads_is_refused_at_the_call(
        fn, policy):
    with pytest.raises(UnsupportedSyntaxError) as caught:
        srcgrad.grad(fn, policy=policy)(X)
    error = caught.value
    assert error.filename == __file__
    assert error.lineno == fn.__code__.co_firstlineno + CALL_LINE[fn]
    assert "'W'" in str(error) and "may change" in str(error)


def test_the_refusal_says_the_source_cannot_be_read():
    with pytest.raises(UnsupportedSyntaxError, match="cannot read the helper's source"):
        srcgrad.grad(exec_statement)(X)


def exec_pure_on_the_state(x):
    reset()
    a = np.tanh(x @ W)
    b = doubled(W)  # noqa: F821
    return np.sum(np.tanh(a @ b) ** 2)


def exec_pure_on_numbers(x):
    reset()
    a = np.tanh(x @ W)
    say(1)  # noqa: F821
    s = twice(3.0)  # noqa: F821
    return np.sum(np.tanh(a @ W) ** 2) * s


@pytest.mark.parametrize("fn", [exec_pure_on_the_state, exec_pure_on_numbers],
                         ids=lambda f: f.__name__)
def test_an_exec_helper_changing_nothing_keeps_running(fn, capsys):
    check_every_policy(fn, (X,), 0)


def exec_given_the_argument(x):
    return np.sum(doubled(x) ** 2)  # noqa: F821


def test_an_exec_helper_given_a_value_being_differentiated_is_refused_at_the_call():
    with pytest.raises(SourceNotFoundError, match="doubled") as caught:
        srcgrad.grad(exec_given_the_argument)(X)
    assert caught.value.filename == __file__
    assert caught.value.lineno == exec_given_the_argument.__code__.co_firstlineno + 1
