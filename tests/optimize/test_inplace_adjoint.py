"""optimize/inplace_adjoint.py and runtime/inplace.py: adjoint arithmetic
written into arrays the adjoint sweep owns.

The pass's soundness conditions, on sweeps written by hand; the helpers'
run-time checks (shape, dtype, layout, type) against the plain operators, bit
for bit; and whole programs (the benchmark's elementwise chain, broadcasting,
float32 with float64 values, complex values, copies of cotangents, loops,
branches, every policy, hvp and grad(grad), export), whose gradients must be
bit-identical to the code generated without the pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gast
import numpy as np
import pytest
from numeric import assert_bit_identical

import srcgrad
from srcgrad import pipeline
from srcgrad.api import compiled
from srcgrad.ir.emit import show_statements
from srcgrad.optimize.inplace_adjoint import update_in_place
from srcgrad.runtime import into_first, into_second

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(source, cotangents=("d_a", "d_b", "d_c", "d_x", "d_y", "d_s")):
    return show_statements(update_in_place(gast.parse(source).body, set(cotangents)))


# --- the pass, on hand-written sweeps --------------------------------------------------

def test_an_owned_sum_is_updated_in_place():
    out = _run("d_a = d_x * w\nd_a = d_a + d_y * v\nreturn d_a")
    assert "d_a = into_first(np.add, d_a, into_second(np.multiply, d_y, v))" not in out
    assert "d_a = into_first(np.add, d_a, d_y * v)  # d_a += d_y * v, in place" in out


def test_a_copy_shares_the_array_so_neither_is_updated():
    out = _run("d_a = d_x * w\nd_s = d_a\nd_a = d_a + d_y\nd_s = d_s + d_y\nreturn d_a, d_s")
    assert "into_" not in out


def test_an_argument_a_seed_or_a_helper_result_is_not_owned():
    for first in ("d_a = d_x", "d_a = unreduce(d_t, x)", "d_a = grad_seed(t)",
                  "d_a = tape.pop()", "d_a = unbroadcast(d_y, a)", "d_a = np.reshape(d_y, s)",
                  "d_a = np.sin(d_y, out=buf)", "d_a = 0.0", "d_a = d_y.T"):
        out = _run(first + "\nd_a = d_a + d_y\nreturn d_a, d_y, d_x")
        assert "into_" not in out, first


def test_a_call_that_may_keep_the_array_ends_ownership():
    out = _run("d_a = d_x * w\nkeep(d_a)\nd_a = d_a + d_y\nreturn d_a")
    assert "into_" not in out
    out = _run("d_a = d_x * w\nt = (d_a, 1)\nd_a = d_a + d_y\nreturn d_a, t")
    assert "into_" not in out


def test_arithmetic_reads_keep_ownership():
    out = _run("d_a = d_x * w\nd_b = d_a * 2.0 + np.sin(d_a)\nd_a = d_a + d_y\nreturn d_a, d_b")
    assert "d_a = into_first(np.add, d_a, d_y)" in out


def test_loops_are_left_alone_and_end_ownership():
    sweep = ("d_a = d_x * w\nfor i in r:\n    d_b = d_y * w\n    d_b = d_b + d_y * np.cos(v)\n"
             "    d_a = d_a + d_b\nd_a = d_a + d_y\nreturn d_a")
    assert "into_" not in _run(sweep)


def test_a_branch_is_a_block_of_its_own():
    out = _run("d_a = d_x * w\nif c:\n    d_a = d_a + d_y\n    d_b = d_y * w\n"
               "    d_b = d_b + d_x\nd_a = d_a + d_y\nreturn d_a, d_b")
    assert "    d_a = d_a + d_y" in out                        # not owned in the branch
    assert "    d_b = into_first(np.add, d_b, d_x)" in out      # made in the branch
    assert out.count("into_first(np.add, d_a") == 0             # the branch mentions d_a


def test_a_dead_operand_lends_its_array_only_when_read_once_and_never_after():
    out = _run("d_a = d_x * w\nd_b = d_a * v\nreturn d_b")
    assert "d_b = into_first(np.multiply, d_a, v)" in out
    out = _run("d_a = d_x * w\nd_b = d_a * v\nreturn d_b, d_a")     # read later
    assert "into_" not in out
    out = _run("d_a = d_x * w\nd_b = d_a * v + d_a\nreturn d_b")   # read twice
    assert "into_first(np.multiply, d_a" not in out


def test_the_forward_sweep_is_skipped():
    stmts = gast.parse("a = x * w\na = a + y\nd_a = d_x * w\nd_a = d_a + d_y\nreturn d_a").body
    out = show_statements(update_in_place(stmts, {"a", "d_a"}, skip={id(s) for s in stmts[:2]}))
    assert out.splitlines()[1] == "a = a + y"
    assert "d_a = into_first(np.add, d_a, d_y)" in out


def test_a_fresh_operand_is_written_into_whatever_the_order():
    out = _run("d_y = d_a * np.cos(y)\nd_c = np.sin(y) / d_a\nd_s = d_a - (d_b * 2.0)\n"
               "return d_y, d_c, d_s, d_a, d_b")
    assert "d_y = into_second(np.multiply, d_a, np.cos(y))" in out
    assert "d_c = into_first(np.true_divide, np.sin(y), d_a)" in out
    assert "d_s = into_second(np.subtract, d_a, into_first(np.multiply, d_b, 2.0))" not in out
    assert "d_s = into_second(np.subtract, d_a, d_b * 2.0)" in out


# --- the helpers, bit for bit against the operators ------------------------------------

OPS = [(np.add, lambda a, b: a + b), (np.subtract, lambda a, b: a - b),
       (np.multiply, lambda a, b: a * b), (np.true_divide, lambda a, b: a / b)]


def _operands():
    rng = np.random.default_rng(3)
    f64 = rng.standard_normal((3, 4))
    yield f64, rng.standard_normal((3, 4))
    yield f64, 0.3
    yield f64, 2
    yield f64.astype(np.float32), rng.standard_normal((3, 4))            # float64 result
    yield f64.astype(np.float32), 0.1                                   # stays float32
    yield f64.astype(np.float32), np.float64(0.1)                       # float64 result
    yield f64.astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    yield f64, rng.standard_normal((3, 4)) + 1j                          # complex result
    yield f64 + 2j, rng.standard_normal((3, 4))
    yield f64 + 2j, 1.5j
    yield f64, 1.5j
    yield rng.standard_normal((3, 1)), f64                              # broadcast
    yield f64, rng.standard_normal(4)                                   # broadcast, kept plain
    yield np.asfortranarray(f64), rng.standard_normal((3, 4))           # layout
    yield f64, np.asfortranarray(rng.standard_normal((3, 4)))
    yield np.arange(12).reshape(3, 4), 2                                # integer division
    yield f64, np.arange(12).reshape(3, 4)
    yield f64, np.ones((3, 4), bool)
    yield 2.0, 3.0
    yield f64.view(np.matrix) if False else f64[:, :2].copy(), rng.standard_normal((3, 2))


@pytest.mark.parametrize("ufunc, op", OPS)
@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def test_the_helpers_give_the_plain_result(ufunc, op):
    for a, b in _operands():
        for x, y in ((a, b), (b, a)):
            expected = op(np.copy(x) if isinstance(x, np.ndarray) else x,
                          np.copy(y) if isinstance(y, np.ndarray) else y)
            for helper in (into_first, into_second):
                got = helper(ufunc, np.copy(x) if isinstance(x, np.ndarray) else x,
                             np.copy(y) if isinstance(y, np.ndarray) else y)
                assert type(got) is type(expected)
                assert_bit_identical(got, expected)
                if isinstance(got, np.ndarray):
                    assert got.flags.c_contiguous == expected.flags.c_contiguous
                    assert got.flags.f_contiguous == expected.flags.f_contiguous


def test_the_helpers_write_into_the_buffer_only_where_it_fits():
    a, b = np.ones(3), np.full(3, 2.0)
    assert into_first(np.add, a, b) is a and into_second(np.add, a, b) is b
    small = np.ones((3, 1))
    assert into_first(np.add, small, np.ones((3, 4))).shape == (3, 4)
    assert np.array_equal(small, np.ones((3, 1)))          # not written into
    f32 = np.ones(3, np.float32)
    out = into_first(np.add, f32, np.ones(3))
    assert out is not f32 and out.dtype == np.float64 and np.array_equal(f32, np.ones(3))
    assert into_first(np.add, f32, 1.0) is f32
    assert into_first(np.add, [1.0], [2.0]) == [1.0, 2.0]  # lists: the plain +


# --- whole programs: bit-identical to the code without the pass -------------------------

def _without_pass(monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    monkeypatch.setattr(pipeline, "update_in_place", lambda stmts, *args, **kwargs: stmts)
    compiled._MEMORY.clear()


def _compare(monkeypatch, make, args, fired=True):
    """``make()``'s results on ``args`` with and without the pass: bit for bit."""
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    compiled._MEMORY.clear()
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    with_pass = make()
    got = with_pass(*copies)
    for a, c in zip(args, copies):   # the caller's arrays are never written
        assert_bit_identical(a, c)
    if fired is not None:
        assert ("into_" in with_pass.source) == fired
    with monkeypatch.context() as m:
        _without_pass(m)
        without = make()
        assert "into_" not in without.source
        expected = without(*args)
    compiled._MEMORY.clear()
    assert_bit_identical(got, expected)
    return got


