"""``x += v`` keeps the array's type and dtype (analysis/inplace.py, runtime.in_place).

Three parts: ``in_place`` computes what NumPy's update in place leaves, for
every operator and every pair of NumPy's numeric types; the properties of
NumPy's promotion that the pass's rules rely on hold for every such pair (and
Python's numbers); and each rule, on a program: where it proves ``x + v``
exact the update stays ``x_1 = x + v``, elsewhere it becomes ``in_place``, and
the value is the function's own bit for bit either way.
"""

from __future__ import annotations

import itertools
import operator
import warnings

import numpy as np
import pytest

import srcgrad
from srcgrad import pipeline
from srcgrad.analysis.inplace import CLOSED, DOMINATING, PROMOTING, SAME_DTYPE, floating
from srcgrad.runtime import in_place

from numeric import bit_identical, numeric_grad

#: NumPy's numeric types, and Python's numbers (NumPy's weak scalars)
DTYPES = list(dict.fromkeys(np.dtype(c) for c in "?bhilqBHILQefdgFDG"))
WEAK = [2, 2.5, 2.5j]
KINDS = DTYPES + WEAK
#: ``x op= v`` and ``x op v``
AUGMENTED = {operator.iadd: operator.add, operator.isub: operator.sub,
             operator.imul: operator.mul, operator.itruediv: operator.truediv,
             operator.ifloordiv: operator.floordiv, operator.imod: operator.mod,
             operator.ipow: operator.pow, operator.imatmul: operator.matmul}
#: Every unary ufunc of NumPy with a floating result
FLOATING_UNARY = sorted((u for u in vars(np).values() if isinstance(u, np.ufunc)
                         and u.nin == 1 and floating(u)), key=lambda u: u.__name__)
RNG = np.random.default_rng(5)


def sample(kind, shape=(2, 2)):
    """An array of ``kind`` (1, 2, 3, 1, ...; alternating for bool), or the number."""
    if not isinstance(kind, np.dtype):
        return kind
    values = np.arange(int(np.prod(shape))) % 3 + 1
    return (values % 2 == 1 if kind.kind == "b" else values).astype(kind).reshape(shape)


def kind_of(value):
    return value.dtype if isinstance(value, (np.ndarray, np.generic)) else type(value)(2)


def at_least(big, small) -> bool:
    """``big``'s dtype is at least ``small``'s: promoting them gives ``big``'s."""
    if not isinstance(big, np.dtype):  # a Python number: above Python numbers only
        order = (int, float, complex)
        return not isinstance(small, np.dtype) and \
            order.index(type(big)) >= order.index(type(small))
    return np.result_type(sample(big), sample(small)) == big


def apply(op, *values):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return op(*values)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return None


# -- runtime.in_place is NumPy's update in place ----------------------------------------

@pytest.mark.parametrize("iop", list(AUGMENTED), ids=lambda f: f.__name__)
def test_in_place_leaves_what_numpy_leaves(iop):
    op = AUGMENTED[iop]
    shapes = [(), (2, 2)] if iop is not operator.imatmul else [(2, 2)]
    for x_kind, v_kind, shape in itertools.product(DTYPES, KINDS, shapes):
        x, v = sample(x_kind, shape), sample(v_kind, shape)
        expected = apply(lambda a, b: iop(a, b), x.copy(), v)
        got = apply(lambda a, b: in_place(op(a, b), a), x, v)
        if expected is None:  # NumPy refuses: so does in_place (or x op v itself)
            assert got is None, (iop.__name__, x.dtype, v_kind, shape)
        else:
            assert bit_identical(got, expected), (iop.__name__, x.dtype, v_kind, shape)


