"""optimize/loop_products.py, optimize/hoist_products.py and runtime/steps.py:
a loop-invariant weight's cotangent formed after the adjoint loop with one
product of the stacked steps, and a forward loop's products of argument rows
and a loop-invariant matrix made before the loop, as one product.

The stacked product reassociates the sum over the steps (BLAS's order, not
the loop's), so its gradients are compared with the unoptimised code's
within a tight tolerance: a few ``n * eps`` of the sum of the terms'
magnitudes where the test can form it (the helper tests), ``rtol=1e-12`` of
the largest element in float64 programs (measured: about ``5e-16``) and
``1e-4`` in float32.  Where the helper falls back (shapes or dtypes that
change between steps, anything but NumPy arrays) the sum is the loop's own,
bit for bit.  Every program is also checked against finite differences, and
its value, from value_and_grad, bit for bit against the function's own.

The hoisted forward products are held to the bits: the stacked product is
compared with each step's own product bit for bit, and the gradients of the
pipeline without loop_products with optimize=False's, under every policy.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, numeric_grad, pure

import srcgrad
from srcgrad import pipeline
from srcgrad.ir.emit import show_statements
from srcgrad.ir.naming import Namer
from srcgrad.optimize.loop_products import products_after_loops
from srcgrad.options import Options
from srcgrad.runtime import (
    ProductsByStep,
    StepTerms,
    matmul_grad_a,
    matmul_grad_a_steps,
    matmul_grad_b,
    matmul_grad_b_steps,
    products_by_step,
)

EPS64 = np.finfo(np.float64).eps


def _run(source: str, rows=("xs",), bound=("W", "U", "V")) -> str:
    return show_statements(products_after_loops(gast.parse(source).body, set(rows), Namer(),
                                                {*rows, *bound}))


# -- the pass, on sweeps written by hand ------------------------------------------------------

LOOP = ("d_W = 0.0\nfor t in reversed(t1):\n    d_t5 = d_h * (1 - h ** 2)\n"
        "    h = h_tape.pop()\n    d_h = matmul_grad_a(d_t5, h, W)\n"
        "    d_W = d_W + matmul_grad_b(d_t5, h, W)\n")


def test_a_weight_sum_is_formed_after_the_loop():
    out = _run(LOOP)
    assert "d_W_steps.append((d_t5, h))" in out
    assert out.endswith("d_W = matmul_grad_b_steps(d_W, d_W_steps, W)  "
                        "# one product of the stacked steps")


def test_a_row_of_an_argument_is_collected_by_index():
    out = _run("d_W = 0.0\nfor t in reversed(t1):\n    t2 = xs[t]\n"
               "    d_W = d_W + matmul_grad_b(g, t2, W)\n")
    assert "d_W_steps.append((g, t))" in out and "rows=xs" in out


def test_a_row_of_a_value_that_is_not_an_argument_is_collected_as_is():
    out = _run("d_W = 0.0\nfor t in reversed(t1):\n    t2 = ys[t]\n"
               "    d_W = d_W + matmul_grad_b(g, t2, W)\n")
    assert "d_W_steps.append((g, t2))" in out and "rows=" not in out


def test_an_index_changed_after_the_row_is_read_collects_the_row():
    out = _run("d_W = 0.0\nfor k in reversed(t1):\n    t2 = xs[t]\n    t = t_tape.pop()\n"
               "    d_W = d_W + matmul_grad_b(g, t2, W)\n")
    assert "d_W_steps.append((g, t2))" in out


def test_a_sum_read_in_the_loop_is_left_alone():
    assert "steps" not in _run(LOOP + "    d_x = d_W * 2.0\n")


def test_a_sum_reset_in_the_loop_is_left_alone():
    assert "steps" not in _run(LOOP + "    d_W = 0.0\n")


def test_a_weight_restored_in_the_loop_is_left_alone():
    assert "steps" not in _run(LOOP + "    W = W_tape.pop()\n")


def test_an_update_in_place_in_the_loop_is_left_alone():
    assert "steps" not in _run(LOOP + "    h[0] = 1.0\n")
    assert "steps" not in _run(LOOP + "    d_h = into_first(np.add, d_h, d_t5)\n")
    assert "steps" not in _run(LOOP + "    record(h)\n")


def test_a_sum_not_bound_before_the_loop_is_left_alone():
    assert "steps" not in _run(LOOP.replace("d_W = 0.0\n", ""))


def test_a_sum_bound_only_on_some_paths_is_left_alone():
    # a loop that runs no step would leave it unbound: the sum after it must not read it
    assert "steps" not in _run(LOOP.replace("d_W = 0.0\n", "if c:\n    d_W = 0.0\n"))


def test_a_weight_not_bound_on_every_path_is_left_alone():
    assert "steps" not in _run(LOOP, bound=())
    assert "steps" in _run("W = w_tape.pop()\n" + LOOP, bound=())


def test_two_weights_in_one_sum_are_left_alone():
    assert "steps" not in _run(LOOP + "    d_W = d_W + matmul_grad_b(d_t5, h, V)\n")


def test_two_sites_share_one_list_in_loop_order():
    out = _run(LOOP + "    d_W = d_W + matmul_grad_b(d_t4, x, W)\n")
    assert out.count("d_W_steps.append") == 2 and out.count("d_W_steps = []") == 1
    assert out.index("(d_t5, h)") < out.index("(d_t4, x)")


def test_a_left_weight_uses_the_left_helper():
    out = _run("d_W = 0.0\nfor t in reversed(t1):\n    d_W = d_W + matmul_grad_a(g, W, h)\n")
    assert "d_W_steps.append((g, h))" in out
    assert "d_W = matmul_grad_a_steps(d_W, d_W_steps, W)" in out


def test_a_nested_loop_whose_weight_changes_outside_is_rewritten_inside():
    out = _run("d_W = 0.0\nfor k in r:\n    W = W_tape.pop()\n    d_W = 0.0\n"
               "    for t in reversed(t1):\n        d_W = d_W + matmul_grad_b(g, h, W)\n"
               "    d_V = d_W\n")
    assert "    d_W_steps = []" in out and "    d_W = matmul_grad_b_steps(" in out


# -- the helpers -----------------------------------------------------------------------------


def _terms_bound(gs, operands, side="b"):
    """A few n * eps times the sum of the terms' magnitudes, element by element."""
    if side == "b":
        mags = sum(np.abs(np.atleast_2d(a).reshape(-1, np.shape(a)[-1])).T
                   @ np.abs(np.atleast_2d(g).reshape(-1, np.shape(g)[-1]))
                   for g, a in zip(gs, operands))
    else:
        mags = sum(np.abs(g.reshape(g.shape[0], -1)) @ np.abs(b.reshape(b.shape[0], -1)).T
                   for g, b in zip(gs, operands))
    n = len(gs) * max(np.size(gs[0]), 1)
    return 4 * n * EPS64 * mags