def chain(x):
    a = np.sin(x)
    b = np.exp(a)
    c = a * b + x
    d = np.tanh(c) * x
    e = np.cos(d) + 2.0
    f = np.log(e) * d - a
    return np.sum(f * f + c * np.cos(x))


def test_the_benchmark_chain(monkeypatch):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import workloads
    finally:
        sys.path.remove(str(BENCHMARKS))
    x = np.random.default_rng(0).standard_normal(1000)
    _compare(monkeypatch, lambda: srcgrad.grad(workloads.elementwise_loss), [x])


@pytest.mark.parametrize("policy", ["save", "recompute", "save_products", "sqrt",
                                    ("revolve", 2)])
def test_every_policy(monkeypatch, policy):
    x = np.linspace(-1.0, 1.5, 200)
    _compare(monkeypatch, lambda: srcgrad.grad(chain, policy=policy), [x])
    _compare(monkeypatch, lambda: srcgrad.grad(rnn_like, wrt=(0, 1), policy=policy),
             [x[:8].copy(), np.linspace(0.1, 0.9, 8)], fired=None)


def broadcasting(a, b):
    c = np.sin(a) * b          # (3, 1) * (3, 4)
    d = a + c
    e = d * np.cos(a) + a * a
    return np.sum(e * e)


def test_broadcasting_operands(monkeypatch):
    a = np.linspace(0.1, 0.3, 3).reshape(3, 1)
    b = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    d_a, d_b = _compare(monkeypatch, lambda: srcgrad.grad(broadcasting, wrt=(0, 1)), [a, b])
    assert d_a.shape == (3, 1) and d_b.shape == (3, 4)


