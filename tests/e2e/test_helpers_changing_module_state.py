"""Helpers run as written that change module-level or closed-over state
(outside review, session 34: R2-2, R2-3, R2-7, R2-9 -- silently wrong
gradients before).

A helper called with no value being differentiated (``decay()``,
``record(1)``, ``GM.decay()``) is run as written; memory/helper_state.py reads
its source (and its helpers') for writes outside it.  Each program here either
gets the right gradient under every policy (value bit for bit, gradient and
tangent against differences: ``check_every_policy``) or is refused, located at
the helper's call, with an UnsupportedSyntaxError naming the state.  The
helpers that only read globals, only print, or only write their own locals
keep working, as does a step counter no one reads rerun by a checkpointed loop.
"""

from __future__ import annotations

import contextlib
import inspect
import io

import numpy as np
import pytest
from numeric import POLICIES, assert_close, numeric_grad
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

W0 = np.array([[0.5, 0.2, -0.1], [0.0, 0.4, 0.3], [0.2, -0.3, 0.6]])
X = np.array([1.76405235, 0.40015721, 0.97873798])
XS = np.array([[0.3, -0.2, 0.1], [0.5, 0.4, -0.6], [-0.1, 0.2, 0.3], [0.7, -0.4, 0.2]])
CHECKPOINTED = ("sqrt", ("revolve", 2))
NOT_CHECKPOINTED = ("save", "recompute", "save_products")

# -- R2-7: an array of the module (or a closure, a dict, an object) changed in place --

W = W0.copy()


def reset():
    W[...] = W0


def decay():
    W[...] *= 0.8


def weights_decayed_between_reads(x):
    reset()
    a = np.tanh(x @ W)
    decay()  # <- refused
    b = np.tanh(a @ W)
    return np.sum(b ** 2)


def weights_decayed_in_a_loop(x, xs):
    reset()
    h = x
    for t in range(len(xs)):
        h = np.tanh(h @ W + xs[t])
        decay()  # <- refused
    return np.sum(h ** 2)


def weights_decayed_in_a_branch(x):
    reset()
    a = np.tanh(x @ W)
    if np.sum(x) > 0.0:
        decay()  # <- refused
    return np.sum(np.tanh(a @ W) ** 2)


def decay_through_a_helper():
    decay()


def weights_decayed_two_helpers_down(x):
    reset()
    a = np.tanh(x @ W)
    decay_through_a_helper()  # <- refused
    return np.sum(np.tanh(a @ W) ** 2)


P = {"W": W0.copy()}


def p_reset():
    P["W"][...] = W0


def p_decay():
    P["W"] *= 0.8


def dict_entry_decayed(x):
    p_reset()
    a = np.tanh(x @ P["W"])
    p_decay()  # <- refused
    return np.sum(np.tanh(a @ P["W"]) ** 2)


W_NESTED = W0.copy()
CFG = {"model": {"W": W_NESTED}}


def nested_reset():
    CFG["model"]["W"][...] = W0


def nested_decay():
    CFG["model"]["W"] *= 0.8


def nested_entry_decayed(x):
    """The function reads the array itself, the helper two dicts down."""
    nested_reset()
    a = np.tanh(x @ W_NESTED)
    nested_decay()  # <- refused
    return np.sum(np.tanh(a @ W_NESTED) ** 2)


def _closure_program():
    wc = W0.copy()

    def c_reset():
        wc[...] = W0

    def c_decay():
        wc[...] *= 0.8

    def closure_decayed(x):
        c_reset()
        a = np.tanh(x @ wc)
        c_decay()  # <- refused
        return np.sum(np.tanh(a @ wc) ** 2)
    return closure_decayed


closure_decayed = _closure_program()


class Model:
    def __init__(self):
        self.W = W0.copy()

    def reset(self):
        self.W[...] = W0

    def decay(self):
        self.W *= 0.8

    def step(self):
        self.decay()


GM = Model()


def module_object_decayed(x):
    GM.reset()
    a = np.tanh(x @ GM.W)
    GM.decay()  # <- refused
    return np.sum(np.tanh(a @ GM.W) ** 2)


def module_object_decayed_by_another_method(x):
    GM.reset()
    a = np.tanh(x @ GM.W)
    GM.step()  # <- refused
    return np.sum(np.tanh(a @ GM.W) ** 2)


