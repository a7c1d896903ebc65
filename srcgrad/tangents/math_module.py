"""Tangent rules of Python's ``math`` module and of scalar builtins
(``abs``, ``float``, ``pow``, ``max``/``min`` of two values).

As in the adjoint rules, ``math`` functions take and return Python floats, so
their terms are written with ``math`` and stay Python floats; the builtins
also take arrays, and their terms serve both.  ``max``/``min`` of two values
give a tie to the first argument, the one Python returns.
"""

import math

import numpy as np

from ..rules.registry import tangent
from ..runtime import expand


@tangent(math.exp)
def exp(out, x, d_x):
    return d_x * out


@tangent(math.expm1)
def expm1(out, x, d_x):
    return d_x * (out + 1)


@tangent(math.log, "x", name="math.log")
def log(out, x, base=None, d_x=None):
    """Only ``x`` moves (``base`` is taken as a constant)."""
    if base is None:
        return d_x / x
    return d_x / (x * math.log(base))


@tangent(math.log1p)
def log1p(out, x, d_x):
    return d_x / (1 + x)


@tangent(math.log2)
def log2(out, x, d_x):
    return d_x / (x * math.log(2))


@tangent(math.log10)
def log10(out, x, d_x):
    return d_x / (x * math.log(10))


@tangent(math.sqrt)
def sqrt(out, x, d_x):
    return d_x / (2 * out)


@tangent(math.pow)
def pow_(out, x, y, d_x, d_y):
    """The exponent's term is 0 where x <= 0, as the adjoint."""
    return d_x * y * x ** (y - 1), d_y * out * (math.log(x) if x > 0 else 0.0)


@tangent(math.sin)
def sin(out, x, d_x):
    return d_x * math.cos(x)


@tangent(math.cos)
def cos(out, x, d_x):
    return -d_x * math.sin(x)


@tangent(math.tan)
def tan(out, x, d_x):
    return d_x * (1 + out * out)


@tangent(math.asin)
def asin(out, x, d_x):
    return d_x / math.sqrt(1 - x * x)


@tangent(math.acos)
def acos(out, x, d_x):
    return -d_x / math.sqrt(1 - x * x)


@tangent(math.atan)
def atan(out, x, d_x):
    return d_x / (1 + x * x)


@tangent(math.atan2)
def atan2(out, y, x, d_y, d_x):
    return d_y * x / (x * x + y * y), -d_x * y / (x * x + y * y)


@tangent(math.hypot, name="math.hypot")
def hypot(out, x, y, d_x, d_y):
    """Two coordinates only."""
    return d_x * x / out, d_y * y / out


@tangent(math.sinh)
def sinh(out, x, d_x):
    return d_x * math.cosh(x)


@tangent(math.cosh)
def cosh(out, x, d_x):
    return d_x * math.sinh(x)


@tangent(math.tanh)
def tanh(out, x, d_x):
    return d_x * (1 - out * out)


@tangent(math.asinh)
def asinh(out, x, d_x):
    return d_x / math.sqrt(x * x + 1)


@tangent(math.acosh)
def acosh(out, x, d_x):
    return d_x / math.sqrt(x * x - 1)


@tangent(math.atanh)
def atanh(out, x, d_x):
    return d_x / (1 - x * x)


@tangent(math.fabs)
def fabs(out, x, d_x):
    """Subgradient 0 at x = 0."""
    return d_x * (float(x > 0) - float(x < 0))


@tangent(math.erf)
def erf(out, x, d_x):
    return d_x * (2 / math.sqrt(math.pi)) * math.exp(-x * x)


@tangent(math.erfc)
def erfc(out, x, d_x):
    return -d_x * (2 / math.sqrt(math.pi)) * math.exp(-x * x)


# --- builtins ------------------------------------------------------------------------

@tangent(abs, name="abs")
def abs_(out, x, d_x):
    """Floats and arrays alike; subgradient 0 at x = 0."""
    return d_x * np.sign(x)


@tangent(float, name="float")
def float_(out, x, d_x):
    """A Python float, as the output is."""
    return float(d_x)


@tangent(pow, "base", "exp", name="pow")
def pow_builtin(out, base, exp, mod=None, d_base=None, d_exp=None):
    """As ``**``; the exponent's term uses log(base) where base > 0, else 0."""
    return (expand(d_base * (exp * base ** (exp - 1)), out),
            expand(d_exp * out * np.log(np.where(base > 0, base, 1)), out))


@tangent(max, name="max")
def max_(out, a, b, d_a, d_b):
    """Two values; a tie goes to the first, the one Python returns."""
    return d_a * (a >= b), d_b * (a < b)


@tangent(min, name="min")
def min_(out, a, b, d_a, d_b):
    """Two values; a tie goes to the first, the one Python returns."""
    return d_a * (a <= b), d_b * (a > b)
