"""hvp of functions that build named tuples (review 4, M12).

srcgrad's forward-mode code writes the tangent of ``p = P(a, b)`` as
``d_p = type(p)(*(d_a, d_b))``; a second derivative differentiates that code
again in reverse mode, where ``type(p)`` was refused ("calling 'type(p)' is
not supported").  For a local ``p`` of known class it now reads as
``P(d_a, d_b)``.  Each case: hvp against central differences of srcgrad's
gradient, and the gradient against central differences of the function.
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest
from numeric import assert_close, numeric_grad, pure

import srcgrad

P = namedtuple("P", ["a", "b"])
R = namedtuple("R", ["W", "b", "c"], defaults=[0.5])


class Q(NamedTuple):
    w: float
    z: float = 2.0

    def m(self, s):
        return self.w * s + self.z


X = np.array([0.7, -1.3, 0.4])
V = np.array([0.3, 0.5, 1.1])


def built(x):  # the reviewer's program
    p = P(x[0] * x[1], x[2])
    return p.a * p.b


def built_by_keyword_with_default(x):
    r = R(b=x[0], W=np.sin(x[1]))
    return r.W * r.b + r.c * x[2] ** 2


def replaced_in_a_loop(x):
    p = P(x[0], x[1])
    for i in range(2):
        p = p._replace(a=p.a * x[2])
    return p.a * p.b + p[0]


def method_of_a_typed_named_tuple(x):
    q = Q(z=x[2], w=x[0] * x[1])
    return q.m(x[0]) * q.z


def helper_reading_fields(p, s):
    return p.a * s + p.b ** 2


def passed_to_a_helper(x):
    p = P(np.cos(x[0]), x[1] * x[2])
    return helper_reading_fields(p, x[2])


def arrays_in_fields(x):
    p = P(x[:2] * 2.0, np.tanh(x[1:]))
    return np.sum(p.a * p.b) + np.sum(p[1] ** 2)


def built_in_a_branch(x):
    if x[0] > 0:
        p = P(x[0] ** 2, x[1])
    else:
        p = P(x[1], x[0] ** 2)
    return p.a * p.b * x[2]


FORMS = [built, built_by_keyword_with_default, replaced_in_a_loop,
         method_of_a_typed_named_tuple, passed_to_a_helper, arrays_in_fields,
         built_in_a_branch]


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_hvp_of_a_function_building_a_named_tuple(fn):
    grad = srcgrad.grad(fn)
    assert_close(grad(X), numeric_grad(pure(fn), [X], 0), what=f"{fn.__name__} gradient")
    eps = 1e-6
    expected = (grad(X + eps * V) - grad(X - eps * V)) / (2 * eps)
    np.testing.assert_allclose(srcgrad.hvp(fn)(X, V), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [built, replaced_in_a_loop], ids=lambda f: f.__name__)
def test_hessian_of_a_function_building_a_named_tuple(fn):
    grad = srcgrad.grad(fn)
    expected = np.array([(grad(X + 1e-6 * e) - grad(X - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
    np.testing.assert_allclose(srcgrad.hessian(fn)(X), expected, rtol=1e-5, atol=1e-6)