def _plain_b(start, gs, operands, w):
    for g, a in zip(gs, operands):
        start = start + matmul_grad_b(g, a, w)
    return start


@pytest.mark.parametrize("shape", [(8, 16), (16,), (1, 16)])
def test_the_stacked_sum_is_the_step_sum_within_rounding(shape):
    rng = np.random.default_rng(1)
    w = rng.normal(size=(16, 5))
    xs = rng.normal(size=(12, *shape))
    gs = [rng.normal(size=(*shape[:-1], 5)) for _ in range(12)]
    for start in (0.0, rng.normal(size=(16, 5))):
        plain = _plain_b(start, gs, list(xs), w)
        by_value = matmul_grad_b_steps(start, list(zip(gs, xs)), w)
        backwards = [(gs[t], t) for t in reversed(range(12))]
        by_row = matmul_grad_b_steps(start, backwards, w, rows=xs)
        shuffled = [(gs[t], t) for t in (3, 0, 7, 1, 2, 11, 4, 5, 6, 8, 10, 9)]
        by_any_row = matmul_grad_b_steps(start, shuffled, w, rows=xs)
        bound = _terms_bound(gs, list(xs)) + 4 * EPS64 * np.abs(start)
        for got in (by_value, by_row, by_any_row):
            assert got.shape == plain.shape and got.dtype == plain.dtype
            assert np.all(np.abs(got - plain) <= bound)
        assert not np.array_equal(by_value, plain) or shape == (16,)  # it did stack