def test_in_place_passes_a_numbers_value_through_and_refuses_another_shape():
    assert in_place(1.5 + 2.0, 1.5) == 3.5 and type(in_place(1.5 + 2, 1.5)) is float
    s = np.float32(1.5)
    assert type(in_place(s + np.float64(1.0), s)) is np.float64   # += rebinds a scalar
    with pytest.raises(ValueError, match="non-broadcastable"):
        in_place(np.zeros(3) + np.zeros((2, 3)), np.zeros(3))
    x = np.ones(3)
    assert in_place(x + x, x) is not x                            # a new array, x unchanged
    assert x.tolist() == [1.0, 1.0, 1.0]


# -- the properties of NumPy's promotion the rules use ------------------------------------

def test_dominance_is_transitive():
    for a, b, c in itertools.product(KINDS, repeat=3):
        if at_least(a, b) and at_least(b, c):
            assert at_least(a, c), (a, b, c)


@pytest.mark.parametrize("prim", sorted(PROMOTING, key=str), ids=str)
def test_a_promoting_result_is_at_least_each_operand(prim):
    """DOMINATED: ``h = x * y`` -- then ``h``'s dtype is at least ``y``'s."""
    for a, b in itertools.product(KINDS, repeat=2):
        if not (isinstance(a, np.dtype) or isinstance(b, np.dtype)):
            continue
        result = apply(prim, sample(a), sample(b))
        if result is not None:
            r = kind_of(result)
            assert at_least(r, a) and at_least(r, b), (prim, a, b, r)


@pytest.mark.parametrize("prim", sorted(DOMINATING, key=str) + FLOATING_UNARY, ids=str)
def test_a_unary_result_is_at_least_its_operand(prim):
    for a in DTYPES:
        result = apply(prim, sample(a))
        if result is not None:
            assert at_least(kind_of(result), a), (prim, a, kind_of(result))


@pytest.mark.parametrize("iop", list(AUGMENTED), ids=lambda f: f.__name__)
def test_an_operand_at_most_x_keeps_x_dtype(iop):
    """``x op v`` has ``x``'s dtype where ``v``'s is at most ``x``'s: for the CLOSED
    operators whatever ``x`` is, for the others where ``x`` is floating."""
    op = AUGMENTED[iop]
    for x_kind, v_kind in itertools.product(DTYPES, KINDS):
        if not at_least(x_kind, v_kind):
            continue
        if op not in CLOSED and x_kind.kind not in "fc":
            continue
        result = apply(op, sample(x_kind), sample(v_kind))
        if result is not None:
            assert result.dtype == x_kind, (op, x_kind, v_kind, result.dtype)


def test_a_literal_number_is_at_most_a_floating_x():
    for x_kind in DTYPES:
        if x_kind.kind in "fc":
            assert at_least(x_kind, 2) and at_least(x_kind, 2.5), x_kind


def test_a_floating_function_of_a_value_at_most_a_floating_x_is_at_most_x():
    """``h += np.tanh(a)`` where ``a``'s dtype is at most the floating ``h``'s; a
    reduction of a floating value has at most its dtype (np.var of complex: float)."""
    for x_kind, a_kind in itertools.product(DTYPES, DTYPES):
        if x_kind.kind not in "fc" or not at_least(x_kind, a_kind):
            continue
        for f in FLOATING_UNARY:
            result = apply(f, sample(a_kind))
            if result is not None:
                assert at_least(x_kind, kind_of(result)), (f, x_kind, a_kind)
    for a_kind in DTYPES:
        if a_kind.kind in "fc":
            for f in SAME_DTYPE:
                result = apply(f, sample(a_kind))
                if result is not None:
                    assert at_least(a_kind, kind_of(result)), (f, a_kind)


