"""optimize/steady_products.py and runtime/steps.py's dot_dtype: a steady
adjoint loop's ``g @ U.T`` written as ``np.dot(g, U_T)`` (``U_T = U.T`` made
once) where that is the same product bit for bit.

Why it may: for 2-D float32 / float64 operands of one dtype, aligned, each C-
or F-contiguous, no axis below 2, ``np.dot`` (cblas_matrixproduct) and ``@``
(the matmul ufunc's loop) call the same BLAS routine with the same arguments
-- read side by side in dot_dtype's docstring, and checked here on many
shapes, both layouts of each operand, both dtypes, and a matrix times its own
transpose (the syrk branch).  Where an axis is 1 the two take different BLAS
calls (gemv, or a dot), and on a strided operand they copy differently: those
are refused, and the step takes ``@``.  ``g`` must be an array the step made
(fresh: aligned, contiguous); a value carried from the step before is left
alone.  Whole programs are held to the bits of the pipeline without the pass
under every policy, and the dot path is checked to be taken where promised.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, check_every_policy, \
    numeric_grad, pure
from recurrences import compiled_without, gru, rnn
from recurrences import gru_args as _gru_args, rnn_args as _rnn_args

import srcgrad
from srcgrad.ir.emit import show_statements
from srcgrad.ir.naming import Namer
from srcgrad.optimize.steady_products import dot_products
from srcgrad.runtime import dot_dtype

# -- the runtime ---------------------------------------------------------------------------


def test_dot_dtype_admits_contiguous_float_matrices_of_two_or_more_rows_and_columns():
    U = np.ones((4, 3))
    assert dot_dtype(U, 2) == np.float64 and dot_dtype(U.T, 5) == np.float64
    assert dot_dtype(U.astype(np.float32), 2) == np.float32
    assert dot_dtype(np.asfortranarray(U), 2) == np.float64
    assert dot_dtype(U, 1) is None                       # g of one row: gemv in both, differently
    assert dot_dtype(np.ones((1, 3)), 4) is None and dot_dtype(np.ones((3, 1)), 4) is None
    assert dot_dtype(np.ones((8, 6))[::2, ::2], 4) is None   # strided: copied differently
    assert dot_dtype(U.astype(np.complex128), 4) is None
    assert dot_dtype(U.astype(np.int64), 4) is None and dot_dtype(U.astype(np.float16), 4) is None
    assert dot_dtype(np.ones(3), 4) is None and dot_dtype(np.ones((2, 2, 2)), 4) is None
    assert dot_dtype(U.view(np.matrix), 4) is None and dot_dtype(3.0, 4) is None
    assert dot_dtype(np.zeros((0, 3)), 4) is None
    unaligned = np.frombuffer(b"\0" * (8 * 12 + 1), dtype=np.uint8)[1:].view(np.float64)
    assert dot_dtype(unaligned.reshape(3, 4), 4) is None


def _layouts(a):
    return (a, np.asfortranarray(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_np_dot_is_matmul_where_dot_dtype_says_so(dtype):
    """The claim the pass rests on, on both layouts of each operand, many shapes
    (the BLAS kernels' block edges among them) and a matrix times its transpose."""
    rng = np.random.default_rng(2)
    sizes = (2, 3, 5, 8, 13, 32, 33, 64, 67)
    for m in sizes:
        for n in sizes[::2]:
            for p in sizes[1::2]:
                g = rng.normal(size=(m, n)).astype(dtype)
                b = rng.normal(size=(n, p)).astype(dtype)
                for g1 in _layouts(g):
                    for b1 in _layouts(b):
                        assert dot_dtype(b1, m) == dtype
                        assert_bit_identical(np.dot(g1, b1), g1 @ b1, (m, n, p))
    for m in sizes:   # one buffer seen as a matrix and its transpose: syrk in both
        a = rng.normal(size=(m, 7)).astype(dtype)
        for a1 in _layouts(a):
            assert dot_dtype(a1.T, m) == dtype
            assert_bit_identical(np.dot(a1, a1.T), a1 @ a1.T, m)


# -- the pass, on loops written by hand ----------------------------------------------------

def _run(body, rows="d_h.shape[0]", guard="len(t1) and d_h.ndim == 2"):
    sweep = gast.parse(f"if {guard}:\n    for t in reversed(t1):\n"
                       + "".join(f"        {line}\n" for line in body) + "else:\n    pass\n").body
    sweep[0].steady_loop = True
    for stmt in sweep[0].body[0].body:
        if isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.MatMult):
            stmt.value.rows = rows
    return show_statements(dot_products(sweep, Namer()))


