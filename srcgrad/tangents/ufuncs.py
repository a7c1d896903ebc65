"""Tangent rules of NumPy's elementwise ufuncs (``np.exp``, ``np.maximum``, ...)
and of ``np.where``/``np.clip``.

A unary ufunc's term is its argument's tangent times the derivative, already
in the output's shape.  A binary ufunc broadcasts its operands, so a term that
involves only the moving operand (``d_x`` of ``np.add``) is wrapped in
``expand(term, out)``; a term that also reads the other operand or ``out``
has the output's shape on its own.  Where the adjoint rule reads ``out``
(``exp``, ``tanh``, ``sqrt``) so does the tangent rule, and the ties of
``np.maximum``/``np.minimum`` split 0.5/0.5 as in reverse mode.  Factors are
multiplied into the tangent (``d_x * (x > y)``, not ``(x > y) + ...``) so a
float32 tangent stays float32.
"""

import math

import numpy as np

from ..rules.registry import tangent
from ..runtime import expand, signum

# --- arithmetic ----------------------------------------------------------------------

@tangent(np.add)
def add(out, x, y, d_x, d_y):
    return expand(d_x, out), expand(d_y, out)


@tangent(np.subtract)
def subtract(out, x, y, d_x, d_y):
    return expand(d_x, out), expand(-d_y, out)


@tangent(np.multiply)
def multiply(out, x, y, d_x, d_y):
    return expand(d_x * y, out), expand(x * d_y, out)


@tangent(np.divide)
def divide(out, x, y, d_x, d_y):
    return expand(d_x / y, out), -d_y * out / y


@tangent(np.negative)
def negative(out, x, d_x):
    return -d_x


@tangent(np.positive)
def positive(out, x, d_x):
    return d_x


@tangent(np.power)
def power(out, x, y, d_x, d_y):
    """The exponent's term uses log(x) where x > 0 and 0 elsewhere, as the adjoint."""
    if isinstance(y, int) and y == 2:  # folded away when the exponent is a literal 2
        return (expand(d_x * (2 * x), out),
                expand(d_y * out * np.log(np.where(x > 0, x, 1)), out))
    return (expand(d_x * (y * x ** (y - 1)), out),
            expand(d_y * out * np.log(np.where(x > 0, x, 1)), out))


@tangent(np.square)
def square(out, x, d_x):
    return d_x * (2 * x)


@tangent(np.reciprocal)
def reciprocal(out, x, d_x):
    return -d_x * out ** 2


@tangent(np.sqrt)
def sqrt(out, x, d_x):
    return d_x / (2 * out)


@tangent(np.cbrt)
def cbrt(out, x, d_x):
    return d_x / (3 * out ** 2)


@tangent(np.absolute)
def absolute(out, x, d_x):
    """Subgradient 0 at x = 0; ``Re(conj(x) d_x) / |x|`` for complex ``x``."""
    return np.real(d_x * signum(x))


@tangent(np.fabs)
def fabs(out, x, d_x):
    """Subgradient 0 at x = 0."""
    return d_x * np.sign(x)


@tangent(np.maximum)
def maximum(out, x, y, d_x, d_y):
    """Ties take half of each tangent."""
    return (d_x * (x > y) + 0.5 * d_x * (x == y),
            d_y * (x < y) + 0.5 * d_y * (x == y))


@tangent(np.minimum)
def minimum(out, x, y, d_x, d_y):
    """Ties take half of each tangent."""
    return (d_x * (x < y) + 0.5 * d_x * (x == y),
            d_y * (x > y) + 0.5 * d_y * (x == y))


@tangent(np.fmax)
def fmax(out, x, y, d_x, d_y):
    """Like maximum, but where one operand is NaN the other one's tangent passes."""
    return (d_x * ((x > y) | np.isnan(y)) + 0.5 * d_x * (x == y),
            d_y * ((x < y) | np.isnan(x)) + 0.5 * d_y * (x == y))


@tangent(np.fmin)
def fmin(out, x, y, d_x, d_y):
    """Like minimum, but where one operand is NaN the other one's tangent passes."""
    return (d_x * ((x < y) | np.isnan(y)) + 0.5 * d_x * (x == y),
            d_y * ((x > y) | np.isnan(x)) + 0.5 * d_y * (x == y))


