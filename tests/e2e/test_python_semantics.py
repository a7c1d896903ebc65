"""Python's own semantics where srcgrad once differed from them (outside review 3):
the derivative of ``x ** 0`` at 0 (0, not NaN or a ZeroDivisionError), and the
like.  Every case: the value bit for bit the function's own, the gradient
against central differences (and autograd where it runs), grad and jvp."""

from __future__ import annotations

import functools
import math
import time
import warnings

import numpy as np
import pytest
from numeric import (
    assert_bit_identical,
    assert_close,
    check_policies,
    jvp_fd,
    numeric_grad,
)

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError
from srcgrad.rules import registry


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
    g = lambda v, k=k: v * k
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
        add = lambda v, c=scale: v + c
        scale = 0.0
        out = add(x) * x[2]
    else:
        out = x * 2.0
    return np.sum(out) + scale


def pick_helper(x, n):
    fns = 0.0
    for j in range(n):
        h = lambda v, j=j, a=x[j]: v * a + j
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


# --- decorators made with functools.wraps: the wrapper is what runs (finding 4) ----------

def doubled(fn):
    @functools.wraps(fn)
    def wrapper(v):
        return 2.0 * fn(v)
    return wrapper


def shifted_by(c):
    def decorate(fn):
        @functools.wraps(fn)
        def shifted(v, w):
            return fn(v + c, w) - c * w
        return shifted
    return decorate


