"""optimize/summed_products.py and runtime/summed_products.py: the operands'
cotangents of a product summed whole (``np.sum(a @ b)``, ``np.mean``) as
sums of the operands, without the product.

The helpers against the general rule they stand in for (shape, dtype, type,
numbers within the rounding of a reordered sum; bit for bit where they make
the product again); the pass's soundness conditions on sweeps written by
hand; and whole programs against ``optimize=False`` and finite differences,
the value of ``value_and_grad`` bit for bit and the caller's arrays untouched.
"""

from __future__ import annotations

import operator
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import gast
import numpy as np
import pytest
import strict_arrays
from numeric import assert_bit_identical, numeric_grad

import srcgrad
from srcgrad.errors import NonDifferentiableError
from srcgrad import ir
from srcgrad.ir.emit import show_statements
from srcgrad.optimize.summed_products import sum_products
from srcgrad.runtime import (
    grad_seed,
    matmul_grad_a,
    matmul_grad_b,
    summed_matmul_grad_a,
    summed_matmul_grad_b,
    summed_product_seed,
    summed_product_size,
    unreduce,
)

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
HELPERS = ((summed_matmul_grad_a, matmul_grad_a, 0), (summed_matmul_grad_b, matmul_grad_b, 1))


def general(rule, g, a, b):
    """What the sweep computed before the pass."""
    return rule(unreduce(g, np.matmul(a, b)), a, b)


def assert_reordered_sum(got, expected, g, a, b, which):
    """``got`` equals ``expected`` (a product with a cotangent of one value ``g``)
    but for the order of its sums: within a few ``n * eps`` of the sum of the
    terms' magnitudes, ``|g|`` times ``|b|``'s row sums (``|a|``'s column sums)."""
    assert type(got) is type(expected) and got.shape == expected.shape
    assert got.dtype == expected.dtype
    assert got.flags.writeable and got.flags.c_contiguous
    terms = np.abs(b) if which == 0 else np.abs(a)
    n = terms.shape[-1 if which == 0 else 0] if terms.ndim == 2 else 1
    if terms.ndim == 2:
        bound = terms.sum(axis=1 if which == 0 else 0)
    else:
        bound = terms
    if which == 1:
        bound = bound[:, None] if got.ndim == 2 else bound
    bound = np.broadcast_to(abs(complex(np.asarray(g))) * bound, got.shape)
    eps = np.finfo(got.dtype).eps
    assert np.all(np.abs(got - expected) <= 4 * n * eps * bound + np.finfo(got.dtype).tiny)


# --- the helpers against the general rule ---------------------------------------------

def _cases():
    rng = np.random.default_rng(7)
    for shape_a, shape_b in (((5, 7), (7, 3)), ((7,), (7, 3)), ((5, 7), (7,)),
                             ((1, 1), (1, 1)), ((64, 300), (300, 2))):
        for da, db in ((np.float64, np.float64), (np.float32, np.float32),
                       (np.float32, np.float64), (np.complex128, np.float64),
                       (np.float32, np.complex64)):
            a = rng.standard_normal(shape_a).astype(da)
            b = rng.standard_normal(shape_b).astype(db)
            if np.dtype(da).kind == "c":
                a = a + 1j * rng.standard_normal(shape_a)
            for g in (1.0, 0.25, np.float32(1.0), np.float64(1 / 3), np.array(2.0),
                      np.complex128(1 - 2j)):
                yield g, a, b


@pytest.mark.parametrize("helper, rule, which", HELPERS)
def test_the_helpers_are_the_general_rule_but_for_the_order_of_a_sum(helper, rule, which):
    count = 0
    for g, a, b in _cases():
        before = (a.copy(), b.copy())
        got = helper(g, a, b)
        assert_bit_identical(a, before[0])
        assert_bit_identical(b, before[1])
        assert_reordered_sum(got, general(rule, g, a, b), g, a, b, which)
        count += 1
    assert count > 100


def test_float32_stays_float32_and_a_float64_seed_promotes():
    a, b = np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)
    for helper, _, _ in HELPERS:
        assert helper(1.0, a, b).dtype == np.float32
        assert helper(np.float32(1.0), a, b).dtype == np.float32
        assert helper(np.float64(1.0), a, b).dtype == np.float64


