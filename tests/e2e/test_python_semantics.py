"""Python's own semantics where srcgrad once differed from them (outside review 3):
the derivative of ``x ** 0`` at 0 (0, not NaN or a ZeroDivisionError), and the
like.  Every case: the value bit for bit the function's own, the gradient
against central differences (and autograd where it runs), grad and jvp."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, check_policies, jvp_fd, numeric_grad

import srcgrad


def check(fn, args, wrt=0, autograd_too=True):
    """value_and_grad: value bit for bit, gradient vs differences (and autograd);
    jvp along ones: value bit for bit, tangent vs differences."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a NaN on the way is a failure
        value, grad = srcgrad.value_and_grad(fn, wrt=wrt, check=True)(*args)
        assert_bit_identical(value, fn(*args), fn.__name__)
        expected = numeric_grad(fn, list(args), wrt)
        assert_close(grad, expected, what=f"grad of {fn.__name__}")
        direction = np.ones_like(args[wrt]) if isinstance(args[wrt], np.ndarray) else 1.0
        tangents = tuple(direction if i == wrt else None for i in range(len(args)))
        primal, tangent = srcgrad.jvp(fn, tuple(args), tangents)
        assert_bit_identical(primal, fn(*args), fn.__name__)
        assert_close(tangent, jvp_fd(fn, list(args), [wrt], [direction]),
                     what=f"jvp of {fn.__name__}")
    if autograd_too:
        autograd = pytest.importorskip("autograd")
        assert_close(grad, autograd.grad(fn, wrt)(*args), what=f"autograd, {fn.__name__}")


# --- x ** 0 (finding 9) ------------------------------------------------------------------

def poly(x, c):
    return sum(c[k] * x ** k for k in range(len(c)))


def poly_sum(x, c):
    return np.sum(poly(x, c))


def powers(x):
    return np.sum(x ** 0 + x ** 1 + x ** 2 + x ** 3)


def mpow(x):
    return math.pow(x, 0) + math.pow(x, 1) * 2.0 + x


def builtin_pow(x):
    return pow(x, 0) + pow(x, 2)


def exponent_in_loop(x, n):
    total = 0.0
    for k in range(n):
        if k % 2 == 0:
            total = total + np.sum(x ** k)
        else:
            total = total + np.sum(np.power(x, k)) * 0.5
    return total


def array_exponent(x):
    p = np.array([0.0, 1.0, 2.0])
    return np.sum(x ** p)


@pytest.mark.parametrize("fn, args", [
    (poly, (0.0, np.array([1.0, 2.0, 3.0]))),
    (poly_sum, (np.array([0.0, 0.5]), np.array([1.0, 2.0, 3.0]))),
    (powers, (np.array([0.0, 1.0, -2.0]),)),
    (mpow, (0.0,)),
    (builtin_pow, (0.0,)),
    (exponent_in_loop, (np.array([0.0, 0.7, -1.3]), 4)),
    (array_exponent, (np.array([0.0, 0.0, 1.5]),)),
], ids=["poly-float", "poly-array", "powers", "math.pow", "pow", "loop", "array-exponent"])
def test_power_zero_exponent_at_zero(fn, args):
    check(fn, args, autograd_too=fn not in (mpow,))


def test_power_zero_exponent_policies():
    check_policies(exponent_in_loop, (np.array([0.0, 0.7, -1.3]), 4))


def lin_quad(x):
    return np.sum(x ** 1 + x ** 2 + x ** 3)


def test_power_second_order_at_zero():
    """hvp of x ** 1 (its derivative x ** 0 differentiated again) and of x ** k with
    k from a loop: finite at 0."""
    x, v = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert_close(srcgrad.hvp(lin_quad)(x, v), np.array([2.0, 8.0]))
        c = np.array([1.0, 2.0, 3.0, 4.0])
        assert_close(srcgrad.hvp(poly, wrt=0)(0.0, c, 1.0), 6.0)


def test_power_generated_code_folds_literal_exponents():
    """A literal exponent is folded at compile time: no guard in the code."""
    source = srcgrad.grad(lambda x: np.sum(x ** 3 + x ** 2)).source
    assert "3 * x ** 2" in source and "2 * x" in source and "!=" not in source


# --- `a or b` / `a and b` as values (finding 2) ------------------------------------------

def scale_or_default(x, s):
    t = s or 1.0
    return np.sum(t * x)


