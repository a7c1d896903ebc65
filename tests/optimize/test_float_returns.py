"""optimize/float_returns.py: code specialised on Python floats returns the
gradients as they are where each is provably a Python float (no grad_like
call); where one is not (a NumPy call on a float, an int-valued math
function, a global, an array argument) grad_like stays.  Every gradient is
the unoptimised code's (``optimize=False``) bit for bit and a Python float,
under every policy, and the value is the function's own."""

from __future__ import annotations

import math

import gast
import numpy as np
import pytest
from numeric import numeric_grad

import srcgrad
from srcgrad.ir.emit import show_statements
from srcgrad.optimize.float_returns import python_floats, return_floats

POLICIES = ("save", "recompute", "save_products", "sqrt", ("revolve", 2))
K = 0.25


def coupled(a, b):
    for i in range(40):
        a = a + 0.1 * math.sin(b)
        b = b + 0.1 * math.cos(a)
    return a * b


def branches(a, b):
    s = 0.0
    for i in range(12):
        if s > 1.0:
            s = s - 0.5 * a
        else:
            s = s + math.exp(-a * b) + b ** 2
    return s / 3 - math.hypot(a, s)


def straight(a, b):
    c = math.sin(a) * math.exp(b) + a ** 3 - 2.0 * b
    return math.tanh(c) * math.hypot(a, b) / 3


def numpy_on_floats(a, b):   # np.sin of a float is an np.float64: not proven
    return np.sin(a) * b + a


def int_valued(a, b):        # math.floor gives an int: not proven
    return a * math.floor(b) + a * b


def global_factor(a, b):     # a global: its type is not known when compiling
    return K * a * math.sin(b)


def _specialised_source(fn, kinds, **options):
    g = srcgrad.grad(fn, wrt=(0, 1), **options)
    return g._specialised(g.options, kinds).source


def _check(fn, point, policy):
    fast = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy)(*point)
    plain = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy, optimize=False)(*point)
    assert fast[0] == fn(*point)
    assert fast[1] == plain[1]
    assert all(type(g) is float for g in fast[1])
    for i in range(2):
        assert math.isclose(fast[1][i], numeric_grad(fn, point, i), rel_tol=1e-5, abs_tol=1e-8)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn", [coupled, straight, branches, numpy_on_floats, int_valued,
                                global_factor])
def test_bit_identical_to_unoptimised_code(fn, policy):
    _check(fn, (0.3, 0.7), policy)


@pytest.mark.parametrize("fn", [coupled, straight])
def test_proven_floats_are_returned_as_they_are(fn):
    source = _specialised_source(fn, (float, float))
    assert "    return d_a, d_b  # Python floats: the gradients as they are\n" in source
    assert "grad_like" not in source
    value_and_grad = srcgrad.value_and_grad(fn, wrt=(0, 1))
    assert "Python floats: the gradients as they are" in \
        value_and_grad._specialised(value_and_grad.options, (float, float)).source


# branches: a value taped in a branch is None before its first save (t5 = None)
@pytest.mark.parametrize("fn", [branches, numpy_on_floats, int_valued, global_factor])
def test_unproven_cotangents_keep_grad_like(fn):
    assert "return grad_like((d_a, d_b), (a, b))" in _specialised_source(fn, (float, float))


def test_arrays_and_unspecialised_code_keep_grad_like():
    g = srcgrad.grad(coupled, wrt=(0, 1))
    assert "return grad_like((d_a, d_b), (a, b))" in g.source      # not specialised on floats
    x = (np.float64(0.3), np.array(0.7))
    assert "grad_like" in _specialised_source(coupled, tuple(map(type, x)))
    got = g(*x)
    assert got == srcgrad.grad(coupled, wrt=(0, 1), optimize=False)(*x)


def test_one_float_argument_of_two():
    """An int argument not differentiated; the float one's gradient returned as it is."""
    def scaled(a, n):
        for i in range(n):
            a = a * 0.9 + math.sin(a) * 0.1
        return a
    g = srcgrad.grad(scaled, wrt=0)
    source = g._specialised(g.options, (float, int)).source
    assert "return d_a  # Python floats" in source
    assert g(0.4, 5) == srcgrad.grad(scaled, wrt=0, optimize=False)(0.4, 5)
    assert type(g(0.4, 5)) is float


def test_vjp_returns_its_cotangents_unchanged():
    out, back = srcgrad.vjp(coupled, 0.3, 0.7, wrt=(0, 1))
    assert back(1.0) == srcgrad.grad(coupled, wrt=(0, 1))(0.3, 0.7)


# -- the analysis on its own --------------------------------------------------------------

def _names(code, floats=("a", "b"), params=("a", "b")):
    return python_floats(gast.parse(code).body, set(floats), params)


def test_tape_read_by_a_counter_is_a_float():
    code = ("t1 = range(5)\nt = [None] * len(t1)\nfor i in t1:\n    t[i] = a\n"
            "    a = a * 2.0\nfor i in reversed(t1):\n    a = t[i]\n    d = a * 3\n")
    assert {"a", "b", "d"} <= _names(code)