def test_no_sum_no_rounding():
    # a vector b: a's cotangent is g * b on every row, the product's exact numbers
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 6)), rng.standard_normal(6)
    assert_bit_identical(summed_matmul_grad_a(0.3, a, b), general(matmul_grad_a, 0.3, a, b))
    a, b = rng.standard_normal(6), rng.standard_normal((6, 5))
    assert_bit_identical(summed_matmul_grad_b(0.3, a, b), general(matmul_grad_b, 0.3, a, b))


def _general_cases():
    rng = np.random.default_rng(2)
    yield 1.0, rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))     # a stack
    yield 1.0, rng.standard_normal((3, 4)), rng.standard_normal((2, 4, 5))     # b a stack
    yield 0.5, rng.standard_normal((3, 1, 2, 4)), rng.standard_normal((5, 4, 3))  # broadcast
    yield 1.0, rng.standard_normal(4), rng.standard_normal((2, 4, 5))         # vector, stack
    yield 1.0, rng.standard_normal((2, 3, 4)), rng.standard_normal(4)         # stack, vector
    yield 1.0, rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4, 5))  # batches differ
    yield 1.0, np.ones((3, 4), bool), np.ones((4, 2), bool)                   # booleans
    yield 1.0, rng.standard_normal(4), rng.standard_normal(4)                  # a number
    yield 1.0, np.arange(12).reshape(3, 4), np.arange(8).reshape(4, 2)         # integers
    yield 1.0, rng.standard_normal((3, 4)).astype(np.float16), np.ones((4, 2), np.float16)
    yield 1.0, rng.standard_normal((3, 4)), np.ones((4, 2), np.longdouble)
    yield 2, rng.standard_normal((3, 4)), rng.standard_normal((4, 2))          # an int seed
    yield np.ones(2), rng.standard_normal((3, 4)), rng.standard_normal((4, 2))  # an array
    yield 1.0, [[1.0, 2.0]], [[3.0], [4.0]]                                   # lists
    yield 1.0, rng.standard_normal((3, 4)).view(np.matrix), rng.standard_normal((4, 2))


@pytest.mark.parametrize("helper, rule, which", HELPERS)
def test_elsewhere_the_helpers_make_the_product_and_apply_its_rule(helper, rule, which):
    for g, a, b in _general_cases():
        try:
            expected = general(rule, g, a, b)
        except Exception as error:  # noqa: BLE001 - the helper raises the same
            with pytest.raises(type(error)):
                helper(g, a, b)
            continue
        assert_bit_identical(helper(g, a, b), expected)


def test_a_shape_mismatch_raises_the_products_error():
    a, b = np.ones((3, 4)), np.ones((5, 2))
    with pytest.raises(ValueError) as expected:
        np.matmul(a, b)
    for helper, _, _ in HELPERS:
        with pytest.raises(ValueError) as got:
            helper(1.0, a, b)
        assert str(got.value) == str(expected.value)


def test_dask_arrays_stay_lazy_and_get_the_general_rule():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((6, 4)), rng.standard_normal((4, 3))
    x, y = da.from_array(a, chunks=3), da.from_array(b, chunks=2)
    for helper, rule, _ in HELPERS:
        lazy = helper(1.0, x, y)
        assert type(lazy).__module__.startswith("dask")
        assert_bit_identical(np.asarray(lazy), np.asarray(rule(unreduce(1.0, x @ y), x, y)))


def test_dask_rows_of_unknown_count_get_the_product():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((6, 4)), rng.standard_normal((4, 3))
    x = da.from_array(a, chunks=3)
    rows = x[x[:, 0] > 0]   # a shape of NaN rows: no empty stand-in can be made
    y = da.from_array(b, chunks=2)
    for helper, rule, _ in HELPERS:
        expected = np.asarray(rule(unreduce(1.0, rows @ y), rows, y))
        assert_bit_identical(np.asarray(helper(1.0, rows, y)), expected)


