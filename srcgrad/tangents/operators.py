"""Tangent rules of Python's operators (``+ - * / % ** @``, unary minus).

Like the adjoint rules they are registered under the :mod:`operator`
function each operator node maps to.  ``expand(d_a, out)`` broadcasts an
operand's term to the output's shape; the inliner drops it where the operands
provably share a shape.
"""

import operator

import numpy as np

from ..rules.registry import tangent
from ..runtime import expand


@tangent(operator.add, name="+")
def add(out, a, b, d_a, d_b):
    return expand(d_a, out), expand(d_b, out)


@tangent(operator.sub, name="-")
def sub(out, a, b, d_a, d_b):
    return expand(d_a, out), expand(-d_b, out)


@tangent(operator.mul, name="*")
def mul(out, a, b, d_a, d_b):
    return expand(d_a * b, out), expand(a * d_b, out)


@tangent(operator.truediv, name="/")
def truediv(out, a, b, d_a, d_b):
    return expand(d_a / b, out), expand(-d_b * out / b, out)


@tangent(operator.neg, name="unary -")
def neg(out, a, d_a):
    return -d_a


@tangent(operator.pos, name="unary +")
def pos(out, a, d_a):
    return d_a


@tangent(operator.pow, name="**")
def pow(out, a, b, d_a, d_b):  # noqa: A001 - mirrors operator.pow
    """The exponent's term uses log(a) where a > 0 and 0 elsewhere, as the adjoint."""
    if isinstance(b, int) and b == 2:  # folded away when the exponent is a literal 2
        return (expand(d_a * (2 * a), out),
                expand(d_b * out * np.log(np.where(a > 0, a, 1)), out))
    return (expand(d_a * (b * a ** (b - 1)), out),
            expand(d_b * out * np.log(np.where(a > 0, a, 1)), out))


@tangent(operator.matmul, name="@")
def matmul(out, a, b, d_a, d_b):
    return d_a @ b, a @ d_b


@tangent(operator.mod, name="%")
def mod(out, a, b, d_a, d_b):
    return expand(d_a, out), expand(-d_b * np.floor(a / b), out)
