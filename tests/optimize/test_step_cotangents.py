"""optimize/step_cotangents.py: a steady adjoint loop's per-step cotangent
``d_t5 = d_h * h_terms[t]`` written into the row of the terms array it reads
(``np.multiply(d_h, d_t5, d_t5)``), and the weights' products after the loop
given that array as the steps' matrix (``cotangents=h_terms``) instead of
joining the fifty cotangents.

The pass claims the gradient is bit for bit the one of the pipeline without
it: each step's product is the same ufunc on the same operands, and the
product after the loop reads the same matrix.  Every program below is held
to those bits under every policy, and to finite differences; the helper is
checked to take the written rows where promised, and to join the cotangents
where a step could not write its row (a cotangent of another dtype).
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, check_every_policy, \
    numeric_grad, pure
from recurrences import compiled_without, gru, rnn
from recurrences import gru_args as _gru_args, rnn_args as _rnn_args

from srcgrad.ir.emit import show_statements
from srcgrad.ir.naming import Namer
from srcgrad.optimize.step_cotangents import write_step_cotangents
from srcgrad.runtime import steps as runtime_steps

_GUARD = "if len(t1) and stackable_tape(h_tape, 1, h):\n"
_TERMS = "    h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2\n"
_PRODUCT = "d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=h_tape)"


def _run(body, inside=(_PRODUCT,), after=(), steady=("d_h", "U"), terms=_TERMS,
         deleted="h_terms"):
    sweep = gast.parse(_GUARD + terms + "    for t in reversed(t1):\n"
                       + "".join(f"        {line}\n" for line in body)
                       + (f"    del {deleted}\n" if deleted else "")
                       + "".join(f"    {line}\n" for line in inside) + "else:\n    pass\n"
                       + "".join(f"{line}\n" for line in after)).body
    sweep[0].steady_loop = True
    sweep[0].steady_entries = frozenset(steady)
    return show_statements(write_step_cotangents(sweep, Namer()))


_STEP = ["d_a = d_h * h_terms[t]", "h = h_tape[t]", "d_h = d_a @ U.T"]


# -- the pass, on loops written by hand ----------------------------------------------------

def test_the_cotangent_is_written_into_the_row_and_the_product_reads_the_terms():
    out = _run(_STEP + ["d_U_steps.append((d_a, t))"])
    assert "h_terms_fit = d_h.shape == h_terms.shape[1:]" in out
    assert "d_a = h_terms[t]" in out
    assert "h_terms_rows = True" in out.split("for t in")[0]
    assert "d_a = np.multiply(d_h, d_a, d_a) if h_terms_fit and d_h.dtype is d_a.dtype " \
           "else (h_terms_rows := False) or d_h * d_a" in out
    assert "rows=h_tape, cotangents=h_terms, written=h_terms_rows, order=t1)" in out
    assert out.index("del h_terms") > out.index("cotangents=h_terms")   # read by the product


def test_the_operands_keep_their_order():
    out = _run(["d_a = h_terms[t] * d_h"] + _STEP[1:] + ["d_U_steps.append((d_a, t))"])
    assert "np.multiply(d_a, d_h, d_a) if h_terms_fit and d_h.dtype is d_a.dtype " \
           "else (h_terms_rows := False) or d_a * d_h" in out


def test_a_copy_appended_and_products_after_the_pair_move_into_both_branches():
    out = _run(_STEP + ["d_b = d_a", "d_U_steps.append((d_b, t))", "d_W_steps.append((d_a, t))"],
               inside=(), after=(_PRODUCT,
                                 "d_W = matmul_grad_b_steps(d_W, d_W_steps, W, rows=xs)"))
    fast, slow = out.split("else:")
    assert "rows=h_tape, cotangents=h_terms, written=h_terms_rows, order=t1)" in fast
    assert "rows=xs, cotangents=h_terms, written=h_terms_rows, order=t1)" in fast
    assert fast.index("rows=h_tape") < fast.index("rows=xs")
    assert "cotangents" not in slow and slow.index("rows=h_tape)") < slow.index("rows=xs)")


@pytest.mark.parametrize("body, steady", [
    (_STEP + ["d_U_steps.append((d_a, t))"], ("U",)),                  # d_h not proved steady
    (["d_h = d_h * 2.0"] + _STEP + ["d_U_steps.append((d_a, t))"], ("d_h", "U")),  # assigned first
    (_STEP + ["d_U_steps.append((d_a, t))", "d_c = d_a * h_terms[t]"], ("d_h", "U")),  # read twice
    (_STEP + ["d_U_steps.append((d_a, t))", "d_U_steps.append((d_a, t))"], ("d_h", "U")),
    (_STEP + ["d_a = d_a * 2.0", "d_U_steps.append((d_a, t))"], ("d_h", "U")),  # not the row's
    (_STEP + ["d_X_steps.append((d_a, t))"], ("d_h", "U")),            # no product reads it
    (["d_a = d_h + h_terms[t]"] + _STEP[1:] + ["d_U_steps.append((d_a, t))"], ("d_h", "U")),
])
def test_what_is_left_alone(body, steady):
    out = _run(body, steady=steady)
    assert "np.multiply" not in out and "cotangents=" not in out


@pytest.mark.parametrize("body", [
    _STEP + ["d_U_steps.append((d_a, t))", "if d_h is None:", "    continue"],   # a step left early
    _STEP + ["d_U_steps.append((d_a, t))", "if d_h is None:", "    break"],
    _STEP + ["d_U_steps.append((d_a, t))", "t = t + 1"],        # the index assigned
    _STEP + ["d_U_steps.append((d_a, t - 1))"],                 # not the step's index
    _STEP + ["d_U_steps.append((d_a, t))", "if d_h is None:", "    d_U_steps.append((d_a, t))"],
])
def test_the_flag_is_given_only_where_each_step_appends_its_row_once(body):
    """The products read the flag (``written=``) only where, with the flag set,
    the list holds each step's row and index, once: else the helper walks the
    steps as before (the rows still written, ``cotangents=`` still given)."""
    out = _run(body)
    assert "cotangents=h_terms" in out and "written=" not in out and "order=" not in out


def test_the_flag_needs_a_loop_over_reversed_iterations():
    sweep = gast.parse(_GUARD + _TERMS + "    for t in t1:\n"
                       + "".join(f"        {line}\n" for line in
                                 _STEP + ["d_U_steps.append((d_a, t))"])
                       + "    del h_terms\n    " + _PRODUCT + "\nelse:\n    pass\n").body
    sweep[0].steady_loop = True
    sweep[0].steady_entries = frozenset(("d_h", "U"))
    out = show_statements(write_step_cotangents(sweep, Namer()))
    assert "cotangents=h_terms" in out and "written=" not in out


def test_a_term_deleted_elsewhere_is_no_term():
    out = _run(_STEP + ["d_U_steps.append((d_a, t))"], deleted=None)
    assert "np.multiply" not in out


# -- whole programs ------------------------------------------------------------------------

def rnn_weighted(W, U, xs, h0, c):   # d_h's dtype is c's: the steps cannot write their rows
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * c)


def rnn_elementwise(w, xs, h0):   # no product with a weight: the cotangent carried as it is
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h * w + xs[t])
    return np.sum(h)


def _programs():
    rng = np.random.default_rng(36)
    yield "steady", rnn, _rnn_args(rng), (0, 1), True
    yield "W only", rnn, _rnn_args(rng), (0,), True
    yield "h0 differentiated", rnn, _rnn_args(rng), (0, 1, 3), True
    yield "the benchmark's shapes", rnn, _rnn_args(rng, 50, 8, 16, 32), (0, 1), True
    yield "float32", rnn, _rnn_args(rng, dtype=np.float32), (0, 1), True
    yield "odd shapes", rnn, _rnn_args(rng, 7, 3, 5, 7), (0, 1), True
    yield "one step", rnn, _rnn_args(rng, steps=1), (0, 1), True
    yield "no step", rnn, _rnn_args(rng, steps=0), (0, 1), None
    yield "a batch of one", rnn, _rnn_args(rng, batch=1, hidden=1), (0, 1, 3), True
    w, u, xs, h0 = _rnn_args(rng, dtype=np.float32)
    yield "a float64 cotangent of float32 states", rnn_weighted, \
        [w, u, xs, h0, rng.normal(size=h0.shape)], (0, 1), False
    yield "a GRU-like cell", gru, _gru_args(rng), (0, 1, 2, 3, 5), None
    yield "no weight product", rnn_elementwise, [rng.normal(size=5) * 0.5,
                                                 rng.normal(size=(6, 3, 5)),
                                                 rng.normal(size=(3, 5))], (0, 2), None


PROGRAMS = list(_programs())

_written_rows = runtime_steps._written_rows
_rows_b = runtime_steps._rows_b


def _recorded(rows_b, taken):
    """``rows_b``, noting True in ``taken`` where it gives the product."""
    def recorded(*args):
        total = rows_b(*args)
        if total is not None:
            taken.append(True)
        return total
    return recorded


def _compiled(monkeypatch, fn, with_pass, **options):
    return compiled_without(monkeypatch, fn, None if with_pass else "write_step_cotangents",
                            **options)


@pytest.mark.parametrize("what, fn, args, wrt, fast", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_gradients_are_bit_identical_to_the_loop_without_the_pass(monkeypatch, what, fn, args,
                                                                  wrt, fast):
    grad = None
    for policy in POLICIES:
        options = dict(mode="value_and_grad", wrt=wrt, policy=policy)
        _, with_pass, source = _compiled(monkeypatch, fn, True, **options)
        _, without, plain = _compiled(monkeypatch, fn, False, **options)
        taken = []
        monkeypatch.setattr(runtime_steps, "_written_rows", lambda *a: taken.append(
            _written_rows(*a)) or taken[-1])
        # the rows read on the loop's own record (written=), without a walk: True
        monkeypatch.setattr(runtime_steps, "_rows_b", _recorded(_rows_b, taken))
        value, grad = with_pass(*[np.copy(a) for a in args])
        monkeypatch.undo()
        value0, grad0 = without(*[np.copy(a) for a in args])
        assert_bit_identical(value, pure(fn)(*args), f"{what}, {policy!r}")
        assert_bit_identical(value0, value, f"{what}, {policy!r}")
        assert_bit_identical(grad, grad0, f"{what}, {policy!r}")
        if fast is not None and policy == "save":
            assert "cotangents=h_terms" in source, (what, policy)
            assert "cotangents=" not in plain
            # True: the products read the rows the steps wrote; False: a step computed
            # the product as it was, and the products joined the cotangents
            assert taken and set(taken) == {fast}, (what, taken)
        if "cotangents=" not in source:
            assert source == plain, (what, policy)
    grads = grad if len(wrt) > 1 else (grad,)   # one argument: its gradient alone
    for k, position in enumerate(wrt):
        assert_close(grads[k], numeric_grad(pure(fn), list(args), position), rtol=1e-4,
                     atol=1e-5, what=f"{what}, argument {position}")


@pytest.mark.parametrize("fn, make, wrt", [(rnn, _rnn_args, 0), (rnn, _rnn_args, 1),
                                           (rnn, _rnn_args, 3), (gru, _gru_args, 1)])
def test_every_policy_and_jvp(fn, make, wrt):
    check_every_policy(fn, make(np.random.default_rng(9)), wrt)


def test_random_shapes_give_the_loops_own_bits(monkeypatch):
    rng = np.random.default_rng(14)
    _, with_pass, source = _compiled(monkeypatch, rnn, True, wrt=(0, 1, 3))
    _, without, _ = _compiled(monkeypatch, rnn, False, wrt=(0, 1, 3))
    assert "cotangents=h_terms" in source
    for _ in range(25):
        steps, batch, width, hidden = (int(n) for n in rng.integers(1, 12, size=4))
        dtype = (np.float32, np.float64)[int(rng.integers(2))]
        args = _rnn_args(rng, steps, batch, width, hidden, dtype)
        assert_bit_identical(with_pass(*args), without(*args), (steps, batch, width, hidden))


def test_the_helper_joins_cotangents_that_are_not_the_rows():
    rng = np.random.default_rng(3)
    terms = rng.normal(size=(4, 2, 3))
    xs, b = rng.normal(size=(4, 2, 5)), rng.normal(size=(5, 3))
    written = [(terms[t], t) for t in reversed(range(4))]
    apart = [(terms[t].copy(), t) for t in reversed(range(4))]
    shifted = [(terms[t], t) for t in reversed(range(4))][:3]   # a step short
    expected = runtime_steps.matmul_grad_b_steps(0.0, apart, b, rows=xs)
    for steps in (written, apart):
        assert_bit_identical(runtime_steps.matmul_grad_b_steps(0.0, steps, b, rows=xs,
                                                               cotangents=terms), expected)
    assert not runtime_steps._written_rows([g for g, _ in shifted][::-1], terms)
    assert not runtime_steps._written_rows([g for g, _ in written][::-1], terms[1:])


def test_the_loops_record_spares_the_walk_and_is_checked_where_it_can_be():
    """``written=True, order=t1``: the product of the rows, the very bits of
    the walk's; where the list or the iterations are not what the loop's
    record speaks of (an entry left from before the loop, iterations that
    are not ``range(n)``), the helper walks the steps as before."""
    rng = np.random.default_rng(5)
    terms = rng.normal(size=(4, 2, 3))
    xs, b = rng.normal(size=(4, 2, 5)), rng.normal(size=(5, 3))
    written = [(terms[t], t) for t in reversed(range(4))]
    walked = runtime_steps.matmul_grad_b_steps(0.0, written, b, rows=xs, cotangents=terms)
    assert_bit_identical(runtime_steps.matmul_grad_b_steps(
        0.0, written, b, rows=xs, cotangents=terms, written=True, order=range(4)), walked)
    assert runtime_steps._rows_b(written, b, xs, None, terms, range(4)) is not None
    for steps, order in ((written, range(1, 5)), (written, list(range(4))),
                         ([(terms[0], 0)] + written, range(5)), (written[1:], range(3))):
        assert runtime_steps._rows_b(steps, b, xs, None, terms, order) is None
