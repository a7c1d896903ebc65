"""optimize/step_operands.py: a steady adjoint loop's per-step operands of a
weight's product (the restored state ``h`` of ``d_U += matmul_grad_b(d_t4,
h, U)``) read after the loop from the tape's first entry and the stack that
batched_steps makes of the others (``rows=h_tape, stacked=h_states``),
instead of collected and joined value by value.

The pass claims the gradient is bit for bit the one of the pipeline without
it: the helper's matrix of operands is the same bytes either way, and its
step-by-step sum reads the same tape entries.  Every program below is held to
those bits, under every policy, and to finite differences; the helper is
checked to take the stack where promised, and the join of the entries where
the first is no array of the stack's shape and dtype.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, check_every_policy, \
    numeric_grad, pure
from recurrences import compiled_without, counting, gru, rnn
from recurrences import gru_args as _gru_args, rnn_args as _rnn_args

from srcgrad.ir.emit import show_statements
from srcgrad.ir.naming import Namer
from srcgrad.optimize.step_operands import stack_step_operands
from srcgrad.runtime import steps as runtime_steps

_GUARD = "if len(t1) and stackable_tape(h_tape, 1, h):\n"
_TERMS = "    h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2\n"


def _run(body, before="d_U_steps = StepTerms()\n", after=None, terms=_TERMS):
    after = ["d_U = matmul_grad_b_steps(d_U, d_U_steps, U)"] if after is None else after
    sweep = gast.parse(before + _GUARD + terms + "    for t in reversed(t1):\n"
                       + "".join(f"        {line}\n" for line in body) + "else:\n    pass\n"
                       + "".join(f"{line}\n" for line in after)).body
    next(s for s in sweep if isinstance(s, gast.If)).steady_loop = True
    return show_statements(stack_step_operands(sweep, {"h_tape"}, Namer()))


_STEP = ["d_a = d_h * h_terms[t]", "h = h_tape[t]", "d_h = d_a @ U.T"]


# -- the pass, on loops written by hand ----------------------------------------------------

def test_the_state_a_step_restores_is_read_from_the_stacked_tape():
    out = _run(_STEP + ["d_U_steps.append((d_a, h))"])
    lines = out.split("\n")
    assert "stackable_tape(h_tape, 1, h)" in lines[1]   # the guard as it was
    assert lines[2].strip().startswith("h_states = stacked_tape(h_tape, 1, h)")
    assert "h_terms = 1 - h_states ** 2" in out and out.count("stacked_tape(") == 1
    assert "d_U_steps.append((d_a, t))" in out
    assert "d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=h_tape, stacked=h_states)" in out
    assert out.count("matmul_grad_b_steps(d_U, d_U_steps, U)") == 1   # the loop as it was
    assert out.index("del h_states") > out.index("stacked=h_states")


def test_products_keep_their_order_and_a_shared_stack():
    out = _run(_STEP + ["d_U_steps.append((d_a, h))", "d_W_steps.append((d_a, t))"],
               before="d_U_steps = StepTerms()\nd_W_steps = []\n",
               after=["d_U = matmul_grad_b_steps(d_U, d_U_steps, U)",
                      "d_W = matmul_grad_b_steps(d_W, d_W_steps, W, rows=xs, shares=d_U_steps)"])
    fast, slow = out.split("else:")
    assert fast.index("rows=h_tape, stacked=h_states") < fast.index("rows=xs, shares=d_U_steps")
    assert slow.index("d_U_steps, U)") < slow.index("rows=xs, shares=d_U_steps")


@pytest.mark.parametrize("body, before, terms", [
    (["d_U_steps.append((d_a, h))"] + _STEP, "d_U_steps = StepTerms()\n", _TERMS),  # before the restore
    (_STEP + ["d_U_steps.append((d_a, h))", "d_U_steps.append((d_a, h))"],
     "d_U_steps = StepTerms()\n", _TERMS),                                # appended twice
    (_STEP + ["d_U_steps.append((d_a, h))", "n = len(d_U_steps)"],
     "d_U_steps = StepTerms()\n", _TERMS),                                # read in the loop
    (_STEP + ["d_U_steps.append((d_a, h))"], "d_U_steps = [g]\n", _TERMS),   # not empty
    (_STEP + ["d_U_steps.append((d_a, h))"], "d_U_steps = []\nd_U_steps.append(g)\n", _TERMS),
    (_STEP + ["d_U_steps.append((d_a, h))"], "d_U_steps = StepTerms()\n", ""),   # no stack
    (_STEP + ["d_U_steps.append((d_a, h))", "h = h + 1"], "d_U_steps = StepTerms()\n",
     _TERMS),                                                             # h assigned twice
])
def test_what_is_left_alone(body, before, terms):
    out = _run(body, before=before, terms=terms)
    assert "h_states" not in out and "rows=" not in out


def test_a_list_that_already_has_rows_is_left_alone():
    out = _run(_STEP + ["d_U_steps.append((d_a, h))"],
               after=["d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=xs)"])
    assert "h_states" not in out


# -- whole programs ------------------------------------------------------------------------

def rnn_left(W, xs, h0):   # the weight on the left: matmul_grad_a_steps
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h * h)


def rnn_two_states(W, U, V, xs, h0):   # two products of the state's steps, one stack
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U + np.sin(h @ V))
    return np.sum(h * h)


def _programs():
    rng = np.random.default_rng(35)
    yield "steady", rnn, _rnn_args(rng), (0, 1), True
    yield "h0 differentiated", rnn, _rnn_args(rng), (0, 1, 3), True
    yield "the benchmark's shapes", rnn, _rnn_args(rng, 50, 8, 16, 32), (0, 1), True
    yield "float32", rnn, _rnn_args(rng, dtype=np.float32), (0, 1), True
    w, u, xs, h0 = _rnn_args(rng)
    yield "a float32 h0", rnn, [w, u, xs, h0.astype(np.float32)], (0, 1), False
    yield "one step", rnn, _rnn_args(rng, steps=1), (0, 1), True
    yield "no step", rnn, _rnn_args(rng, steps=0), (0, 1), False
    yield "a batch of one", rnn, _rnn_args(rng, batch=1, hidden=1), (0, 1, 3), True
    w, u, xs, _ = _rnn_args(rng)
    yield "an h0 in Fortran order", rnn, [w, u, xs, np.asfortranarray(rng.normal(size=(3, 5)))], \
        (0, 1, 3), True
    yield "an h0 of ints", rnn, [w, u, xs, np.ones((3, 5), dtype=np.int64)], (0, 1), False
    yield "a GRU-like cell", gru, _gru_args(rng), (0, 1, 2, 3, 5), None
    yield "the weight on the left", rnn_left, [rng.normal(size=(5, 5)) * 0.5,
                                               rng.normal(size=(6, 5, 3)),
                                               rng.normal(size=(5, 3))], (0, 2), None
    yield "two products of the state", rnn_two_states, \
        [rng.normal(size=(4, 5)) * 0.5, rng.normal(size=(5, 5)) * 0.5,
         rng.normal(size=(5, 5)) * 0.5, rng.normal(size=(6, 3, 4)), rng.normal(size=(3, 5))], \
        (0, 1, 2, 4), None


PROGRAMS = list(_programs())


_after_first = runtime_steps._after_first


def _compiled(monkeypatch, fn, with_pass, **options):
    return compiled_without(monkeypatch, fn, None if with_pass else "stack_step_operands",
                            **options)


@pytest.mark.parametrize("what, fn, args, wrt, fast", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_gradients_are_bit_identical_to_the_loop_without_the_pass(monkeypatch, what, fn, args,
                                                                  wrt, fast):
    grad = None
    for policy in POLICIES:
        options = dict(mode="value_and_grad", wrt=wrt, policy=policy)
        namespace, with_pass, source = _compiled(monkeypatch, fn, True, **options)
        _, without, plain = _compiled(monkeypatch, fn, False, **options)
        counts: dict = {}
        counting(namespace, counts, ("stacked_tape",))
        joined = []
        monkeypatch.setattr(runtime_steps, "_after_first", lambda *a: joined.append(
            _after_first(*a)) or joined[-1])
        value, grad = with_pass(*[np.copy(a) for a in args])
        monkeypatch.undo()
        value0, grad0 = without(*[np.copy(a) for a in args])
        assert_bit_identical(value, pure(fn)(*args), f"{what}, {policy!r}")
        assert_bit_identical(value0, value, f"{what}, {policy!r}")
        assert_bit_identical(grad, grad0, f"{what}, {policy!r}")
        if fast and policy == "save":   # the stack read by the product: no second one
            assert "rows=h_tape, stacked=h_states" in source, (what, policy)
            assert counts.get("stacked_tape") == 1 and joined and joined[0] is not None, what
        if fast is False and policy == "save":   # the first entry unlike the others: joined
            assert "rows=h_tape, stacked=h_states" in source, (what, policy)
            assert not joined or joined[0] is None, what
        if "_states" not in source:
            assert source == plain, (what, policy)
    for k, position in enumerate(wrt):
        assert_close(grad[k], numeric_grad(pure(fn), list(args), position), rtol=1e-4,
                     atol=1e-5, what=f"{what}, argument {position}")


@pytest.mark.parametrize("fn, make, wrt", [(rnn, _rnn_args, 1), (rnn, _rnn_args, 3),
                                           (gru, _gru_args, 1)])
def test_every_policy_and_jvp(fn, make, wrt):
    check_every_policy(fn, make(np.random.default_rng(8)), wrt)


def test_random_shapes_give_the_loops_own_bits(monkeypatch):
    rng = np.random.default_rng(13)
    _, with_pass, source = _compiled(monkeypatch, rnn, True, wrt=(0, 1, 3))
    _, without, _ = _compiled(monkeypatch, rnn, False, wrt=(0, 1, 3))
    assert "rows=h_tape, stacked=h_states" in source
    for _ in range(25):
        steps, batch, width, hidden = (int(n) for n in rng.integers(1, 12, size=4))
        dtype = (np.float32, np.float64)[int(rng.integers(2))]
        args = _rnn_args(rng, steps, batch, width, hidden, dtype)
        assert_bit_identical(with_pass(*args), without(*args), (steps, batch, width, hidden))


def test_the_first_entry_is_stacked_in_front_and_read_without_a_copy():
    """stacked_tape(tape, 1, h) puts a copy of tape[0] in front of the rows, in the
    same memory: _after_first reads the operands' matrix as that buffer (no
    second copy of every state), and joins as before where the entry it is
    given is not the one in front, or none could be put there."""
    rng = np.random.default_rng(5)
    tape = [rng.normal(size=(3, 4)) for _ in range(5)]
    last = rng.normal(size=(3, 4))
    states = runtime_steps.stacked_tape(tape, 1, last)
    assert_bit_identical(states, np.stack(tape[1:] + [last]))
    block = runtime_steps._after_first(tape[0], states, 5)
    assert_bit_identical(block, np.stack(tape))
    assert np.shares_memory(block, states)   # a view: the buffer stacked_tape made
    other = tape[0] + 1.0   # not the entry stacked in front: joined, a copy
    joined = runtime_steps._after_first(other, states, 5)
    assert_bit_identical(joined, np.stack([other] + tape[1:]))
    assert not np.shares_memory(joined, states)
    for head in (tape[0].astype(np.float32), np.asfortranarray(tape[0]), None):
        apart = runtime_steps.stacked_tape([head] + tape[1:], 1, last)   # nothing in front
        assert_bit_identical(apart, states)
        assert apart.base.size == states.size
