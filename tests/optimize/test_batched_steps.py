"""optimize/batched_steps.py and runtime/steps.py's stackable_tape / stacked_tape:
the elementwise terms of a steady adjoint loop (tanh's ``1 - h ** 2``) computed
for every step at once before the loop, each step reading its row.

The pass claims each step's term is bit for bit the one the step computed:
``+ - * /``, ``** 2`` and negation are IEEE operations rounded once per
element, so NumPy gives the same bits on a (T, B, H) array as on each (B, H)
row, its SIMD loops and their scalar tails alike (checked here on lengths that
end in a tail, and on infinities, NaN, -0.0 and subnormals); and the guard's
``stackable_tape`` admits only C-contiguous float32 / float64 arrays of one shape
and dtype, so a row has the strides of the step's own result.  Every program
below is held to the bits of the same pipeline without the pass, under every
policy, and to finite differences; the pass is checked to run where promised
(the stacked terms made, the loop's fast branch taken) and the guard to fail,
to the loop as it was, where the values cannot be stacked.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, check_every_policy, \
    numeric_grad, pure
from recurrences import compiled_without, counting, gru, rnn
from recurrences import gru_args as _gru_args, rnn_args as _rnn_args

import srcgrad
from srcgrad.ir.emit import show_statements
from srcgrad.ir.naming import Namer
from srcgrad.optimize.batched_steps import batch_step_terms
from srcgrad.runtime import stackable_tape, stacked_tape

FAST = ("save", "recompute", "save_products")   # the policies steady_loops runs for


def _run(body, tapes=("h_tape", "s_tape")):
    sweep = gast.parse("if len(t1):\n    for t in reversed(t1):\n"
                       + "".join(f"        {line}\n" for line in body) + "else:\n    pass\n").body
    sweep[0].steady_loop = True
    return show_statements(batch_step_terms(sweep, set(tapes), Namer()))


# -- the pass, on loops written by hand ----------------------------------------------------

def test_a_term_read_before_the_restore_stacks_the_tape_from_its_second_entry_then_the_value():
    out = _run(["d_a = d_h * (1 - h ** 2)", "h = h_tape[t]", "d_h = d_a @ U.T"])
    assert "stackable_tape(h_tape, 1, h)" in out.split("\n")[0]
    assert "h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2" in out
    assert "d_a = d_h * h_terms[t]" in out and "del h_terms" in out


def test_a_term_read_after_the_restore_stacks_the_whole_tape():
    out = _run(["h = h_tape[t]", "d_a = d_h * (1 - h ** 2)", "d_h = d_a @ U.T"])
    assert "stackable_tape(h_tape, 0)" in out.split("\n")[0]
    assert "h_terms = 1 - stacked_tape(h_tape, 0) ** 2" in out


def test_a_value_read_twice_is_stacked_once_and_let_go_when_the_terms_are_made():
    out = _run(["d_a = d_h * (s * (1.0 - s))", "d_b = d_h * -s", "s = s_tape[t]",
                "d_h = d_a @ U.T + d_b"])
    lines = out.split("\n")
    assert "s_steps = stacked_tape(s_tape, 1, s)" in out
    assert "s_terms = s_steps * (1.0 - s_steps)" in out and "s_terms_1 = -s_steps" in out
    assert lines.index("    del s_steps  # not read once the terms are made") \
        < next(k for k, line in enumerate(lines) if line.startswith("    for t"))
    assert out.count("stackable_tape(") == 1


@pytest.mark.parametrize("term", [
    "np.tanh(h)",          # a transcendental function: its SIMD body and tail may differ
    "h ** 3", "h ** 2.0", "h ** -1",   # powers other than the square
    "d_h * h",             # a cotangent, not a restored value: the term is only h... no op
    "1 - g ** 2",          # a value the body assigns otherwise than by its restore
    "1j * h",              # a complex literal
])
def test_what_is_left_in_the_step(term):
    out = _run([f"d_a = d_h * ({term})", "h = h_tape[t]", "g = d_a @ U",
                "d_h = d_a @ U.T"])
    assert "_terms" not in out and "stacked_tape" not in out and "stackable_tape" not in out


def test_a_loop_steady_loops_did_not_write_out_is_left_alone():
    sweep = gast.parse("for t in reversed(t1):\n    d_a = d_h * (1 - h ** 2)\n"
                       "    h = h_tape[t]\n").body
    assert "stacked_tape" not in show_statements(batch_step_terms(sweep, {"h_tape"}, Namer()))


def test_the_same_term_twice_is_made_once():
    out = _run(["d_a = d_h * (1 - h ** 2)", "d_b = d_g * (1 - h ** 2)", "h = h_tape[t]"])
    assert out.count("stacked_tape(") == 1 and "d_b = d_g * h_terms[t]" in out


def test_a_term_of_two_values_checks_that_their_rows_have_one_shape():
    """Two stacks of different shapes broadcast across the steps' axis (review
    s36 R4-18): the guard holds their rows to one shape."""
    out = _run(["d_a = d_h * np.exp(s - h)", "h = h_tape[t]", "s = s_tape[t]"])
    assert "h.shape == s.shape" in out.split("\n")[0]
    assert "h.shape ==" not in _run(["d_a = d_h * (1 - h ** 2)", "h = h_tape[t]"])


# -- the runtime -----------------------------------------------------------------------------

def test_stackable_admits_only_c_contiguous_float_arrays_of_one_shape_and_dtype():
    a = np.ones((3, 4))
    assert stackable_tape([None, a, a + 1], 1, a) and stackable_tape([a, a], 0)
    assert not stackable_tape([a, a.astype(np.float32)], 0)              # two dtypes
    assert not stackable_tape([a, np.ones((4, 3))], 0)                   # two shapes
    assert not stackable_tape([a, np.asfortranarray(a)], 0)              # not C-contiguous
    assert not stackable_tape([a, np.ones((3, 8))[:, ::2]], 0)           # a strided view
    assert not stackable_tape([a.astype(np.float16)], 0)
    assert not stackable_tape([a.astype(np.complex128)], 0)
    assert not stackable_tape([a.astype(np.int64)], 0)
    assert not stackable_tape([None, 1.0], 1) and not stackable_tape([a], 0, 1.0)
    assert not stackable_tape([np.float64(1.0)], 0) and not stackable_tape([np.array(1.0)], 0)
    assert not stackable_tape([a.view(np.matrix)], 0)                    # a subclass
    assert not stackable_tape([None], 1)                                 # nothing to stack
    assert stackable_tape([np.ones((2, 0))], 0)


def test_stacked_tape_rows_are_the_values():
    rng = np.random.default_rng(0)
    tape = [None] + [rng.normal(size=(3, 5)).astype(np.float32) for _ in range(4)]
    last = rng.normal(size=(3, 5)).astype(np.float32)
    rows = stacked_tape(tape, 1, last)
    assert rows.shape == (5, 3, 5) and rows.dtype == np.float32
    for k, value in enumerate(tape[1:] + [last]):
        assert_bit_identical(rows[k], value)
        assert rows[k].strides == value.strides
    assert_bit_identical(stacked_tape(tape[1:], 0), np.stack(tape[1:]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8, 32), (3, 5), (1, 7), (17,), (2, 3, 9)])
def test_elementwise_terms_give_each_rows_bits_batched(dtype, shape):
    """Why the pass may batch these operations: every row of the batched
    result is bit for bit the row's own result, special values included."""
    rng = np.random.default_rng(1)
    steps = [rng.normal(size=shape).astype(dtype) * 3 for _ in range(7)]
    info = np.finfo(dtype)
    special = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, info.smallest_subnormal,
                        -info.smallest_subnormal, info.max, np.sqrt(info.max) * 2], dtype=dtype)
    flat = steps[0].reshape(-1)
    flat[:min(flat.size, special.size)] = special[:flat.size]
    stacked = stacked_tape(steps, 0)
    terms = [lambda h: 1 - h ** 2, lambda h: h * (1.0 - h), lambda h: -h / 3 + 0.5,
             lambda h: (h - 2) ** 2 * h, lambda h: 1 / (h + 1)]
    with np.errstate(all="ignore"):
        for term in terms:
            batched = term(stacked)
            for k, h in enumerate(steps):
                assert_bit_identical(batched[k], term(h))


