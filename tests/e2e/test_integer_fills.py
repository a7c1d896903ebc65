"""``np.full`` / ``np.full_like`` making integers (review s36 R4-9).

``np.full(3, x[0], dtype=int)`` and ``np.full_like(np.arange(3), x[1])`` (an
integer template gives the result its dtype) hold ``int(x[0])``: piecewise
constant in the fill value, whose derivative is zero almost everywhere.  The
fill value's derivative went through (grad [2.9, 1, 1] for [1, 1, 1]; jvp
2.38 for 0.48).  A static integer ``dtype`` now cuts the flow when the code is
made, as ``astype(int)`` does, and the rules give no derivative to an integer
result whatever made it its dtype.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad


def full_int(x):
    counts = np.full(3, x[0], dtype=int)
    return np.sum(counts * x)


def full_int_positional(x):
    counts = np.full((2, 3), 2 * x[0], np.int32)
    return np.sum(counts * x)


def full_like_int_template(x):
    k = np.full_like(np.arange(3), x[1])
    return np.sum(k * x)


def full_like_int_template_in_a_loop(x):
    total = 0.0
    template = np.arange(3)
    for i in range(3):
        if x[i] > 0:
            total = total + np.sum(np.full_like(template, x[i] * 3.0) * np.sin(x))
        else:
            total = total + np.sum(np.full_like(x, x[i]) * x)
    return total


def float_fill(x):
    return np.sum(np.full((2, 3), x[0], np.float64) * 2.0) + np.sum(np.full_like(
        np.arange(3), x[1], dtype=float) * x)


X = np.array([1.3, -2.6, 3.2])


@pytest.mark.parametrize("fn", [full_int, full_int_positional, full_like_int_template,
                                full_like_int_template_in_a_loop, float_fill])
def test_integer_fills_carry_no_derivative(fn):
    check_every_policy(fn, (X.copy(),), 0)


def test_hvp_of_an_integer_fill_is_zero():
    assert_close(srcgrad.hvp(full_like_int_template)(X, np.ones(3)), np.zeros(3), atol=0)
