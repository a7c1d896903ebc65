"""optimize/inplace_adjoint.py: tanh's derivative ``1 - h ** 2`` written into the
array of an ``h`` the sweep owns and reads no more (``into_operand(one_minus_square,
h)``, what a careful hand writes as ``h *= h; np.subtract(1, h, out=h)``), and
arrays passed to the matrix-product helpers staying owned (they keep no
reference to them).

Where it must not apply: ``h`` read again later or twice in the statement, an
argument, ``h`` kept by a call or a copy, other constants and exponents; the
helper's plain path for integers, Python numbers, float32, views and read-only
arrays; -0.0, NaN and inf bit for bit; whole programs bit-identical to the
code without the rewrite.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, check_policies

import srcgrad
from srcgrad.api import compiled
from srcgrad.ir.emit import show_statements
from srcgrad.optimize import inplace_adjoint
from srcgrad.optimize.inplace_adjoint import update_in_place
from srcgrad.runtime import into_operand, one_minus_square


def _run(source, cotangents=("d_h", "d_s", "d_t", "h", "s")):
    return show_statements(update_in_place(gast.parse(source).body, set(cotangents)))


# --- the rewrite, on hand-written sweeps ---------------------------------------------------

def test_a_dead_owned_value_takes_the_derivative():
    out = _run("h = np.tanh(x)\nd_t = d_h * (1 - h ** 2)\nreturn d_t")
    assert "d_t = into_second(np.multiply, d_h, into_operand(one_minus_square, h))" in out
    assert "# d_h * (1 - h ** 2), written into h's array" in out


def test_a_fresh_operand_takes_it_too():
    out = _run("d_t = d_h * (1.0 - np.tanh(x) ** 2)\nreturn d_t")
    assert "into_operand(one_minus_square, np.tanh(x))" in out


def test_not_where_h_is_read_again_or_kept():
    for source in ("h = np.tanh(x)\nd_t = d_h * (1 - h ** 2)\nd_s = d_t * h\nreturn d_s",
                   "h = np.tanh(x)\nd_t = d_h * (1 - h ** 2) * h\nreturn d_t",
                   "h = np.tanh(x)\nkeep(h)\nd_t = d_h * (1 - h ** 2)\nreturn d_t",
                   "h = np.tanh(x)\ng = h\nd_t = d_h * (1 - h ** 2)\nreturn d_t, g",
                   "d_t = d_h * (1 - x ** 2)\nreturn d_t"):          # an argument
        assert "one_minus_square" not in _run(source), source


def test_only_the_exact_expression():
    for expression in ("2 - h ** 2", "1 - h ** 3", "1 - h ** 2.0", "1 - h * h", "h ** 2 - 1",
                       "True - h ** 2"):
        out = _run(f"h = np.tanh(x)\nd_t = d_h * ({expression})\nreturn d_t")
        assert "one_minus_square" not in out, expression


def test_matrix_product_helpers_keep_the_array_owned():
    source = ("h = np.tanh(x)\nd_a = matmul_grad_a(d_t, h, W)\nd_W = matmul_grad_b(d_t, h, W)\n"
              "d_b = unbroadcast(d_a, h)\nd_s = d_b * (1 - h ** 2)\nreturn d_s, d_W")
    assert "into_operand(one_minus_square, h)" in _run(source)
    # unbroadcast may return its first argument: that one is kept
    kept = ("h = np.tanh(x)\nd_b = unbroadcast(h, x)\nd_s = d_t * (1 - h ** 2)\n"
            "return d_s, d_b")
    assert "one_minus_square" not in _run(kept)


# --- the helper: bit for bit against the expression ----------------------------------------

SPECIAL = [-0.0, 0.0, 1.0, -1.0, np.nan, -np.nan, np.inf, -np.inf, 1e200, 5e-324, 0.5]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_the_helper_is_the_expression(dtype):
    a = np.array(SPECIAL + list(np.linspace(-3, 3, 40)), dtype=dtype)
    want = 1 - a ** 2
    buffer = a.copy()
    got = into_operand(one_minus_square, buffer)
    assert got is buffer
    assert_bit_identical(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))   # NaN signs too


def test_the_plain_path():
    for a in (np.arange(5), 3, 0.5, np.float32(0.25), np.ones((3, 4))[:, ::2],
              np.array(0.5), np.ones(3) + 0j):
        want = 1 - a ** 2
        got = into_operand(one_minus_square, a)
        assert_bit_identical(got, want)
    frozen = np.linspace(0, 1, 4)
    frozen.flags.writeable = False
    assert_bit_identical(into_operand(one_minus_square, frozen), 1 - frozen ** 2)


# --- whole programs -------------------------------------------------------------------------

def mlp(W1, b1, W2, x):
    h = np.tanh(x @ W1 + b1)
    z = np.tanh(h @ W2)
    return np.sum(z * z) + np.sum(h)


def chain(x):
    s = np.tanh(np.sin(x) * 2.0)
    e = np.tanh(s * x)
    return np.sum(e * s + np.tanh(e))


def reread(x):
    h = np.tanh(x)
    g = h * 3.0
    return np.sum(np.tanh(g) * h) + np.sum(h ** 2)


def _without(monkeypatch):
    monkeypatch.setattr(inplace_adjoint, "_one_minus_square", lambda node: False)
    monkeypatch.setattr(inplace_adjoint, "_READ_ONLY_ARGS", {})
    compiled._MEMORY.clear()


def _compare(monkeypatch, fn, args, wrt=0, fired=True):
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    compiled._MEMORY.clear()
    copies = [np.copy(a) for a in args]
    g = srcgrad.value_and_grad(fn, wrt=wrt)
    got = g(*copies)
    for a, c in zip(args, copies):
        assert_bit_identical(a, c)
    assert_bit_identical(got[0], fn(*args))
    assert ("one_minus_square, " in g.source) == fired, g.source
    with monkeypatch.context() as m:
        _without(m)
        expected = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
    compiled._MEMORY.clear()
    assert_bit_identical(got, expected)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_programs_bit_identical_without_the_rewrite(monkeypatch):
    rng = np.random.default_rng(3)
    W1, b1, W2, x = (rng.standard_normal((6, 5)), rng.standard_normal(5),
                     rng.standard_normal((5, 3)), rng.standard_normal((4, 6)))
    _compare(monkeypatch, mlp, [W1, b1, W2, x], wrt=(0, 1, 2))
    _compare(monkeypatch, chain, [np.linspace(-2.0, 2.0, 33)])
    big = np.array([-0.0, 0.0, 30.0, -30.0, np.inf, -np.inf, 1.0])   # tanh = +-1 exactly
    _compare(monkeypatch, chain, [big])
    _compare(monkeypatch, mlp, [W1.astype(np.float32), b1.astype(np.float32),
                                W2.astype(np.float32), x.astype(np.float32)], wrt=(0, 1, 2))


@pytest.mark.parametrize("fn", [chain, reread])
def test_every_policy(fn):
    check_policies(fn, (np.linspace(-0.9, 1.2, 17),), policies=POLICIES)