# -- whole programs ------------------------------------------------------------------------

def rnn_slice(W, U, xs, h0):   # a loop over a slice of the rows
    h = h0
    for x in xs[1:]:
        h = np.tanh(x @ W + h @ U)
    return np.sum(h * h)


def rnn_float_state(W, xs, c):   # a state that starts as a Python float
    h = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h * c)
    return np.sum(h * h)


def rnn_squares(W, U, xs, h0):   # h read after its restore, in a square
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + (h * h) @ U)
    return np.sum(h)


def _programs():
    rng = np.random.default_rng(33)
    yield "steady", rnn, _rnn_args(rng), (0, 1), True
    yield "h0 differentiated", rnn, _rnn_args(rng), (0, 1, 3), True
    yield "the benchmark's shapes", rnn, _rnn_args(rng, 50, 8, 16, 32), (0, 1), True
    yield "float32", rnn, _rnn_args(rng, dtype=np.float32), (0, 1), True
    yield "one step", rnn, _rnn_args(rng, steps=1), (0, 1), True
    yield "no step", rnn, _rnn_args(rng, steps=0), (0, 1), False
    yield "a batch of one", rnn, _rnn_args(rng, batch=1, hidden=1), (0, 1, 3), True
    w, u, xs, _ = _rnn_args(rng)
    yield "an h0 in Fortran order", rnn, [w, u, xs, np.asfortranarray(rng.normal(size=(3, 5)))], \
        (0, 1, 3), True
    yield "a first step that broadcasts", rnn, [w, u, xs, rng.normal(size=(1, 5))], (0, 1), False
    yield "a GRU-like cell", gru, _gru_args(rng), (0, 1, 2, 3, 5), True
    yield "a loop over a slice", rnn_slice, _rnn_args(rng), (0, 1, 3), None
    yield "a float h0", rnn_float_state, [w, xs, rng.normal(size=(3, 5))], (0, 2), False
    yield "h read after its restore", rnn_squares, _rnn_args(rng), (0, 1, 3), True