@pytest.mark.parametrize("read", ["t[1:]", "t[j]", "list(t)[0]"])
def test_tape_read_otherwise_is_not(read):
    code = ("t1 = range(5)\nt = [None] * len(t1)\nj = slice(0, 2)\nfor i in t1:\n"
            f"    t[i] = a\nc = {read}\n")
    assert "c" not in _names(code)


def test_tape_passed_to_a_call_is_not_a_tape():
    code = ("t1 = range(5)\nt = [None] * len(t1)\nfor i in t1:\n    t[i] = a\n"
            "fill(t)\nfor i in t1:\n    c = t[i]\n")
    assert "c" not in _names(code)


@pytest.mark.parametrize("code", [
    "c = a ** 0.5",              # of a negative float: complex
    "c = 3 * 4",                 # ints
    "c = a // 2.0",
    "c = np.sin(a)",
    "c = math.floor(a)",
    "c = a\nc, e = b, a",        # a tuple target
    "c = a\nfor c in xs:\n    pass",
    "c = a\nc += x",
    "c = (e := a) * 2.0",        # the walrus's e is bound to a float, but not seen as one
    "sin = math.sin\nsin = np.sin\nc = sin(a)",
])
def test_not_floats(code):
    names = _names(code)
    assert "c" not in names
    assert "e" not in names


def test_array_parameter_restored_from_a_tape_is_not_a_float():
    code = ("t1 = range(5)\nt = [None] * len(t1)\nfor i in t1:\n    t[i] = x\n"
            "    x = x * 2.0\nfor i in reversed(t1):\n    x = t[i]\n")
    assert "x" not in _names(code, params=("a", "b", "x"))


def test_only_proven_returns_change():
    body = gast.parse("d_a = a * 2.0\nd_x = x * 2.0\nreturn grad_like((d_a, d_x), (a, x))").body
    out = return_floats(body, {"a"}, ["a", "x"])
    assert show_statements(out[-1:]) == "return grad_like((d_a, d_x), (a, x))"


# -- Python int arguments: scalars for the shape analysis (api/transforms.py _specialised) --

def divided(a, n):
    for i in range(n):
        a = a * 0.9 + math.sin(a) / n
    return a * n


def int_rebound_to_an_array(a, n):   # n becomes an array: its shape matters again
    n = np.arange(3.0) + n
    s = 0.0
    for i in range(3):
        s = s + np.sum(a * n) / (i + 1)
    return s


def int_as_a_shape(x, n):            # an array argument; n a size and a divisor
    s = np.zeros(n)
    for i in range(n):
        s = s + np.tanh(x[i] * s) / n
    return np.sum(s * x[:n])


def _without_ints(fn, args, wrt):
    """The gradient of the code specialised on the floats alone (the code before ints were)."""
    from srcgrad.api.compiled import compile_function
    from srcgrad.options import Options
    floats = tuple(i for i, a in enumerate(args) if type(a) is float)
    compiled = compile_function(fn, Options(mode="grad", wrt=wrt, single=False, floats=floats))
    return compiled.functions[0](*args)


@pytest.mark.parametrize("fn, args, wrt", [
    (divided, (0.4, 5), (0,)),
    (int_rebound_to_an_array, (0.4, 2), (0,)),
    (int_as_a_shape, (np.linspace(0.1, 0.9, 6), 4), (0,)),
])
def test_int_arguments_give_the_same_bits(fn, args, wrt):
    got = srcgrad.grad(fn, wrt=wrt)(*args)
    assert srcgrad.grad(fn, wrt=wrt, check=True)(*args) is not None  # value bit for bit
    want = _without_ints(fn, args, wrt)
    assert np.array_equal(got[0], want[0]) and type(got[0]) is type(want[0])
    for policy in POLICIES:
        again = srcgrad.grad(fn, wrt=wrt, policy=policy)(*args)
        assert np.array_equal(again[0], want[0])
    eps = 1e-6
    x = args[0]
    if type(x) is float:
        numeric = (fn(x + eps, *args[1:]) - fn(x - eps, *args[1:])) / (2 * eps)
        assert math.isclose(got[0], numeric, rel_tol=1e-5)


def test_an_int_divisor_needs_no_broadcasting_bookkeeping():
    g = srcgrad.grad(divided, wrt=0)
    source = g._specialised(g.options, (float, int)).source
    assert "unbroadcast" not in source and "t2_tape" not in source and "t3_tape" not in source
    assert "    return d_a  # Python floats: the gradients as they are\n" in source
    assert g(0.4, 5) == _without_ints(divided, (0.4, 5), (0,))[0]
    # a bool is not an int here, nor is np.int64: those calls run the general code
    assert "unbroadcast" in g._specialised(g.options, (float, np.int64)).source
    assert g(0.4, np.int64(5)) == g(0.4, 5)