# --- exponentials and logarithms -----------------------------------------------------

@tangent(np.exp)
def exp(out, x, d_x):
    return d_x * out


@tangent(np.exp2)
def exp2(out, x, d_x):
    return d_x * out * math.log(2)


@tangent(np.expm1)
def expm1(out, x, d_x):
    return d_x * (out + 1)


@tangent(np.log)
def log(out, x, d_x):
    return d_x / x


@tangent(np.log2)
def log2(out, x, d_x):
    return d_x / (x * math.log(2))


@tangent(np.log10)
def log10(out, x, d_x):
    return d_x / (x * math.log(10))


@tangent(np.log1p)
def log1p(out, x, d_x):
    return d_x / (1 + x)


@tangent(np.logaddexp)
def logaddexp(out, x, y, d_x, d_y):
    return d_x * np.exp(x - out), d_y * np.exp(y - out)


@tangent(np.logaddexp2)
def logaddexp2(out, x, y, d_x, d_y):
    return d_x * np.exp2(x - out), d_y * np.exp2(y - out)


# --- trigonometric and hyperbolic ----------------------------------------------------

@tangent(np.sin)
def sin(out, x, d_x):
    return d_x * np.cos(x)


@tangent(np.cos)
def cos(out, x, d_x):
    return -d_x * np.sin(x)


@tangent(np.tan)
def tan(out, x, d_x):
    return d_x * (1 + out ** 2)


@tangent(np.arcsin)
def arcsin(out, x, d_x):
    return d_x / np.sqrt(1 - x ** 2)


@tangent(np.arccos)
def arccos(out, x, d_x):
    return -d_x / np.sqrt(1 - x ** 2)


@tangent(np.arctan)
def arctan(out, x, d_x):
    return d_x / (1 + x ** 2)


@tangent(np.arctan2)
def arctan2(out, y, x, d_y, d_x):
    return d_y * x / (x ** 2 + y ** 2), -d_x * y / (x ** 2 + y ** 2)


@tangent(np.hypot)
def hypot(out, x, y, d_x, d_y):
    return d_x * x / out, d_y * y / out


@tangent(np.sinh)
def sinh(out, x, d_x):
    return d_x * np.cosh(x)


@tangent(np.cosh)
def cosh(out, x, d_x):
    return d_x * np.sinh(x)


@tangent(np.tanh)
def tanh(out, x, d_x):
    return d_x * (1 - out ** 2)


@tangent(np.arcsinh)
def arcsinh(out, x, d_x):
    return d_x / np.sqrt(x ** 2 + 1)


@tangent(np.arccosh)
def arccosh(out, x, d_x):
    return d_x / np.sqrt(x ** 2 - 1)


@tangent(np.arctanh)
def arctanh(out, x, d_x):
    return d_x / (1 - x ** 2)


@tangent(np.deg2rad)
def deg2rad(out, x, d_x):
    return d_x * (math.pi / 180)


@tangent(np.rad2deg)
def rad2deg(out, x, d_x):
    return d_x * (180 / math.pi)


# --- elementwise functions that are not ufuncs ---------------------------------------

@tangent(np.where, "x", "y", name="np.where")
def where(out, condition, x=None, y=None, d_x=None, d_y=None):
    return (expand(np.where(condition, d_x, 0), out),
            expand(np.where(condition, 0, d_y), out))


@tangent(np.clip, "a", name="np.clip")
def clip(out, a, a_min=None, a_max=None, d_a=None):
    """The tangent passes where a_min <= a <= a_max (where the output is a)."""
    return d_a * (out == a)


@tangent(np.remainder, "x1", "x2")
def remainder(out, x1, x2, d_x1, d_x2):
    """np.mod is np.remainder: x1 - x2 * floor(x1 / x2)."""
    return expand(d_x1, out), -d_x2 * np.floor(x1 / x2)


@tangent(np.fmod, "x1", "x2")
def fmod(out, x1, x2, d_x1, d_x2):
    """x1 - x2 * trunc(x1 / x2): the remainder with the sign of x1."""
    return expand(d_x1, out), -d_x2 * np.trunc(x1 / x2)