def test_a_product_of_a_new_array_through_copies_is_a_dot():
    out = _run(["d_a = d_h * (1 - h ** 2)", "d_b = d_a", "h = h_tape[t]", "d_h = d_b @ U.T"])
    assert "U_T = U.T" in out and "U_T_dtype = dot_dtype(U_T, d_h.shape[0])" in out
    assert "d_h = np.dot(d_b, U_T) if d_b.dtype is U_T_dtype else d_b @ U_T" in out


def test_two_products_with_one_matrix_share_its_transpose():
    out = _run(["d_a = -d_h", "d_b = np.tanh(d_h)", "d_h = d_a @ U.T", "d_g = d_b @ U.T"])
    assert out.count("U_T = U.T") == 1 and out.count("np.dot(d_") == 2


@pytest.mark.parametrize("body", [
    ["d_a = d_h", "d_h = d_a @ U.T"],                    # a value the step before made
    ["d_h = d_h @ U.T"],                                 # the carried value itself
    ["d_a = xs[t]", "d_h = d_a @ U.T"],                  # a row: a view
    ["d_a = d_h * 2.0", "U = U_tape[t]", "d_h = d_a @ U.T"],   # a matrix the loop assigns
    ["d_a = f(d_h)", "d_h = d_a @ U.T"],                 # a call the pass does not know
    ["d_a = np.dot(d_h, W)", "d_h = d_a @ U.T"],         # (nor np.dot's result)
    ["d_h = d_a @ U.T", "d_a = d_h * 2.0"],              # made after the product: step before
])
def test_what_stays_a_product(body):
    out = _run(body)
    assert "U_T" not in out and "dot_dtype" not in out


def test_rows_the_guard_does_not_read_leave_the_product():
    out = _run(["d_a = d_h * 2.0", "d_h = d_a @ U.T"], rows="h_tape[0].shape[0]")
    assert "np.dot" not in out


def test_a_product_steady_loops_did_not_mark_stays():
    sweep = gast.parse("if len(t1) and d_h.ndim == 2:\n    for t in reversed(t1):\n"
                       "        d_a = d_h * 2.0\n        d_h = d_a @ U.T\nelse:\n    pass\n").body
    sweep[0].steady_loop = True
    assert "np.dot" not in show_statements(dot_products(sweep, Namer()))


# -- whole programs ------------------------------------------------------------------------

def linear_rnn(W, U, xs, h0):   # no tanh: the carried cotangent itself times U.T
    h = h0
    for t in range(xs.shape[0]):
        h = xs[t] @ W + h @ U
    return np.sum(h * h)


def _programs():
    rng = np.random.default_rng(44)
    yield "steady", rnn, _rnn_args(rng), (0, 1), True
    yield "h0 differentiated", rnn, _rnn_args(rng), (0, 1, 3), True
    yield "the benchmark's shapes", rnn, _rnn_args(rng, 50, 8, 16, 32), (0, 1), True
    yield "float32", rnn, _rnn_args(rng, dtype=np.float32), (0, 1), True
    # float32 weights, float64 states: the step's cotangent is float64, U_T float32
    yield "two dtypes", rnn, _rnn_args(rng, dtype=np.float32, state=np.float64), (0, 1), False
    yield "one step", rnn, _rnn_args(rng, steps=1), (0, 1), True
    yield "no step", rnn, _rnn_args(rng, steps=0), (0, 1), False
    yield "a batch of one", rnn, _rnn_args(rng, batch=1), (0, 1, 3), False
    yield "a hidden state of one", rnn, _rnn_args(rng, hidden=1), (0, 1, 3), False
    w, u, xs, h0 = _rnn_args(rng)
    yield "U in Fortran order", rnn, [w, np.asfortranarray(u), xs, h0], (0, 1), True
    yield "a strided U", rnn, [w, np.repeat(u, 2, axis=1)[:, ::2], xs, h0], (0, 1), False
    yield "a GRU-like cell", gru, _gru_args(rng), (0, 1, 2, 3, 5), True
    yield "a linear cell", linear_rnn, _rnn_args(rng), (0, 1, 3), None


