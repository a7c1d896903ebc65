"""optimize/steady_loops.py and runtime/steps.py's steady_tape: an adjoint
loop run, under a guard checked once, without its helpers' shape checks
(``unbroadcast(g, x)`` as ``g``, ``matmul_grad_a(g, a, b)`` as ``g @ b.T``).

The fast loop makes the same operations on the same arrays as the helpers'
own fast branches, so every gradient here is held to the bits of the same
pipeline without the pass, under every policy (the pass runs for ``save``,
``recompute`` and ``save_products``; the checkpointing policies ``sqrt`` and
``revolve`` keep their schedules and never meet it), and against finite
differences; a loop whose shapes change between steps (a first step that
broadcasts, a state that starts as a Python float, vectors) fails the guard
and runs the loop as it was, also to the bits.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, check_every_policy, \
    numeric_grad, pure
from recurrences import compiled_without, counting, rnn

from srcgrad import pipeline
from srcgrad.ir.emit import show_statements
from srcgrad.optimize.steady_loops import steady_adjoint_loops
from srcgrad.options import Options
from srcgrad.runtime import broadcasts_to, steady_tape

FAST = ("save", "recompute", "save_products")   # the policies the pass runs for


def _run(source, tapes=("h_tape", "t3_tape"), live=()):
    return show_statements(steady_adjoint_loops(gast.parse(source).body, set(tapes), set(live)))


# -- the pass, on sweeps written by hand ---------------------------------------------------

SWEEP = ("for t in reversed(t1):\n"
         "    d_t5 = d_h * (1 - h ** 2)\n"
         "    h = h_tape[t]\n"
         "    d_t3 = unbroadcast(d_t5, t3)\n"
         "    d_h = matmul_grad_a(d_t3, h, U)\n"
         "    d_U_steps.append((d_t3, h))\n"
         "    t3 = t3_tape[t]\n")


def test_the_fast_loop_writes_the_helpers_fast_branches():
    out = _run(SWEEP)
    fast, slow = out.split("\nelse:\n")
    assert "d_t3 = d_t5\n" in fast and "d_h = d_t3 @ U.T" in fast
    assert "unbroadcast" not in fast and "matmul_grad_a" not in fast
    assert "t3 = t3_tape[t]" not in fast           # read only for its shape: not restored
    assert "d_t3 = unbroadcast(d_t5, t3)" in slow and "t3 = t3_tape[t]" in slow
    guard = fast.split("\n")[1]
    # each value read, each tape entry restored, each shape compared, the carried d_h
    for check in ("len(t1)", "type(d_h) is np.ndarray", "type(U) is np.ndarray", "U.ndim == 2",
                  "steady_tape(h_tape, h.shape, 0)", "steady_tape(t3_tape, t3.shape, 1)",
                  "d_h.shape == h.shape", "d_h.shape == t3.shape",
                  "(d_h.shape[0], U.shape[0]) == d_h.shape"):
        assert check in guard, check


def test_the_fast_loop_shares_no_node_with_the_loop_it_falls_back_to():
    """A fast form is built from the original loop's nodes (``g`` of
    ``unbroadcast(g, x)``); shared, a later pass's rewrite of the fast loop
    (batched_steps' ``t4_terms[i]``) showed in the fallback too, which then
    read a name only the fast branch binds (review s36 R4-1: UnboundLocalError)."""
    made = steady_adjoint_loops(gast.parse(SWEEP).body, {"h_tape", "t3_tape"}, set())[0]
    fast, slow = made.body[0], made.orelse[0]
    assert not {id(n) for n in gast.walk(fast)} & {id(n) for n in gast.walk(slow)}


def test_a_value_read_after_the_loop_is_still_restored():
    out = _run(SWEEP, live=("t3",))
    assert out.split("\nelse:\n")[0].count("t3 = t3_tape[t]") == 1


def test_the_right_operand_helper_is_a_transposed_product():
    out = _run("for t in reversed(t1):\n    h = h_tape[t]\n"
               "    d_W = d_W + matmul_grad_b(d_h, h, W)\n")
    assert "d_W = d_W + h.T @ d_h" in out
    # nothing rests on the sum (it may start as 0.0): the guard does not look at it
    assert "d_W" not in out.split("\n")[1]


def test_a_row_of_an_array_the_loop_reads():
    out = _run("for t in reversed(t1):\n    h = h_tape[t]\n    t2 = xs[t]\n    t3 = t2 @ W\n"
               "    d_t3 = unbroadcast(d_h, t3)\n    d_x = matmul_grad_a(d_t3, t2, W)\n",
               live=("d_x",))
    guard = out.split("\n")[1]
    assert "xs.ndim == 3" in guard and "(xs.shape[1:][0], W.shape[1])" in guard
    fast = out.split("\nelse:\n")[0]
    assert "d_t3 = d_h\n" in fast and "d_x = d_t3 @ W.T" in fast and "t3 = t2 @ W" not in fast


def test_a_loop_invariant_operand_may_broadcast_and_its_unbroadcast_stays_a_call():
    out = _run("for t in reversed(t1):\n    h = h_tape[t]\n    d_t3 = d_h * s\n"
               "    d_b = d_b + unbroadcast(d_h, b)\n    d_x = matmul_grad_a(d_t3, h, U)\n",
               live=("d_x", "d_b"))
    guard = out.split("\n")[1]
    assert "broadcasts_to(s.shape, d_h.shape)" in guard and "d_h.shape == s.shape" not in guard
    assert "b.shape" not in guard and "d_b" not in guard   # nothing rests on the bias sum
    fast = out.split("\nelse:\n")[0]
    assert "d_b = d_b + unbroadcast(d_h, b)" in fast and "d_x = d_t3 @ U.T" in fast


def test_the_source_is_the_same_whatever_the_hash_seed(tmp_path):
    script = ("import sys; sys.path[:0] = [%r, %r]\n"
              "import test_steady_loops as T\n"
              "from srcgrad import pipeline\nfrom srcgrad.options import Options\n"
              "print(pipeline.generate(T.rnn_two_states, Options(wrt=(0, 1))).source)\n"
              % (str(Path(__file__).parent), str(Path(__file__).parents[1] / "data")))
    sources = set()
    for seed in ("1", "2", "3"):
        made = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed,
                                   "XDG_CACHE_HOME": str(tmp_path)}, check=True)
        sources.add(made.stdout)
    assert len(sources) == 1 and "steady_tape(" in sources.pop()


@pytest.mark.parametrize("body", [
    "    h = h_tape[t]\n    if c:\n        d_h = matmul_grad_a(d_h, h, U)\n",   # a branch
    "    h = h_tape[t]\n    d_h = matmul_grad_a(d_h, h, U)\n    d_h[0] = 0.0\n",  # a write
    "    h = h_tape[t]\n    d_h = matmul_grad_a(d_h, h, U)\n    v = f(h)\n",   # an unknown call
    "    h = h_tape[t]\n    d_h = matmul_grad_a(d_h, h, U)\n    h.resize((2, 2))\n",
    "    h = h_tape[t]\n    d_h = matmul_grad_a(d_h, h, U)\n    break\n",
    "    h = h.T\n    d_h = unbroadcast(d_h, h)\n",                    # no tape: not a counted loop
    "    h = h_tape[t]\n    d_h = d_h * (1 - h ** 2)\n",            # no helper to write out
    "    h = h_tape[t]\n    d_h = matmul_grad_a(d_h, h, U)\n    d_h = unreduce(d_h, h)\n",
])
def test_loops_the_pass_does_not_know_are_left_alone(body):
    out = _run("for t in reversed(t1):\n" + body)
    assert out.startswith("for t in reversed(t1):") and "steady_tape" not in out


def test_a_loop_not_over_reversed_indices_is_left_alone():
    assert "steady_tape" not in _run("for t in t1:\n    h = h_tape[t]\n"
                                     "    d_h = matmul_grad_a(d_h, h, U)\n")


# -- runtime/steps.py: steady_tape ---------------------------------------------------------

@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_steady_tape_checks_every_entry_from_the_first_asked():
    a = np.zeros((2, 3))
    assert steady_tape([None, a, a.copy()], (2, 3), 1)
    assert not steady_tape([None, a], (2, 3), 0)
    assert not steady_tape([a, a[:1]], (2, 3), 0)
    assert not steady_tape([a, np.asmatrix(a)], (2, 3), 0)      # a subclass: its own @
    assert not steady_tape([a, a.tolist()], (2, 3), 0)
    assert not steady_tape([a, 1.0], (2, 3))
    assert steady_tape([], (2, 3), 0) and steady_tape([None], (2,), 1)


def test_broadcasts_to_answers_without_raising():
    assert broadcasts_to((5,), (3, 5)) and broadcasts_to((3, 1), (3, 5))
    assert broadcasts_to((3, 5), (3, 5)) and broadcasts_to((), (2,))
    assert not broadcasts_to((2, 3, 5), (3, 5)) and not broadcasts_to((4,), (3, 5))


# -- whole programs ------------------------------------------------------------------------

def rnn_float_state(W, xs, c):   # the state starts as a Python float: the guard fails
    h = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h * c)
    return np.sum(h ** 2)


def rnn_two_states(W, U, xs, h0, c0):   # two carried values, a sigmoid-like gate
    h, c = h0, c0
    for t in range(xs.shape[0]):
        a = xs[t] @ W + h @ U
        g = 1.0 / (1.0 + np.exp(-a))
        c = g * c + (1.0 - g) * np.tanh(a)
        h = np.tanh(c) * g
    return np.sum(h * c)


def rnn_scaled(W, U, xs, h0, s):   # a loop-invariant array read elementwise
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh((xs[t] @ W) * s - h @ U)
    return np.sum(h)


def rnn_bias(W, U, b, xs, h0):   # a bias: its cotangent summed over the steps
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U + b)
    return np.sum(h * h)


def _cell(W, U, x, h):
    return np.tanh(x @ W + h @ U)


def rnn_in_a_helper(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = _cell(W, U, xs[t], h)
    return np.sum(h * h)


def rnn_branch(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        if t % 2:
            h = np.tanh(xs[t] @ W + h @ U)
        else:
            h = np.sin(xs[t] @ W) + h
    return np.sum(h * h)


def rnn_nested(W, U, xs, h0):   # the recurrent loop inside another loop
    h = h0
    for _ in range(2):
        for t in range(xs.shape[0]):
            h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def _args(rng, steps=6, batch=3, width=4, hidden=5, dtype=np.float64):
    return [(rng.normal(size=(width, hidden)) * 0.5).astype(dtype),
            (rng.normal(size=(hidden, hidden)) * 0.5).astype(dtype),
            rng.normal(size=(steps, batch, width)), rng.normal(size=(batch, hidden)) * 0.5]


def _programs():
    rng = np.random.default_rng(16)
    yield "steady", rnn, _args(rng), (0, 1), True
    yield "one step", rnn, _args(rng, steps=1), (0, 1), True
    yield "no step", rnn, _args(rng, steps=0), (0, 1), False
    yield "float32 weights", rnn, _args(rng, dtype=np.float32), (0, 1), True
    w, u, xs, _ = _args(rng)
    yield "a first step that broadcasts", rnn, [w, u, xs, rng.normal(size=(1, 5))], (0, 1), False
    yield "vectors", rnn, [w, u, rng.normal(size=(6, 4)), rng.normal(size=5)], (0, 1), False
    yield "a state of a Python float", rnn_float_state, [w, xs, rng.normal(size=(3, 5))], \
        (0, 2), False
    yield "two states", rnn_two_states, [w, u, xs, rng.normal(size=(3, 5)),
                                         rng.normal(size=(3, 5))], (0, 1), True
    # the cotangent of s is summed in the loop from 0.0, a Python float at the first
    # step, through unbroadcast (a loop-invariant operand: kept, never written out): the
    # sum is not described, nothing rests on it, the rest of the loop is written out
    yield "a scale", rnn_scaled, [w, u, xs, rng.normal(size=(3, 5)),
                                  rng.normal(size=(3, 5))], (0, 1, 4), True
    yield "a scale not differentiated", rnn_scaled, [w, u, xs, rng.normal(size=(3, 5)),
                                                     rng.normal(size=(3, 5))], (0, 1), True
    yield "a scale that broadcasts", rnn_scaled, [w, u, xs, rng.normal(size=(3, 5)),
                                                  rng.normal(size=(5,))], (0, 1, 4), True
    # a scale of three axes makes the state grow after the first step: the guard fails
    yield "a scale that grows the state", rnn_scaled, [w, u, xs, rng.normal(size=(3, 5)),
                                                       rng.normal(size=(2, 3, 5))], (0, 1), False
    # rows that are vectors, the state a matrix (I, H) the first step broadcasts to: the
    # product xs[t] @ W of a row has one axis, t3's unbroadcast sums, never written out
    yield "vector rows, a matrix state", rnn, [w, u, rng.normal(size=(6, 4)),
                                               rng.normal(size=(4, 5))], (0, 1), False
    yield "a bias", rnn_bias, [w, u, rng.normal(size=5), xs, rng.normal(size=(3, 5))], \
        (0, 1, 2), True
    yield "a bias of the state's shape", rnn_bias, [w, u, rng.normal(size=(3, 5)), xs,
                                                    rng.normal(size=(3, 5))], (0, 1, 2), True
    yield "in a helper", rnn_in_a_helper, _args(rng), (0, 1), None
    yield "a branch", rnn_branch, _args(rng), (0, 1), False
    yield "nested", rnn_nested, _args(rng), (0, 1), None


PROGRAMS = list(_programs())


def _compiled(monkeypatch, fn, with_pass, **options):
    """``fn``'s generated function, with the pass or without it."""
    return compiled_without(monkeypatch, fn, None if with_pass else "steady_adjoint_loops",
                            **options)


def _with_and_without(monkeypatch, fn, args, what, counting, **options):
    """Run ``fn``'s generated code with the pass and without it on copies of
    ``args``: the value is the function's own and both runs agree bit for bit.
    Returns the source with the pass, the helper calls ``counting`` saw and
    the gradient."""
    namespace, with_pass, source = _compiled(monkeypatch, fn, True, **options)
    _, without, _ = _compiled(monkeypatch, fn, False, **options)
    counts: dict = {}
    counting(namespace, counts)
    value, grad = with_pass(*[np.copy(a) for a in args])
    value0, grad0 = without(*[np.copy(a) for a in args])
    policy = options["policy"]
    assert_bit_identical(value, pure(fn)(*args), f"{what}, {policy!r}")
    assert_bit_identical(value0, value, f"{what}, {policy!r}")
    assert_bit_identical(grad, grad0, f"{what}, {policy!r}")
    return source, counts, grad


def _counting(namespace, counts):
    """Count the calls of the helpers the fast loop writes out."""
    counting(namespace, counts, ("unbroadcast", "matmul_grad_a"))


@pytest.mark.parametrize("what, fn, args, wrt, fast", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_gradients_are_bit_identical_to_the_loop_with_its_checks(monkeypatch, what, fn, args,
                                                                 wrt, fast):
    for policy in POLICIES:
        options = dict(mode="value_and_grad", wrt=wrt, policy=policy)
        source, counts, grad = _with_and_without(monkeypatch, fn, args, what, _counting, **options)
        assert ("steady_tape(" in source) <= (policy in FAST), (what, policy)
        if fast and policy in FAST:   # the guard held: no helper ran in the loop
            assert "steady_tape(" in source and "matmul_grad_a" not in counts, (what, counts)
        if fast is False and "steady_tape(" in source and len(args[2]):
            assert counts, what   # the guard failed: the loop as it was
    for k, position in enumerate(wrt):
        assert_close(grad[k], numeric_grad(pure(fn), list(args), position), rtol=1e-5,
                     atol=1e-6, what=f"{what}, argument {position}")


def test_the_benchmark_shape_takes_the_fast_loop_under_every_keeping_policy(monkeypatch):
    args = _args(np.random.default_rng(3), steps=50, batch=8, width=16, hidden=32)
    for policy in FAST:
        namespace, grad, source = _compiled(monkeypatch, rnn, True, wrt=(0, 1), policy=policy)
        counts: dict = {}
        _counting(namespace, counts)
        got = grad(*args)
        assert "steady_tape(" in source and not counts, (policy, counts)
        _, plain, _ = _compiled(monkeypatch, rnn, False, wrt=(0, 1), policy=policy)
        assert_bit_identical(got, plain(*args), policy)


@pytest.mark.parametrize("fn, args, wrt", [(rnn, _args(np.random.default_rng(5)), 0),
                                           (rnn_two_states, None, 0)])
def test_every_policy_and_jvp(fn, args, wrt):
    if args is None:
        rng = np.random.default_rng(6)
        w, u, xs, h0 = _args(rng)
        args = [w, u, xs, h0, rng.normal(size=(3, 5))]
    check_every_policy(fn, args, wrt)


def test_the_callers_arrays_are_left_alone(monkeypatch):
    args = _args(np.random.default_rng(8))
    kept = [a.copy() for a in args]
    _, grad, _ = _compiled(monkeypatch, rnn, True, wrt=(0, 1, 3))
    grad(*args)
    for a, b in zip(args, kept):
        np.testing.assert_array_equal(a, b)


# -- random shapes: the guard against the loop with its checks -----------------------------

def fuzz_tanh(W, U, xs, h0, b):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U + b)
    return np.sum(h * h)


def fuzz_scaled(W, U, xs, h0, b):
    h = h0
    for t in range(xs.shape[0]):
        a = xs[t] @ W
        h = np.sin(a * b - h @ U) + h * 0.5
    return np.sum(h ** 2)


def fuzz_two_states(W, U, xs, h0, b):
    h = h0
    c = h0 * 0.5
    for t in range(xs.shape[0]):
        z = xs[t] @ W + h @ U
        c = c * 0.9 + np.tanh(z) * b
        h = np.tanh(c) * z
    return np.sum(h * c)


def fuzz_left(W, U, xs, h0, b):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(U @ h + b) + xs[t] @ W
    return np.sum(h)


FUZZ = (fuzz_tanh, fuzz_scaled, fuzz_two_states, fuzz_left)


def _fuzz_args(rng):
    B, I, H = (int(n) for n in rng.integers(1, 4, size=3))
    T = int(rng.integers(0, 4))
    xs = rng.normal(size=[(T, B, I), (T, I), (T, 1, I)][rng.integers(3)])
    W, U = rng.normal(size=(I, H)), rng.normal(size=(H, H)) * 0.5
    h0 = [rng.normal(size=(B, H)), rng.normal(size=(1, H)), rng.normal(size=(H,)), 0.3,
          rng.normal(size=(I, H))][rng.integers(5)]
    b = [rng.normal(size=(B, H)), rng.normal(size=(H,)), 1.5, rng.normal(size=(1, 1))][
        rng.integers(4)]
    return [W.astype(np.float32) if rng.random() < 0.2 else W, U, xs, h0, b]


def test_random_shapes_give_the_loops_own_bits(monkeypatch):
    """Shapes that broadcast at the first step, vectors, one-element axes, a Python
    float, float32 weights, no step at all: the same bits, or the same exception, as
    the loop with its checks (under recompute a product's checks were once lost:
    0a4712d)."""
    rng = np.random.default_rng(1600)
    compiled = {}
    for _ in range(100):
        fn = FUZZ[rng.integers(len(FUZZ))]
        args = _fuzz_args(rng)
        for policy in FAST:
            if (fn, policy) not in compiled:
                compiled[fn, policy] = [_compiled(monkeypatch, fn, p, wrt=(0, 1), policy=policy)[1]
                                        for p in (True, False)]
            results = []
            for grad in compiled[fn, policy]:
                try:
                    results.append(grad(*[np.copy(a) if isinstance(a, np.ndarray) else a
                                          for a in args]))
                except Exception as error:  # noqa: BLE001 - compared, not handled
                    results.append(type(error))
            what = f"{fn.__name__}, {policy}, {[np.shape(a) for a in args]}"
            if isinstance(results[1], type):
                assert results[0] is results[1], what
            else:
                assert_bit_identical(results[0], results[1], what)


# -- what the guard may read (F3-15) ---------------------------------------------------------

def test_a_value_read_only_after_its_restore_is_described_by_its_tape():
    """``h`` read only after ``h = h_tape[t]``: a split backward function is not given the
    forward's last ``h`` (UnboundLocalError 'h' in tests/api/test_reruns_draw_alike.py,
    F3-15), so the guard reads the tape's first entry, never ``h``."""
    out = _run("for t in reversed(t1):\n    h = h_tape[t]\n    d_h = matmul_grad_a(d_h, h, U)\n")
    guard = out.split("\n")[1]
    for check in ("type(h_tape[0]) is np.ndarray", "len(h_tape[0].shape) == 2",
                  "steady_tape(h_tape, h_tape[0].shape, 1)"):
        assert check in guard, check
    assert not ({n.id for n in gast.walk(gast.parse(guard.strip()[3:-1]))
                 if isinstance(n, gast.Name)} - {"t1", "d_h", "U", "h_tape", "len", "type", "np",
                                                 "steady_tape"}), guard


def test_a_guard_reads_only_what_the_first_step_reads_before_assigning_it():
    # d_h.shape is compared with h's, but h is read only after its restore
    out = _run("for t in reversed(t1):\n    h = h_tape[t]\n    d_t3 = unbroadcast(d_h, h)\n"
               "    d_h = d_t3 * 0.5\n", live=("d_h",))
    guard = out.split("\n")[1]
    assert "d_h.shape == h_tape[0].shape" in guard and "type(h)" not in guard
    assert "d_t3 = d_h\n" in out.split("\nelse:\n")[0]


def test_a_written_out_unbroadcast_of_a_value_onto_itself_is_left_out():
    out = _run("for t in reversed(t1):\n    h = h_tape[t]\n    d_h = unbroadcast(d_h, h)\n"
               "    d_h = matmul_grad_a(d_h, h, U)\n")
    fast = out.split("\nelse:\n")[0]
    assert "d_h = d_h\n" not in fast and "d_h = d_h @ U.T" in fast


def decay(x, c):   # h read only after its restore in the adjoint loop
    h = x
    for _ in range(4):
        h = h + 0.5 * np.sin(h) * c
    return h


def decay_product(x, U):   # the same with a product
    h = x
    for _ in range(3):
        h = np.tanh(h) @ U + h
    return h


def decay_sum(x, c):
    return np.sum(decay(x, c) ** 2)


def decay_in_a_helper(x, c):
    return decay(x * 1.0, c) * 2.0


def _split(monkeypatch, fn, with_pass, wrt, policy):
    """``fn``'s generated forward and backward functions (vjp's split mode)."""
    with monkeypatch.context() as patch:
        if not with_pass:
            patch.setattr(pipeline, "steady_adjoint_loops", lambda backward, *args: backward)
        made = pipeline.generate(fn, Options(mode="vjp", wrt=wrt, single=False, policy=policy))
    namespace = dict(made.bindings)
    exec(compile(made.source, f"<{fn.__name__}>", "exec"), namespace)  # noqa: S102
    return namespace, [namespace[e] for e in made.entries], made.source


def _counting_all(namespace, counts):
    for name in ("unbroadcast", "matmul_grad_a", "matmul_grad_b"):
        helper = namespace.get(name)
        if helper is not None:
            def counted(*args, helper=helper, name=name):
                counts[name] = counts.get(name, 0) + 1
                return helper(*args)
            namespace[name] = counted


SPLIT = [(decay, lambda rng: [rng.normal(size=(3, 4)), rng.normal(size=(3, 4))], (0, 1), True),
         (decay, lambda rng: [rng.normal(size=(3, 4)), rng.normal(size=4)], (0,), True),
         (decay_product, lambda rng: [rng.normal(size=(3, 4)), rng.normal(size=(4, 4)) * 0.5],
          (0, 1), True),
         (decay_in_a_helper, lambda rng: [rng.normal(size=(2, 3)), rng.normal(size=(2, 3))],
          (0, 1), None),
         (decay, lambda rng: [rng.normal(size=4), 0.7], (0,), True)]


@pytest.mark.parametrize("fn, make, wrt, fast", SPLIT, ids=lambda p: getattr(p, "__name__", None))
def test_a_split_backward_function_without_the_forwards_last_value(monkeypatch, fn, make, wrt,
                                                                    fast):
    args = make(np.random.default_rng(17))
    for policy in POLICIES:
        namespace, (forward, backward), source = _split(monkeypatch, fn, True, wrt, policy)
        _, (forward0, backward0), _ = _split(monkeypatch, fn, False, wrt, policy)
        assert ("steady_tape(" in source) <= (policy in FAST), policy
        counts: dict = {}
        _counting_all(namespace, counts)
        value, residuals = forward(*[np.copy(a) for a in args])
        value0, residuals0 = forward0(*[np.copy(a) for a in args])
        assert_bit_identical(value, pure(fn)(*args), f"{fn.__name__}, {policy!r}")
        assert_bit_identical(value0, value, f"{fn.__name__}, {policy!r}")
        cotangent = np.cos(value)
        got, want = backward(residuals, cotangent), backward0(residuals0, cotangent)
        assert_bit_identical(got, want, f"{fn.__name__}, {policy!r}")
        if fast and policy in FAST:
            assert "steady_tape(" in source and not counts.get("matmul_grad_a"), (policy, counts)
    for k, position in enumerate(wrt):   # the cotangent's sum: the gradient of sum(cos(f) * f)
        def scalar(*a):
            return np.sum(pure(fn)(*a) * cotangent)
        assert_close(got[k], numeric_grad(scalar, list(args), position), rtol=1e-5, atol=1e-7,
                     what=f"{fn.__name__}, argument {position}")


def test_vjp_pulls_back_twice_with_the_pass():
    import srcgrad
    x, c = np.linspace(-1.0, 1.0, 6).reshape(2, 3), np.full((2, 3), 0.3)
    value, pullback = srcgrad.vjp(decay, x, c)
    assert_bit_identical(value, pure(decay)(x, c))
    first, second = pullback(np.ones_like(value)), pullback(np.ones_like(value))
    assert_bit_identical(first, second)
    assert "steady_tape(" in pullback.source
    _, slow = srcgrad.vjp(decay, x, c, optimize=False)
    assert_close(first, slow(np.ones_like(value)), rtol=1e-14, atol=0)
    check_every_policy(decay_sum, [x, c], 0)
    check_every_policy(decay_sum, [x, c], 1)


# -- an attribute .T in the loop (F3-15) -----------------------------------------------------

def descent(w, X, y):   # gradient descent: X.T, an attribute of a loop-invariant array
    for _ in range(5):
        w = w - 0.1 * (X.T @ (X @ w - y))
    return np.sum(w ** 2)


def descent_transposed_weight(W, U, xs, h0):   # U.T read in each step
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U.T)
    return np.sum(h * h)