def copy_back():
    np.copyto(W, W0)


def decay_out():
    np.multiply(W, 0.8, out=W)


def decayed_with_out(x):
    copy_back()
    a = np.tanh(x @ W)
    decay_out()  # <- refused
    return np.sum(np.tanh(a @ W) ** 2)


def fill_row():
    W[0].fill(0.1)


def row_filled(x):
    copy_back()
    a = np.tanh(x @ W)
    fill_row()  # <- refused
    return np.sum(np.tanh(a @ W) ** 2)


def sort_row():
    alias = W
    alias[1].sort()


def row_sorted_through_an_alias(x):
    copy_back()
    a = np.tanh(x @ W)
    sort_row()  # <- refused
    return np.sum(np.tanh(a @ W) ** 2)


def decayed_after_the_last_read(x):
    """The adjoint sweep runs after the whole forward sweep: it would read
    the decayed W for x @ W (a silently wrong gradient before)."""
    reset()
    y = np.sum(np.tanh(x @ W) ** 2)
    decay()  # <- refused
    return y


def weights():
    return W


def weights_from_a_getter_decayed(x):
    reset()
    a = np.tanh(x @ weights())
    decay()  # <- refused
    return np.sum(np.tanh(a @ weights()) ** 2)


T = 1.0


def rebind_t():
    global T
    T = T + 1.0


def global_rebound_by_a_helper(x):
    """The generated module binds T when it is compiled: it would read 1.0
    throughout (wrong value and gradient before)."""
    rebind_t()  # <- refused
    c = T * 1.0
    rebind_t()
    return np.sum(np.sin(x)) * c + T


# -- R2-9: a module buffer handed out by a helper, then written ----------------------

BUF = np.zeros(3)


def get_buf():
    return BUF


def buffer_handed_out_twice(x):
    b = get_buf()
    b[:] = np.sin(x)
    y = b * 2.0
    b2 = get_buf()  # <- refused
    b2[:] = x ** 2
    return np.sum(y * b)


def buffer_read_through_the_global(x):
    b = get_buf()  # <- refused
    b[:] = np.sin(x)
    c = np.sum(BUF * x)
    b[:] = x ** 2
    return c + np.sum(BUF)


REFUSED_EVERYWHERE = [
    (weights_decayed_between_reads, (X,)), (weights_decayed_in_a_loop, (X, XS)),
    (weights_decayed_in_a_branch, (X,)), (weights_decayed_two_helpers_down, (X,)),
    (decayed_after_the_last_read, (X,)), (dict_entry_decayed, (X,)), (closure_decayed, (X,)),
    (module_object_decayed, (X,)), (weights_from_a_getter_decayed, (X,)),
    (global_rebound_by_a_helper, (X,)), (module_object_decayed_by_another_method, (X,)),
    (nested_entry_decayed, (X,)),
    (decayed_with_out, (X,)), (row_filled, (X,)), (row_sorted_through_an_alias, (X,)),
    (buffer_handed_out_twice, (X,)), (buffer_read_through_the_global, (X,)),
]


def _marked_line(fn):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if "# <- refused" in line)


def _assert_refused_at_mark(fn, args, policy, *words):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(fn, policy=policy)(*args)
    assert info.value.filename == __file__
    assert info.value.lineno == _marked_line(fn), str(info.value)
    for word in words:
        assert word in str(info.value)
    assert "t1" not in str(info.value).split("\n")[0]  # the user's names, not srcgrad's


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn, args", REFUSED_EVERYWHERE,
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_helper_changing_state_read_before_it_is_refused_at_the_call(fn, args, policy):
    _assert_refused_at_mark(fn, args, policy)


def test_a_rebound_global_is_refused_in_forward_mode_too():
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.jvp(global_rebound_by_a_helper)(X.copy(), np.ones(3))
    assert info.value.lineno == _marked_line(global_rebound_by_a_helper)
    assert "rebinds 'T'" in str(info.value)


def test_the_refusal_names_the_state_and_a_rewrite():
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(weights_decayed_between_reads)(X)
    message = str(info.value)
    assert "'decay()' may change 'W'" in message and "W.copy()" in message
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(buffer_handed_out_twice)(X)
    assert "get_buf().copy()" in str(info.value)


