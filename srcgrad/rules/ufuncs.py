"""Rules of NumPy's elementwise ufuncs (``np.exp``, ``np.maximum``, ...) and of
the elementwise functions that are not ufuncs (``np.where``, ``np.clip``,
``np.sinc``, ``np.nan_to_num``, the complex parts ``np.real``, ``np.imag`` and
``np.angle``), both modes side by side.

A unary ufunc is one line, its derivative (:func:`.derive.pointwise`); where
the primal output makes it cheaper (``exp``, ``tanh``, ``sqrt``) it reads
``out``.  Binary ufuncs broadcast their operands, so an adjoint sums each
cotangent back to its operand's shape with :func:`~srcgrad.runtime.unbroadcast`,
and a tangent term that involves only the moving operand (``d_x`` of
``np.add``) is wrapped in ``expand(term, out)``; a term that also reads the
other operand or ``out`` has the output's shape on its own.  Factors are
multiplied into the tangent (``d_x * y``) so a float32 tangent stays float32.
A selection (``np.maximum``, ``np.clip``) passes its (co)tangent with
``only_where(d_x, x > y)``, exactly 0 where the other operand was taken, not
``d_x * (x > y)``: past the cut an infinite derivative downstream (``np.sqrt``
of the result at 0) would make ``inf * 0 = NaN`` where the function is
constant (review s37 R5-15).  The parameter names of a ufunc rule are free
(ufuncs take their operands positionally); only their number must match
``ufunc.nin``.

Ties of ``np.maximum``/``np.minimum`` (and ``fmax``/``fmin``) split the
derivative 0.5/0.5 between the two operands, so the rules are symmetric.
"""

import math

import numpy as np

from ..runtime import (
    cotangent_at, expand, in_dtype_of, match_complex, only_where, signum, sinc_derivative,
    unbroadcast, zero_tangent, zeros_grad,
)
from .derive import linear, pointwise
from .registry import adjoint, nondifferentiable, tangent

# --- arithmetic ----------------------------------------------------------------------

@adjoint(np.add)
def add(out, d_out, x, y):
    return unbroadcast(d_out, x), unbroadcast(d_out, y)


@tangent(np.add)
def add_tangent(out, x, y, d_x, d_y):
    return expand(d_x, out), expand(d_y, out)


@adjoint(np.subtract)
def subtract(out, d_out, x, y):
    return unbroadcast(d_out, x), unbroadcast(-d_out, y)


@tangent(np.subtract)
def subtract_tangent(out, x, y, d_x, d_y):
    return expand(d_x, out), expand(-d_y, out)


@adjoint(np.multiply)
def multiply(out, d_out, x, y):
    return unbroadcast(d_out * y, x), unbroadcast(d_out * x, y)


@tangent(np.multiply)
def multiply_tangent(out, x, y, d_x, d_y):
    return expand(d_x * y, out), expand(x * d_y, out)


@adjoint(np.divide)
def divide(out, d_out, x, y):
    return unbroadcast(d_out / y, x), unbroadcast(-d_out * out / y, y)


@tangent(np.divide)
def divide_tangent(out, x, y, d_x, d_y):
    return expand(d_x / y, out), -d_y * out / y


@adjoint(np.power)
def power(out, d_out, x, y):
    """The base's derivative ``y x^(y-1)`` is raised to ``y - (y != 0)``: that is
    ``y - 1`` wherever ``y != 0`` (bit for bit), and 0 where ``y == 0``, whose
    derivative ``0 * x ** 0`` is then 0 at ``x = 0`` too (``x ** -1`` there would
    be inf, so NaN, or a ZeroDivisionError for a float), as autograd's
    ``x ** where(y, y - 1, 1)``.  A literal exponent folds: ``3 * x ** 2``,
    ``2 * x``.  The exponent's cotangent uses log(x) where x > 0 and 0 elsewhere."""
    return (unbroadcast(d_out * (y * x ** (y - (y != 0))), x),
            unbroadcast(d_out * out * np.log(np.where(x > 0, x, 1)), y))


@tangent(np.power)
def power_tangent(out, x, y, d_x, d_y):
    """As the adjoint: the base's term is finite at ``y == 0``, the exponent's
    uses log(x) where x > 0 and 0 elsewhere."""
    return (expand(d_x * (y * x ** (y - (y != 0))), out),
            expand(d_y * out * np.log(np.where(x > 0, x, 1)), out))


