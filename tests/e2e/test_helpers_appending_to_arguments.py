"""A helper called for what it does to a list the function was given
(``push(h, v)`` with ``h.append(v)``), the function reading ``len(h)``
afterwards: refused with an AliasedUpdateError naming srcgrad's own name
('h_1' is updated in place while 'h' shares its memory ... make a copy
(h_1 = h_1.copy())), located in the helper, its advice changing the result
(review s34, R2-5).  The helper's body is now written with the caller's
parameter itself (normalize/effect_calls.py), so the update is the function's
own, followed as ``h.append(v)`` written in the function is; a helper looping
over what it is given (``for a in xs: a[0] = v``) keeps the name of its own.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, jvp_fd, numeric_grad

import srcgrad

X = np.array([0.3, -0.5, 0.9])


def push(h, v):
    h.append(v)


def set_entry(d, key, v):
    d[key] = v


def zero_first(xs, v):
    for a in xs:
        a[0] = v


def appended_between_reads(x, h):
    a = np.sin(x) * (1.0 + len(h))
    push(h, 1)
    b = np.cos(a) * (1.0 + len(h))
    return np.sum(a * b)


def appended_in_a_loop(x, h):
    for i in range(3):
        x = np.sin(x) * (1.0 + len(h))
        push(h, i)
    return np.sum(x ** 2)


def appended_in_a_branch(x, h):
    a = np.tanh(x) * len(h)
    if x[0] > 0:
        push(h, 1.0)
    return np.sum(a * (len(h) + 1.0) * x)


def appended_value_read(x, h):
    push(h, x * 2.0)
    return np.sum(h[-1] * x)


def entry_set(x, d):
    set_entry(d, "s", np.sin(x))
    return np.sum(d["s"] * x)


def loops_over_the_argument(x, xs):
    zero_first(xs, x[0])
    return np.sum(x * xs[0] * xs[1])


@pytest.mark.parametrize("fn, second", [
    (appended_between_reads, []),
    (appended_in_a_loop, [0.5]),
    (appended_in_a_branch, [1.0, 2.0]),
    (appended_value_read, []),
    (entry_set, {}),
    (loops_over_the_argument, [X + 1.0, X * 2.0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_helper_changing_a_container_argument_is_followed(fn, second):
    """check_every_policy's checks, each call given a fresh copy of the
    container (the function itself changes the one it is given)."""
    def reference(x):
        return fn(x.copy(), copy.deepcopy(second))

    want = reference(X)
    fd = numeric_grad(reference, [X], 0)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(X, copy.deepcopy(second))
        assert_bit_identical(value, want, f"{fn.__name__}, policy {policy!r}")
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, policy {policy!r}")
    direction = np.linspace(-1.0, 1.5, X.size)
    value, tangent = srcgrad.jvp(fn, wrt=[0])(X, copy.deepcopy(second), direction)
    assert_bit_identical(value, want, f"{fn.__name__}, jvp")
    assert_close(tangent, jvp_fd(reference, [X], [0], [direction]), rtol=1e-6, atol=1e-8)


def test_the_callers_list_is_left_as_it_was():
    h = [0.5]
    srcgrad.grad(appended_between_reads)(X, h)
    assert h == [0.5]
