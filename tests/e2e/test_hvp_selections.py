"""hvp of loops that pick with max/min and pop from and append to a list
(review 4, M3).

``max(xs)`` of a list went through ``sequence(xs)``, whose tangent is ``d_xs
if t is xs else ...``; differentiating that code again for a second
derivative made another name for ``d_xs``, and the ``d_xs.append`` below it
raised an AliasedUpdateError naming srcgrad's own variables (``d_xs``,
``t21``).  A local only ever bound to a list or tuple display is now indexed
as it is.  Each case: value bit for bit, gradient and tangent against central
differences, hvp against central differences of srcgrad's gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad

X = np.array([0.7, -1.3, 0.4])
V = np.array([0.3, 0.5, 1.1])


def max_pop_append(x):  # the reviewer's program
    xs = [x[0] * x[1], x[2] - 1.0]
    s = 0.0
    for i in range(2):
        s = s + max(xs)
        xs.pop(0)
        xs.append(s * x[2])
    return s


def min_pop_last_while(x):
    xs = [np.sin(x[0]), x[1] ** 2, x[2] * x[0]]
    s = 0.0
    while len(xs) > 1:
        s = s + min(xs) * x[1]
        v = xs.pop()
        xs.append(v * 0.5 + s)
        xs.pop(0)
    return s + xs[0]


def max_with_default_and_key(x):
    xs = [x[0], x[1] * 2.0, x[2]]
    s = 0.0
    for k in range(2):
        s = s + max(xs, key=abs, default=0.0) * x[2]
        xs.pop()
        xs.append(s)
    return s


def max_of_a_tuple(x):
    ts = (x[0] * x[2], x[1], np.cos(x[2]))
    return max(ts) * min(ts)


def max_of_a_comprehension_list(x):
    xs = [v * v for v in x]
    s = max(xs)
    xs.append(s * x[0])
    return max(xs) + s


def max_of_an_argument_list(x):  # not a local display: sequence(xs) as before
    return helper_max([x[0] * x[1], x[2]]) * x[0]


def helper_max(xs):
    return max(xs)


FORMS = [max_pop_append, min_pop_last_while, max_with_default_and_key, max_of_a_tuple,
         max_of_a_comprehension_list, max_of_an_argument_list]


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_first_order(fn):
    value, grad = srcgrad.value_and_grad(fn)(X.copy())
    assert_bit_identical(value, pure(fn)(X))
    assert_close(grad, numeric_grad(pure(fn), [X], 0), what=f"{fn.__name__} gradient")
    value, tangent = srcgrad.jvp(fn, (X.copy(),), (V,))
    assert_bit_identical(value, pure(fn)(X))
    np.testing.assert_allclose(tangent, jvp_fd(pure(fn), (X,), (0,), (V,)),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_hvp_matches_differences_of_the_gradient(fn):
    grad = srcgrad.grad(fn)
    eps = 1e-6
    expected = (grad(X + eps * V) - grad(X - eps * V)) / (2 * eps)
    np.testing.assert_allclose(srcgrad.hvp(fn)(X, V), expected, rtol=1e-5, atol=1e-6)
