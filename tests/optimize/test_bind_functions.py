"""optimize/bind_functions.py: math functions called in loops are bound to
local names once a call.  The same functions, so the same bits."""

import math

import numpy as np
import pytest

import srcgrad


def coupled(a, b):
    for i in range(50):
        a = a + 0.1 * math.sin(b)
        b = b + 0.1 * math.cos(a)
    return a * b


def shadowed(a, b):
    sin = 0.5  # a variable named like the function: the binding takes another name
    k = 0
    while k < 20:
        a = a + sin * math.sin(b) + math.exp(-a * a)
        sin = sin * 0.99
        for j in range(3):
            b = b * 0.9 + math.tanh(a) * 0.05
        k += 1
    return a + b + sin


def outside_loops(a, b):
    return math.sin(a) * math.cos(b)


@pytest.mark.parametrize("fn", [coupled, shadowed, outside_loops])
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt"])
def test_bit_identical_to_unoptimised_code(fn, policy):
    point = (0.3, 0.7)
    fast = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy)(*point)
    plain = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy, optimize=False)(*point)
    assert fast == plain
    assert fast[0] == fn(*point)
    eps = 1e-6
    numeric = ((fn(0.3 + eps, 0.7) - fn(0.3 - eps, 0.7)) / (2 * eps),
               (fn(0.3, 0.7 + eps) - fn(0.3, 0.7 - eps)) / (2 * eps))
    assert np.allclose(fast[1], numeric, rtol=1e-6)


def test_the_binding_reads_as_written():
    g = srcgrad.grad(coupled, wrt=(0, 1))
    source = g._specialised(g.options, (float, float)).source
    assert "    cos = math.cos  # bound once a call: the loops below call it every step\n" \
           "    sin = math.sin\n" in source
    assert "math.sin(" not in source
    shadow = srcgrad.grad(shadowed, wrt=(0, 1)).source
    assert "math_sin = math.sin" in shadow and "sin = sin * 0.99" in shadow
    assert "bound once" not in srcgrad.grad(outside_loops, wrt=(0, 1)).source  # no loop


def test_vjp_and_export():
    value, pullback = srcgrad.vjp(coupled, 0.3, 0.7)
    assert pullback(1.0) == srcgrad.grad(coupled, wrt=(0, 1), optimize=False)(0.3, 0.7)
