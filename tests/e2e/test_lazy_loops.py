"""A loop over ``filter``, ``map`` or a generator expression pulls each item
when it gets there (found by the fuzzer, seed 801): the predicate or the
element reads what earlier steps did, so listing the items before the loop
gave another value (``filter(lambda v: np.sum(v) > s, hist)`` with ``s``
updated in the body: 0.0 against the function's 0.19)."""

import numpy as np
import pytest

import srcgrad


def pulled(x, s):
    hist = [np.sum(x), np.sum(x * x), np.sum(np.sin(x)), np.sum(x) * 0.5]
    for w in filter(lambda v: v > s, hist):
        s = s + 0.3 * w
    for a in (np.tanh(h * s) for h in hist if h < s):
        s = s * 0.9 + a
    for m in map(lambda v, k: v * k + s, hist, [1.0, 2.0, 3.0, 4.0]):
        s = s + 0.01 * m
    return s


def shadowing(x, s):
    """The generator's variable is its own: the function's ``h`` is another."""
    h = 2.0
    for y in (np.sum(x * h) for h in (0.5, 1.5) if h < s):
        s = s + y * h
    return s


def with_break(x, s):
    total = 0.0
    for v in filter(lambda v: v > s, [x[0], x[1], x[2]]):
        total = total + v * s
        s = s + v
        if total > 1.0:
            break
    return total + s


@pytest.mark.parametrize("fn", [pulled, shadowing, with_break])
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt"])
@pytest.mark.parametrize("point", [(np.array([0.3, -0.2, 0.5]), 0.1),
                                   (np.array([0.9, 0.4, 0.7]), 0.6)])
def test_generators_are_pulled_as_the_loop_runs(fn, policy, point):
    x, s = point
    value, (d_x, d_s) = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy)(x, s)
    assert value == fn(x, s)
    eps = 1e-6
    numeric = [(fn(x + eps * e, s) - fn(x - eps * e, s)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(d_x, numeric, rtol=1e-6, atol=1e-8)
    assert d_s == pytest.approx((fn(x, s + eps) - fn(x, s - eps)) / (2 * eps), rel=1e-6, abs=1e-8)