PROGRAMS = list(_programs())


def _compiled(monkeypatch, fn, with_pass, **options):
    """``fn``'s generated function, with the pass or without it."""
    return compiled_without(monkeypatch, fn, None if with_pass else "dot_products",
                            **options)


def _watching(namespace, seen):
    """Record what dot_dtype answers (a dtype: the step's dot may be taken)."""
    helper = namespace.get("dot_dtype")
    if helper is not None:
        def watched(*args):
            seen.append(helper(*args))
            return seen[-1]
        namespace["dot_dtype"] = watched


@pytest.mark.parametrize("what, fn, args, wrt, fast", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_gradients_are_bit_identical_to_the_loop_without_the_pass(monkeypatch, what, fn, args,
                                                                  wrt, fast):
    grad = None
    for policy in POLICIES:
        options = dict(mode="value_and_grad", wrt=wrt, policy=policy)
        namespace, with_pass, source = _compiled(monkeypatch, fn, True, **options)
        _, without, _ = _compiled(monkeypatch, fn, False, **options)
        seen: list = []
        _watching(namespace, seen)
        value, grad = with_pass(*args)   # as they are: a copy would make a strided U contiguous
        value0, grad0 = without(*args)
        assert_bit_identical(value, pure(fn)(*args), f"{what}, {policy!r}")
        assert_bit_identical(value0, value, f"{what}, {policy!r}")
        assert_bit_identical(grad, grad0, f"{what}, {policy!r}")
        if fast and policy == "save":   # the guard held and dot_dtype answered a dtype
            assert "np.dot(" in source and seen and all(d is not None for d in seen), what
        if fast is False and policy == "save" and "np.dot(" in source and len(args[2]):
            # the products took @: the step's dtype is not U_T's (or dot_dtype said None)
            dtype_of_steps = np.result_type(*args)
            assert not seen or any(d is None or d != dtype_of_steps for d in seen), what
    for k, position in enumerate(wrt):
        assert_close(grad[k], numeric_grad(pure(fn), list(args), position), rtol=1e-4,
                     atol=1e-5, what=f"{what}, argument {position}")


@pytest.mark.parametrize("fn, make, wrt", [(rnn, _rnn_args, 1), (gru, _gru_args, 3)])
def test_every_policy_and_jvp(fn, make, wrt):
    check_every_policy(fn, make(np.random.default_rng(8)), wrt)


def test_random_shapes_and_dtypes_give_the_loops_own_bits(monkeypatch):
    rng = np.random.default_rng(13)
    _, with_pass, source = _compiled(monkeypatch, rnn, True, wrt=(0, 1, 3))
    _, without, _ = _compiled(monkeypatch, rnn, False, wrt=(0, 1, 3))
    assert "np.dot(" in source
    for _ in range(30):
        steps, batch, width, hidden = (int(n) for n in rng.integers(1, 40, size=4))
        dtype, state = ((np.float32, np.float64)[int(k)] for k in rng.integers(2, size=2))
        args = _rnn_args(rng, steps, batch, width, hidden, dtype, state)
        assert_bit_identical(with_pass(*args), without(*args), (steps, batch, width, hidden))


def test_vjp_backward_function_with_the_pass():
    args = _rnn_args(np.random.default_rng(9), 7, 4, 3, 6)
    value, pullback = srcgrad.vjp(rnn, *args, wrt=(0, 1, 3))
    assert_bit_identical(value, rnn(*args))
    assert_bit_identical(pullback(1.0), srcgrad.grad(rnn, wrt=(0, 1, 3))(*args))
    assert_bit_identical(pullback(1.0), srcgrad.grad(rnn, wrt=(0, 1, 3))(*args))