@adjoint(np.float_power)
def float_power(out, d_out, x, y):
    """``np.power`` computed in float64 (complex128): the same derivatives (see
    power), ``np.float_power`` for the base's so that it is float64 too, and
    each cotangent cast back to its argument's dtype (a float32 base gets a
    float32 cotangent of the float64 output's)."""
    return (in_dtype_of(unbroadcast(d_out * (y * np.float_power(x, y - (y != 0))), x), x),
            in_dtype_of(unbroadcast(d_out * out * np.log(np.where(x > 0, x, 1)), y), y))


@tangent(np.float_power)
def float_power_tangent(out, x, y, d_x, d_y):
    """Float64 terms, as the output is."""
    return (expand(d_x * (y * np.float_power(x, y - (y != 0))), out),
            expand(d_y * out * np.log(np.where(x > 0, x, 1)), out))


@linear(np.ldexp, "x1")
def ldexp(out, d_out, x1, x2):
    """``x1 * 2 ** x2`` with an integer exponent (a float one is refused by
    NumPy): linear in ``x1``, the cotangent scaled the same way, exactly."""
    return unbroadcast(np.ldexp(d_out, x2), x1)


pointwise(np.negative, lambda x: -1)
pointwise(np.positive, lambda x: 1)
pointwise(np.square, lambda x: 2 * x)
pointwise(np.reciprocal, lambda x, out: -out ** 2)
pointwise(np.sqrt, lambda x, out: 1 / (2 * out), singular=True)
pointwise(np.cbrt, lambda x, out: 1 / (3 * out ** 2), singular=True)
pointwise(np.fabs, lambda x: np.sign(x))  # subgradient 0 at x = 0


@adjoint(np.absolute)
def absolute(out, d_out, x):
    """Subgradient 0 at x = 0; ``conj(x) / |x|`` for complex ``x``.  The output
    is real, so only the real part of a cotangent that reached it through
    complex arithmetic is its own."""
    return match_complex(d_out, out) * signum(x)


@tangent(np.absolute)
def absolute_tangent(out, x, d_x):
    """Subgradient 0 at x = 0; ``Re(conj(x) d_x) / |x|`` for complex ``x``."""
    return np.real(d_x * signum(x))


@adjoint(np.maximum)
def maximum(out, d_out, x, y):
    """Ties split the cotangent 0.5/0.5."""
    return (unbroadcast(only_where(d_out, x > y) + only_where(0.5 * d_out, x == y), x),
            unbroadcast(only_where(d_out, x < y) + only_where(0.5 * d_out, x == y), y))


@tangent(np.maximum)
def maximum_tangent(out, x, y, d_x, d_y):
    """Ties take half of each tangent."""
    return (only_where(d_x, x > y) + only_where(0.5 * d_x, x == y),
            only_where(d_y, x < y) + only_where(0.5 * d_y, x == y))


@adjoint(np.minimum)
def minimum(out, d_out, x, y):
    """Ties split the cotangent 0.5/0.5."""
    return (unbroadcast(only_where(d_out, x < y) + only_where(0.5 * d_out, x == y), x),
            unbroadcast(only_where(d_out, x > y) + only_where(0.5 * d_out, x == y), y))


@tangent(np.minimum)
def minimum_tangent(out, x, y, d_x, d_y):
    """Ties take half of each tangent."""
    return (only_where(d_x, x < y) + only_where(0.5 * d_x, x == y),
            only_where(d_y, x > y) + only_where(0.5 * d_y, x == y))


@adjoint(np.fmax)
def fmax(out, d_out, x, y):
    """Like maximum, but a NaN operand gives the cotangent to the other one."""
    return (unbroadcast(only_where(d_out, (x > y) | np.isnan(y))
                        + only_where(0.5 * d_out, x == y), x),
            unbroadcast(only_where(d_out, (x < y) | np.isnan(x))
                        + only_where(0.5 * d_out, x == y), y))


@tangent(np.fmax)
def fmax_tangent(out, x, y, d_x, d_y):
    """Like maximum, but where one operand is NaN the other one's tangent passes."""
    return (only_where(d_x, (x > y) | np.isnan(y)) + only_where(0.5 * d_x, x == y),
            only_where(d_y, (x < y) | np.isnan(x)) + only_where(0.5 * d_y, x == y))


