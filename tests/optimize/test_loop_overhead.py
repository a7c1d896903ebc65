"""Per-iteration overhead of generated loops (issue 16): moves that undo each
other in the adjoint loop (optimize/dce.py ``propagate_copies``), and the
runtime helpers' fast paths for the scalars and vectors such loops meet
(``unbroadcast`` of two NumPy scalars, ``matmul_grad_a``/``_b`` of two vectors,
``grad_like`` of Python floats, ``scatter_add`` of a row).

These change moves and checks, never arithmetic: every gradient here is the
unoptimised code's (``optimize=False``) bit for bit, under every policy, for
loops with breaks, continues, branches, nesting and while loops, and the value
is the function's own (``check=True``).
"""

from __future__ import annotations

import math

import gast
import numpy as np
import pytest
from numeric import assert_close, bit_identical, numeric_grad, pure

import srcgrad
from srcgrad.ir.emit import show_statements
from srcgrad.optimize.dce import propagate_copies
from srcgrad.runtime import (
    grad_like,
    matmul_grad_a,
    matmul_grad_b,
    scatter_add,
    unbroadcast,
)

POLICIES = ("save", "recompute", "save_products", "sqrt", ("revolve", 2), ("revolve", 3))


# -- programs: each loop shape the sweeps must get right -------------------------------

def coupled_floats(a, b):
    for i in range(7):
        a = a + 0.1 * math.sin(b)
        b = b + 0.1 * math.cos(a)
    return a * b


def coupled_arrays(a, b):
    for i in range(5):
        a = a + 0.1 * np.sin(b)
        b = b + 0.1 * np.cos(a)
    return np.sum(a * b)


def with_break(a, b):
    for i in range(9):
        a = a + 0.1 * np.sin(b)
        if np.sum(a) > 3.0:
            break
        b = b * 0.9 + np.cos(a)
    return np.sum(a * b)


def with_continue(a, b):
    for i in range(6):
        if i % 2 == 1:
            a = a * 1.1
            continue
        b = b + np.tanh(a)
        a = a + 0.1 * b
    return np.sum(a * b)


def with_branch(a, b):
    for i in range(6):
        if i < 3:
            a = a + np.sin(b)
        else:
            b = b - 0.5 * np.cos(a)
        a, b = b, a
    return np.sum(a * b)


def nested(a, b):
    for i in range(3):
        for j in range(2):
            a = a + 0.1 * np.sin(b)
        b = b + 0.1 * np.cos(a)
    return np.sum(a * b)


def while_loop(a, b):
    k = 0
    while k < 5:
        a = a + 0.2 * np.sin(b)
        b = b + 0.2 * np.cos(a)
        k = k + 1
    return np.sum(a * b)


def rows(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        s = s + np.tanh(X[i] @ w)
    return s


def iterated_rows(X, w):
    s = 0.0
    for x in X:
        s = s + np.tanh(x @ w)
    return s


def windows(x, w):
    k = w.shape[0]
    s = 0.0
    for i in range(x.shape[0] - k):
        s += np.tanh(x[i:i + k] @ w)
    return s


def view_before_overwrite(a, b):
    # the push of a moves above v = a[1:] * 2.0 and t = np.sin(a): a is one object there
    for i in range(4):
        v = a[1:] * 2.0
        t = np.sin(a)
        a = t * b + 0.5
        b = b + np.sum(v)
    return np.sum(a * b)


def list_grown_between(a, b):
    hs = [a]
    for i in range(3):
        t = np.tanh(a * b)
        hs.append(t)        # not an assignment: the push of a stays below it
        a = t + hs[0]
    return np.sum(a) + np.sum(hs[-1])


A = np.linspace(0.1, 0.9, 4)
B = np.linspace(-0.3, 0.6, 4)
X = np.linspace(-1.0, 1.0, 15).reshape(5, 3)
W = np.array([0.3, -0.2, 0.5])
SIGNAL = np.linspace(-1.0, 1.0, 9)

PROGRAMS = [
    (coupled_floats, (0.4, 0.7)),
    (coupled_arrays, (A, B)),
    (with_break, (A, B)),
    (with_continue, (A, B)),
    (with_branch, (A, B)),
    (nested, (A, B)),
    (while_loop, (A, B)),
    (rows, (X, W)),
    (iterated_rows, (X, W)),
    (windows, (SIGNAL, W)),
    (view_before_overwrite, (A, B)),
    (list_grown_between, (A, B)),
]


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn, args", PROGRAMS, ids=[fn.__name__ for fn, _ in PROGRAMS])
def test_gradient_is_the_unoptimised_one_bit_for_bit(fn, args, policy):
    value, got = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy, check=True)(*args)
    want = srcgrad.grad(fn, wrt=(0, 1), policy=policy, optimize=False)(*args)
    assert bit_identical(got, want), (fn.__name__, policy, got, want)
    assert bit_identical(value, fn(*args))
    for i in (0, 1):
        assert_close(got[i], numeric_grad(pure(fn), list(args), i), rtol=1e-5, atol=1e-6,
                     what=f"{fn.__name__}, policy {policy!r}, argument {i}")


def _float_source(fn):
    g = srcgrad.grad(fn, wrt=(0, 1))
    return g._specialised(g._options, (float, float)).source