@pytest.mark.parametrize("prim", sorted(PROMOTING, key=str), ids=str)
def test_promoting_floating_values_at_most_a_floating_x_stays_at_most_x(prim):
    """``h += 0.5 * np.tanh(h)``: floating operands (and literal numbers), each at
    most the floating ``h``."""
    floating_kinds = [k for k in DTYPES if k.kind in "fc"] + [2, 2.5]
    for x_kind in DTYPES:
        if x_kind.kind not in "fc":
            continue
        for a, b in itertools.product(floating_kinds, repeat=2):
            if not (isinstance(a, np.dtype) or isinstance(b, np.dtype)):
                continue
            if at_least(x_kind, a) and at_least(x_kind, b):
                result = apply(prim, sample(a), sample(b))
                if result is not None:
                    assert at_least(x_kind, kind_of(result)), (prim, x_kind, a, b)


@pytest.mark.parametrize("iop", list(AUGMENTED), ids=lambda f: f.__name__)
def test_numpy_refuses_a_floating_value_into_an_integer_array(iop):
    """Where ``x`` may be an integer array and ``v`` is floating there is no value to
    keep: NumPy raises."""
    for x_kind, v_kind in itertools.product(DTYPES, KINDS):
        v_floating = isinstance(v_kind, (float, complex)) or (
            isinstance(v_kind, np.dtype) and v_kind.kind in "fc")
        if x_kind.kind in "fc" or not v_floating:
            continue
        assert apply(lambda a, b: iop(a, b), sample(x_kind), sample(v_kind)) is None, \
            (iop, x_kind, v_kind)


@pytest.mark.parametrize("prim", sorted(PROMOTING, key=str) + FLOATING_UNARY, ids=str)
def test_floating_operands_give_floating_results(prim):
    """INEXACT: a promoting operation with a floating operand, a floating ufunc."""
    for kinds in itertools.product(KINDS, repeat=prim.nin if isinstance(prim, np.ufunc) else 2):
        if not any(isinstance(k, np.dtype) for k in kinds):
            continue
        if prim in PROMOTING and not any(
                isinstance(k, (float, complex)) or (isinstance(k, np.dtype) and k.kind in "fc")
                for k in kinds):
            continue
        result = apply(prim, *(sample(k) for k in kinds))
        if result is not None:
            assert kind_of(result).kind in "fcO", (prim, kinds)


def test_arithmetic_ufuncs_and_reductions_never_give_a_0d_array():
    zero_d = np.array(1.5)
    results = [zero_d + zero_d, -zero_d, abs(zero_d), zero_d * 2.0, zero_d ** 2,
               np.tanh(zero_d), np.maximum(zero_d, zero_d), np.sum(zero_d),
               np.sum(zero_d, keepdims=True), np.mean(zero_d, axis=None),
               np.ones(3) @ np.ones(3), np.max(np.ones((2, 2)), axis=None)]
    assert not any(isinstance(r, np.ndarray) and r.ndim == 0 for r in results)


# -- each rule on a program ---------------------------------------------------------------

def where_then_plus(x):
    v = np.where(x > 0.5, x, x)   # may be a 0-d array: kept one by in_place
    v += v
    return v


def float32_array_plus_float64(x):
    y = np.asarray(x, dtype=np.float32) * 1.0
    y += x                        # x may be float64: y stays float32
    return y


def floating_array_times_literal(x):
    h = np.tanh(x)                # never 0-d, floating
    h *= 2.0
    h /= 3.0
    h **= 2
    return h


def computed_from_what_it_is_updated_with(x, y):
    h = x * y                     # h's dtype is at least y's
    h = h + np.sin(h)
    h -= y
    return h


def floating_function_of_itself_in_a_loop(x):
    h = np.tanh(x)
    for _ in range(3):
        h += 0.5 * np.tanh(h)     # computed in the update's block from h
    return h


def a_floating_function_into_a_maybe_integer_array(x, k):
    h = k * 2                     # never 0-d, but maybe integer: then NumPy refuses
    h += np.sin(h)
    return h * x


def an_unrelated_array(x, b):
    h = np.tanh(x)
    h += b                        # b may be float64 where h is float32
    return h


def a_number(x, s):
    t = np.sum(x)                 # a NumPy scalar: += rebinds it
    t *= s
    return t


