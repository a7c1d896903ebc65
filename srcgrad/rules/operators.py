"""Rules of Python's operators (``+ - * / // % ** @``, unary minus), both modes.

The reverse and forward passes map each operator node to the function in
:mod:`operator` that implements it and look the rules up under that function,
so ``a * b`` and ``operator.mul(a, b)`` share them.  Each operator computes
what its NumPy twin computes, so it takes the twin's rules
(:func:`.derive.alias`), with the operands named ``a`` and ``b``.  Where the
tangent is spelt differently it is given after the alias: ``a @ b`` keeps the
operator (``d_a @ b``), and ``/`` and ``%`` wrap the divisor's term in
``expand`` where the tangents of ``np.divide`` and ``np.remainder`` leave it
out (the term has the output's shape either way).  Comparisons, ``not`` and the bitwise operators produce values
with no derivative.  ``x += v`` on an array is ``in_place(x + v, x)``
(:func:`~srcgrad.runtime.in_place`): the value of ``x + v`` in ``x``'s type and
dtype, linear in that value.
"""

import operator

import numpy as np

from ..runtime import expand, in_place
from . import linalg, ufuncs  # noqa: F401 - the twins are registered first
from .derive import alias, linear
from .registry import nondifferentiable, tangent

alias(operator.add, np.add, "a", "b", name="+")
alias(operator.sub, np.subtract, "a", "b", name="-")
alias(operator.mul, np.multiply, "a", "b", name="*")
alias(operator.truediv, np.divide, "a", "b", name="/")
alias(operator.neg, np.negative, "a", name="unary -")
alias(operator.pos, np.positive, "a", name="unary +")
alias(operator.pow, np.power, "a", "b", name="**")
alias(operator.matmul, np.matmul, "a", "b", name="@")
alias(operator.mod, np.remainder, "a", "b", name="%")


@tangent(operator.truediv, name="/")
def truediv_tangent(out, a, b, d_a, d_b):
    return expand(d_a / b, out), expand(-d_b * out / b, out)


@tangent(operator.matmul, name="@")
def matmul_tangent(out, a, b, d_a, d_b):
    return d_a @ b, a @ d_b


@tangent(operator.mod, name="%")
def mod_tangent(out, a, b, d_a, d_b):
    return expand(d_a, out), expand(-d_b * np.floor(a / b), out)


@linear(in_place, "value", name="in_place")
def in_place_(out, d_out, value, x):
    """``x op= v``: ``value`` (``x op v``) as ``x``'s type and dtype; ``x`` gives
    only those.  The cotangent passes to ``value``; the tangent is cast the same."""
    return d_out


nondifferentiable(operator.floordiv, name="//")
for _op, _symbol in ((operator.eq, "=="), (operator.ne, "!="), (operator.lt, "<"),
                    (operator.le, "<="), (operator.gt, ">"), (operator.ge, ">="),
                    (operator.not_, "not"), (operator.invert, "~"), (operator.and_, "&"),
                    (operator.or_, "|"), (operator.xor, "^"), (operator.lshift, "<<"),
                    (operator.rshift, ">>"), (operator.is_, "is"), (operator.is_not, "is not"),
                    (operator.contains, "in")):
    nondifferentiable(_op, name=_symbol)