@adjoint(np.fmin)
def fmin(out, d_out, x, y):
    """Like minimum, but a NaN operand gives the cotangent to the other one."""
    return (unbroadcast(only_where(d_out, (x < y) | np.isnan(y))
                        + only_where(0.5 * d_out, x == y), x),
            unbroadcast(only_where(d_out, (x > y) | np.isnan(x))
                        + only_where(0.5 * d_out, x == y), y))


@tangent(np.fmin)
def fmin_tangent(out, x, y, d_x, d_y):
    """Like minimum, but where one operand is NaN the other one's tangent passes."""
    return (only_where(d_x, (x < y) | np.isnan(y)) + only_where(0.5 * d_x, x == y),
            only_where(d_y, (x > y) | np.isnan(x)) + only_where(0.5 * d_y, x == y))


# --- exponentials and logarithms -----------------------------------------------------

pointwise(np.exp, lambda x, out: out)
pointwise(np.exp2, lambda x, out: out * math.log(2))
pointwise(np.expm1, lambda x, out: out + 1)
pointwise(np.log, lambda x: 1 / x)
pointwise(np.log2, lambda x: 1 / (x * math.log(2)))
pointwise(np.log10, lambda x: 1 / (x * math.log(10)))
pointwise(np.log1p, lambda x: 1 / (1 + x))


@adjoint(np.logaddexp)
def logaddexp(out, d_out, x, y):
    return unbroadcast(d_out * np.exp(x - out), x), unbroadcast(d_out * np.exp(y - out), y)


@tangent(np.logaddexp)
def logaddexp_tangent(out, x, y, d_x, d_y):
    return d_x * np.exp(x - out), d_y * np.exp(y - out)


@adjoint(np.logaddexp2)
def logaddexp2(out, d_out, x, y):
    return unbroadcast(d_out * np.exp2(x - out), x), unbroadcast(d_out * np.exp2(y - out), y)


@tangent(np.logaddexp2)
def logaddexp2_tangent(out, x, y, d_x, d_y):
    return d_x * np.exp2(x - out), d_y * np.exp2(y - out)


# --- trigonometric and hyperbolic ----------------------------------------------------

pointwise(np.sin, lambda x: np.cos(x))
pointwise(np.cos, lambda x: -np.sin(x))
pointwise(np.tan, lambda x, out: 1 + out ** 2)
pointwise(np.arcsin, lambda x: 1 / np.sqrt(1 - x ** 2), singular=True)
pointwise(np.arccos, lambda x: -1 / np.sqrt(1 - x ** 2), singular=True)
pointwise(np.arctan, lambda x: 1 / (1 + x ** 2))
pointwise(np.sinh, lambda x: np.cosh(x))
pointwise(np.cosh, lambda x: np.sinh(x))
pointwise(np.tanh, lambda x, out: 1 - out ** 2)
pointwise(np.arcsinh, lambda x: 1 / np.sqrt(x ** 2 + 1))
pointwise(np.arccosh, lambda x: 1 / np.sqrt(x ** 2 - 1), singular=True)
pointwise(np.arctanh, lambda x: 1 / (1 - x ** 2))
pointwise(np.deg2rad, lambda x: math.pi / 180)
pointwise(np.rad2deg, lambda x: 180 / math.pi)
pointwise(np.radians, lambda x: math.pi / 180)
pointwise(np.degrees, lambda x: 180 / math.pi)


# At the origin arctan2 and hypot have no derivative; their rules divide by 1 there
# instead of 0, so the derivative is 0 (as abs's and norm's at 0) and a zero cotangent or
# tangent stays zero: np.where(r > 0, 1 / np.where(r > 0, r, 1), 0) of r = np.hypot(dx, dy)
# differentiates to numbers, where 0 * 0 / 0 made every entry NaN.

@adjoint(np.arctan2)
def arctan2(out, d_out, y, x):
    squares = x ** 2 + y ** 2
    squares = np.where(squares == 0, 1, squares)
    return unbroadcast(d_out * x / squares, y), unbroadcast(-d_out * y / squares, x)


@tangent(np.arctan2)
def arctan2_tangent(out, y, x, d_y, d_x):
    squares = x ** 2 + y ** 2
    squares = np.where(squares == 0, 1, squares)
    return d_y * x / squares, -d_x * y / squares