def test_the_left_operand_sum_is_the_step_sum_within_rounding():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(6, 4))
    for shape in ((4, 3), (4,)):
        bs = rng.normal(size=(9, *shape))
        gs = [rng.normal(size=(6, *shape[1:])) for _ in range(9)]
        plain = 0.0
        for g, b in zip(gs, bs):
            plain = plain + matmul_grad_a(g, a, b)
        got = matmul_grad_a_steps(0.0, list(zip(gs, bs)), a)
        by_row = matmul_grad_a_steps(0.0, [(gs[t], t) for t in reversed(range(9))], a, rows=bs)
        g2 = [g.reshape(6, -1) for g in gs]
        b2 = [b.reshape(4, -1) for b in bs]
        bound = _terms_bound(g2, b2, side="a")
        for value in (got, by_row):
            assert value.shape == plain.shape and np.all(np.abs(value - plain) <= bound)


def _fallback_cases(rng):
    w = rng.normal(size=(3, 2))
    g, a = rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    yield "shapes change", [(g, a), (g[:2], a[:2])], w
    yield "dtypes change", [(g, a), (g.astype(np.float32), a.astype(np.float32))], w
    yield "a Python float cotangent", [(g, a), (0.0, a)], w
    yield "lists", [(g.tolist(), a.tolist()), (g.tolist(), a.tolist())], w
    yield "integers", [(g.astype(int), a.astype(int))] * 2, w.astype(int)
    yield "a stacked step", [(rng.normal(size=(2, 4, 2)), rng.normal(size=(2, 4, 3)))] * 2, w
    yield "a 1-D weight", [(rng.normal(size=4), a)] * 2, rng.normal(size=3)


def test_the_fallback_is_the_loop_sum_bit_for_bit():
    for what, steps, w in _fallback_cases(np.random.default_rng(3)):
        plain = 0.0
        for g, a in steps:
            plain = plain + matmul_grad_b(g, a, w)
        assert_bit_identical(matmul_grad_b_steps(0.0, steps, w), plain, what)


def test_no_steps_leave_the_start():
    start = np.ones((3, 2))
    assert matmul_grad_b_steps(start, [], np.ones((3, 2))) is start


# -- whole programs --------------------------------------------------------------------------


def rnn(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def rnn_vectors(W, U, xs, h0):  # 1-D steps: xs[t] and h are vectors
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def rnn_columns(W, U, xs, h0):  # W @ x: the weight on the left
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ xs[t] + U @ h)
    return np.sum(h * h)


