"""Every check, over the whole corpus (see corpus.py)."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import CORPUS
from numeric import (
    assert_close,
    float_positions,
    inner,
    jvp_fd,
    numeric_grad,
    pure,
    random_like,
)

import srcgrad
from srcgrad import compiler
from srcgrad.compiler import Options

CASES = [pytest.param(c, id=c.name) for c in CORPUS]


def _args(case, seed=0, dtype=None):
    args = case.make_args(np.random.default_rng(seed))
    if dtype is not None:
        args = tuple(a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                     for a in args)
    return args


@pytest.mark.parametrize("case", CASES)
def test_grad_matches_finite_differences(case):
    args = _args(case)
    wrt = float_positions(args)
    grads = srcgrad.grad(case.fn, wrt=wrt)(*args)
    assert isinstance(grads, tuple) and len(grads) == len(wrt)
    for index, g in zip(wrt, grads):
        assert np.shape(g) == np.shape(args[index])
        assert_close(g, numeric_grad(pure(case.fn), args, index), rtol=1e-5, atol=1e-6,
                     what=f"{case.name}: gradient of argument {index}")


@pytest.mark.parametrize("case", CASES)
def test_vjp_dot_product_identity(case):
    rng = np.random.default_rng(1)
    args = _args(case)
    value, pullback = srcgrad.vjp(case.fn, *args)
    u = random_like(rng, value)
    cotangents = pullback(u)
    positions = float_positions(args)
    directions = [random_like(rng, args[i]) for i in positions]
    lhs = inner(u, jvp_fd(pure(case.fn), args, positions, directions))
    rhs = sum(inner(cotangents[i], v) for i, v in zip(positions, directions))
    assert lhs == pytest.approx(rhs, rel=1e-5, abs=1e-6), case.name
    for i, c in enumerate(cotangents):
        assert (c is None) == (i not in positions)


@pytest.mark.parametrize("case", CASES)
def test_value_and_grad_agrees_with_grad(case):
    args = _args(case)
    wrt = float_positions(args)
    value, grads = srcgrad.value_and_grad(case.fn, wrt=wrt)(*args)
    assert value == pytest.approx(pure(case.fn)(*args), rel=1e-12)
    for g, h in zip(grads, srcgrad.grad(case.fn, wrt=wrt)(*args)):
        np.testing.assert_array_equal(g, h)


@pytest.mark.parametrize("case", [c for c in CASES if c.values[0].float32])
def test_float32_stays_float32(case):
    args = _args(case, dtype=np.float32)
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    if not wrt:
        pytest.skip("no array arguments")
    grads = srcgrad.grad(case.fn, wrt=wrt)(*args)
    reference = srcgrad.grad(case.fn, wrt=wrt)(*_args(case))
    for g, ref in zip(grads, reference):
        assert g.dtype == np.float32
        assert_close(g, ref, rtol=2e-3, atol=2e-3, what=case.name)


@pytest.mark.parametrize("case", CASES)
def test_inputs_are_never_modified(case):
    args = _args(case)
    before = [np.array(a, copy=True) for a in args]
    wrt = float_positions(args)
    srcgrad.grad(case.fn, wrt=wrt)(*args)
    _, pullback = srcgrad.vjp(case.fn, *args)
    pullback(random_like(np.random.default_rng(2), pure(case.fn)(*args)))
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", CASES)
def test_generated_source_is_deterministic(case):
    wrt = float_positions(_args(case))
    for mode in ("grad", "vjp"):
        options = Options(mode=mode, wrt=wrt, single=False)
        first = compiler.generate(case.fn, options).source
        second = compiler.generate(case.fn, options).source
        assert first == second
        compile(first, case.name, "exec")


def _gradients(case, **options):
    """grad of ``case`` with respect to every float argument, with ``options``."""
    args = _args(case)
    return srcgrad.grad(case.fn, wrt=float_positions(args), **options)(*args)


@pytest.mark.parametrize("case", CASES)
def test_optimize_off_gives_the_same_gradient(case):
    for a, b in zip(_gradients(case), _gradients(case, optimize=False)):
        assert_close(a, b, rtol=1e-12, atol=1e-12)


POLICIES = ["recompute", "save_products", lambda c: "recompute" if c.primitive != "@" else "save",
            "sqrt", ("revolve", 2), ("revolve", 1)]


@pytest.mark.parametrize("policy", POLICIES, ids=["recompute", "save_products", "callable",
                                                  "sqrt", "revolve-2", "revolve-1"])
@pytest.mark.parametrize("case", CASES)
def test_every_policy_gives_the_same_gradient(case, policy):
    args = _args(case)
    for a, b in zip(_gradients(case), _gradients(case, policy=policy)):
        assert_close(b, a, rtol=1e-10, atol=1e-12)
    _, pullback = srcgrad.vjp(case.fn, *args, policy=policy)
    u = random_like(np.random.default_rng(5), pure(case.fn)(*args))
    _, reference = srcgrad.vjp(case.fn, *args)
    for a, b in zip(reference(u), pullback(u)):
        if a is not None:
            assert_close(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_jvp_agrees_with_vjp(case):
    """Forward mode: the same value, and <u, J v> from jvp equals <J^T u, v> from vjp."""
    rng = np.random.default_rng(2)
    args = _args(case)
    positions = float_positions(args)
    directions = {i: random_like(rng, args[i]) for i in positions}
    value, tangent = srcgrad.jvp(case.fn, args, [directions.get(i) for i in range(len(args))])
    expected, pullback = srcgrad.vjp(case.fn, *args)
    assert_close(value if not isinstance(value, tuple) else np.concatenate(
        [np.ravel(v) for v in value]), expected if not isinstance(expected, tuple)
        else np.concatenate([np.ravel(v) for v in expected]), what=case.name)
    u = random_like(rng, expected)
    cotangents = pullback(u)
    lhs = inner(u, tangent)
    rhs = sum(inner(cotangents[i], v) for i, v in directions.items())
    assert lhs == pytest.approx(rhs, rel=1e-6, abs=1e-8), case.name
    assert np.shape(tangent) == np.shape(expected) if not isinstance(expected, tuple) \
        else len(tangent) == len(expected)
