"""Operators defined by a user's class (review s35 R3-1, R3-8).

A 2-vector dataclass whose ``__add__`` weighs its second operand and whose
``__mul__`` scales by the square, a named tuple subclass with its own
``__add__``, a matrix-free operator passed as an argument (``L @ u`` with
``Laplacian.__matmul__``, a nonlinear ``SquareOp``): srcgrad differentiated
``+ * @`` with NumPy's rules -- wrong gradients and tangents silently, or raw
AxisError/RecursionError.  Where an operand's class is known when compiling
(an argument, a local bound to the class's call, the result of such an
operator whose method returns the class) the operation is now the call of
the user's method, followed through its source; where it is not (a name
rebound in a loop), a check as the code runs refuses an object whose class
defines the operator, located at the operation.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError


@dataclass
class V2:
    x: float
    y: float

    def __add__(self, o):
        return V2(self.x + 2.0 * o.x, self.y + 2.0 * o.y)

    def __mul__(self, s):
        return V2(self.x * s * s, self.y * s * s)

    __rmul__ = __mul__

    def __neg__(self):
        return V2(-2.0 * self.x, self.y)

    def dot(self, o):
        return self.x * o.x + self.y * o.y


_NT = namedtuple("_NT", "a b")


class NT2(_NT):
    def __add__(self, o):
        return NT2(self.a + o.a, self.b * o.b)


class Laplacian:
    def __init__(self, n):
        self.n = n

    def __matmul__(self, u):
        out = -2.0 * u
        out[1:] += u[:-1]
        out[:-1] += u[1:]
        return out


class SquareOp:
    def __init__(self, d):
        self.d = d

    def __matmul__(self, v):
        return self.d * v ** 2


def f_add(p):
    a = V2(p[0], p[1])
    b = V2(p[2], p[3])
    c = a + b
    return c.dot(c)


def f_mul(p, s):
    a = V2(p[0], p[1])
    c = a * s
    return c.dot(c)


def f_rmul(p, s):
    a = V2(p[0], p[1])
    c = s * a
    return c.dot(a)


def f_neg(p):
    a = V2(p[0], p[1])
    c = -a
    return c.dot(a)


def f_branch(p):
    a = V2(p[0], p[1])
    if p[2] > 0:
        t = (a + V2(p[2], p[3])).dot(a)
    else:
        t = a.dot(a)
    return t


def _combined(p):
    a = V2(p[0], p[1])
    c = a + V2(p[2], p[3])
    return c.dot(a)


def f_helper(p):
    return _combined(p) * 3.0


def f_nested(p):
    a = V2(p[0], p[1])
    c = a + V2(p[2], p[3])
    return (0.5 * (c + a)).dot(-a)


def f_nt(p):
    u = NT2(p[0], p[1])
    v = NT2(p[2], p[3])
    w = u + v
    return w.a * w.b


def f_heat(u, L):
    for i in range(3):
        u = u + 0.1 * (L @ u)
    return np.sum(u ** 2)


def f_square(u, A):
    return np.sum(np.sin(A @ u))


P0 = np.array([0.3, -0.5, 0.9, 0.2])
U0 = np.array([0.3, -1.0, 1.8, 0.8])


@pytest.mark.parametrize("fn", [f_add, f_neg, f_branch, f_helper, f_nested, f_nt])
def test_operators_of_a_known_class_followed(fn):
    """Before: NumPy's rule, grad [6.3, -0.3, 6.3, -0.3] for [4.2, -0.2, 8.4, -0.4]."""
    check_every_policy(fn, (P0,), wrt=0)


@pytest.mark.parametrize("fn", [f_mul, f_rmul])
@pytest.mark.parametrize("wrt", [0, 1])
def test_scaling_operators_followed(fn, wrt):
    """Before: wrong gradient for p, RecursionError for s."""
    check_every_policy(fn, (P0, 0.7), wrt=wrt)


def test_operator_object_passed_followed():
    """L @ u with Laplacian.__matmul__ (before: a raw AxisError in grad) and
    a nonlinear SquareOp (before: jvp 18.04 for 24.864)."""
    check_every_policy(f_heat, (U0, Laplacian(4)), wrt=0)
    check_every_policy(f_square, (U0, SquareOp(np.array([1.0, 2.0, 0.5, 3.0]))), wrt=0)


def f_loop(p):
    c = V2(p[0], p[1])
    for i in range(2):
        c = c + V2(p[2], p[3])
    return c.dot(c)


def test_operator_on_an_object_of_unseen_class_refused():
    """c rebound in a loop: its class is not known when compiling; the check
    before 'c + ...' refuses it as the code runs, located there."""
    line = f_loop.__code__.co_firstlineno + 3
    for run in (lambda: srcgrad.grad(f_loop)(P0),
                lambda: srcgrad.grad(f_loop, policy=("revolve", 2))(P0),
                lambda: srcgrad.jvp(f_loop, (P0,), (np.ones(4),))):
        with pytest.raises(UnsupportedSyntaxError) as info:
            run()
        assert "'c + V2(p[2], p[3])'" in str(info.value) and "__add__" in str(info.value)
        assert info.value.filename == __file__ and info.value.lineno == line


def plain_arrays(x, y):
    return np.sum((x + y) * x @ np.outer(y, y)) - np.sum(-x)


def test_arrays_in_a_module_with_operator_classes_unchanged():
    """Arrays in a module whose classes define operators: checked, and right."""
    check_every_policy(plain_arrays, (U0, U0[::-1].copy()), wrt=0)
