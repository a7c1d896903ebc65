"""Adjoint rules of NumPy's elementwise ufuncs (``np.exp``, ``np.maximum``, ...).

Ufuncs broadcast their operands, so the binary rules sum each cotangent back to
its operand's shape with :func:`~srcgrad.runtime.unbroadcast`; the unary rules
keep the output's shape and need no such step.  Where the primal output makes
the derivative cheaper (``exp``, ``tanh``, ``sqrt``) the rule reads ``out``.
The parameter names of a ufunc rule are free (ufuncs take their operands
positionally); only their number must match ``ufunc.nin``.

Ties of ``np.maximum``/``np.minimum`` (and ``fmax``/``fmin``) split the
cotangent 0.5/0.5 between the two operands, so the rule is symmetric.
"""

import math

import numpy as np

from ..runtime import signum, unbroadcast
from .registry import adjoint, nondifferentiable

# --- arithmetic ----------------------------------------------------------------------

@adjoint(np.add)
def add(out, d_out, x, y):
    return unbroadcast(d_out, x), unbroadcast(d_out, y)


@adjoint(np.subtract)
def subtract(out, d_out, x, y):
    return unbroadcast(d_out, x), unbroadcast(-d_out, y)


@adjoint(np.multiply)
def multiply(out, d_out, x, y):
    return unbroadcast(d_out * y, x), unbroadcast(d_out * x, y)


@adjoint(np.divide)
def divide(out, d_out, x, y):
    return unbroadcast(d_out / y, x), unbroadcast(-d_out * out / y, y)


@adjoint(np.negative)
def negative(out, d_out, x):
    return -d_out


@adjoint(np.positive)
def positive(out, d_out, x):
    return d_out


@adjoint(np.power)
def power(out, d_out, x, y):
    """The exponent's cotangent uses log(x) where x > 0 and 0 elsewhere."""
    if isinstance(y, int) and y == 2:  # folded away when the exponent is a literal 2
        return (unbroadcast(d_out * (2 * x), x),
                unbroadcast(d_out * out * np.log(np.where(x > 0, x, 1)), y))
    return (unbroadcast(d_out * (y * x ** (y - 1)), x),
            unbroadcast(d_out * out * np.log(np.where(x > 0, x, 1)), y))


@adjoint(np.square)
def square(out, d_out, x):
    return d_out * (2 * x)


@adjoint(np.reciprocal)
def reciprocal(out, d_out, x):
    return -d_out * out ** 2


@adjoint(np.sqrt)
def sqrt(out, d_out, x):
    return d_out / (2 * out)


@adjoint(np.cbrt)
def cbrt(out, d_out, x):
    return d_out / (3 * out ** 2)


@adjoint(np.absolute)
def absolute(out, d_out, x):
    """Subgradient 0 at x = 0; ``conj(x) / |x|`` for complex ``x``."""
    return d_out * signum(x)


@adjoint(np.fabs)
def fabs(out, d_out, x):
    """Subgradient 0 at x = 0."""
    return d_out * np.sign(x)


@adjoint(np.maximum)
def maximum(out, d_out, x, y):
    """Ties split the cotangent 0.5/0.5."""
    return (unbroadcast(d_out * (x > y) + 0.5 * d_out * (x == y), x),
            unbroadcast(d_out * (x < y) + 0.5 * d_out * (x == y), y))


@adjoint(np.minimum)
def minimum(out, d_out, x, y):
    """Ties split the cotangent 0.5/0.5."""
    return (unbroadcast(d_out * (x < y) + 0.5 * d_out * (x == y), x),
            unbroadcast(d_out * (x > y) + 0.5 * d_out * (x == y), y))


@adjoint(np.fmax)
def fmax(out, d_out, x, y):
    """Like maximum, but a NaN operand gives the cotangent to the other one."""
    return (unbroadcast(d_out * ((x > y) | np.isnan(y)) + 0.5 * d_out * (x == y), x),
            unbroadcast(d_out * ((x < y) | np.isnan(x)) + 0.5 * d_out * (x == y), y))


@adjoint(np.fmin)
def fmin(out, d_out, x, y):
    """Like minimum, but a NaN operand gives the cotangent to the other one."""
    return (unbroadcast(d_out * ((x < y) | np.isnan(y)) + 0.5 * d_out * (x == y), x),
            unbroadcast(d_out * ((x > y) | np.isnan(x)) + 0.5 * d_out * (x == y), y))


# --- exponentials and logarithms -----------------------------------------------------

@adjoint(np.exp)
def exp(out, d_out, x):
    return d_out * out


@adjoint(np.exp2)
def exp2(out, d_out, x):
    return d_out * out * math.log(2)