def first_if_nonzero(x):
    t = x[0] and x[1]
    return t * 3.0


def chain_in_loop(x, flags):
    total = 0.0
    for i in range(len(x) - 2):
        total = total + (flags[i] and x[i + 1] or x[i + 2]) * (x[i] + 1.0)
    return total


def helper_pick(a, b):
    return a or b * 2.0


def or_in_helper(x):
    return helper_pick(x[0] * 0.0, x[1]) + helper_pick(x[2], x[3]) ** 2 + x[0]


def nested_in_expression(x):
    w = np.sum(x)
    y = np.tanh((x[0] - x[0] or w) * x) if w > 0 else x * 0.5
    return np.sum(y)


def short_circuit(x):
    calls = [0]

    def expensive(v):
        calls[0] += 1
        return np.sum(v ** 2)

    t = x[0] * (x[1] > 0.5) or expensive(x)
    return t * 2.0 + calls[0]


OR_AND = [
    (scale_or_default, (np.array([1.0, 2.0, 3.0]), 0.7), 1),
    (scale_or_default, (np.array([1.0, 2.0, 3.0]), 0.0), 0),
    (first_if_nonzero, (np.array([1.5, 2.0, 3.0]),), 0),
    (first_if_nonzero, (np.array([1.5, 0.0, 3.0]),), 0),
    (chain_in_loop, (np.array([0.5, 0.3, 2.0, -0.7, 1.5]), np.array([1, 0, 1])), 0),
    (or_in_helper, (np.array([0.5, 1.5, 2.0, 3.0]),), 0),
    (nested_in_expression, (np.array([0.2, -0.3, 0.4]),), 0),
]


@pytest.mark.parametrize("fn, args, wrt", OR_AND,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(OR_AND)])
def test_or_and_return_an_operand(fn, args, wrt):
    check(fn, args, wrt)


@pytest.mark.parametrize("fn, args, wrt", OR_AND[:6],
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(OR_AND[:6])])
def test_or_and_policies(fn, args, wrt):
    check_policies(fn, args, wrt)


def test_or_short_circuits():
    """The right operand runs only where the left one is false."""
    for x in (np.array([0.5, 1.0]), np.array([0.5, 0.25])):
        value, grad = srcgrad.value_and_grad(short_circuit)(x)
        assert value == short_circuit(x)
        assert_close(grad, numeric_grad(short_circuit, [x], 0))


def test_or_of_comparisons_stays_whole():
    source = srcgrad.grad(lambda x: np.sum(x) * (x.ndim > 1 or x.shape[0] > 2)).source
    assert "x.ndim > 1 or x.shape[0] > 2" in source


# --- defaults of a local def or lambda: evaluated where it is defined (finding 1) ---------

def lambda_default_capture(x):
    k = x[0]
    g = lambda v, k=k: v * k  # noqa: E731
    k = 5.0
    return np.sum(g(x)) + k


def def_defaults_in_loop(x, w):
    total = 0.0
    for i in range(3):
        def term(v, i=i, s=x[i] * 2.0):
            return v[i] * s
        i = i + 1
        total = total + term(w) + term(w, 0)
    return total


def default_in_branch(x):
    scale = x[1]
    if x[0] > 0:
        scale = scale * 3.0
        add = lambda v, c=scale: v + c  # noqa: E731
        scale = 0.0
        out = add(x) * x[2]
    else:
        out = x * 2.0
    return np.sum(out) + scale


def pick_helper(x, n):
    fns = 0.0
    for j in range(n):
        h = lambda v, j=j, a=x[j]: v * a + j  # noqa: E731
        fns = fns + np.sum(h(x[::-1]))
    return fns


DEFAULTS = [
    (lambda_default_capture, (np.array([0.5, 1.0, 2.0]),)),
    (def_defaults_in_loop, (np.array([0.5, 1.0, 2.0]), np.array([1.5, -1.0, 0.3]))),
    (default_in_branch, (np.array([0.5, 1.0, 2.0]),)),
    (default_in_branch, (np.array([-0.5, 1.0, 2.0]),)),
    (pick_helper, (np.array([0.5, -1.0, 2.0]), 3)),
]


@pytest.mark.parametrize("fn, args", DEFAULTS,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(DEFAULTS)])
def test_defaults_evaluated_at_definition(fn, args):
    check(fn, args)
    check_policies(fn, args)