def weights_decayed_read_from_a_copy(x):
    reset()
    a = np.tanh(x @ W.copy())
    decay()
    b = np.tanh(a @ W.copy())
    return np.sum(b ** 2)


def buffer_copied(x):
    b = get_buf().copy()
    b[:] = np.sin(x)
    y = b * 2.0
    b2 = get_buf().copy()
    b2[:] = x ** 2
    return np.sum(y * b) + np.sum(b2)


@pytest.mark.parametrize("fn", [weights_decayed_read_from_a_copy, buffer_copied])
def test_the_advised_rewrites_work(fn):
    check(fn, (X.copy(),))


# -- R2-2: checkpointed loops rerun no helper whose changes the function reads -------

LOG = []
STATE = {"t": 0}
CNT = np.zeros(1)
D = {}
S = set()


def record(v):
    LOG.append(v)


def scale():
    return 1.0 + 0.1 * len(LOG)


def logged_scale(x):
    LOG.clear()
    for i in range(6):
        record(1)  # <- refused
        x = np.sin(x) * scale()
    return np.sum(x ** 2)


def reset_t():
    STATE["t"] = 0


def tick_t():
    STATE["t"] += 1


def temperature():
    return 1.0 / (1.0 + STATE["t"])


def annealed(x):
    reset_t()
    for i in range(6):
        tick_t()  # <- refused
        x = np.tanh(x / temperature()) * temperature()
    return np.sum(x ** 2)


def reset_cnt():
    CNT[0] = 0.0


def bump():
    CNT[0] += 1.0


def cur():
    return 1.0 / (1.0 + CNT[0])


def counted_in_an_array(x):
    reset_cnt()
    for i in range(6):
        bump()  # <- refused
        x = np.tanh(x / cur()) * cur()
    return np.sum(x ** 2)


def put(k):
    D[k] = len(D)


def dict_filled_by_a_helper(x):
    D.clear()
    for i in range(6):
        put(i)  # <- refused
        x = np.sin(x) * (1.0 + 0.05 * len(D))
    return np.sum(x ** 2)


def set_filled_in_the_function(x):
    S.clear()
    for i in range(6):
        S.add(i)  # <- refused
        x = np.sin(x) * (1.0 + 0.05 * len(S))
    return np.sum(x ** 2)


def _counter():
    box = [0]

    def step():
        box[0] = box[0] + 1
        return box[0]

    def restart():
        box[0] = 0
    return step, restart


STEP, RESTART = _counter()


def closure_counter(x):
    RESTART()
    for i in range(6):
        k = STEP()  # <- refused
        x = np.sin(x) * (1.0 + 0.05 * k)
    return np.sum(x ** 2)


def input_projection_decayed(x, xs):
    reset()
    h = x
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ W + h * 0.5)
        decay()  # <- refused
    return np.sum(h ** 2)


REFUSED_CHECKPOINTED = [logged_scale, annealed, counted_in_an_array, dict_filled_by_a_helper,
                        set_filled_in_the_function, closure_counter]


@pytest.mark.parametrize("policy", CHECKPOINTED, ids=str)
@pytest.mark.parametrize("fn", REFUSED_CHECKPOINTED + [input_projection_decayed],
                         ids=lambda f: f.__name__)
def test_a_checkpointed_loop_reruns_no_helper_changing_state_it_reads(fn, policy):
    args = (X.copy(), XS) if fn is input_projection_decayed else (np.array([0.3, -0.5, 0.9]),)
    _assert_refused_at_mark(fn, args, policy, "checkpointed")