def element_of_a_dict(x):
    d = {"h": np.where(x > 0, x, x)}
    d["h"] *= x                   # the array d holds is updated in place
    return d["h"]


def element_of_an_array(x):
    y = np.exp(x)
    y[0] += 1.0                   # y is an array: the element takes y's dtype anyway
    y[1:] *= 2.0
    return y


def element_of_an_argument(x):
    x[0] += 1.0                   # x might be a list of arrays
    return x


@pytest.mark.parametrize("fn, wrapped", [
    (where_then_plus, True),
    (float32_array_plus_float64, True),
    (floating_array_times_literal, False),
    (computed_from_what_it_is_updated_with, False),
    (floating_function_of_itself_in_a_loop, False),
    (a_floating_function_into_a_maybe_integer_array, False),
    (an_unrelated_array, True),
    (a_number, False),
    (element_of_a_dict, True),
    (element_of_an_array, False),
    (element_of_an_argument, True),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_each_rule(fn, wrapped):
    text = pipeline.generate(fn, pipeline.Options(), dump_after="in_place")
    assert ("in_place(" in text) == wrapped, text


ARGUMENTS = {
    where_then_plus: [(np.array(0.3),), (np.array([0.3, 0.7]),)],
    float32_array_plus_float64: [(np.array(0.3),), (RNG.standard_normal(3),),
                                 (RNG.standard_normal(3).astype(np.float32),)],
    floating_array_times_literal: [(np.array(0.3),), (RNG.standard_normal(3).astype(np.float32),)],
    computed_from_what_it_is_updated_with: [
        (RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3)),
        (RNG.standard_normal(3), RNG.standard_normal(3).astype(np.float32))],
    floating_function_of_itself_in_a_loop: [(np.array(0.3),),
                                            (RNG.standard_normal(3).astype(np.float32),)],
    a_floating_function_into_a_maybe_integer_array: [
        (RNG.standard_normal(3), np.float32(2.0)), (RNG.standard_normal(3), 2.5),
        (RNG.standard_normal(3), np.full(3, 0.5, np.float32))],
    an_unrelated_array: [(RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3)),
                         (np.array(0.3), np.array(0.2))],
    a_number: [(RNG.standard_normal(3), 0.5), (RNG.standard_normal(3).astype(np.float32),
                                                np.float64(0.5))],
    element_of_a_dict: [(np.array(0.3),), (RNG.standard_normal(3),)],
    element_of_an_array: [(RNG.standard_normal(3),), (RNG.standard_normal(3).astype(np.float32),)],
    element_of_an_argument: [(RNG.standard_normal(3),)],
}


@pytest.mark.parametrize("fn", list(ARGUMENTS), ids=lambda f: f.__name__)
def test_the_value_is_the_functions_own_and_the_gradient_right(fn):
    for args in ARGUMENTS[fn]:
        expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        value, pullback = srcgrad.vjp(fn, *[a.copy() if isinstance(a, np.ndarray) else a
                                            for a in args], wrt=0)
        assert bit_identical(value, expected), (fn.__name__, value, expected)
        value, _ = srcgrad.jvp(fn, args, tuple(np.ones_like(a) if isinstance(a, np.ndarray)
                                               else 1.0 for a in args))
        assert bit_identical(value, expected), (fn.__name__, "jvp", value, expected)
        if fn is not float32_array_plus_float64 and all(  # float32 defeats finite differences
                getattr(a, "dtype", np.float64) == np.float64 for a in args):
            grad, = pullback(np.ones_like(np.asarray(expected)) if np.ndim(expected) else 1.0)

            def total(*a):
                return float(np.sum(fn(*[b.copy() if isinstance(b, np.ndarray) else b
                                          for b in a])))
            np.testing.assert_allclose(grad, numeric_grad(total, args, 0), rtol=1e-5, atol=1e-6)
