"""optimize/unit_seed.py and runtime times_one / into_first / into_second: a
scalar cotangent times an array without the pass over the array where the
scalar is 1 (grad's seed, a full sum's cotangent).

The helpers: the array itself exactly where 1 times it changes nothing (a real
1 of a dtype the product keeps; NaN, its sign, -0.0 and infinities come back
as they are), the product otherwise (another number, float32 times a float64
one, complex, integers).  The pass: where it applies (the seed times a value
read once more), where it must not (the product's array written into, the
operand's array written into, the product returned or kept, a loop, a name
that is not a seed).  Whole programs: gradients bit-identical to the code
without optimisation in float64/float32, with NaN, -0.0 and inf, under every
policy, with a loop, a branch and a helper; vjp with a cotangent that is not 1;
no gradient is ever the caller's array.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, bit_identical_but_nan_signs, check_every_policy
from recurrences import compiled_without

import srcgrad
from srcgrad.ir.emit import show_statements
from srcgrad.optimize.unit_seed import seed_products
from srcgrad.runtime import into_first, into_second, times_one

SPECIAL = np.array([2.5, -0.0, 0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, 1e308])


# --- the helpers ------------------------------------------------------------------------------

@pytest.mark.parametrize("one", [1.0, 1, np.float64(1.0)])
def test_times_one_gives_the_array_itself(one):
    assert times_one(one, SPECIAL) is SPECIAL
    assert_bit_identical(one * SPECIAL, SPECIAL)   # what the product would be


def test_times_one_of_float32():
    b = SPECIAL[:-1].astype(np.float32)
    assert times_one(np.float32(1.0), b) is b
    promoted = times_one(np.float64(1.0), b)        # float64: a new array, as the product
    assert promoted is not b
    assert_bit_identical(promoted, np.float64(1.0) * b)


@pytest.mark.parametrize("s, b", [
    (2.0, SPECIAL), (np.float64(np.nan), SPECIAL), (-1.0, SPECIAL), (True, SPECIAL),
    (1.0, np.array([1 + 2j, complex(np.inf, 0.0)])), (1.0, np.arange(3)),
    (np.ones(3), SPECIAL[:3]), (1.0, 3.0)])
def test_times_one_otherwise_the_product(s, b):
    with np.errstate(all="ignore"):
        got = times_one(s, b)
        assert_bit_identical(got, s * b)
    assert got is not b


def test_in_place_helpers_skip_the_pass():
    b = SPECIAL.copy()
    assert into_second(np.multiply, np.float64(1.0), b) is b
    assert into_first(np.multiply, b, 1.0) is b
    assert into_first(np.true_divide, b, 1) is b
    assert_bit_identical(b, SPECIAL)
    c = SPECIAL[:-1].astype(np.float32)
    got = into_second(np.multiply, np.float64(1.0), c)   # promoted: the plain product
    assert got.dtype == np.float64 and got is not c
    with np.errstate(over="ignore"):
        two = into_second(np.multiply, 2.0, SPECIAL.copy())
        assert_bit_identical(two, 2.0 * SPECIAL)


# --- the pass ---------------------------------------------------------------------------------

def _run(source):
    return show_statements(seed_products(gast.parse(source).body))


def test_the_seed_times_a_value_read_once_more():
    out = _run("d_t = unreduced(d_s, x)\nd_a = d_t * m\nd_b = m * d_t\n"
               "d_y = into_second(np.multiply, d_a, np.cos(y))\nd_k = d_b + m / 2\ndel m")
    assert "d_a = times_one(d_t, m)" in out
    assert "d_b = times_one(d_t, m)" in out


@pytest.mark.parametrize("source", [
    "d_t = grad_seed(t)\nd_a = d_t * m\nd_c = into_first(np.add, d_a, e)",     # d_a written into
    "d_t = grad_seed(t)\nd_a = d_t * m\nd_c = into_operand(np.exp, d_a)",
    "d_t = grad_seed(t)\nd_a = d_t * m\nd_c = d_a * 2\nd_m = into_second(np.add, e, m)",  # m
    "d_t = grad_seed(t)\nd_a = d_t * m\nm += 1.0\nd_c = d_a * 2",
    "d_t = grad_seed(t)\nd_a = d_t * m\nreturn grad_like(d_a, m)",             # handed back
    "d_t = grad_seed(t)\nd_a = d_t * m\nys = [d_a]",                             # kept
    "d_t = grad_seed(t)\nd_a = d_t * m\nd_c = unbroadcast(d_a, x)",              # may be d_a
    "d_t = grad_seed(t)\nd_a = d_t * m\nfor i in range(2):\n    d_c = d_a * 2",  # a loop
    "d_t = grad_seed(t)\nd_t = d_t * 2\nd_a = d_t * m\nd_c = d_a * 2",           # bound twice
    "d_t = seed(t)\nd_a = d_t * m\nd_c = d_a * 2",                               # no seed
    "d_t = grad_seed(t)\nd_a = d_t * m\nd_c = np.add(d_a, 1.0, out=d_a)"])
def test_not_where_a_condition_fails(source):
    assert "times_one" not in _run(source)


# --- whole programs ---------------------------------------------------------------------------

def chain(x):
    a = np.sin(x)
    m = np.exp(a)
    aa = np.cos(a * x)
    return np.sum(aa * m + a)


def summed_product(x, c):       # d_x would be c itself: returned, so left alone
    return np.sum(x * c)


def in_a_loop(x):
    s = np.sin(x)
    for i in range(3):
        s = np.tanh(s * x)
    return np.sum(s * x)


def in_a_branch(x):
    a = np.sin(x)
    if x[0] > 0:
        b = a * np.exp(x)
    else:
        b = a * x
    return np.sum(b * a)


def _half(v):
    return np.exp(v) * 0.5


def through_a_helper(x):
    a = _half(x)
    m = np.tanh(x)
    return np.sum(a * m)


PROGRAMS = [chain, in_a_loop, in_a_branch, through_a_helper]


def test_the_chain_skips_the_seed_pass():
    g = srcgrad.grad(chain)
    g(np.linspace(-1.0, 1.0, 7))
    assert "times_one(" in g.source


@pytest.mark.parametrize("fn", PROGRAMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("policy", POLICIES)
def test_bit_identical_to_the_code_without_optimisation(fn, dtype, policy):
    x = np.linspace(-1.3, 1.7, 23).astype(dtype)
    got = srcgrad.grad(fn, policy=policy)(x)
    assert_bit_identical(got, srcgrad.grad(fn, policy=policy, optimize=False)(x))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("fn", PROGRAMS)
def test_special_values(fn, monkeypatch):
    # bit for bit, NaN's sign included, against the optimising pipeline without
    # optimize/signs.py (which may change the sign of a NaN, and nothing else:
    # tests/optimize/test_signs.py); with it, NaN's sign aside
    x = SPECIAL.copy()
    for policy in POLICIES:
        got = srcgrad.grad(fn, policy=policy)(x)
        plain = srcgrad.grad(fn, policy=policy, optimize=False)(x)
        _, without_signs, _ = compiled_without(monkeypatch, fn, "carry_signs", policy=policy)
        assert_bit_identical(without_signs(x), plain)
        assert bit_identical_but_nan_signs(got, plain)
        assert_bit_identical(x, SPECIAL)


@pytest.mark.parametrize("fn", PROGRAMS)
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (np.linspace(-0.9, 1.2, 17),))


def test_vjp_with_a_cotangent_that_is_not_one():
    x = np.linspace(-1.0, 1.0, 9)
    for cotangent in (2.0, np.float64(1.0), 1.0):
        value, back = srcgrad.vjp(chain, x)
        plain_value, plain_back = srcgrad.vjp(chain, x, optimize=False)
        assert_bit_identical(back(cotangent), plain_back(cotangent))


def test_no_gradient_is_the_callers_array():
    x, c = np.linspace(-1.0, 1.0, 5), np.linspace(2.0, 3.0, 5)
    d_x, d_c = srcgrad.grad(summed_product, wrt=(0, 1))(x, c)
    assert not np.shares_memory(d_x, c) and not np.shares_memory(d_c, x)
    assert_bit_identical(d_x, c.copy())
    d_x[0] = 99.0
    assert c[0] == 2.0