def _descent_in_a_helper(w, X, y, rate):
    for _ in range(3):
        g = X.T @ w
        w = w - rate * (X @ g - y)
    return w


def descent_in_a_helper(w, X, y):   # g = X.T @ w, the loop in a helper
    return np.sum(_descent_in_a_helper(w * 1.0, X, y, 0.05) ** 2)


def _descent_args(rng):
    return [rng.normal(size=(3, 2)), rng.normal(size=(6, 3)) * 0.5, rng.normal(size=(6, 2))]


# the cotangent of X (or U) is summed from np.transpose(d_t2), a call that changes a shape:
# that loop is left alone, with its checks
TRANSPOSED = [("descent", descent, _descent_args, (0,), True),
              ("descent, every argument", descent, _descent_args, (0, 1, 2), None),
              ("a column", descent, lambda rng: [rng.normal(size=(3, 1)),
                                                  rng.normal(size=(6, 3)) * 0.5,
                                                  rng.normal(size=(6, 1))], (0,), True),
              ("vectors", descent, lambda rng: [rng.normal(size=3), rng.normal(size=(6, 3)) * 0.5,
                                                 rng.normal(size=6)], (0, 1), False),
              ("the weight transposed", descent_transposed_weight, lambda rng: _args(rng),
               (0,), True),
              ("the weight transposed, both", descent_transposed_weight, lambda rng: _args(rng),
               (0, 1), None),
              ("in a helper", descent_in_a_helper,
               lambda rng: [rng.normal(size=(6, 2)), rng.normal(size=(6, 3)) * 0.5,
                            rng.normal(size=(6, 2))], (0, 1, 2), None)]