PROGRAMS = list(_programs())


def _compiled(monkeypatch, fn, with_pass, **options):
    """``fn``'s generated function, with the pass or without it."""
    return compiled_without(monkeypatch, fn, None if with_pass else "batch_step_terms",
                            **options)


def _counting(namespace, counts):
    counting(namespace, counts, ("stacked_tape", "unbroadcast", "matmul_grad_a"))


@pytest.mark.parametrize("what, fn, args, wrt, fast", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_gradients_are_bit_identical_to_the_loop_without_the_pass(monkeypatch, what, fn, args,
                                                                  wrt, fast):
    grad = None
    for policy in POLICIES:
        options = dict(mode="value_and_grad", wrt=wrt, policy=policy)
        namespace, with_pass, source = _compiled(monkeypatch, fn, True, **options)
        _, without, plain = _compiled(monkeypatch, fn, False, **options)
        counts: dict = {}
        _counting(namespace, counts)
        value, grad = with_pass(*[np.copy(a) for a in args])
        value0, grad0 = without(*[np.copy(a) for a in args])
        assert_bit_identical(value, pure(fn)(*args), f"{what}, {policy!r}")
        assert_bit_identical(value0, value, f"{what}, {policy!r}")
        assert_bit_identical(grad, grad0, f"{what}, {policy!r}")
        assert ("stacked_tape(" in source) <= (policy in FAST), (what, policy)
        if fast and policy == "save":   # the guard held: the terms made once, no helper in the loop
            assert "stacked_tape(" in source and counts.get("stacked_tape"), (what, policy)
            assert "matmul_grad_a" not in counts, (what, policy, counts)
        if fast is False:
            assert not counts.get("stacked_tape"), (what, policy)
        if "stacked_tape(" not in source:
            assert source == plain, (what, policy)
    for k, position in enumerate(wrt):
        assert_close(grad[k], numeric_grad(pure(fn), list(args), position), rtol=1e-4,
                     atol=1e-5, what=f"{what}, argument {position}")


@pytest.mark.parametrize("fn, make, wrt", [(rnn, _rnn_args, 1), (rnn, _rnn_args, 3),
                                           (gru, _gru_args, 1), (gru, _gru_args, 5)])
def test_every_policy_and_jvp(fn, make, wrt):
    check_every_policy(fn, make(np.random.default_rng(7)), wrt)


def test_random_shapes_give_the_loops_own_bits(monkeypatch):
    rng = np.random.default_rng(12)
    _, with_pass, _ = _compiled(monkeypatch, rnn, True, wrt=(0, 1, 3))
    _, without, _ = _compiled(monkeypatch, rnn, False, wrt=(0, 1, 3))
    for _ in range(25):
        steps, batch, width, hidden = (int(n) for n in rng.integers(1, 12, size=4))
        dtype = (np.float32, np.float64)[int(rng.integers(2))]
        args = _rnn_args(rng, steps, batch, width, hidden, dtype)
        assert_bit_identical(with_pass(*args), without(*args), (steps, batch, width, hidden))


def test_the_terms_are_let_go_after_the_loop(monkeypatch):
    _, _, source = _compiled(monkeypatch, rnn, True, wrt=(0, 1))
    lines = source.split("\n")
    made = next(k for k, line in enumerate(lines) if "h_terms = " in line)
    gone = next(k for k, line in enumerate(lines) if "del h_terms" in line)
    loop = next(k for k, line in enumerate(lines) if line.strip().startswith("for t in reversed"))
    assert made < loop < gone


# -- review s36: np.logaddexp's terms read two values ----------------------------------------

def logaddexp_row(x, a):
    """A carried (1, 3) row against a (3,) operand: the terms' stacks, (4, 1, 3)
    and (4, 3), broadcast to (4, 4, 3) -- d/dx 22.96 for 6.06, d/da 31.87 for
    7.97 under "save" (R4-18)."""
    y = x[None, :] * 1.0
    c = a * 0.5 + 1.0
    for i in range(4):
        y = np.logaddexp(y, x + c)
    return np.sum(y ** 2)


def logaddexp_from_a_float(x):
    """The carried value starts as a Python float: the guard fails and the
    fallback loop read the fast loop's t4_terms (R4-1: UnboundLocalError)."""
    y = 0.5
    for i in range(3):
        y = np.logaddexp(y, 1.0 + x ** 2)
    return np.sum(y)


def arctan2_from_a_float(x):
    s = 0.0
    for i in range(3):
        s = s + np.arctan2(x, 1.0 + x ** 2 * i)
    return np.sum(s)


def logaddexp_scaled_row(x, a):
    c = a * 0.5
    h = x[None, :] * 1.0
    for t in range(4):
        h = np.logaddexp(c * h, np.arctan(x * t))
    return np.sum(h ** 2)


@pytest.mark.parametrize("fn, args, wrt", [
    (logaddexp_row, (np.array([0.37, -0.61, 0.83]), 0.4), 0),
    (logaddexp_row, (np.array([0.37, -0.61, 0.83]), 0.4), 1),
    (logaddexp_from_a_float, (np.array([0.37, -0.61, 0.83]),), 0),
    (arctan2_from_a_float, (np.array([0.37, -0.61, 0.83]),), 0),
    (logaddexp_scaled_row, (np.array([0.37, -0.61, 0.83]), 0.4), 1),
], ids=["row-x", "row-a", "float-start", "arctan2-float-start", "scaled-row-a"])
def test_terms_of_operands_of_two_shapes_and_a_float_start(fn, args, wrt):
    check_every_policy(fn, args, wrt)
    g = lambda *a: srcgrad.grad(fn, wrt=wrt)(*a)  # noqa: E731
    v = np.ones(np.shape(args[wrt])) if np.ndim(args[wrt]) else 1.0
    e = 1e-5
    plus, minus = list(args), list(args)
    plus[wrt], minus[wrt] = args[wrt] + e * v, args[wrt] - e * v
    assert_close(srcgrad.hvp(fn, wrt=wrt)(*args, v), (g(*plus) - g(*minus)) / (2 * e),
                 rtol=1e-5, atol=1e-7)