def test_the_adjoint_loop_moves_no_cotangent_back_and_forth():
    src = _float_source(coupled_floats)
    loop = src[src.index("backwards"):]
    # before: d_t7 = d_b; b = b_tape.pop(); d_b = d_t7 and the same for a
    assert "d_t" not in loop, loop
    assert "d_a = d_a - d_b * 0.1 * sin(a)" in loop  # sin = math.sin, bound once a call
    assert "d_b = d_b + d_a * 0.1 * cos(b)" in loop


def test_a_push_sits_above_the_temporaries_of_its_overwrite():
    src = _float_source(coupled_floats)
    forward = src[src.index("for i in t1:"):src.index("# Adjoint sweep")]
    # (a loop over range(n) writes its tapes by index: memory/indexed_tapes.py)
    assert [line.split("  #")[0].strip() for line in forward.splitlines()[1:5]] == [
        "a_tape[i] = a", "a = a + 0.1 * sin(b)",
        "b_tape[i] = b", "b = b + 0.1 * cos(a)"]


def test_a_swap_keeps_its_moves():
    # x, y = y, x * 0.5: the moves exchange two cotangents, they undo nothing
    def swap(x, y):
        for i in range(3):
            x, y = y, x * 0.5 + np.sin(y)
        return np.sum(x * y)
    src = srcgrad.grad(swap, wrt=(0, 1)).source
    assert "d_y = d_x" in src
    got = srcgrad.grad(swap, wrt=(0, 1))(A, B)
    assert bit_identical(got, srcgrad.grad(swap, wrt=(0, 1), optimize=False)(A, B))


# -- the runtime fast paths return what the general paths return ------------------------

SCALARS = [np.float64(0.25), np.float32(-1.5), np.complex128(1 - 2j), np.float64(-0.0)]


@pytest.mark.parametrize("g", SCALARS, ids=repr)
@pytest.mark.parametrize("x", [0.5, 3, True, 1j, np.float64(2.0), np.int64(4), np.float32(1.0),
                               np.uint8(3), np.bool_(True), np.longdouble(1.0), np.intc(2),
                               np.datetime64(1, "D")], ids=repr)
def test_unbroadcast_of_two_scalars_is_the_cotangent_itself(g, x):
    assert unbroadcast(g, x) is g


def test_unbroadcast_of_a_scalar_to_an_array_takes_the_general_path():
    g = np.float64(2.0)
    assert unbroadcast(g, np.array(1.0)) is g  # a 0-d array: shapes agree
    assert bit_identical(unbroadcast(np.ones((2, 3)), np.zeros(3)), np.full(3, 2.0))


@pytest.mark.parametrize("g", [np.float64(0.3), np.float32(2.0), np.complex128(1j), 0.5],
                         ids=repr)
def test_matmul_grads_of_two_vectors(g):
    a, b = np.array([1.0, -2.0, 3.5]), np.array([0.5, 0.25, -1.0])
    assert bit_identical(matmul_grad_a(g, a, b), g * b)
    assert bit_identical(matmul_grad_b(g, a, b), g * a)
    # a list operand takes the general path, with the same numbers
    assert bit_identical(matmul_grad_a(g, list(a), b), g * b)


def test_grad_like_of_floats():
    got = grad_like((0.5, -0.0), (1.0, 2.0))
    assert got == (0.5, -0.0) and all(type(v) is float for v in got)
    assert math.copysign(1.0, got[1]) == -1.0
    assert type(grad_like(np.float64(0.5), 1.0)) is float
    assert grad_like((1 + 2j, 0.5), (1.0, 2.0)) == (1.0, 0.5)


def test_scatter_add_of_a_row_is_the_plain_sum():
    X = np.arange(12.0).reshape(4, 3)
    acc = np.ones_like(X)
    g = np.array([0.5, -1.0, 2.0])
    want = acc + np.where(np.arange(4)[:, None] == 2, g, 0.0)
    assert bit_identical(scatter_add(acc, g, X, 2), want)


# -- propagate_copies: a move back to a copy's source --------------------------------

def _propagate(source):
    return show_statements(propagate_copies(gast.parse(source).body))


def test_a_move_back_is_dropped():
    out = _propagate("d_t = d_b\nb = b_tape.pop()\nd_b = d_t\nd_c = d_t * 2")
    assert out == "d_t = d_b\nb = b_tape.pop()\nd_c = d_b * 2"


@pytest.mark.parametrize("between", ["d_b = g", "d_b, e = g", "d_b[0] = 1.0",
                                     "for i in r:\n    d_b = g"])
def test_a_move_back_after_a_store_into_the_source_is_kept(between):
    # (an element store keeps the copy too: conservative, the names share one array)
    out = _propagate(f"d_t = d_b\n{between}\nd_b = d_t\nd_c = d_b * 2")
    assert out.endswith("d_b = d_t\nd_c = d_t * 2"), out


def test_a_move_back_after_the_copy_is_rebound_is_kept():
    out = _propagate("d_t = d_b\nd_t = g\nd_b = d_t\nd_c = d_b * 2")
    assert out == "d_t = d_b\nd_t = g\nd_b = g\nd_c = g * 2"
