"""Every check, over the whole corpus (see corpus.py).

Translation validation: every test here that runs generated code also checks
that the value it computes (value_and_grad's, vjp's, jvp's) is the function's
own value ``f(*args)`` bit for bit -- same type, shape, dtype and bits -- for
every policy, with optimization on and off, in float64 and float32.  srcgrad's
rewrites (simplify, fold, shift-neutral extrema) change only how derivatives are
taken: the forward statements stay as the user wrote them, so no tolerance is
allowed for the value.

An independent oracle: ``test_gradient_agrees_with_autograd`` runs each corpus
function again with ``np`` bound to ``autograd.numpy`` and compares autograd's
gradient with srcgrad's (AUTOGRAD_CANNOT records where autograd itself cannot
run a function, and why).
"""

from __future__ import annotations

import builtins
import math
import sys
import types

import corpus
import helpers_module
import numpy as np
import pytest
from corpus import CORPUS
from numeric import (
    assert_bit_identical,
    assert_close,
    float_positions,
    inner,
    jvp_fd,
    numeric_grad,
    pure,
    random_like,
)

import srcgrad
from srcgrad import pipeline as compiler
from srcgrad.pipeline import Options

CASES = [pytest.param(c, id=c.name) for c in CORPUS]


def _own_value(case, args):
    """The function's own value (on copies: it may update its arguments in place)."""
    return pure(case.fn)(*args)


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
    expected = _own_value(case, args)
    assert_bit_identical(value, expected, f"{case.name}: value_and_grad, policy 'save'")
    for g, h in zip(grads, srcgrad.grad(case.fn, wrt=wrt)(*args)):
        np.testing.assert_array_equal(g, h)
    value, _ = srcgrad.vjp(case.fn, *args)
    assert_bit_identical(value, expected, f"{case.name}: vjp, policy 'save'")


@pytest.mark.parametrize("case", [c for c in CASES if c.values[0].float32])
def test_float32_stays_float32(case):
    args = _args(case, dtype=np.float32)
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    if not wrt:
        pytest.skip("no array arguments")
    value, grads = srcgrad.value_and_grad(case.fn, wrt=wrt)(*args)
    assert_bit_identical(value, _own_value(case, args), f"{case.name}: float32 value_and_grad")
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
    """grad of ``case`` with respect to every float argument, with ``options``; the
    value value_and_grad computes with them is checked to be the function's own."""
    args = _args(case)
    value, grads = srcgrad.value_and_grad(case.fn, wrt=float_positions(args), **options)(*args)
    assert_bit_identical(value, _own_value(case, args), f"{case.name}: value_and_grad, {options}")
    return grads


@pytest.mark.parametrize("case", CASES)
def test_optimize_off_gives_the_same_gradient(case):
    for a, b in zip(_gradients(case), _gradients(case, optimize=False)):
        assert_close(a, b, rtol=1e-12, atol=1e-12)


POLICIES = {"recompute": "recompute", "save_products": "save_products",
            "callable": lambda c: "recompute" if c.primitive != "@" else "save",
            "sqrt": "sqrt", "revolve-2": ("revolve", 2), "revolve-1": ("revolve", 1)}
#: Every function runs under these in `make test`; under each of the others in turn
#: (a third of the corpus each), and under all of them in `make slow`: save_products
#: and a callable policy are recompute's machinery choosing per value, revolve-1 is
#: revolve-2's schedule with one snapshot; tests/memory and check_every_policy
#: (tests/data/numeric.py) test them on their own.
EVERY_RUN = ("recompute", "sqrt", "revolve-2")
IN_TURN = ("save_products", "callable", "revolve-1")
assert set(EVERY_RUN + IN_TURN) == set(POLICIES)


def _policy_param(index, case, name):
    turn = name in EVERY_RUN or IN_TURN.index(name) == index % len(IN_TURN)
    return pytest.param(case.values[0], POLICIES[name], id=f"{case.id}-{name}",
                        marks=() if turn else pytest.mark.slow)


@pytest.mark.parametrize(("case", "policy"), [
    _policy_param(index, case, name)
    for name in POLICIES for index, case in enumerate(CASES)])
def test_every_policy_gives_the_same_gradient(case, policy):
    args = _args(case)
    for a, b in zip(_gradients(case), _gradients(case, policy=policy)):
        assert_close(b, a, rtol=1e-10, atol=1e-12)
    value, pullback = srcgrad.vjp(case.fn, *args, policy=policy)
    assert_bit_identical(value, _own_value(case, args), f"{case.name}: vjp, policy {policy!r}")
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
    assert_bit_identical(value, _own_value(case, args), f"{case.name}: jvp")
    assert_bit_identical(expected, _own_value(case, args), f"{case.name}: vjp")
    u = random_like(rng, expected)
    cotangents = pullback(u)
    lhs = inner(u, tangent)
    rhs = sum(inner(cotangents[i], v) for i, v in directions.items())
    assert lhs == pytest.approx(rhs, rel=1e-6, abs=1e-8), case.name
    assert np.shape(tangent) == np.shape(expected) if not isinstance(expected, tuple) \
        else len(tangent) == len(expected)


