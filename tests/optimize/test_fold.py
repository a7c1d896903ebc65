"""Folding single-use temporaries (srcgrad/optimize/fold.py): the optimised code computes
the same floating-point numbers as the unoptimised code, and keeps the order of
calls."""

import fold_fns
import gast
import numpy as np
import pytest

import srcgrad
from srcgrad import pipeline
from srcgrad.ir.emit import show_statements
from srcgrad.optimize.fold import fold_temporaries
from srcgrad.options import Options


@pytest.mark.parametrize("fn, nargs", [(fold_fns.norm_chain, 1), (fold_fns.shift_and_scale, 2)])
def test_folded_gradients_are_bit_identical(fn, nargs):
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(50) for _ in range(nargs)]
    wrt = tuple(range(nargs))
    folded = srcgrad.grad(fn, wrt=wrt)(*args)
    plain = srcgrad.grad(fn, wrt=wrt, optimize=False)(*args)
    for a, b in zip(folded, plain):
        np.testing.assert_array_equal(a, b)


def test_sqrt_of_a_square_cancels_the_twos():
    src = srcgrad.grad(fold_fns.norm_chain).source
    assert "m = into_operand(np.sqrt, k * k + 1.0)" in src  # the temporary folded back in
    assert "/ m * k" in src and "2 * m" not in src


def test_signs_are_tidied():
    src = srcgrad.grad(fold_fns.shift_and_scale, wrt=(0, 1)).source
    assert "+ -" not in src and "- -" not in src


def test_calls_keep_their_order():
    body = gast.parse("t1 = f(a)\nt2 = g(b)\ny = h(t2, t1)\nreturn y").body
    out = fold_temporaries(body, {"t1", "t2"})
    # g(b) may now run inside h(...), but f(a) may not move after it
    assert show_statements(out) == "t1 = f(a)\ny = h(g(b), t1)\nreturn y"


def test_never_into_a_loop_test_or_a_comprehension():
    src = "t1 = f(a)\nwhile t1:\n    a = a - 1\nt2 = f(b)\nys = [t2 * v for v in vs]"
    body = gast.parse(src).body
    assert show_statements(fold_temporaries(body, {"t1", "t2"})) == src


def test_a_loop_gradient_gives_the_same_bits(monkeypatch):
    rng = np.random.default_rng(5)
    args = (rng.standard_normal((3, 4)) * 0.5, rng.standard_normal((4, 4)) * 0.5,
            rng.standard_normal((6, 2, 3)), rng.standard_normal((2, 4)))
    # optimize/loop_products.py reassociates the weights' sums over the steps on
    # purpose (tests/optimize/test_loop_products.py bounds it); every other
    # optimisation of this loop keeps the bits
    monkeypatch.setattr(pipeline, "products_after_loops", lambda stmts, *args: stmts)
    made = pipeline.generate(fold_fns.rnn, Options(wrt=(0, 1)))
    assert "_steps(" not in made.source
    namespace = dict(made.bindings)
    exec(compile(made.source, "<optimised>", "exec"), namespace)  # noqa: S102 - compiler output
    fast = namespace[made.entries[0]](*args)
    plain = srcgrad.grad(fold_fns.rnn, wrt=(0, 1), optimize=False)(*args)
    for a, b in zip(fast, plain):
        np.testing.assert_array_equal(a, b)
