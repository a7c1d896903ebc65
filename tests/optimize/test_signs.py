"""optimize/signs.py: minus signs of the adjoint carried into the sums and
constants that take them for free.

The pass claims the gradient is bit for bit the one without it: each rewrite
is an IEEE identity in round-to-nearest (``(-a) * b == -(a * b)``, ``a + (-b) ==
a - b``, ``(-a) * c == a * (-c)``), exact for infinities and signed zeros too;
only NaN's sign bit may differ.  The identities are checked here on arrays
full of the awkward numbers (both zeros, infinities, NaN, subnormals, the
largest floats) in float64 and float32, the identity the pass must not use
(``(-a) - b`` is not ``-(a + b)``) shown to fail; every program below is held
to the bits of the same pipeline without the pass (signs of zeros included),
under every policy, and to finite differences.  Complex numbers: a complex
product is a difference of real products, so the sign of a part that is zero
may differ (``-(x - y)`` is ``-0.0`` where ``(-x) + y`` is ``0.0``); the
numbers are equal, checked with ``==``.
"""

from __future__ import annotations

import ast
import math
import re

import gast
import numpy as np
import pytest
from numeric import POLICIES, bit_identical, check_every_policy
from recurrences import compiled_without

import srcgrad
from srcgrad.ir.emit import show_statements
from srcgrad.ir.naming import Namer
from srcgrad.optimize.signs import carry_signs


def _carried(lines, skip=0):
    body = gast.parse("\n".join(lines)).body
    renamed = {}
    body = carry_signs(body, {id(s) for s in body[:skip]}, Namer(), renamed)
    return show_statements(body), renamed


# -- the identities, on the awkward numbers ---------------------------------------------------

def _awkward(dtype, n=4096, seed=0):
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny / 4, -info.tiny / 4,
                        info.max, -info.max, 1.0, -1.0, 0.5], dtype=dtype)
    values = rng.standard_normal(n).astype(dtype) * rng.choice([1e-30, 1.0, 1e30], n)
    values[: len(special)] = special
    return rng.permutation(np.concatenate([values, special])).astype(dtype)


def _same_bits(a, b):
    """Equal bits, NaN's sign bit aside."""
    a, b = np.asarray(a), np.asarray(b)
    nan = np.isnan(a)
    return np.array_equal(nan, np.isnan(b)) and np.array_equal(
        a[~nan].view(np.uint8 if a.dtype.itemsize == 1 else f"u{a.dtype.itemsize}"),
        b[~nan].view(f"u{b.dtype.itemsize}"))