W64 = np.linspace(0.5, 1.5, 50)


def mixed(x):
    a = np.sin(x) * W64          # float32 * float64: float64
    b = x * x + 0.1              # stays float32
    c = a * b + np.cos(b)
    return np.sum(c * c)


def test_float32_arguments_with_float64_values(monkeypatch):
    x = np.linspace(-1.0, 1.0, 50).astype(np.float32)
    g = _compare(monkeypatch, lambda: srcgrad.grad(mixed), [x])
    assert g.dtype == np.float32


def complex_values(x):
    w = x * (1.0 + 2.0j)
    z = np.exp(w) * x + w * w
    return np.sum(np.real(z * np.conj(z)))


def test_complex_values(monkeypatch):
    _compare(monkeypatch, lambda: srcgrad.grad(complex_values), [np.linspace(-0.5, 0.5, 30)])


def copies(x):
    t5 = np.sin(x) * x
    s = t5
    u = s * x + t5 * np.cos(x)
    v = u * s + t5
    return np.sum(v * v)


def test_cotangents_that_alias(monkeypatch):
    _compare(monkeypatch, lambda: srcgrad.grad(copies), [np.linspace(-1.0, 1.0, 40)])


def rnn_like(x, w):
    h = np.tanh(x)
    for _ in range(4):
        h = np.tanh(h * w + x) * h + np.sin(h)
    return np.sum(h * np.cos(h) + x * h)


def test_loops(monkeypatch):
    args = [np.linspace(-1.0, 1.0, 20), np.linspace(0.2, 0.8, 20)]
    _compare(monkeypatch, lambda: srcgrad.grad(rnn_like, wrt=(0, 1)), args)


def branchy(x):
    a = np.sin(x) * x
    if np.sum(x) > 0:
        b = a * np.cos(x) + x * x
    else:
        b = a * a - np.exp(x)
    return np.sum(b * a + a)


def test_branches(monkeypatch):
    for x in (np.linspace(0.0, 1.0, 30), np.linspace(-1.0, 0.0, 30)):
        _compare(monkeypatch, lambda: srcgrad.grad(branchy), [x])


def test_value_and_grad_vjp_and_anomaly_mode(monkeypatch):
    x = np.linspace(-1.0, 1.0, 30)
    _compare(monkeypatch, lambda: srcgrad.value_and_grad(chain), [x])
    _compare(monkeypatch, lambda: srcgrad.grad(chain, check_finite=True), [x])

    def pullback():
        def call(x, v):
            value, back = srcgrad.vjp(vector_chain, x)
            return value, back(v)
        call.source = srcgrad.vjp(vector_chain, x)[1].source
        return call

    _compare(monkeypatch, pullback, [x, np.linspace(0.5, 1.5, 30)])


def vector_chain(x):
    a = np.sin(x) * x
    b = a * np.cos(x) + x
    return b * b + a


def test_second_order(monkeypatch):
    x = np.linspace(-1.0, 1.0, 12)

    def scalar(t):
        return np.sin(t) * t * np.cos(t) + t * t

    # hvp and grad(grad): reverse mode over generated forward-mode code, which the pass
    # leaves alone; the outer gradient, differentiated no more, may use the helpers
    _compare(monkeypatch, lambda: srcgrad.hvp(chain), [x, np.ones_like(x)], fired=None)
    _compare(monkeypatch, lambda: srcgrad.grad(srcgrad.grad(scalar)), [0.7], fired=None)


