"""A loss history kept in a global list from inside the objective (review s37 R5-5).

``HISTORY.append(float(l))`` in the function handed to an optimiser was
refused ("changes 'HISTORY' in place, and 'HISTORY' is not a local
variable").  Where the function never reads the list back and appends a new
number or string, the statement runs as written, once, as ``print`` does, and
a checkpointed loop's reruns leave it out (normalize/records_outside.py): the
list gets the entries one call of the function gives, under every policy.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, check_every_policy, numeric_grad

import srcgrad
from srcgrad import SrcGradError

HISTORY: list = []
RS = np.random.RandomState(0)
X, Y, W = RS.randn(5, 3), RS.randn(5), RS.randn(3)


def loss(w):
    r = X @ w - Y
    l = np.mean(r ** 2)
    HISTORY.append(float(l))
    return l


def steps(w):
    h = w
    for i in range(4):
        h = np.tanh(h * 1.5 + 0.1)
        if i % 2:
            HISTORY.append(f"step {i}: {float(np.sum(h)):.6f}")
        HISTORY.append((i, np.sum(h).item()))
    return np.sum(h ** 2)


def through_a_local_helper(w):
    def record(v):
        HISTORY.append(float(v))

    l = np.sum(np.sin(w) ** 2)
    record(l)
    return l


def record(v, step=None):
    """A module-level recording helper: inlined where it is called."""
    HISTORY.append(float(v))


def show(v):
    print("loss", v)


def through_a_module_helper(w):
    h = np.tanh(w)
    for i in range(2):
        h = np.tanh(h * 1.2)
        record(np.sum(h))
    show(np.sum(h))
    return np.sum(h ** 2)


def plain(fn, w=W):
    """The value of ``fn(w)`` and the entries that call itself adds."""
    HISTORY.clear()
    value = fn(w)
    return value, list(HISTORY)


@pytest.mark.parametrize("fn", [loss, steps, through_a_local_helper, through_a_module_helper])
@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_one_call_records_what_the_function_records(fn, policy):
    want, entries = plain(fn)
    HISTORY.clear()
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(W)
    assert_bit_identical(value, want, f"{fn.__name__}, {policy}")
    assert HISTORY == entries
    assert_close(grad, numeric_grad(lambda w: plain(fn, w)[0], [W], 0), rtol=1e-6, atol=1e-8)
    HISTORY.clear()
    srcgrad.jvp(fn, (W,), (np.ones(3),))
    assert HISTORY == entries


@pytest.mark.parametrize("fn", [loss, steps])
def test_gradients_and_tangents_against_differences(fn):
    check_every_policy(fn, (W,), 0)
    HISTORY.clear()


def test_the_generated_code_shows_the_statement_as_written():
    assert "HISTORY.append(float(l))" in srcgrad.grad(loss).source


def read_back(w):
    l = np.sum(w ** 2)
    HISTORY.append(float(l))
    return l * len(HISTORY)


def array_appended(w):
    h = np.tanh(w)
    HISTORY.append(h)
    return np.sum(h)


OTHER: list = []
ALIAS = OTHER  # the same list under another name


def read_through_an_alias(w):
    n = len(ALIAS) + 1.0  # review s37 D-1: recomputed after the appends, a wrong gradient
    OTHER.append(float(w[0]))
    return np.sum(np.sin(w * n))


def count():
    return len(HISTORY)


def read_by_a_helper(w):
    n = count() + 1.0
    HISTORY.append(float(w[0]))
    return np.sum(np.sin(w * n))


def test_an_hvp_records_once_with_loop_counters():
    # review s37 D-2: the gradient code hvp differentiates loops over 't1 = range(3)'
    HISTORY.clear()
    srcgrad.hvp(steps)(W, np.ones(3))
    assert len(HISTORY) == len(plain(steps)[1])


def record_and_scale(v, x):
    HISTORY.append(float(v))  # review s37 D-12: its own code, run again by reruns
    return x * 2.0


def through_a_helper_returning_a_value(w):
    s = 0.0
    for i in range(3):
        w = record_and_scale(w[0], np.tanh(w))
        s = s + np.sum(w)
    return s


def shallow_copy(w):
    xs = [w * 2.0, w ** 2]
    HISTORY.append(xs.copy())  # review s37 D-19: the copy still holds xs's arrays
    xs[0] += 1.0
    return np.sum(xs[0] * xs[1])


@pytest.mark.parametrize("fn", [read_back, array_appended, read_through_an_alias,
                                read_by_a_helper, through_a_helper_returning_a_value,
                                shallow_copy])
def test_a_list_read_back_or_holding_an_array_is_still_refused(fn):
    with pytest.raises(SrcGradError, match="HISTORY|OTHER"):
        srcgrad.grad(fn)(W)


STATE: dict = {"hist": []}


def read_through_a_dict_item(w):
    s = 0.0
    for i in range(3):
        n = len(STATE["hist"]) + 1.0  # review s37 D-22: the dict's item may be HISTORY
        w = np.sin(w * n)
        HISTORY.append(float(w[0]))
        s = s + np.sum(w)
    return s


def read_through_an_argument(w, hist):
    s = 0.0
    for i in range(3):
        n = len(hist) + 1.0
        w = np.sin(w * n)
        HISTORY.append(float(w[0]))
        s = s + np.sum(w)
    return s


@pytest.mark.parametrize("policy", ["save", "recompute"])
def test_a_list_read_at_run_time_is_never_read_again_after_the_records(policy):
    # what such a read gives is saved, not computed again in the adjoint sweep
    by_item = srcgrad.grad(read_through_a_dict_item, policy=policy)
    by_argument = srcgrad.grad(read_through_an_argument, policy=policy)
    by_item(W)  # compiled while STATE['hist'] is another list
    by_argument(W, HISTORY)
    STATE["hist"] = HISTORY
    try:
        for grad_of, fn, args in ((by_item, read_through_a_dict_item, (W,)),
                                  (by_argument, read_through_an_argument, (W, HISTORY))):
            def own(w, fn=fn, args=args):
                HISTORY.clear()
                return fn(w, *args[1:])
            HISTORY.clear()
            grad = grad_of(*args)
            assert_close(grad, numeric_grad(own, [W], 0), rtol=1e-6, atol=1e-8)
    finally:
        STATE["hist"] = []
        HISTORY.clear()


@pytest.mark.parametrize("fn, args", [(read_through_a_dict_item, (W,)),
                                      (read_through_an_argument, (W, HISTORY))])
def test_a_checkpointed_loop_reading_a_list_while_recording_is_refused(fn, args):
    with pytest.raises(SrcGradError, match="checkpointed"):
        srcgrad.grad(fn, policy="sqrt")(*args)
