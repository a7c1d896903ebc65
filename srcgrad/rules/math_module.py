"""Rules of Python's ``math`` module and of scalar builtins (``abs``,
``float``, ``pow``, ``max``/``min`` of two values), both modes.

``math`` functions take and return Python floats, so their rules use ``math``
(not ``np``) and return Python floats too: ``d_out * math.cos(x)``; a unary
one is one line, its derivative (:func:`.derive.pointwise`).  The builtins
also work on arrays, so their rules are written to serve both.
``max``/``min`` of two values give a tie, or a NaN, to the first argument,
the one Python returns then (of one iterable, or with ``key=`` or
``default=``, they pick an item: :mod:`srcgrad.normalize.selections`).
"""

import math

import numpy as np

from ..runtime import (
    ListCotangent, cotangent_at, elements_cotangent, expand, grad_like, match_complex, only_where,
    psi, signum, unbroadcast, zero_tangent,
)
from .derive import pointwise
from .registry import adjoint, nondifferentiable, tangent

pointwise(math.exp, lambda x, out: out)
pointwise(math.expm1, lambda x, out: out + 1)
pointwise(math.log1p, lambda x: 1 / (1 + x))
pointwise(math.log2, lambda x: 1 / (x * math.log(2)))
pointwise(math.log10, lambda x: 1 / (x * math.log(10)))
pointwise(math.sqrt, lambda x, out: 1 / (2 * out), singular=True)
pointwise(math.sin, lambda x: math.cos(x))
pointwise(math.cos, lambda x: -math.sin(x))
pointwise(math.tan, lambda x, out: 1 + out * out)
pointwise(math.asin, lambda x: 1 / math.sqrt(1 - x * x), singular=True)
pointwise(math.acos, lambda x: -1 / math.sqrt(1 - x * x), singular=True)
pointwise(math.atan, lambda x: 1 / (1 + x * x))
pointwise(math.sinh, lambda x: math.cosh(x))
pointwise(math.cosh, lambda x: math.sinh(x))
pointwise(math.tanh, lambda x, out: 1 - out * out)
pointwise(math.asinh, lambda x: 1 / math.sqrt(x * x + 1))
pointwise(math.acosh, lambda x: 1 / math.sqrt(x * x - 1), singular=True)
pointwise(math.atanh, lambda x: 1 / (1 - x * x))
pointwise(math.fabs, lambda x: float(x > 0) - float(x < 0))  # subgradient 0 at x = 0
pointwise(math.erf, lambda x: (2 / math.sqrt(math.pi)) * math.exp(-x * x))
pointwise(math.erfc, lambda x: -(2 / math.sqrt(math.pi)) * math.exp(-x * x))
pointwise(math.radians, lambda x: 0.017453292519943295)  # pi / 180
pointwise(math.degrees, lambda x: 57.29577951308232)  # 180 / pi
pointwise(math.lgamma, lambda x: psi(0, x))  # psi: runtime/special.py, no SciPy for floats
pointwise(math.gamma, lambda x, out: out * psi(0, x))

if hasattr(math, "cbrt"):  # Python 3.11
    pointwise(math.cbrt, lambda x, out: 1 / (3 * out * out))
    pointwise(math.exp2, lambda x, out: out * math.log(2))


@adjoint(psi, "x", name="psi")
def psi_(out, d_out, n, x):
    """The helper behind the derivatives of ``math.lgamma``, ``math.gamma`` and
    of SciPy's gamma functions: ``d psi(n, x) / dx = psi(n + 1, x)``."""
    return unbroadcast(d_out * psi(n + 1, x), x)


@tangent(psi, "x", name="psi")
def psi_tangent(out, n, x, d_x):
    return expand(d_x * psi(n + 1, x), out)


@adjoint(math.log, "x", "base", name="math.log")
def log(out, d_out, x, base=None):
    """``log(x, b) = ln x / ln b``: ``x`` gets ``1 / (x ln b)``, the base
    ``-ln x / (b ln(b)^2)``, which is ``-out / (b ln b)``."""
    if base is None:
        return d_out / x, None
    return d_out / (x * math.log(base)), -d_out * out / (base * math.log(base))


@tangent(math.log, "x", "base", name="math.log")
def log_tangent(out, x, base=None, *, d_x, d_base):
    if base is None:
        return d_x / x, None
    return d_x / (x * math.log(base)), -d_base * out / (base * math.log(base))