@pytest.mark.parametrize("what, fn, make, wrt, fast", TRANSPOSED, ids=[p[0] for p in TRANSPOSED])
def test_an_attribute_of_a_loop_invariant_array_in_the_loop(monkeypatch, what, fn, make, wrt,
                                                            fast):
    """``X.T`` in the loop: the pass copied the body with copy.deepcopy, which also copied
    the passes' marks on its nodes (the forward statement a restore mirrors, and in it
    ndarray.T's descriptor: TypeError, cannot pickle 'getset_descriptor')."""
    args = make(np.random.default_rng(18))
    for policy in POLICIES:
        options = dict(mode="value_and_grad", wrt=wrt, single=False, policy=policy)
        source, counts, grad = _with_and_without(monkeypatch, fn, args, what, _counting_all,
                                           **options)
        if fast and policy in FAST:   # the guard held: no helper ran in the loop
            assert "steady_tape(" in source and not counts, (what, policy, counts)
        if fast is False and "steady_tape(" in source:
            assert counts, what
    for k, position in enumerate(wrt):
        assert_close(grad[k], numeric_grad(pure(fn), list(args), position), rtol=1e-5,
                     atol=1e-7, what=f"{what}, argument {position}")


@pytest.mark.parametrize("fn, make", [(descent, _descent_args),
                                      (descent_in_a_helper, None)])