@adjoint(np.expm1)
def expm1(out, d_out, x):
    return d_out * (out + 1)


@adjoint(np.log)
def log(out, d_out, x):
    return d_out / x


@adjoint(np.log2)
def log2(out, d_out, x):
    return d_out / (x * math.log(2))


@adjoint(np.log10)
def log10(out, d_out, x):
    return d_out / (x * math.log(10))


@adjoint(np.log1p)
def log1p(out, d_out, x):
    return d_out / (1 + x)


@adjoint(np.logaddexp)
def logaddexp(out, d_out, x, y):
    return unbroadcast(d_out * np.exp(x - out), x), unbroadcast(d_out * np.exp(y - out), y)


@adjoint(np.logaddexp2)
def logaddexp2(out, d_out, x, y):
    return unbroadcast(d_out * np.exp2(x - out), x), unbroadcast(d_out * np.exp2(y - out), y)


# --- trigonometric and hyperbolic ----------------------------------------------------

@adjoint(np.sin)
def sin(out, d_out, x):
    return d_out * np.cos(x)


@adjoint(np.cos)
def cos(out, d_out, x):
    return -d_out * np.sin(x)


@adjoint(np.tan)
def tan(out, d_out, x):
    return d_out * (1 + out ** 2)


@adjoint(np.arcsin)
def arcsin(out, d_out, x):
    return d_out / np.sqrt(1 - x ** 2)


@adjoint(np.arccos)
def arccos(out, d_out, x):
    return -d_out / np.sqrt(1 - x ** 2)


@adjoint(np.arctan)
def arctan(out, d_out, x):
    return d_out / (1 + x ** 2)


@adjoint(np.arctan2)
def arctan2(out, d_out, y, x):
    return (unbroadcast(d_out * x / (x ** 2 + y ** 2), y),
            unbroadcast(-d_out * y / (x ** 2 + y ** 2), x))


@adjoint(np.hypot)
def hypot(out, d_out, x, y):
    return unbroadcast(d_out * x / out, x), unbroadcast(d_out * y / out, y)


@adjoint(np.sinh)
def sinh(out, d_out, x):
    return d_out * np.cosh(x)


@adjoint(np.cosh)
def cosh(out, d_out, x):
    return d_out * np.sinh(x)


@adjoint(np.tanh)
def tanh(out, d_out, x):
    return d_out * (1 - out ** 2)


@adjoint(np.arcsinh)
def arcsinh(out, d_out, x):
    return d_out / np.sqrt(x ** 2 + 1)


@adjoint(np.arccosh)
def arccosh(out, d_out, x):
    return d_out / np.sqrt(x ** 2 - 1)


@adjoint(np.arctanh)
def arctanh(out, d_out, x):
    return d_out / (1 - x ** 2)


@adjoint(np.deg2rad)
def deg2rad(out, d_out, x):
    return d_out * (math.pi / 180)


@adjoint(np.rad2deg)
def rad2deg(out, d_out, x):
    return d_out * (180 / math.pi)


# --- piecewise constant or not real-valued -------------------------------------------

nondifferentiable(
    np.sign, np.floor, np.ceil, np.rint, np.trunc, np.isnan, np.isfinite, np.isinf,
    np.signbit, np.greater, np.greater_equal, np.less, np.less_equal, np.equal,
    np.not_equal, np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.floor_divide, np.heaviside, np.bitwise_and,
    np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift)


# --- elementwise functions that are not ufuncs ---------------------------------------

@adjoint(np.where, "x", "y", name="np.where")
def where(out, d_out, condition, x=None, y=None):
    return (unbroadcast(np.where(condition, d_out, 0), x),
            unbroadcast(np.where(condition, 0, d_out), y))


@adjoint(np.clip, "a", name="np.clip")
def clip(out, d_out, a, a_min=None, a_max=None):
    """The cotangent passes where a_min <= a <= a_max (where the output is a)."""
    return unbroadcast(d_out * (out == a), a)


nondifferentiable(np.round, np.around)
nondifferentiable(np.isclose, np.allclose, np.array_equal, np.nonzero, np.flatnonzero)


@adjoint(np.remainder, "x1", "x2")
def remainder(out, d_out, x1, x2):
    """np.mod is np.remainder: x1 - x2 * floor(x1 / x2)."""
    return unbroadcast(d_out, x1), unbroadcast(-d_out * np.floor(x1 / x2), x2)


@adjoint(np.fmod, "x1", "x2")
def fmod(out, d_out, x1, x2):
    """x1 - x2 * trunc(x1 / x2): the remainder with the sign of x1."""
    return unbroadcast(d_out, x1), unbroadcast(-d_out * np.trunc(x1 / x2), x2)