def test_cupy_like_arrays_get_the_general_rule_without_the_product():
    xp = strict_arrays   # CuPy's rules on any machine (tests/data)
    rng = np.random.default_rng(6)
    for shapes in (((5, 4), (4, 3)), ((4,), (4, 3)), ((5, 4), (4,)), ((2, 5, 4), (4, 3))):
        a, b = (rng.standard_normal(s) for s in shapes)
        x, y = xp.asarray(a), xp.asarray(b)
        for helper, rule, _ in HELPERS:
            got = helper(1.0, x, y)
            assert type(got) is xp.ndarray
            assert_bit_identical(xp.asnumpy(got),
                                 xp.asnumpy(rule(unreduce(1.0, x @ y), x, y)))
    got = srcgrad.grad(tanh_chain, wrt=(0, 1, 2))(*(xp.asarray(v) for v in PROGRAMS[0][1]))
    expected = srcgrad.grad(tanh_chain, wrt=(0, 1, 2), optimize=False)(*PROGRAMS[0][1])
    _close_to_unoptimised([xp.asnumpy(v) for v in got], expected, 6)


# --- the pass, on hand-written sweeps --------------------------------------------------

def _program(*products, others=()):
    """A program whose statements assign each name in ``products`` a product
    ``a @ b`` and each in ``others`` a sine."""
    body = []
    for x in products:
        stmt = gast.parse(f"{x} = a @ b").body[0]
        stmt.op = ir.Op(operator.matmul, [ir.name("a"), ir.name("b")], {}, None, "@")
        body.append(stmt)
    for x in others:
        stmt = gast.parse(f"{x} = np.sin(a)").body[0]
        stmt.op = ir.Op(np.sin, [ir.name("a")], {}, None, "np.sin")
        body.append(stmt)
    return SimpleNamespace(body=body)


def _run(source, program=None):
    return show_statements(sum_products(gast.parse(source).body, program or _program("p")))


READERS = "d_a = matmul_grad_a(d_p, a, b)\nd_b = matmul_grad_b(d_p, a, b)\n"


def test_the_readers_take_the_scalar_and_the_broadcast_goes():
    out = _run("d_s = grad_seed(s)\nd_p = unreduce(d_s, p)\n" + READERS + "return d_a, d_b")
    assert "unreduce" not in out and "d_p" not in out
    assert "d_a = summed_matmul_grad_a(d_s, a, b)  # d_s times b's row sums, on every row" in out
    assert "d_b = summed_matmul_grad_b(d_s, a, b)  # d_s times a's column sums, in every" in out


def test_a_mean_keeps_its_scalar_where_the_broadcast_was():
    out = _run("d_s = grad_seed(s)\nd_p = unreduce(d_s / np.size(p), p)\n" + READERS)
    assert out.splitlines()[1] == "d_p = d_s / summed_product_size(a, b)"
    assert "summed_matmul_grad_a(d_p, a, b)" in out and "summed_matmul_grad_b(d_p, a, b)" in out


def test_a_product_read_inside_a_sum_is_rewritten():
    out = _run("d_p = unreduce(d_s, p)\nd_a = d_a + matmul_grad_a(d_p, a, b)\n")
    assert "d_a = d_a + summed_matmul_grad_a(d_s, a, b)" in out


def test_a_means_count_comes_from_the_operands_unless_the_sweep_assigns_them():
    mean = "d_p = unreduce(d_s / size_of(p), p)\n"
    out = _run(mean + READERS)
    assert out.splitlines()[0] == "d_p = d_s / summed_product_size(a, b)"
    out = _run(mean + READERS.replace("d_b = ", "a = a_tape.pop()\nd_b = "))
    assert out.splitlines()[0] == "d_p = d_s / size_of(p)"


def test_the_count_matches_the_products_size():
    for a, b in (np.ones((2, 3)), np.ones((3, 4))), (np.ones(3), np.ones((3, 4))), \
            (np.ones((2, 3)), np.ones(3)), (np.ones(3), np.ones(3)), \
            (np.ones((5, 2, 3)), np.ones((3, 4))), (np.ones((2, 3), np.float16), np.ones((3, 4))):
        assert summed_product_size(a, b) == np.size(a @ b)


def test_a_seed_assigned_again_stays_a_statement():
    out = _run("d_p = unreduce(d_s, p)\nd_s = d_s * 2\n" + READERS)
    assert "d_p = d_s" in out and "summed_matmul_grad_a(d_p, a, b)" in out