IDENTITIES = [
    ("(-a) * b", "-(a * b)"),
    ("a * (-b)", "-(a * b)"),
    ("(-a) / b", "-(a / b)"),
    ("a / (-b)", "-(a / b)"),
    ("(-a) * (-b)", "a * b"),
    ("(-a) * 0.5", "a * -0.5"),
    ("3.0 / (-b)", "-3.0 / b"),
    ("a + (-b)", "a - b"),
    ("(-b) + a", "a - b"),
    ("a - (-b)", "a + b"),
    ("-(-a)", "a"),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("before, after", IDENTITIES)
def test_each_identity_holds_bit_for_bit_on_every_kind_of_number(before, after, dtype):
    a, b = _awkward(dtype, seed=1), _awkward(dtype, seed=2)
    with np.errstate(all="ignore"):
        assert _same_bits(eval(before), eval(after))  # noqa: S307 - our own literals
        x, y = float(a[7]), float(b[9])              # Python floats too
        for p, q in [(x, y), (0.0, -0.0), (-0.0, 0.0), (1e308, -1e308)]:
            a_, b_ = p, q
            try:
                left = eval(before.replace("a", "a_").replace("b", "b_"))  # noqa: S307
            except ZeroDivisionError:
                continue
            right = eval(after.replace("a", "a_").replace("b", "b_"))  # noqa: S307
            assert _same_bits(np.float64(left), np.float64(right))


def test_the_identity_the_pass_must_not_use_fails_on_signed_zeros():
    a, b = np.array([0.0]), np.array([-0.0])
    assert not _same_bits((-a) - b, -(a + b))
    out, _ = _carried(["d_a = -d_k", "d_x = d_a - y"])
    assert out == "d_a = -d_k\nd_x = d_a - y"


# -- the pass, on statements written by hand ---------------------------------------------------

def test_a_sign_goes_into_a_constant_and_a_sum():
    out, renamed = _carried(["d_v = -d_w * np.sin(v)", "d_u = d_v * 0.5", "d_a = d_x + d_v"])
    assert out.split("\n") == [
        "minus_d_v = d_w * np.sin(v)  # minus d_v: its sign is taken where it is read",
        "d_u = minus_d_v * -0.5", "d_a = d_x - minus_d_v"]
    assert renamed == {"minus_d_v": "d_v"}


def test_signs_carried_along_a_chain_of_products():
    out, renamed = _carried(["d_n = -(d_o * o)", "d_h = d_n * n / h", "d_m = d_m0 + d_h"])
    assert out.split("\n")[1:] == ["minus_d_h = minus_d_n * n / h  # minus d_h: its sign is "
                                   "taken where it is read", "d_m = d_m0 - minus_d_h"]
    assert renamed == {"minus_d_n": "d_n", "minus_d_h": "d_h"}


def test_two_signs_cancel():
    out, _ = _carried(["d_a = -x * y", "d_b = -d_a * z"])
    assert out.endswith("d_b = minus_d_a * z")


@pytest.mark.parametrize("lines", [
    ["d_b = -d_t", "d_x = f(d_b)"],                        # a call: its argument keeps the sign
    ["d_b = -d_t", "d_x = d_b - y"],                       # (-a) - b: not exact
    ["d_b = -d_t", "d_x = d_b @ w"],                       # a matrix product is left alone
    ["d_b = -d_t", "d_x = d_b * y", "d_z = np.sum(d_b)"],  # one reader cannot take it
    ["d_b = -d_t", "d_b = d_b + d_b"],                     # the sum reads it twice
    ["d_b = -d_t", "d_t = d_t * 2.0", "d_b = d_b + y"],    # d_t rebound before the sum
    ["d_b = -d_t", "f(d_t)", "d_b = d_b + y"],             # a call may change d_t's array
    ["d_b = -d_t", "d_b = d_b - y"],                       # (-d_t) - y: not exact
    ["d_b = -d_t", "for i in r:\n    d_x = d_b * y"],      # read in a nested block
    ["d_x = d_b * y", "d_b = -d_t"],                       # read before (a loop's last step)
    ["d_b = -2.0", "d_x = d_b * y"],                       # a number: no pass to save
])
def test_where_the_sign_stays(lines):
    out, renamed = _carried(lines)
    assert "minus_" not in out and not renamed and out == "\n".join(lines)


@pytest.mark.parametrize("sum_, merged", [("d_b = d_b + y", "d_b = y - d_t"),
                                          ("d_b = y * 2.0 + d_b", "d_b = y * 2.0 - d_t")])
def test_a_negation_merges_into_the_sum_that_follows_it(sum_, merged):
    out, _ = _carried(["d_b = -d_t", "d_e = d_t * e", sum_])
    assert out == f"d_e = d_t * e\n{merged}"


def test_a_carried_sign_merges_into_a_later_accumulation():
    out, _ = _carried(["d_f = -d_g * np.sin(f)", "d_e = d_e0 + d_f * x", "d_x = d_f * e",
                       "d_c = d_c0 + d_d", "d_x = d_x + d_d"])
    assert out.split("\n") == [
        "minus_d_f = d_g * np.sin(f)  # minus d_f: its sign is taken where it is read",
        "d_e = d_e0 - minus_d_f * x", "d_c = d_c0 + d_d", "d_x = d_d - minus_d_f * e"]


def test_a_loop_body_is_a_block_of_its_own():
    out, _ = _carried(["for i in r:\n    d_v = -d_w * s\n    d_x = d_x0 + d_v"])
    assert "minus_d_v = d_w * s" in out and "d_x = d_x0 - minus_d_v" in out


def test_the_forward_sweep_is_left_alone():
    out, _ = _carried(["v = -w * s", "x = y + v"], skip=2)
    assert out == "v = -w * s\nx = y + v"


def test_an_augmented_sum_takes_the_sign():
    out, _ = _carried(["d_v = -d_w * s", "d_X[i] += d_v"])
    assert out.split("\n")[1] == "d_X[i] -= minus_d_v"


# -- whole programs: the bits of the pipeline without the pass ----------------------------------

def chain(x):
    a = np.sin(x)
    b = np.exp(a)
    c = np.cos(a * b) + x
    d = np.exp(-c / 2.0)
    e = np.tanh(d - a)
    return np.sum(e * np.cos(e) - c)


def subtracts(x, y):
    u = x - y
    v = np.cos(u) - 2.0 * y
    w = 1.0 - np.cos(v * x)
    return np.sum(w / (1.0 + u ** 2))


def in_a_loop(x):
    s = x
    for _ in range(3):
        s = np.cos(s) - 0.5 * s
    return np.sum(np.cos(s))


def in_a_branch(x, flag=True):
    if flag:
        y = np.cos(x) - x
    else:
        y = np.sin(x)
    return np.sum(np.cos(y))


def _helper(u):
    return np.cos(u) - np.exp(-u)


def with_a_helper(x):
    return np.sum(_helper(x) * np.cos(x))


def on_floats(a, b):
    c = math.cos(a) - b
    return math.cos(c * a) - c


PROGRAMS = [
    (chain, lambda rng: (rng.uniform(-1, 1, 40),), 0),
    (subtracts, lambda rng: (rng.uniform(-1, 1, 17), rng.uniform(-1, 1, 17)), (0, 1)),
    (in_a_loop, lambda rng: (rng.uniform(-1, 1, 9),), 0),
    (in_a_branch, lambda rng: (rng.uniform(-1, 1, 9),), 0),
    (with_a_helper, lambda rng: (rng.uniform(-1, 1, 9),), 0),
]


def _carried_somewhere(source):
    """Whether the pass changed something: a minus_ name, or a sign taken by a sum."""
    return re.search(r"\bminus_", source) is not None


def _positions(wrt):
    return wrt if isinstance(wrt, tuple) else (wrt,)


def _fired(fn, wrt):
    """Whether the pass changed ``fn``'s gradient code, leaving fewer negations of arrays."""
    _, _, source = compiled_without(pytest.MonkeyPatch(), fn, None, wrt=_positions(wrt))
    _, _, plain = compiled_without(pytest.MonkeyPatch(), fn, "carry_signs", wrt=_positions(wrt))
    return _negations(source) < _negations(plain)


def _negations(source):
    """The minus signs before anything but a number in ``source``."""
    return sum(1 for node in ast.walk(ast.parse(source)) if isinstance(node, ast.UnaryOp)
               and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn, make, wrt", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_are_the_bits_of_the_pipeline_without_the_pass(monkeypatch, fn, make, wrt,
                                                                 policy):
    args = make(np.random.default_rng(3))
    wrt = _positions(wrt)
    _, with_pass, _ = compiled_without(monkeypatch, fn, None, wrt=wrt, policy=policy)
    _, without, plain = compiled_without(monkeypatch, fn, "carry_signs", wrt=wrt, policy=policy)
    assert not _carried_somewhere(plain)
    assert bit_identical(with_pass(*args), without(*args))


@pytest.mark.parametrize("fn, make, wrt", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_the_pass_runs_on_each_program_and_the_gradient_is_right(fn, make, wrt):
    assert _fired(fn, wrt)
    for position in _positions(wrt):
        check_every_policy(fn, make(np.random.default_rng(4)), position)


def test_awkward_inputs_keep_their_bits(monkeypatch):
    x = np.array([0.0, -0.0, 1e-310, -1e-310, 700.0, -700.0, np.pi, -np.pi / 2])
    _, with_pass, _ = compiled_without(monkeypatch, chain, None)
    _, without, _ = compiled_without(monkeypatch, chain, "carry_signs")
    with np.errstate(all="ignore"):
        assert bit_identical(with_pass(x), without(x))


def test_the_benchmark_chain_loses_its_negations():
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    from workloads import elementwise_loss  # noqa: PLC0415
    _, _, source = compiled_without(pytest.MonkeyPatch(), elementwise_loss, None)
    _, _, plain = compiled_without(pytest.MonkeyPatch(), elementwise_loss, "carry_signs")
    assert _negations(plain) - _negations(source) == 5   # all of the adjoint's


def test_complex_gradients_are_equal_zero_signs_aside(monkeypatch):
    def f(z):
        return np.sum(np.abs(np.cos(z) - 0.5 * z) ** 2)
    z = np.array([1.0 + 2.0j, -0.5 + 0.0j, 0.0 - 1.0j])
    _, with_pass, _ = compiled_without(monkeypatch, f, None)
    _, without, _ = compiled_without(monkeypatch, f, "carry_signs")
    assert np.array_equal(with_pass(z), without(z))


def test_python_floats(monkeypatch):
    g = srcgrad.grad(on_floats, wrt=(0, 1))
    _, without, _ = compiled_without(monkeypatch, on_floats, "carry_signs", wrt=(0, 1))
    assert bit_identical(g(0.3, -0.7), without(0.3, -0.7))