@adjoint(np.hypot)
def hypot(out, d_out, x, y):
    nonzero = np.where(out == 0, 1, out)
    return unbroadcast(d_out * x / nonzero, x), unbroadcast(d_out * y / nonzero, y)


@tangent(np.hypot)
def hypot_tangent(out, x, y, d_x, d_y):
    nonzero = np.where(out == 0, 1, out)
    return d_x * x / nonzero, d_y * y / nonzero


@adjoint(np.copysign)
def copysign(out, d_out, x1, x2):
    """``|x1|`` with ``x2``'s sign: ``x1``'s derivative is +-1 (-1 where the two
    signs differ), ``x2``'s is 0 (it only picks the sign)."""
    return (unbroadcast(np.where(np.signbit(x1) == np.signbit(x2), d_out, -d_out), x1),
            zeros_grad(x2))


@tangent(np.copysign)
def copysign_tangent(out, x1, x2, d_x1, d_x2):
    return np.where(np.signbit(x1) == np.signbit(x2), d_x1, -d_x1), zero_tangent(out)


@adjoint(np.nextafter)
def nextafter(out, d_out, x1, x2):
    """``x1`` moved one floating-point step towards ``x2`` (review s37 R5-2): it
    follows ``x1`` with slope 1 (between the points where the step changes
    size), and ``x2`` only chooses the direction: slope 0."""
    return unbroadcast(d_out, x1), zeros_grad(x2)


@tangent(np.nextafter)
def nextafter_tangent(out, x1, x2, d_x1, d_x2):
    return expand(d_x1, out), zero_tangent(out)


# --- piecewise constant or not real-valued -------------------------------------------

nondifferentiable(
    np.sign, np.floor, np.ceil, np.rint, np.trunc, np.isnan, np.isfinite, np.isinf,
    np.signbit, np.greater, np.greater_equal, np.less, np.less_equal, np.equal,
    np.not_equal, np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.floor_divide, np.heaviside, np.bitwise_and,
    np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift)
nondifferentiable(np.round, np.around, np.fix)
nondifferentiable(np.spacing)  # the step to the next float: constant between powers of two
nondifferentiable(np.isclose, np.allclose, np.array_equal, np.nonzero, np.flatnonzero)


@adjoint(np.remainder, "x1", "x2")
def remainder(out, d_out, x1, x2):
    """np.mod is np.remainder: x1 - x2 * floor(x1 / x2)."""
    return unbroadcast(d_out, x1), unbroadcast(-d_out * np.floor(x1 / x2), x2)


@tangent(np.remainder, "x1", "x2")
def remainder_tangent(out, x1, x2, d_x1, d_x2):
    return expand(d_x1, out), -d_x2 * np.floor(x1 / x2)


@adjoint(np.divmod)
def divmod_(out, d_out, x1, x2):
    """``(x1 // x2, x1 % x2)``: the quotient is piecewise constant, the remainder
    ``x1 - x2 * (x1 // x2)`` has slope 1 in ``x1`` and minus the quotient in
    ``x2`` (between the jumps); only ``d_out[1]`` contributes."""
    return (unbroadcast(cotangent_at(d_out, 1), x1),
            unbroadcast(-cotangent_at(d_out, 1) * out[0], x2))


@tangent(np.divmod)
def divmod_tangent(out, x1, x2, d_x1, d_x2):
    return ((zero_tangent(out[0]), expand(d_x1, out[1])),
            (zero_tangent(out[0]), expand(-d_x2 * out[0], out[1])))


@adjoint(np.modf)
def modf(out, d_out, x):
    """``(x - trunc(x), trunc(x))``: the fractional part has slope 1, the
    integral part none."""
    return cotangent_at(d_out, 0)


@tangent(np.modf)
def modf_tangent(out, x, d_x):
    return d_x, zero_tangent(out[1])


@adjoint(np.frexp)
def frexp(out, d_out, x):
    """``(m, e)`` with ``x = m * 2 ** e``: the mantissa is ``x * 2 ** -e`` between
    the jumps of the integer exponent, which has no derivative.  The slope
    ``2 ** -e`` is ``m / x`` (exactly: a power of two), not ``np.ldexp(1, -e)``,
    whose exponent second derivatives would meet as a differentiated value; 0
    at ``x = 0``, where the mantissa jumps."""
    return cotangent_at(d_out, 0) * (out[0] / np.where(x == 0, 1, x))