def forwarding(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return 2.0 * fn(*a, **k)
    return wrapper


def announced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print("calling", fn.__name__)
        return fn(*args, **kwargs)
    return wrapper


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        took = time.perf_counter() - start
        print(f"{fn.__name__}: {out} in {took:.3f} s")
        return out
    return wrapper


def scaled_after(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        out = out * 2.0
        return out
    return wrapper


@timed
def timed_cube(v):
    return np.sum(v ** 3)


@scaled_after
def scaled_cube(v):
    return np.sum(v ** 3)


@announced
def announced_tanh(v):
    return np.sum(np.tanh(v) * v)


@doubled
def sq(v):
    return v ** 2


@doubled
@doubled
def cube(v):
    return v ** 3


@shifted_by(0.5)
def mix(v, w):
    return np.sin(v) * w


@forwarding
def sq_forwarded(v):
    return v ** 2


def uses_decorated(x):
    total = np.sum(sq(x))
    for i in range(2):
        if x[i] > 0:
            total = total + cube(x[i]) * mix(x[i + 1], x[0])
    return total


@pytest.mark.parametrize("fn, args", [
    (uses_decorated, (np.array([0.5, -1.0, 0.7]),)),
    (uses_decorated, (np.array([-0.5, 1.0, 0.7]),)),
    (sq, (0.5,)),
    (cube, (np.float64(0.7),)),
    (mix, (0.3, 1.5)),
], ids=["helpers", "helpers-other-branch", "sq", "stacked", "with-arguments"])
def test_wraps_decorator_runs_the_wrapper(fn, args):
    check(fn, args)


def test_wraps_forwarding_only_wrapper_is_the_wrapped_function():
    """wrapper(*args, **kwargs) that prints and returns fn(*args, **kwargs): its
    value is fn's, so fn is differentiated."""
    check(announced_tanh, (np.array([0.5, -1.0]),))
    check(lambda x: announced_tanh(x * 2.0), (np.array([0.5, -1.0]),), autograd_too=False)
    check(timed_cube, (np.array([0.5, -1.0]),))
    check(lambda x: timed_cube(x) * 2.0, (np.array([0.5, -1.0]),), autograd_too=False)


def test_wraps_wrapper_changing_the_result_is_not_skipped():
    """out = fn(*args, **kwargs); out = out * 2.0: not the wrapped function's value,
    so the wrapper is differentiated, not the wrapped function alone (refused,
    located, until review s36 R4-12; now read as taking fn's parameters,
    frontend/wrappers.py)."""
    check(scaled_cube, (np.array([0.5, -1.0]),))
    assert_close(srcgrad.grad(scaled_cube)(np.ones(2)), 6.0 * np.ones(2))


def test_wraps_decorator_policies():
    check_policies(uses_decorated, (np.array([0.5, -1.0, 0.7]),))


def test_wraps_star_wrapper_takes_the_wrapped_parameters():
    """def wrapper(*a, **k): return 2.0 * fn(*a, **k) -- the textbook decorator --
    was refused naming the decorator; a call passes the wrapped function's
    parameters, so the wrapper is read as taking them (review s36 R4-12)."""
    check(sq_forwarded, (0.7,))
    check(lambda x: np.sum(sq_forwarded(x)), (np.array([0.5, -1.0]),), autograd_too=False)
    assert_close(srcgrad.grad(lambda x: np.sum(sq_forwarded(v=x)))(np.ones(2)),
                 4.0 * np.ones(2))


def reads_its_args(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return fn(*a, **k) * len(a) + np.sum(a[0]) * k.get("scale", 1.0)
    return wrapper


@reads_its_args
def sq_read(v):
    return v ** 2


def test_wraps_wrapper_reading_its_args_is_refused_naming_the_decorator():
    """A wrapper reading its *a or **k itself (a[0], k.get): not only passed on,
    so still refused, located, naming the decorator."""
    with pytest.raises(UnsupportedSyntaxError, match="decorator reads_its_args") as info:
        srcgrad.grad(lambda x: np.sum(sq_read(x)))(np.ones(2))
    assert info.value.lineno == reads_its_args.__code__.co_firstlineno + 2


def test_custom_vjp_and_checkpoint_still_read_through_their_wrappers():
    restore = registry.restore_point()  # the rule registered here stays in this test:
    try:  # a lambda among the user's rules makes every later disk-cache key None
        _custom_vjp_and_checkpoint()
    finally:
        restore()


def _custom_vjp_and_checkpoint():
    @srcgrad.custom_vjp
    def clipped(v):
        return v * 1.0

    clipped.defvjp(lambda v: (v * 1.0, None), lambda res, d: (np.clip(d, -1.0, 1.0),))

    @srcgrad.checkpoint
    def inner(v):
        return np.tanh(v) * v

    def f(x):
        return np.sum(clipped(x) * 3.0) + np.sum(inner(x))

    x = np.array([0.5, -1.0])
    expected = np.clip(np.full(2, 3.0), -1.0, 1.0) + numeric_grad(
        lambda y: np.sum(np.tanh(y) * y), [x], 0)
    assert_close(srcgrad.grad(f)(x), expected)


# --- a local function that returns from inside a loop (finding 10) ----------------------

def local_return_in_loop(x):
    def first_big(v):
        for e in v:
            if e > 0.5:
                return e
        return v[0]
    return first_big(x) * 3.0 + first_big(x[::-1] * 0.5)


def local_return_in_while(x):
    def settle(v):
        k = 0
        while True:
            v = np.tanh(v) * 1.5
            if np.sum(v) > 1.0 or k > 5:
                return v
            k += 1
    return np.sum(settle(x))


def local_return_nested_loops(x):
    def find(m):
        for i in range(2):
            for j in range(3):
                if m[i, j] > 0.8:
                    return m[i, j] * (i + j)
        return np.sum(m)
    total = 0.0
    for s in (1.0, 2.0):
        total = total + find(x.reshape(2, 3) * s)
    return total


def lambda_passed_to_looping_helper(x):
    return scan_first(lambda v: v * v, x)


def scan_first(fn, xs):
    for v in xs:
        if v > 0.5:
            return fn(v)
    return xs[0]


LOCAL_RETURNS = [
    (local_return_in_loop, (np.array([0.3, 0.7, 0.9]),)),
    (local_return_in_loop, (np.array([0.3, 0.2, 0.1]),)),
    (local_return_in_while, (np.array([0.1, 0.2]),)),
    (local_return_nested_loops, (np.array([0.1, 0.2, 0.3, 0.35, 0.9, 0.6]),)),
    (lambda_passed_to_looping_helper, (np.array([0.3, 0.7, 0.9]),)),
]


@pytest.mark.parametrize("fn, args", LOCAL_RETURNS,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(LOCAL_RETURNS)])
def test_local_function_returning_inside_a_loop(fn, args):
    check(fn, args)
    check_policies(fn, args)


# --- a helper returning (value, index) from inside a loop (finding 29) -------------------

def first_big_with_index(xs):
    for i, v in enumerate(xs):
        if v > 0.5:
            return v, i
    return xs[0], -1


def argbest(xs):
    best = (xs[0], 0)
    for i in range(len(xs)):
        if xs[i] > best[0]:
            best = (xs[i], i)
    return best


def uses_best(x):
    v, i = argbest(x)
    return v * (i + 1)


def uses_value_and_index(x):
    v, i = first_big_with_index(x)
    return v * (i + 1)


def value_and_index_in_loop(x):
    total = 0.0
    for s in (1.0, 0.5):
        v, i = first_big_with_index(x * s)
        total = total + v * (i + 2) + np.sum(x[i:])
    return total


@pytest.mark.parametrize("fn, args", [
    (uses_value_and_index, (np.array([0.2, 0.7, 0.9]),)),
    (uses_value_and_index, (np.array([0.2, 0.3, 0.1]),)),
    (value_and_index_in_loop, (np.array([0.2, 1.7, 0.9]),)),
    (uses_best, (np.array([0.2, 0.7, 0.5]),)),
], ids=["found", "not-found", "in-loop", "tuple-variable"])
def test_helper_returning_value_and_index_from_a_loop(fn, args):
    check(fn, args)
    check_policies(fn, args)
    x, v = args[0], np.array([0.3, -1.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        hv = srcgrad.hvp(fn)(x, v)
    eps = 1e-5
    g = srcgrad.grad(fn)
    assert_close(hv, (g(x + eps * v) - g(x - eps * v)) / (2 * eps), atol=1e-5)


@forwarding
def keyword_only(v, *, scale):
    return np.sum(np.sin(v) * scale)


@forwarding
def two_plain(v, scale):
    return np.sum(np.sin(v) * scale)


def test_one_decorator_read_per_function_it_wraps():
    """Every function one decorator wraps shares the wrapper's code; whether the
    wrapper is read as taking the wrapped function's parameters was remembered
    per code, so a refused keyword-only one made the next, plain one fail with a
    raw ValueError (found by a review of 77a39c8)."""
    x = np.array([0.3, 0.5])
    with pytest.raises(UnsupportedSyntaxError):
        srcgrad.grad(lambda v: keyword_only(v, scale=3.0))(x)
    assert_close(srcgrad.grad(lambda v: two_plain(v, 3.0))(x), 6.0 * np.cos(x))


class Decorated:
    @forwarding
    def loss(self, v, scale):
        return np.sum(np.sin(v) * scale)


def test_jvp_of_a_partial_of_a_decorated_method():
    """A raw StopIteration from the call's packing (found by a review of 77a39c8):
    the wrapper read as taking the method's parameters packs nothing."""
    x = np.array([0.3, 0.5])
    loss = functools.partial(Decorated().loss, scale=3.0)
    assert_close(srcgrad.grad(loss)(x), 6.0 * np.cos(x))
    _, tangent = srcgrad.jvp(loss, (x,), (np.ones(2),))
    assert_close(tangent, np.sum(6.0 * np.cos(x)))


@forwarding
def with_a_default(v, scale=3.0):
    return np.sum(np.sin(v) * scale)


def test_wraps_star_wrapper_around_a_function_with_a_default():
    """Refused, blaming the wrapper's **k, until a review of 77a39c8 (D-4): a
    number default is written in the wrapper's signature as it is."""
    x = np.array([0.3, 0.5])
    check(with_a_default, (x,), autograd_too=False)
    assert_close(srcgrad.grad(lambda v: with_a_default(v, v[0]))(x),
                 2.0 * np.array([np.cos(0.3) * 0.3 + np.sum(np.sin(x)), np.cos(0.5) * 0.3]))