@pytest.mark.parametrize("fn", REFUSED_CHECKPOINTED, ids=lambda f: f.__name__)
def test_the_same_loops_are_right_without_checkpoints(fn):
    x = np.array([0.3, -0.5, 0.9])
    want = numeric_grad(fn, [x.copy()], 0)
    for policy in NOT_CHECKPOINTED:
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(x.copy())
        assert value == fn(x.copy())
        assert_close(grad, want, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, {policy}")


def test_the_input_projection_is_right_without_checkpoints_wrt_the_state():
    """Differentiating with respect to x only, the adjoint never reads W."""
    want = numeric_grad(input_projection_decayed, [X.copy(), XS], 0)
    for policy in NOT_CHECKPOINTED:
        assert_close(srcgrad.grad(input_projection_decayed, policy=policy)(X.copy(), XS), want,
                     rtol=1e-6, atol=1e-8, what=str(policy))


def test_module_state_is_changed_as_often_as_the_function_does():
    srcgrad.grad(logged_scale, policy="save")(np.array([0.3, -0.5, 0.9]))
    assert len(LOG) == 6


# -- R2-3: no recompute of a value read from state a helper changed since ----------

def read_between_bumps(x):
    reset_cnt()
    a = np.sin(x) * (CNT[0] + 1.0)
    bump()
    b = np.cos(a) * (CNT[0] + 1.0)
    bump()
    return np.sum(a * b) * (CNT[0] + 1.0)


def read_by_a_helper_between_bumps(x):
    reset_cnt()
    a = np.sin(x) * cur()
    bump()
    b = np.cos(a) * cur()
    bump()
    return np.sum(a * b) * cur()


def read_in_a_loop_between_bumps(x):
    reset_cnt()
    for i in range(3):
        c = CNT[0] + 1.0
        x = np.sin(x) * c
        bump()
    return np.sum(x ** 2) * (CNT[0] + 1.0)


def closure_read_between_steps(x):
    RESTART()
    for i in range(6):
        STEP()
        x = np.sin(x) * (1.0 + 0.05 * STEP.__closure__[0].cell_contents[0])
    return np.sum(x ** 2)


@pytest.mark.parametrize("fn", [read_between_bumps, read_by_a_helper_between_bumps],
                         ids=lambda f: f.__name__)
def test_values_read_before_a_helper_changes_state_are_not_recomputed(fn):
    check(fn, (np.array([0.3, -0.5, 0.9]),))


@pytest.mark.parametrize("fn", [read_in_a_loop_between_bumps, closure_read_between_steps],
                         ids=lambda f: f.__name__)
def test_in_a_loop_right_or_refused_under_each_policy(fn):
    x = np.array([0.3, -0.5, 0.9])
    want = numeric_grad(fn, [x.copy()], 0)
    for policy in POLICIES:
        try:
            value, grad = srcgrad.value_and_grad(fn, policy=policy)(x.copy())
        except UnsupportedSyntaxError as error:
            assert policy in CHECKPOINTED and error.filename == __file__
            continue
        assert value == fn(x.copy())
        assert_close(grad, want, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, {policy}")


# -- what keeps working -------------------------------------------------------------

def scaled_weights():
    return 2.0 * W


def decayed_read_through_a_new_array(x):
    reset()
    a = np.tanh(x @ scaled_weights())
    decay()
    return np.sum(np.tanh(a @ scaled_weights()) ** 2)


def reads_globals_only(x, xs):
    reset()
    h = x
    for t in range(len(xs)):
        h = np.tanh(h @ scaled_weights() + xs[t])
    return np.sum(h ** 2) + np.sum(x @ W)


def log_step(i):
    print("step", i)


def prints_in_a_loop(x):
    for i in range(6):
        log_step(i)
        x = np.sin(x) * 1.1
    return np.sum(x ** 2)


def own_buffer():
    out = np.zeros(3)
    out[0] = 1.0
    out += 0.5
    stack = []
    stack.append(out)
    return stack[0]


def writes_its_locals_only(x):
    h = x
    for i in range(3):
        h = np.tanh(h * own_buffer())
    return np.sum(h ** 2)


STEPS = {"count": 0}


def count_step():
    STEPS["count"] += 1


def counted_steps(x):
    for i in range(5):
        count_step()
        x = x + 0.1 * np.sin(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("fn, args", [
    (reads_globals_only, (X, XS)), (prints_in_a_loop, (X,)), (writes_its_locals_only, (X,)),
    (counted_steps, (X,)), (decayed_read_through_a_new_array, (X,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_helpers_that_change_nothing_read_keep_working(fn, args):
    check(fn, tuple(a.copy() for a in args))


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_a_printing_helper_prints_once_per_call(policy):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        srcgrad.grad(prints_in_a_loop, policy=policy)(X.copy())
    assert len(out.getvalue().splitlines()) == 6


def test_a_step_counter_nothing_reads_may_be_rerun():
    """The counter counts the reruns (tests/memory/test_policies.py uses one):
    the gradient is right, the counter sees each run."""
    g = srcgrad.grad(counted_steps, policy="sqrt")
    g(X.copy())
    STEPS["count"] = 0
    g(X.copy())
    assert STEPS["count"] >= 5