@tangent(np.frexp)
def frexp_tangent(out, x, d_x):
    return d_x * (out[0] / np.where(x == 0, 1, x)), zero_tangent(out[1])


@adjoint(np.fmod, "x1", "x2")
def fmod(out, d_out, x1, x2):
    """x1 - x2 * trunc(x1 / x2): the remainder with the sign of x1."""
    return unbroadcast(d_out, x1), unbroadcast(-d_out * np.trunc(x1 / x2), x2)


@tangent(np.fmod, "x1", "x2")
def fmod_tangent(out, x1, x2, d_x1, d_x2):
    return expand(d_x1, out), -d_x2 * np.trunc(x1 / x2)


# --- elementwise functions that are not ufuncs ---------------------------------------

@adjoint(np.where, "x", "y", name="np.where")
def where(out, d_out, condition, x=None, y=None):
    return (unbroadcast(np.where(condition, d_out, 0), x),
            unbroadcast(np.where(condition, 0, d_out), y))


@tangent(np.where, "x", "y", name="np.where")
def where_tangent(out, condition, x=None, y=None, d_x=None, d_y=None):
    return (expand(np.where(condition, d_x, 0), out),
            expand(np.where(condition, 0, d_y), out))


@adjoint(np.clip, "a", "a_min", "a_max", name="np.clip")
def clip(out, d_out, a, a_min=None, a_max=None):
    """NumPy clips as ``np.minimum(np.maximum(a, a_min), a_max)``, and so do the
    cotangents: each goes to the operand whose value was taken, ties split
    0.5/0.5 as ``np.maximum``'s and ``np.minimum``'s do; a bound's is summed
    back to its own shape."""
    if a_max is None:
        return (unbroadcast(only_where(d_out, a > a_min)
                            + only_where(0.5 * d_out, a == a_min), a),
                unbroadcast(only_where(d_out, a < a_min)
                            + only_where(0.5 * d_out, a == a_min), a_min), None)
    if a_min is None:
        return (unbroadcast(only_where(d_out, a < a_max)
                            + only_where(0.5 * d_out, a == a_max), a), None,
                unbroadcast(only_where(d_out, a > a_max)
                            + only_where(0.5 * d_out, a == a_max), a_max))
    low = np.maximum(a, a_min)
    d_low = only_where(d_out, low < a_max) + only_where(0.5 * d_out, low == a_max)
    return (unbroadcast(only_where(d_low, a > a_min) + only_where(0.5 * d_low, a == a_min), a),
            unbroadcast(only_where(d_low, a < a_min)
                        + only_where(0.5 * d_low, a == a_min), a_min),
            unbroadcast(only_where(d_out, low > a_max)
                        + only_where(0.5 * d_out, low == a_max), a_max))


@tangent(np.clip, "a", "a_min", "a_max", name="np.clip")
def clip_tangent(out, a, a_min=None, a_max=None, *, d_a, d_a_min, d_a_max):
    """The tangent of the operand whose value was taken (ties: half of each);
    every term reads ``a`` and so has the output's shape."""
    if a_max is None:
        return (only_where(d_a, a > a_min) + only_where(0.5 * d_a, a == a_min),
                only_where(d_a_min, a < a_min) + only_where(0.5 * d_a_min, a == a_min), None)
    if a_min is None:
        return (only_where(d_a, a < a_max) + only_where(0.5 * d_a, a == a_max), None,
                only_where(d_a_max, a > a_max) + only_where(0.5 * d_a_max, a == a_max))
    low = np.maximum(a, a_min)
    t_a = only_where(d_a, a > a_min) + only_where(0.5 * d_a, a == a_min)
    t_min = only_where(d_a_min, a < a_min) + only_where(0.5 * d_a_min, a == a_min)
    return (only_where(t_a, low < a_max) + only_where(0.5 * t_a, low == a_max),
            only_where(t_min, low < a_max) + only_where(0.5 * t_min, low == a_max),
            only_where(d_a_max, low > a_max) + only_where(0.5 * d_a_max, low == a_max))