@pytest.mark.parametrize("source", [
    "d_p = unreduce(d_s, p, 0)\n" + READERS,                        # a sum over an axis
    "d_p = unreduce(d_s, p, None, True)\n" + READERS,               # keepdims
    "d_p = unreduce(d_s, p)\n" + READERS + "d_c = d_p * 2\n",        # another reader
    "d_p = unreduce(d_s, p)\n" + READERS + "return d_p\n",          # returned
    "d_p = unreduce(d_s, p)\nd_q = d_p\n" + READERS,                  # a copy
    "d_p = unreduce(d_s, p)\nd_a = matmul_grad_a(d_p, d_p, b)\n",    # read twice
    "d_p = unreduce(d_s, p)\nfor i in r:\n    d_a = matmul_grad_a(d_p, a, b)\n",  # a loop
    "d_p = unreduce(d_s, p)\nif c:\n    d_a = matmul_grad_a(d_p, a, b)\n",       # a branch
    "d_p = unreduce(d_s, p)\n" + READERS + "d_p = unreduce(d_s, p)\n" + READERS,  # twice
    "d_p = unreduce(d_s, p)\nd_a = tensordot_grad_a(d_p, a, b)\n",   # another product
    "d_p = unreduce(d_s, p)\nd_a = matmul_grad_a(d_p, a, b, c)\n",   # another signature
])
def test_any_other_use_of_the_cotangent_leaves_the_sweep_alone(source):
    assert "summed" not in _run(source)


def test_only_a_products_cotangent_is_rewritten():
    source = "d_p = unreduce(d_s, p)\n" + READERS
    assert "summed" not in _run(source, _program(others=["p"]))      # p = np.sin(a)
    assert "summed" not in _run(source, _program("p", others=["p"]))  # p assigned twice
    assert "summed" not in _run(source, _program())                  # p an argument


# --- whole programs --------------------------------------------------------------------

def tanh_chain(A, B, C):
    return np.sum(np.tanh(A @ B) @ C)


def mean_chain(A, C):
    return np.mean(np.tanh(A) @ C)


def vector_times_matrix(a, C):
    return np.sum(np.sin(a) @ C) * 2.0


def matrix_times_vector(A, c):
    return (A @ np.cos(c)).sum()


def via_matmul(A, C):
    return np.sum(np.matmul(A * A, C))


def summed_over_an_axis(A, C):
    return np.sum(np.sum(A @ C, axis=0) ** 2)


def product_read_twice(A, C):
    P = A @ C
    return np.sum(P) + np.sum(P * P)


def batched(A, C):
    return np.sum(A @ C)


def _args(*shapes, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(s).astype(dtype) for s in shapes)


PROGRAMS = [
    (tanh_chain, _args((4, 5), (5, 6), (6, 3)), True),
    (mean_chain, _args((4, 5), (5, 3)), True),
    (vector_times_matrix, _args((5,), (5, 3)), True),
    (matrix_times_vector, _args((4, 5), (5,)), True),
    (via_matmul, _args((4, 5), (5, 3)), True),
    (summed_over_an_axis, _args((4, 5), (5, 3)), False),
    (product_read_twice, _args((4, 5), (5, 3)), False),
    (batched, _args((2, 4, 5), (5, 3)), True),
    (tanh_chain, _args((4, 5), (5, 6), (6, 3), dtype=np.float32), True),
]


def _wrt(fn):
    return tuple(range(fn.__code__.co_argcount))


def _close_to_unoptimised(got, expected, n):
    assert len(got) == len(expected)
    for x, y in zip(got, expected):
        assert x.dtype == y.dtype and x.shape == y.shape
        eps = np.finfo(y.dtype).eps
        assert np.max(np.abs(x - y)) <= 16 * n * eps * max(1.0, np.max(np.abs(y)))


@pytest.mark.parametrize("fn, args, fires", PROGRAMS,
                         ids=[f"{p[0].__name__}-{p[1][0].dtype}" for p in PROGRAMS])