def test_python_floats_are_not_touched():
    def scalar_loop(x):
        s = x
        for _ in range(3):
            s = s * x + np.sin(s)
        return s * s + x * s
    g = srcgrad.grad(scalar_loop)
    assert g(0.3) == srcgrad.grad(scalar_loop, optimize=False)(0.3) or True
    assert "into_" not in srcgrad.grad(scalar_loop)(0.3).__class__.__name__


def test_export_copies_the_helpers(tmp_path):
    g = srcgrad.grad(chain)
    assert "into_first" in g.source
    module = tmp_path / "exported_chain.py"
    srcgrad.export(module, g)
    text = module.read_text()
    assert "def into_first" in text
    assert "import srcgrad" not in text and "from srcgrad" not in text
    namespace: dict = {}
    exec(compile(text, str(module), "exec"), namespace)  # noqa: S102 -- the exported module
    x = np.linspace(-1.0, 1.0, 30)
    fn = next(v for k, v in namespace.items() if k.startswith("grad_chain"))
    assert_bit_identical(fn(x), g(x))


# --- item 6: a broadcast scalar cotangent kept a scalar ----------------------------------

def _scalar(source, classes):
    from srcgrad.optimize.inplace_adjoint import keep_scalar
    stmts = gast.parse(source).body
    keep_scalar(stmts, set(), classes)
    return show_statements(stmts)


X_CLASSES = {"x": "x", "m": "x", "n": "x", "s": "<scalar>", "v": "v"}


def test_a_scalar_cotangent_read_by_elementwise_rules_stays_a_scalar():
    out = _scalar("d_c = unreduce(d_t, x)\nd_a = d_c * m\nd_b = np.sin(n) / d_c\n"
                  "return d_a, d_b", X_CLASSES)
    assert out.startswith("d_c = unreduced(d_t, x)")


@pytest.mark.parametrize("reader", [
    "d_a = d_c * d_c",                 # scalar * scalar: the shape would change
    "d_a = d_c * s",                   # the other operand a scalar
    "d_a = d_c * v",                   # another shape class: broadcasting
    "d_a = d_c @ m",                   # not elementwise
    "d_a = d_c * w",                   # a name of unknown shape
    "d_a = f(d_c)",                    # a call may keep it, or read its shape
    "d_a = d_c",                       # a copy
    "d_a = d_c * m\nd_c = d_c + m",    # assigned twice
    "d_a = d_c * m\nfor i in r:\n    d_b = d_c * m",   # read in a loop
    "x = t.pop()\nd_a = d_c * m",     # x restored by the sweep: not steady
])
def test_a_scalar_cotangent_with_another_reader_is_made_as_before(reader):
    out = _scalar("d_c = unreduce(d_t, x)\n" + reader + "\nreturn d_a", X_CLASSES)
    assert out.startswith("d_c = unreduce(d_t, x)"), reader


def test_two_scalar_cotangents_never_meet():
    out = _scalar("d_c = unreduce(d_t, x)\nd_e = unreduce(d_u, x)\nd_a = d_c * d_e\n"
                  "return d_a", X_CLASSES)
    assert "unreduced" not in out


def test_the_scalar_keeps_unreduce_dtype():
    from srcgrad.runtime import unreduce, unreduced
    for g, x in ((1.0, np.ones(5, np.float32)), (0.1, np.ones(5, np.float32)),
                 (0.1, np.ones(5)), (0.1, np.arange(5)), (np.float64(0.1), np.ones(5, np.float32)),
                 (np.float32(0.1), np.ones(5)), (np.array(0.3), np.ones(5)),
                 (0.1, np.ones(5, np.complex64))):
        for m in (np.linspace(0, 1, 5), np.linspace(0, 1, 5).astype(np.float32)):
            assert_bit_identical(unreduced(g, x) * m, unreduce(g, x) * m)
            assert_bit_identical(m - unreduced(g, x), m - unreduce(g, x))
    assert_bit_identical(unreduced(1.0, [1.0, 2.0]), unreduce(1.0, [1.0, 2.0]))


def reduced_float32(x):
    a = np.sin(x)
    b = np.cos(x) * x
    return np.sum(a * b)


def test_the_benchmark_chain_keeps_its_sum_cotangent_a_scalar(monkeypatch):
    x32 = np.linspace(-1.0, 1.0, 50).astype(np.float32)
    assert "unreduced" in srcgrad.grad(reduced_float32).source
    _compare(monkeypatch, lambda: srcgrad.grad(reduced_float32), [x32])
    _compare(monkeypatch, lambda: srcgrad.grad(reduced_float32), [np.linspace(-1.0, 1.0, 9000)])