@adjoint(np.nan_to_num, "x", "nan", "posinf", "neginf", name="np.nan_to_num")
def nan_to_num(out, d_out, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """The cotangent passes where ``x`` is finite; where it is NaN or infinite
    it goes to the value put there (``posinf=None`` puts the dtype's largest
    number, a constant)."""
    return (d_out * np.isfinite(x), unbroadcast(d_out * np.isnan(x), nan),
            unbroadcast(d_out * (x == np.inf), posinf), unbroadcast(d_out * (x == -np.inf), neginf))


@tangent(np.nan_to_num, "x", "nan", "posinf", "neginf", name="np.nan_to_num")
def nan_to_num_tangent(out, x, copy=True, nan=0.0, posinf=None, neginf=None, *, d_x, d_nan,
                       d_posinf, d_neginf):
    return (d_x * np.isfinite(x), d_nan * np.isnan(x), d_posinf * (x == np.inf),
            d_neginf * (x == -np.inf))


# sinc(x) = sin(pi x) / (pi x): its derivatives come from one runtime helper, a series
# near 0 and the closed form elsewhere, so that second order differentiates a function
# right at and near 0 (the closed form's (cos(pi x) - sinc(x)) / x, with 0 put at x = 0,
# cancels below |x| ~ 1e-4 and has the derivative 0 at 0, where sinc'' is -pi**2 / 3).
pointwise(np.sinc, lambda x: sinc_derivative(1, x))


@adjoint(sinc_derivative, "x", name="sinc_derivative")
def sinc_derivative_(out, d_out, k, x):
    """The order ``k`` is a constant: ``d sinc_derivative(k, x) / dx`` is the
    next derivative."""
    return unbroadcast(d_out * sinc_derivative(k + 1, x), x)


@tangent(sinc_derivative, "x", name="sinc_derivative")
def sinc_derivative_tangent(out, k, x, d_x):
    return expand(d_x * sinc_derivative(k + 1, x), out)


# --- complex parts -------------------------------------------------------------------
#
# A cotangent of a complex value follows autograd's convention (see signum): a
# holomorphic rule multiplies by the derivative, no conjugate.  The real and
# imaginary parts and the conjugate are linear over the reals; their tangents
# apply them to the tangent.  A real argument's cotangent is the real part of
# what reaches it (match_complex), so on real arrays np.real and np.conj are
# the identity, np.imag and np.angle constant.  Their outputs (and np.abs's)
# are real: a cotangent that reached one through complex arithmetic (r * w for
# a complex w) counts by its real part only (dL = Re(g dr)), so the rules take
# match_complex(d_out, out) first.

@linear(np.real, "val", name="np.real")
def real(out, d_out, val):
    return match_complex(match_complex(d_out, out), val)


@linear(np.imag, "val", name="np.imag")
def imag(out, d_out, val):
    return match_complex(-1j * match_complex(d_out, out), val)


@linear(np.conjugate, "x", name="np.conjugate")
def conjugate(out, d_out, x):
    """``np.conj`` is the same ufunc."""
    return np.conjugate(d_out)


@adjoint(np.angle, "z", name="np.angle")
def angle(out, d_out, z, deg=False):
    """``d angle = Im(conj(z) dz) / |z|^2``; 0 at z = 0."""
    if deg:
        return match_complex(match_complex(d_out, out) * (180 / math.pi) * np.conj(z * 1j)
                             / np.where(z == 0, 1, np.abs(z) ** 2), z)
    return match_complex(match_complex(d_out, out) * np.conj(z * 1j)
                         / np.where(z == 0, 1, np.abs(z) ** 2), z)


@tangent(np.angle, "z", name="np.angle")
def angle_tangent(out, z, deg=False, *, d_z):
    if deg:
        return np.imag(d_z * np.conj(z)) * (180 / math.pi) / np.where(z == 0, 1, np.abs(z) ** 2)
    return np.imag(d_z * np.conj(z)) / np.where(z == 0, 1, np.abs(z) ** 2)


@adjoint(np.real_if_close, "a", name="np.real_if_close")
def real_if_close(out, d_out, a, tol=100):
    """``np.real(a)`` where the imaginary parts are negligible, else ``a``."""
    return match_complex(d_out, a)


@tangent(np.real_if_close, "a", name="np.real_if_close")
def real_if_close_tangent(out, a, tol=100, *, d_a):
    return match_complex(d_a, out)


nondifferentiable(np.iscomplexobj, np.isrealobj, np.iscomplex, np.isreal)