# -- an independent oracle: autograd -------------------------------------------------
#
# corpus.py (and helpers_module.py, which it calls) are executed a second time with
# `import numpy` giving autograd.numpy and `import math` a stand-in whose functions
# are autograd's, so every function the corpus calls -- helpers, closures, partials --
# runs on autograd's traced arrays.  Where autograd itself cannot run a function the
# test is skipped with the reason recorded here; a function missing from this table
# on which autograd raises is a failure (add it here, with the reason, if the limit is
# autograd's).

AUTOGRAD_CANNOT = {
    "shape_ops": "autograd defines no VJP of np.flip",
    "tile_repeat_broadcast": "autograd's np.broadcast_to VJP: \"Can't handle extra leading dims\"",
    "methods": "autograd's ArrayBox has no .dot method",
    "rows_filled_in_a_loop": "autograd cannot assign traced values into an array",
    "argument_updated_in_place": "autograd's ArrayBox does not support item assignment",
    "column_updates": "autograd's ArrayBox does not support item assignment",
    "masked_and_fancy_updates": "autograd's ArrayBox does not support item assignment",
    "loop_with_break_in_a_local_function": "autograd's ArrayBox does not support item "
                                           "assignment",
    "view_read_by_the_adjoint_after_an_update": "autograd's ArrayBox does not support item "
                                                "assignment",
    "shape_ops_into_a_callee_that_ignores_them": "autograd's ArrayBox.transpose takes no "
                                                 "separate axes",
    "reductions_and_products_into_a_callee_that_ignores_them": "autograd's ArrayBox has no "
                                                               ".dot method",
    "in_place_updates_of_names_rebound_in_branches": "autograd's ArrayBox does not support "
                                                     "item assignment",
    "loops_over_enumerate_of_zip": "autograd cannot assign traced values into an array",
    "element_assignment_from_the_array_itself": "autograd's ArrayBox does not support item "
                                                "assignment",
}


class _AutogradMath(types.ModuleType):
    """``math`` whose functions of one or two floats are autograd's."""

    _NAMES = {"sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log",
              "sqrt": "sqrt", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh",
              "atan": "arctan", "atan2": "arctan2", "hypot": "hypot", "log1p": "log1p",
              "expm1": "expm1", "fabs": "abs"}

    def __init__(self, anp):
        super().__init__("math")
        self._anp = anp

    def __getattr__(self, name):
        if name in self._NAMES:
            return getattr(self._anp, self._NAMES[name])
        return getattr(math, name)


def _rerun_with(module, replacements):
    """A fresh copy of ``module``, executed from its file with ``import NAME`` giving
    ``replacements[NAME]``."""
    def importer(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name in replacements:
            return replacements[name]
        return builtins.__import__(name, globals, locals, fromlist, level)

    twin = types.ModuleType(f"{module.__name__}_on_autograd")
    twin.__file__ = module.__file__
    twin.__dict__["__builtins__"] = {**builtins.__dict__, "__import__": importer}
    with open(module.__file__, encoding="utf-8") as file:
        code = compile(file.read(), module.__file__, "exec")
    sys.modules[twin.__name__] = twin   # dataclasses look their module up
    try:
        exec(code, twin.__dict__)  # noqa: S102
    finally:
        del sys.modules[twin.__name__]
    return twin


_AUTOGRAD_CORPUS = {}


def _on_autograd(case):
    """``case``'s function, running on autograd.numpy."""
    if not _AUTOGRAD_CORPUS:
        anp = pytest.importorskip("autograd.numpy")
        helpers = _rerun_with(helpers_module, {"numpy": anp})
        twin = _rerun_with(corpus, {"numpy": anp, "math": _AutogradMath(anp),
                                    "helpers_module": helpers})
        _AUTOGRAD_CORPUS.update((c.name, c.fn) for c in twin.CORPUS)
    return _AUTOGRAD_CORPUS[case.name]


@pytest.mark.filterwarnings("ignore:Output seems independent of input")
@pytest.mark.parametrize("case", CASES)
def test_gradient_agrees_with_autograd(case):
    autograd = pytest.importorskip("autograd")
    fn = _on_autograd(case)
    args = _args(case)
    wrt = float_positions(args)
    # the oracle's copy computes the same function (to rounding: math.sin there is
    # autograd's np.sin, not the C library's)
    assert_close(pure(fn)(*args), _own_value(case, args), rtol=1e-13, atol=0,
                 what=f"{case.name}: the function on autograd.numpy")
    try:
        expected = [autograd.grad(fn, i)(*[a.copy() if isinstance(a, np.ndarray) else a
                                           for a in args]) for i in wrt]
    except Exception as error:  # autograd cannot run this program
        if case.name in AUTOGRAD_CANNOT:
            pytest.skip(f"autograd cannot run {case.name}: {AUTOGRAD_CANNOT[case.name]}")
        raise AssertionError(f"autograd raised on {case.name} ({type(error).__name__}: "
                             f"{error}); if the limit is autograd's, record it in "
                             f"AUTOGRAD_CANNOT") from error
    assert case.name not in AUTOGRAD_CANNOT, \
        f"autograd now runs {case.name}: remove it from AUTOGRAD_CANNOT"
    grads = srcgrad.grad(case.fn, wrt=wrt)(*args)
    for index, g, h in zip(wrt, grads, expected):
        assert np.shape(g) == np.shape(args[index])
        assert_close(g, h, rtol=1e-10, atol=1e-12,
                     what=f"{case.name}: gradient of argument {index}, srcgrad vs autograd")