def lstm(Wx, Wh, xs, h0, c0):
    h, c = h0, c0
    n = h0.shape[1]
    for t in range(xs.shape[0]):
        z = xs[t] @ Wx + h @ Wh
        i = 1.0 / (1.0 + np.exp(-z[:, :n]))
        f = 1.0 / (1.0 + np.exp(-z[:, n:2 * n]))
        o = 1.0 / (1.0 + np.exp(-z[:, 2 * n:3 * n]))
        g = np.tanh(z[:, 3 * n:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return np.sum(h * h) + np.sum(c)


def rnn_break(W, U, xs, h0, limit):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
        if t >= limit:
            break
    return np.sum(h * h)


def rnn_continue(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        if t % 3 == 1:
            continue
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def rnn_branch(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        if np.sum(xs[t]) > 0.0:
            h = np.tanh(xs[t] @ W + h @ U)
        else:
            h = np.tanh(h @ U) * 0.5
    return np.sum(h * h)


def rnn_while(W, U, xs, h0):
    h = h0
    t = 0
    while t < xs.shape[0]:
        h = np.tanh(xs[t] @ W + h @ U)
        t += 1
    return np.sum(h * h)


def rnn_shared(W, U, xs, x0):  # the weights also used outside the loop
    h = np.tanh(x0 @ W)
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h @ U) + np.sum(W * W)


def rnn_in_place(W, U, xs, h0):  # an update in place in the loop: left alone
    h = h0.copy()
    for t in range(xs.shape[0]):
        h[0] = h[0] * 0.5
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def rnn_tied(W, U, xs, h0):  # one weight twice a step: two sites, one list
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ W)
    return np.sum(h * h) + np.sum(U)


def rnn_epochs(W, U, xs, h0):  # the recurrent loop inside another loop
    h = h0
    for _ in range(2):
        for t in range(xs.shape[0]):
            h = np.tanh(xs[t] @ W + h @ U)
        h = h * 0.5
    return np.sum(h * h)


def cell(W, U, x, h):
    return np.tanh(x @ W + h @ U)


def rnn_cell(W, U, xs, h0):  # the step in a function of its own
    h = h0
    for t in range(xs.shape[0]):
        h = cell(W, U, xs[t], h)
    return np.sum(h * h)


def _rnn_args(rng, dtype=np.float64, steps=7, batch=3, width=4, hidden=5):
    xs = rng.normal(size=(steps, batch, width) if batch else (steps, width))
    h0 = rng.normal(size=(batch, hidden) if batch else (hidden,)) * 0.5
    return [rng.normal(size=(width, hidden)).astype(dtype) * 0.5,
            rng.normal(size=(hidden, hidden)).astype(dtype) * 0.5,
            xs.astype(dtype), h0.astype(dtype)]


def _programs():
    rng = np.random.default_rng(7)
    yield rnn, _rnn_args(rng), (0, 1)
    yield rnn_vectors, _rnn_args(rng, batch=0), (0, 1)
    w, u, xs, h0 = _rnn_args(rng, batch=0)
    yield rnn_columns, [w.T.copy(), u, xs, h0], (0, 1)
    w, u, xs, h0 = _rnn_args(rng)
    yield rnn_columns, [w.T.copy(), u, np.ascontiguousarray(xs.transpose(0, 2, 1)),
                        h0.T.copy()], (0, 1)
    yield lstm, [rng.normal(size=(4, 20)) * 0.5, rng.normal(size=(5, 20)) * 0.5,
                 rng.normal(size=(6, 3, 4)), rng.normal(size=(3, 5)) * 0.5,
                 rng.normal(size=(3, 5)) * 0.5], (0, 1)
    yield rnn_break, [*_rnn_args(rng), 3], (0, 1)
    yield rnn_continue, _rnn_args(rng), (0, 1)
    yield rnn_branch, _rnn_args(rng), (0, 1)
    yield rnn_while, _rnn_args(rng), (0, 1)
    w, u, xs, h0 = _rnn_args(rng)
    yield rnn_shared, [w, u, xs, rng.normal(size=(3, 4))], (0, 1)
    yield rnn_in_place, _rnn_args(rng), (0, 1)
    yield rnn_tied, _rnn_args(rng, width=5), (0, 1)
    yield rnn_epochs, _rnn_args(rng), (0, 1)
    yield rnn_cell, _rnn_args(rng), (0, 1)


PROGRAMS = list(_programs())
APPLIES = {"rnn", "rnn_vectors", "rnn_columns", "lstm", "rnn_break", "rnn_continue",
           "rnn_branch", "rnn_while", "rnn_shared", "rnn_tied", "rnn_epochs"}


def _close(fast, plain, rtol, what):
    for f, p in zip(fast, plain):
        scale = float(np.max(np.abs(p)))
        np.testing.assert_allclose(f, p, rtol=rtol, atol=rtol * scale, err_msg=what)
        assert f.dtype == p.dtype and f.shape == p.shape


@pytest.mark.parametrize("fn, args, wrt", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_programs_keep_their_gradients(fn, args, wrt):
    source = srcgrad.grad(fn, wrt=wrt).source
    assert ("_steps(" in source) == (fn.__name__ in APPLIES), source
    plain = srcgrad.grad(fn, wrt=wrt, optimize=False)(*args)
    for policy in POLICIES:
        value, fast = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy)(*args)
        assert_bit_identical(value, fn(*[a.copy() if isinstance(a, np.ndarray) else a
                                         for a in args]), f"{fn.__name__}, {policy}")
        _close(fast, plain, 1e-12, f"{fn.__name__}, policy {policy!r}")
    for k, position in enumerate(wrt):
        assert_close(plain[k], numeric_grad(pure(fn), list(args), position), rtol=1e-5,
                     atol=1e-6, what=f"{fn.__name__}, argument {position}")


def test_checkpointing_policies_keep_the_loop_sums():
    for policy in ("sqrt", ("revolve", 2)):
        assert "_steps(" not in srcgrad.grad(rnn, wrt=(0, 1), policy=policy).source


def test_float32_within_float32_rounding():
    args = _rnn_args(np.random.default_rng(11), dtype=np.float32, steps=20, batch=8)
    value, fast = srcgrad.value_and_grad(rnn, wrt=(0, 1))(*args)
    plain = srcgrad.grad(rnn, wrt=(0, 1), optimize=False)(*args)
    assert_bit_identical(value, rnn(*args), "float32 rnn")
    _close(fast, plain, 1e-4, "float32 rnn")
    for g, a in zip(fast, args[:2]):
        assert g.dtype == np.float32


def test_the_benchmark_rnn_within_reassociation():
    rng = np.random.default_rng(0)
    args = [rng.normal(size=(16, 32)) * 0.3, rng.normal(size=(32, 32)) * 0.3,
            rng.normal(size=(50, 8, 16)), np.zeros((8, 32))]
    fast = srcgrad.grad(rnn, wrt=(0, 1))(*args)
    plain = srcgrad.grad(rnn, wrt=(0, 1), optimize=False)(*args)
    _close(fast, plain, 1e-12, "benchmark rnn")


# -- optimize/hoist_products.py: the forward loop's input products made before it ------------

HOISTED = {"rnn", "rnn_vectors", "rnn_columns", "lstm", "rnn_shared", "rnn_tied"}


def _without_loop_products(monkeypatch, fn, **options):
    """``fn``'s gradient compiled with every optimisation but loop_products (whose
    reassociated sums are checked above), so that the rest can be held to the bits."""
    monkeypatch.setattr(pipeline, "products_after_loops", lambda stmts, *args: stmts)
    made = pipeline.generate(fn, Options(**options))
    assert "_steps(" not in made.source
    namespace = dict(made.bindings)
    exec(compile(made.source, "<hoisted>", "exec"), namespace)  # noqa: S102 - compiler output
    return namespace[made.entries[0]], made.source


@pytest.mark.parametrize("fn, args, wrt", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_hoisted_products_keep_the_gradient_bit_for_bit(monkeypatch, fn, args, wrt):
    for policy in POLICIES:
        grad, source = _without_loop_products(monkeypatch, fn, wrt=wrt, policy=policy)
        hoisted = "products_by_step(" in source
        assert hoisted == (fn.__name__ in HOISTED and policy not in ("sqrt", ("revolve", 2)))
        plain = srcgrad.grad(fn, wrt=wrt, policy=policy, optimize=False)(*args)
        assert_bit_identical(grad(*args), plain, f"{fn.__name__}, policy {policy!r}")


def _products_cases(rng):
    w = rng.normal(size=(4, 5))
    yield "stack", rng.normal(size=(6, 3, 4)), w, 0
    yield "one row per step", rng.normal(size=(6, 1, 4)), w, 0
    yield "one column", rng.normal(size=(6, 3, 4)), rng.normal(size=(4, 1)), 0
    yield "one inner", rng.normal(size=(6, 3, 1)), rng.normal(size=(1, 5)), 0
    yield "a transposed stack", rng.normal(size=(6, 4, 3)).transpose(0, 2, 1), w, 0
    yield "a Fortran matrix", rng.normal(size=(6, 3, 4)), np.asfortranarray(w), 0
    yield "strided steps", rng.normal(size=(12, 3, 8))[::2, :, ::2], w, 0
    yield "four axes", rng.normal(size=(6, 2, 3, 4)), w, 0
    yield "float32", rng.normal(size=(6, 3, 4)).astype(np.float32), w.astype(np.float32), 0
    yield "complex", rng.normal(size=(6, 3, 4)) + 1j * rng.normal(size=(6, 3, 4)), \
        w + 0.5j, 0
    yield "on the right", rng.normal(size=(6, 4, 3)), rng.normal(size=(5, 4)), 1
    yield "large", rng.normal(size=(4, 200, 64)), rng.normal(size=(64, 96)), 0
    # vector steps: one gemv a step, stacked as (1, n) matrices (never one gemm)
    yield "vectors", rng.normal(size=(6, 4)), w, 0
    yield "vectors on the right", rng.normal(size=(6, 4)), rng.normal(size=(5, 4)), 1
    yield "strided vectors", rng.normal(size=(6, 8))[:, ::2], np.asfortranarray(w), 0
    yield "float32 vectors", rng.normal(size=(6, 4)).astype(np.float32), \
        w.astype(np.float32), 0
    yield "complex vectors", rng.normal(size=(6, 4)) + 0.5j, w - 0.25j, 0
    yield "one output", rng.normal(size=(6, 4)), rng.normal(size=(4, 1)), 0
    yield "one input", rng.normal(size=(6, 1)), rng.normal(size=(1, 5)), 0
    yield "long vectors", rng.normal(size=(30, 300)), rng.normal(size=(300, 70)), 0


def test_the_stacked_product_is_each_steps_product_bit_for_bit():
    for what, xs, w, stepped in _products_cases(np.random.default_rng(5)):
        for iterations in (range(len(xs)), range(len(xs) - 1, -1, -1), range(1, len(xs))):
            ys = products_by_step(xs, w, iterations, stepped=stepped)
            assert type(ys) is np.ndarray, what  # the stacked product
            for t in iterations:
                own = xs[t] @ w if stepped == 0 else w @ xs[t]
                assert_bit_identical(ys[t], own, f"{what}, step {t}")


def test_where_stacking_may_round_differently_each_step_is_its_own_product():
    rng = np.random.default_rng(6)
    w = rng.normal(size=(4, 5))
    cases = [
        ("mixed dtypes", rng.normal(size=(6, 3, 4)).astype(np.float32), w, range(6)),
        ("a list of rows", list(rng.normal(size=(6, 3, 4))), w, range(6)),
        ("integers", np.arange(72).reshape(6, 3, 4), np.arange(20).reshape(4, 5), range(6)),
        ("not a range", rng.normal(size=(6, 3, 4)), w, [0, 2, 4]),
        ("a range of a few steps far apart", rng.normal(size=(6, 3, 4)), w, range(5, 6)),
        ("negative steps", rng.normal(size=(6, 3, 4)), w, range(-3, 0)),
        ("no steps", rng.normal(size=(6, 3, 4)), w, range(0)),
    ]
    for what, xs, matrix, iterations in cases:
        ys = products_by_step(xs, matrix, iterations)
        assert isinstance(ys, ProductsByStep), what
        for t in iterations:
            assert_bit_identical(ys[t], xs[t] @ matrix, f"{what}, step {t}")


def test_the_weights_of_one_loop_share_the_stacked_cotangents():
    out = _run("d_V = 0.0\n" + LOOP + "    t2 = xs[t]\n    d_V = d_V + matmul_grad_b(d_t5, t2, V)\n")
    assert "d_V_steps = StepTerms()" in out and "d_W_steps = []" in out
    assert "d_W = matmul_grad_b_steps(d_W, d_W_steps, W, shares=d_V_steps)" in out


def test_shared_cotangents_are_used_only_where_they_are_the_same_arrays():
    rng = np.random.default_rng(4)
    xs, hs = rng.normal(size=(5, 3, 4)), rng.normal(size=(5, 3, 6))
    w, u = rng.normal(size=(4, 6)), rng.normal(size=(6, 6))
    gs = [rng.normal(size=(3, 6)) for _ in range(5)]
    first = StepTerms((g, h) for g, h in zip(gs, hs))
    d_u = matmul_grad_b_steps(0.0, first, u)
    assert first.joined[0] == tuple(gs[::-1])
    alone = matmul_grad_b_steps(0.0, [(g, t) for t, g in enumerate(gs)], w, rows=xs)
    shared = matmul_grad_b_steps(0.0, [(g, t) for t, g in enumerate(gs)], w, rows=xs,
                                 shares=first)
    assert_bit_identical(shared, alone, "the same cotangents")
    copies = [(g.copy() * 2, t) for t, g in enumerate(gs)]  # other arrays: not shared
    assert_bit_identical(matmul_grad_b_steps(0.0, copies, w, rows=xs, shares=first),
                         matmul_grad_b_steps(0.0, copies, w, rows=xs), "other arrays")
    fewer = [(g, t) for t, g in enumerate(gs[:4])]
    assert_bit_identical(matmul_grad_b_steps(0.0, fewer, w, rows=xs, shares=first),
                         matmul_grad_b_steps(0.0, fewer, w, rows=xs), "fewer steps")
    assert d_u.shape == (6, 6)


def test_steps_of_any_memory_order_are_joined_as_their_rows():
    rng = np.random.default_rng(8)
    w = rng.normal(size=(4, 5))
    gs = [np.asfortranarray(rng.normal(size=(3, 5))) for _ in range(6)]  # not C-contiguous
    xs = [rng.normal(size=(3, 8))[:, ::2] for _ in range(6)]  # strided views
    mixed = [rng.normal(size=(3, 5)) if t % 2 else np.asfortranarray(rng.normal(size=(3, 5)))
             for t in range(6)]
    for cotangents in (gs, mixed):
        plain = _plain_b(0.0, cotangents, xs, w)
        got = matmul_grad_b_steps(0.0, list(zip(cotangents, xs)), w)
        assert np.all(np.abs(got - plain) <= _terms_bound(cotangents, xs))


def test_vector_steps_are_not_one_gemm():
    # xs @ W would be one gemm, whose rows may round differently from each step's
    # gemv: the stacked vectors must give each step's own numbers
    rng = np.random.default_rng(9)
    for _ in range(50):
        steps, n, m = rng.integers(1, 12), rng.integers(1, 90), rng.integers(1, 90)
        xs, w = rng.normal(size=(steps, n)), rng.normal(size=(n, m))
        ys = products_by_step(xs, w, range(steps))
        zs = products_by_step(xs, w.T.copy(), range(steps), stepped=1)
        for t in range(steps):
            assert_bit_identical(ys[t], xs[t] @ w, f"{n}x{m}, step {t}")
            assert_bit_identical(zs[t], w.T.copy() @ xs[t], f"{m}x{n} on the right, step {t}")


def test_an_array_bound_only_on_some_paths_is_not_hoisted():
    from srcgrad.optimize.hoist_products import hoist_step_products
    loop = "for t in t1:\n    t2 = xs[t]\n    t3 = t2 @ W\n"
    hoisted = show_statements(hoist_step_products(gast.parse(loop).body, {"xs", "W"}, Namer()))
    assert "products_by_step(xs, W, t1)" in hoisted
    for before in ("if c:\n    W = V * 2.0\n", "if c:\n    xs = ys * 2.0\n"):
        source = before + loop
        out = show_statements(hoist_step_products(gast.parse(source).body, {"ys", "V"}, Namer()))
        assert "products_by_step" not in out
    out = show_statements(hoist_step_products(gast.parse("W = V * 2.0\n" + loop).body,
                                              {"xs", "V"}, Namer()))
    assert "products_by_step(xs, W, t1)" in out