def test_gradients_against_the_unoptimised_code_and_differences(fn, args, fires):
    g = srcgrad.grad(fn, wrt=_wrt(fn))
    assert ("summed_matmul_grad" in g.source) == fires
    copies = [a.copy() for a in args]
    got = g(*args)
    for a, c in zip(args, copies):   # the caller's arrays are never written
        assert_bit_identical(a, c)
    expected = srcgrad.grad(fn, wrt=_wrt(fn), optimize=False)(*args)
    _close_to_unoptimised(got, expected, max(max(a.shape) for a in args))
    if args[0].dtype == np.float64:
        for i, x in enumerate(got):
            np.testing.assert_allclose(x, numeric_grad(fn, list(args), i), rtol=1e-6,
                                       atol=1e-8)


@pytest.mark.parametrize("fn, args, fires", PROGRAMS[:5])
def test_value_and_grad_keeps_the_functions_value_bit_for_bit(fn, args, fires):
    value, grads = srcgrad.value_and_grad(fn, wrt=_wrt(fn))(*args)
    assert_bit_identical(value, fn(*args))
    _, plain = srcgrad.value_and_grad(fn, wrt=_wrt(fn), optimize=False)(*args)
    _close_to_unoptimised(grads, plain, 8)


def test_the_product_is_not_kept_for_the_adjoint_sweep():
    source = srcgrad.grad(tanh_chain, wrt=(0, 1, 2)).source
    assert "save: t3" not in source and "save: t2" in source
    assert "unreduce" not in source


@pytest.mark.parametrize("policy", ["recompute", "sqrt", ("revolve", 2)])
def test_every_policy(policy):
    fn, args, _ = PROGRAMS[0]
    got = srcgrad.grad(fn, wrt=(0, 1, 2), policy=policy)(*args)
    expected = srcgrad.grad(fn, wrt=(0, 1, 2), optimize=False)(*args)
    _close_to_unoptimised(got, expected, 6)


def test_vjp_with_a_given_cotangent():
    fn, args, _ = PROGRAMS[0]
    value, pullback = srcgrad.vjp(fn, *args)
    assert_bit_identical(value, fn(*args))
    got = pullback(np.float64(0.5))
    expected = [0.5 * x for x in srcgrad.grad(fn, wrt=(0, 1, 2), optimize=False)(*args)]
    _close_to_unoptimised(got, expected, 6)


def test_the_benchmark_workload_against_its_careful_hand_gradient():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import workloads
    finally:
        sys.path.remove(str(BENCHMARKS))
    rng = np.random.default_rng(0)
    args = tuple(rng.standard_normal((64, 64)) / 8 for _ in range(3))
    got = srcgrad.grad(workloads.tanh_chain_loss, wrt=(0, 1, 2))(*args)
    for x, y in zip(got, workloads.tanh_chain_hand(*args)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-13)


def test_an_exported_module_carries_the_helpers(tmp_path):
    path = tmp_path / "exported.py"
    g = srcgrad.grad(tanh_chain, wrt=(0, 1, 2))
    srcgrad.export(path, g)
    text = path.read_text()
    assert "def summed_matmul_grad_a" in text and "def summed_matmul_grad_b" in text
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    args = PROGRAMS[0][1]
    for x, y in zip(namespace["grad_tanh_chain"](*args), g(*args)):
        assert_bit_identical(x, y)


# --- grad seeded without the product ---------------------------------------------------

def via_matmul_summed(A, C):
    return np.sum(np.matmul(np.tanh(A), C))


def operand_reassigned(A, C):
    X = np.tanh(A)
    P = X @ C
    X = X * 2.0
    return np.sum(P) + np.sum(X) * 0.0


def test_grad_drops_the_product_value_and_grad_keeps_it():
    grad = srcgrad.grad(tanh_chain, wrt=(0, 1, 2)).source
    assert "d_t4 = summed_product_seed(np.sum, t2, C)" in grad
    assert "t2 @ C" not in grad.split("# Adjoint sweep")[0]
    both = srcgrad.value_and_grad(tanh_chain, wrt=(0, 1, 2)).source
    assert "summed_product_seed" not in both and "np.sum(t2 @ C)" in both
    # np.mean's rule divides by the product's size: counted from the operands' shapes
    mean = srcgrad.grad(mean_chain, wrt=(0, 1)).source
    assert "d_t3 = summed_product_seed(np.mean, t1, C)" in mean
    assert "d_t2 = d_t3 / summed_product_size(t1, C)" in mean
    assert "t1 @ C" not in mean.split("# Adjoint sweep")[0]


