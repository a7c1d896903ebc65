"""Adjoint rules of Python's ``math`` module and of scalar builtins
(``abs``, ``float``, ``pow``, ``max``/``min`` of two values).

``math`` functions take and return Python floats, so their rules use ``math``
(not ``np``) and return Python floats too: ``d_out * math.cos(x)``.  The
builtins also work on arrays, so their rules are written to serve both.
``max``/``min`` of two values give a tie to the first argument, as Python
returns the first of equal values.
"""

import math

import numpy as np

from ..runtime import grad_like, signum, unbroadcast
from .registry import adjoint, nondifferentiable


@adjoint(math.exp)
def exp(out, d_out, x):
    return d_out * out


@adjoint(math.expm1)
def expm1(out, d_out, x):
    return d_out * (out + 1)


@adjoint(math.log, "x", name="math.log")
def log(out, d_out, x, base=None):
    """Only ``x`` is differentiable (``base`` is taken as a constant)."""
    if base is None:
        return d_out / x
    return d_out / (x * math.log(base))


@adjoint(math.log1p)
def log1p(out, d_out, x):
    return d_out / (1 + x)


@adjoint(math.log2)
def log2(out, d_out, x):
    return d_out / (x * math.log(2))


@adjoint(math.log10)
def log10(out, d_out, x):
    return d_out / (x * math.log(10))


@adjoint(math.sqrt)
def sqrt(out, d_out, x):
    return d_out / (2 * out)


@adjoint(math.pow)
def pow_(out, d_out, x, y):
    """The exponent's cotangent is 0 where x <= 0."""
    return d_out * y * x ** (y - 1), d_out * out * (math.log(x) if x > 0 else 0.0)


@adjoint(math.sin)
def sin(out, d_out, x):
    return d_out * math.cos(x)


@adjoint(math.cos)
def cos(out, d_out, x):
    return -d_out * math.sin(x)


@adjoint(math.tan)
def tan(out, d_out, x):
    return d_out * (1 + out * out)


@adjoint(math.asin)
def asin(out, d_out, x):
    return d_out / math.sqrt(1 - x * x)


@adjoint(math.acos)
def acos(out, d_out, x):
    return -d_out / math.sqrt(1 - x * x)


@adjoint(math.atan)
def atan(out, d_out, x):
    return d_out / (1 + x * x)


@adjoint(math.atan2)
def atan2(out, d_out, y, x):
    return d_out * x / (x * x + y * y), -d_out * y / (x * x + y * y)


@adjoint(math.hypot, name="math.hypot")
def hypot(out, d_out, x, y):
    """Two coordinates only."""
    return d_out * x / out, d_out * y / out


@adjoint(math.sinh)
def sinh(out, d_out, x):
    return d_out * math.cosh(x)


@adjoint(math.cosh)
def cosh(out, d_out, x):
    return d_out * math.sinh(x)


@adjoint(math.tanh)
def tanh(out, d_out, x):
    return d_out * (1 - out * out)


@adjoint(math.asinh)
def asinh(out, d_out, x):
    return d_out / math.sqrt(x * x + 1)


@adjoint(math.acosh)
def acosh(out, d_out, x):
    return d_out / math.sqrt(x * x - 1)


@adjoint(math.atanh)
def atanh(out, d_out, x):
    return d_out / (1 - x * x)


@adjoint(math.fabs)
def fabs(out, d_out, x):
    """Subgradient 0 at x = 0."""
    return d_out * (float(x > 0) - float(x < 0))


@adjoint(math.erf)
def erf(out, d_out, x):
    return d_out * (2 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.erfc)
def erfc(out, d_out, x):
    return -d_out * (2 / math.sqrt(math.pi)) * math.exp(-x * x)


nondifferentiable(math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite)


# --- builtins ------------------------------------------------------------------------

@adjoint(abs, name="abs")
def abs_(out, d_out, x):
    """Floats and arrays alike; subgradient 0 at x = 0."""
    return d_out * signum(x)


@adjoint(float, name="float")
def float_(out, d_out, x):
    """The cotangent comes back in ``x``'s own type (a 0-d array stays one)."""
    return grad_like(d_out, x)


@adjoint(pow, "base", "exp", name="pow")
def pow_builtin(out, d_out, base, exp, mod=None):
    """As ``**``; the exponent's cotangent uses log(base) where base > 0, else 0."""
    return (unbroadcast(d_out * (exp * base ** (exp - 1)), base),
            unbroadcast(d_out * out * np.log(np.where(base > 0, base, 1)), exp))


@adjoint(max, name="max")
def max_(out, d_out, a, b):
    """Two values; a tie goes to the first, the one Python returns."""
    return d_out * (a >= b), d_out * (a < b)


@adjoint(min, name="min")
def min_(out, d_out, a, b):
    """Two values; a tie goes to the first, the one Python returns."""
    return d_out * (a <= b), d_out * (a > b)


nondifferentiable(round, name="round")
nondifferentiable(int, name="int")
nondifferentiable(len, name="len")