def test_descent_every_policy_and_jvp(fn, make):
    rng = np.random.default_rng(19)
    args = make(rng) if make else [rng.normal(size=(6, 2)), rng.normal(size=(6, 3)) * 0.5,
                                   rng.normal(size=(6, 2))]
    check_every_policy(fn, args, 0)
    check_every_policy(fn, args, 1)


def _split_fuzz_args(rng):
    B, H = (int(n) for n in rng.integers(1, 4, size=2))
    x = [rng.normal(size=(B, H)), rng.normal(size=(H,)), rng.normal(size=(1, H)), 0.4][
        rng.integers(4)]
    c = [rng.normal(size=(B, H)), rng.normal(size=(H,)), rng.normal(size=(2, B, H)), 0.7,
         rng.normal(size=(1, 1))][rng.integers(5)]
    return x, c, rng.normal(size=(H, H)) * 0.5


def test_random_shapes_in_a_split_backward_function_give_the_loops_own_bits(monkeypatch):
    """The tape-described state of vjp's backward function (h read only after its
    restore): states that start as a Python float or a row and grow at the first step,
    scales of three axes -- the same bits, or the same exception, as the loop with
    its checks."""
    rng = np.random.default_rng(1601)
    compiled = {}
    for _ in range(60):
        x, c, U = _split_fuzz_args(rng)
        fn, args = [(decay, [x, c]), (decay_product, [x, U])][rng.integers(2)]
        for policy in FAST:
            if (fn, policy) not in compiled:
                compiled[fn, policy] = [_split(monkeypatch, fn, p, (0, 1), policy)[1]
                                        for p in (True, False)]
            results = []
            for forward, backward in compiled[fn, policy]:
                try:
                    value, residuals = forward(*[np.copy(a) if isinstance(a, np.ndarray) else a
                                                 for a in args])
                    results.append(backward(residuals, np.cos(value)))
                except Exception as error:  # noqa: BLE001 - compared, not handled
                    results.append(type(error))
            what = f"{fn.__name__}, {policy}, {[np.shape(a) for a in args]}"
            if isinstance(results[1], type):
                assert results[0] is results[1], what
            else:
                assert_bit_identical(results[0], results[1], what)