@adjoint(math.pow)
def pow_(out, d_out, x, y):
    """The exponent's derivative is 0 where x <= 0; the base's is 0 where y == 0
    (raised to ``y - (y != 0)``, as ``**``: no ZeroDivisionError at x = 0)."""
    return d_out * y * x ** (y - (y != 0)), d_out * out * (math.log(x) if x > 0 else 0.0)


@tangent(math.pow)
def pow_tangent(out, x, y, d_x, d_y):
    return d_x * y * x ** (y - (y != 0)), d_y * out * (math.log(x) if x > 0 else 0.0)


@adjoint(math.atan2)
def atan2(out, d_out, y, x):
    """0 at the origin, as np.arctan2's (rules/ufuncs.py): the sum of squares
    divides with 1 added where it is 0, so no ZeroDivisionError."""
    return (d_out * x / (x * x + y * y + (x * x + y * y == 0)),
            -d_out * y / (x * x + y * y + (x * x + y * y == 0)))


@tangent(math.atan2)
def atan2_tangent(out, y, x, d_y, d_x):
    return (d_y * x / (x * x + y * y + (x * x + y * y == 0)),
            -d_x * y / (x * x + y * y + (x * x + y * y == 0)))


@adjoint(math.prod, "iterable", "start", name="math.prod")
def prod(out, d_out, iterable, *, start=1):
    """Each factor gets the cotangent times the product of the others (and of
    ``start``), formed without dividing: exact where a factor is zero."""
    items = list(iterable)
    return (ListCotangent([unbroadcast(d_out * math.prod(items[:i] + items[i + 1:], start=start),
                                       items[i]) for i in range(len(items))]),
            unbroadcast(d_out * math.prod(items), start))


@tangent(math.prod, "iterable", "start", name="math.prod")
def prod_tangent(out, iterable, *, start=1, d_iterable, d_start):
    items = list(iterable)
    return (expand(sum([d_iterable[i] * math.prod(items[:i] + items[i + 1:], start=start)
                        for i in range(len(items))]), out),
            expand(d_start * math.prod(items), out))


@adjoint(math.hypot, name="math.hypot")
def hypot(out, d_out, x, y):
    """Two coordinates only; 0 at the origin, as np.hypot's (rules/ufuncs.py):
    ``out`` divides with 1 added where it is 0."""
    return d_out * x / (out + (out == 0)), d_out * y / (out + (out == 0))


@tangent(math.hypot, name="math.hypot")
def hypot_tangent(out, x, y, d_x, d_y):
    return d_x * x / (out + (out == 0)), d_y * y / (out + (out == 0))


@adjoint(math.fmod, name="math.fmod")
def fmod(out, d_out, x, y):
    """x - trunc(x / y) * y: slope 1 in x, -trunc(x / y) in y (between jumps)."""
    return d_out, -d_out * math.trunc(x / y)


@tangent(math.fmod, name="math.fmod")
def fmod_tangent(out, x, y, d_x, d_y):
    return d_x, -d_y * math.trunc(x / y)


@adjoint(math.copysign, name="math.copysign")
def copysign(out, d_out, x, y):
    """|x| with y's sign: slope sign(x) * sign(y) in x (0 at x = 0), none in y."""
    return d_out * math.copysign(1.0, y) * (float(x > 0) - float(x < 0)), 0.0


@tangent(math.copysign, name="math.copysign")
def copysign_tangent(out, x, y, d_x, d_y):
    return d_x * math.copysign(1.0, y) * (float(x > 0) - float(x < 0)), 0.0



@adjoint(math.fsum, name="math.fsum")
def fsum(out, d_out, seq):
    """An exactly rounded ``sum``: each item gets the cotangent (review s36 R4-13)."""
    return elements_cotangent([unbroadcast(d_out, x) for x in seq], seq)


@tangent(math.fsum, name="math.fsum")
def fsum_tangent(out, seq, d_seq):
    return math.fsum(d_seq)


@adjoint(math.dist, name="math.dist")
def dist(out, d_out, p, q):
    """``sqrt(sum((p_i - q_i) ** 2))``: coordinate i of ``p`` gets
    ``(p_i - q_i) / dist``, of ``q`` the opposite; 0 where the points coincide
    (``out`` divides with 1 added where it is 0, as math.hypot's)."""
    scale = d_out / (out + (out == 0))
    return (elements_cotangent([scale * (a - b) for a, b in zip(p, q)], p),
            elements_cotangent([scale * (b - a) for a, b in zip(p, q)], q))