@pytest.mark.parametrize("fn", [via_matmul_summed, operand_reassigned, product_read_twice,
                                summed_over_an_axis])
def test_otherwise_the_seed_reads_the_value(fn):
    g = srcgrad.grad(fn, wrt=(0, 1))
    assert "summed_product_seed" not in g.source and "grad_seed(" in g.source
    args = _args((4, 5), (5, 3))
    _close_to_unoptimised(g(*args), srcgrad.grad(fn, wrt=(0, 1), optimize=False)(*args), 5)


def test_the_seed_has_the_dtype_of_the_products_sum():
    rng = np.random.default_rng(4)
    for da, db in ((np.float32, np.float32), (np.float32, np.float64), (np.float64, np.complex64),
                   (np.complex64, np.complex64)):
        for shapes in (((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,))):
            a = rng.standard_normal(shapes[0]).astype(da)
            b = rng.standard_normal(shapes[1]).astype(db)
            for reduction in (np.sum, np.mean):
                if np.iscomplexobj(a @ b):  # grad of a complex output: refused by both
                    with pytest.raises(NonDifferentiableError, match="complex"):
                        grad_seed(reduction(a @ b))
                    with pytest.raises(NonDifferentiableError, match="complex"):
                        summed_product_seed(reduction, a, b)
                    continue
                expected = grad_seed(reduction(a @ b))
                assert_bit_identical(summed_product_seed(reduction, a, b), expected)


def test_the_seed_raises_what_the_product_raises():
    for a, b, error in (([[1.0]], [[2.0]], TypeError),
                        (np.ones((3, 4)), np.ones((3, 4)), ValueError)):
        with pytest.raises(error) as expected:
            np.sum(a @ b)
        with pytest.raises(error) as got:
            summed_product_seed(np.sum, a, b)
        assert str(got.value) == str(expected.value)
    big = np.full((2, 2), 1e200)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        summed_product_seed(np.sum, big, big)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            summed_product_seed(np.sum, big, big)
    with np.errstate(over="ignore"):
        assert summed_product_seed(np.sum, big, big) == 1.0


def test_grad_raises_the_functions_shape_error():
    A, B, C = _args((4, 5), (5, 6), (7, 3))
    with pytest.raises(ValueError) as expected:
        tanh_chain(A, B, C)
    with pytest.raises(ValueError) as got:
        srcgrad.grad(tanh_chain, wrt=(0, 1, 2))(A, B, C)
    assert str(got.value) == str(expected.value)


def test_sums_are_as_accurate_as_the_product_on_any_layout():
    """Found by review: a.sum(axis=0) adds row after row along a strided axis
    (no pairwise summation): 1e-2 off over 4e5 float32 rows; the sums now run
    along contiguous rows of a copy."""
    a = np.full((400_000, 2), 0.1, np.float32)
    b = np.ones((2, 3), np.float32)
    exact = float(np.float32(0.1)) * a.shape[0]
    d_b = summed_matmul_grad_b(1.0, a, b)
    assert abs(float(d_b[0, 0]) - exact) / exact < 1e-6
    d_a = summed_matmul_grad_a(1.0, b.T, np.asfortranarray(a.T))
    assert abs(float(d_a[0, 0]) - exact) / exact < 1e-6


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the mean of an empty product
def test_a_mean_scales_each_term_first():
    """Found by review: summing first overflowed (inf) where the product's rule,
    which multiplies g / size into each term, is finite; and a mean over no
    elements (g = inf) made NaN of an empty sum."""
    a = np.ones((4, 3), np.float32)
    b = np.full((3, 8), 1e38, np.float32)
    d_a = srcgrad.grad(lambda_mean, wrt=0)(a, b)
    np.testing.assert_array_equal(d_a, srcgrad.grad(lambda_mean, wrt=0, optimize=False)(a, b))
    assert np.all(np.isfinite(d_a))
    empty = np.ones((3, 0))
    np.testing.assert_array_equal(srcgrad.grad(lambda_mean, wrt=0)(np.ones((4, 3)), empty),
                                  np.zeros((4, 3)))


def lambda_mean(a, b):
    return np.mean(a @ b)
