"""Adjoint rules of Python's operators (``+ - * / // % ** @``, unary minus).

The reverse pass maps each operator node to the function in :mod:`operator`
that implements it and looks the rule up under that function, so ``a * b`` and
``operator.mul(a, b)`` share one rule.  Comparisons, ``not`` and the bitwise
operators produce values with no derivative.
"""

import operator

import numpy as np

from ..runtime import matmul_grad_a, matmul_grad_b, unbroadcast
from .registry import adjoint, nondifferentiable


@adjoint(operator.add, name="+")
def add(out, d_out, a, b):
    return unbroadcast(d_out, a), unbroadcast(d_out, b)


@adjoint(operator.sub, name="-")
def sub(out, d_out, a, b):
    return unbroadcast(d_out, a), unbroadcast(-d_out, b)


@adjoint(operator.mul, name="*")
def mul(out, d_out, a, b):
    return unbroadcast(d_out * b, a), unbroadcast(d_out * a, b)


@adjoint(operator.truediv, name="/")
def truediv(out, d_out, a, b):
    return unbroadcast(d_out / b, a), unbroadcast(-d_out * out / b, b)


@adjoint(operator.neg, name="unary -")
def neg(out, d_out, a):
    return -d_out


@adjoint(operator.pos, name="unary +")
def pos(out, d_out, a):
    return d_out


@adjoint(operator.pow, name="**")
def pow(out, d_out, a, b):  # noqa: A001 - mirrors operator.pow
    """The exponent's cotangent uses log(a) where a > 0 and 0 elsewhere (a
    negative base has a real power only for integer exponents)."""
    if isinstance(b, int) and b == 2:  # folded away when the exponent is a literal 2
        return (unbroadcast(d_out * (2 * a), a),
                unbroadcast(d_out * out * np.log(np.where(a > 0, a, 1)), b))
    return (unbroadcast(d_out * (b * a ** (b - 1)), a),
            unbroadcast(d_out * out * np.log(np.where(a > 0, a, 1)), b))


@adjoint(operator.matmul, name="@")
def matmul(out, d_out, a, b):
    return matmul_grad_a(d_out, a, b), matmul_grad_b(d_out, a, b)


nondifferentiable(operator.floordiv, name="//")


@adjoint(operator.mod, name="%")
def mod(out, d_out, a, b):
    """a % b = a - b * floor(a / b): slope 1 in a, -floor(a / b) in b (away from jumps)."""
    return unbroadcast(d_out, a), unbroadcast(-d_out * np.floor(a / b), b)
for _op, _symbol in ((operator.eq, "=="), (operator.ne, "!="), (operator.lt, "<"),
                    (operator.le, "<="), (operator.gt, ">"), (operator.ge, ">="),
                    (operator.not_, "not"), (operator.invert, "~"), (operator.and_, "&"),
                    (operator.or_, "|"), (operator.xor, "^"), (operator.lshift, "<<"),
                    (operator.rshift, ">>"), (operator.is_, "is"), (operator.is_not, "is not"),
                    (operator.contains, "in")):
    nondifferentiable(_op, name=_symbol)