@tangent(math.dist, name="math.dist")
def dist_tangent(out, p, q, d_p, d_q):
    return (math.fsum([(a - b) * t for a, b, t in zip(p, q, d_p)]) / (out + (out == 0)),
            math.fsum([(b - a) * t for a, b, t in zip(p, q, d_q)]) / (out + (out == 0)))

nondifferentiable(math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite)


# --- builtins ------------------------------------------------------------------------

@adjoint(abs, name="abs")
def abs_(out, d_out, x):
    """Floats and arrays alike; subgradient 0 at x = 0.  The output is real: of a
    complex cotangent, only the real part is its own (as for np.abs)."""
    return match_complex(d_out, out) * signum(x)


@tangent(abs, name="abs")
def abs_tangent(out, x, d_x):
    """``Re(conj(x) d_x) / |x|`` for complex ``x`` (it was ``d_x * x / |x|``: the
    jvp through abs of a complex value was wrong); ``d_x * sign(x)`` for real."""
    return np.real(d_x * signum(x))


@adjoint(complex, "real", "imag", name="complex")
def complex_(out, d_out, real=0, imag=0):
    """``real + 1j * imag``: each part's cotangent is what its product with 1 or 1j
    passes back (the convention of every complex rule: see signum)."""
    return match_complex(d_out, real), match_complex(d_out * 1j, imag)


@tangent(complex, "real", "imag", name="complex")
def complex_tangent(out, real=0, imag=0, *, d_real, d_imag):
    return d_real + 0j, d_imag * 1j


@adjoint(float, name="float")
def float_(out, d_out, x):
    """The cotangent comes back in ``x``'s own type (a 0-d array stays one); the
    tangent is a Python float, as the output is."""
    return grad_like(d_out, x)


@tangent(float, name="float")
def float_tangent(out, x, d_x):
    return float(d_x)


@adjoint(pow, "base", "exp", name="pow")
def pow_builtin(out, d_out, base, exp, mod=None):
    """As ``**``; the exponent's derivative uses log(base) where base > 0, else 0."""
    return (unbroadcast(d_out * (exp * base ** (exp - (exp != 0))), base),
            unbroadcast(d_out * out * np.log(np.where(base > 0, base, 1)), exp))


@tangent(pow, "base", "exp", name="pow")
def pow_builtin_tangent(out, base, exp, mod=None, d_base=None, d_exp=None):
    return (expand(d_base * (exp * base ** (exp - (exp != 0))), out),
            expand(d_exp * out * np.log(np.where(base > 0, base, 1)), out))


@adjoint(max, name="max")
def max_(out, d_out, a, b):
    """Two values: Python's max is ``b if b > a else a``, so a tie -- and a NaN,
    which compares neither way -- goes to the first (``max(1.0, nan)`` is 1.0)."""
    return only_where(d_out, not b > a), only_where(d_out, b > a)


@tangent(max, name="max")
def max_tangent(out, a, b, d_a, d_b):
    return only_where(d_a, not b > a), only_where(d_b, b > a)


@adjoint(min, name="min")
def min_(out, d_out, a, b):
    """Two values: ``b if b < a else a``; a tie or a NaN goes to the first."""
    return only_where(d_out, not b < a), only_where(d_out, b < a)


@tangent(min, name="min")
def min_tangent(out, a, b, d_a, d_b):
    return only_where(d_a, not b < a), only_where(d_b, b < a)



@adjoint(divmod, name="divmod")
def divmod_builtin(out, d_out, x, y):
    """``(x // y, x % y)``, numbers or arrays (np.divmod's rule): the quotient is
    piecewise constant, the remainder ``x - y * (x // y)`` has slope 1 in ``x``
    and minus the quotient in ``y``."""
    return unbroadcast(cotangent_at(d_out, 1), x), unbroadcast(-cotangent_at(d_out, 1) * out[0], y)


@tangent(divmod, name="divmod")
def divmod_builtin_tangent(out, x, y, d_x, d_y):
    return ((zero_tangent(out[0]), expand(d_x, out[1])),
            (zero_tangent(out[0]), expand(-d_y * out[0], out[1])))

nondifferentiable(round, name="round")
nondifferentiable(int, name="int")
nondifferentiable(len, name="len")
# range takes ints only: its items carry no derivative (range(params['n']) with an int
# item of a dict being differentiated, once the tangent code binds it first: R3-7)
nondifferentiable(range, name="range")
