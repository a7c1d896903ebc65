"""Rules of ``scipy.special``, both modes.

SciPy is optional: this module imports it, so :mod:`srcgrad.rules` registers
it lazily, when a lookup misses after the user's code has imported
``scipy.special`` (srcgrad never imports SciPy itself).  Rule bodies name NumPy
and the helpers of :mod:`srcgrad.runtime` only; the derivatives that are
special functions themselves (digamma, polygamma) go through
:func:`srcgrad.runtime.psi`, which calls SciPy, and which has rules of its own
(in :mod:`.math_module`, which ``math.lgamma`` needs without SciPy) so that
second derivatives work.

Conventions: ``polygamma``'s order ``n``, ``logsumexp``'s ``axis`` and the
``axis`` of ``softmax``/``log_softmax`` are constants; ``xlogy(x, y)`` is 0 at
``x = 0`` and its derivatives there are ``log(y)`` and ``0``;
``logsumexp(..., return_sign=True)`` returns ``(log|S|, sign S)``: the sign
is piecewise constant, and ``log|S|`` has ``logsumexp``'s derivatives times
the sign (review s36 R4-13: it was refused).

Functions autograd differentiates that srcgrad lacked (session 37): the
Bessel functions ``i0``, ``i1``, ``iv``, ``ive``, ``j0``, ``j1``, ``jv``,
``jn``, ``y0``, ``y1``, ``yv``, ``yn`` in ``x`` (the order is a constant),
their derivatives Bessel functions again (:func:`srcgrad.runtime.bessel`, with
rules of its own); ``beta``, ``rgamma``, ``multigammaln`` (its dimension a
constant); ``gammainc``, ``gammaincc`` and ``betainc`` in ``x`` (their shape
parameters constants, as in autograd: the derivatives in those are no closed
form); ``gammasgn`` is piecewise constant.
"""

import math

import numpy as np
from scipy import special

from ..runtime import (
    bessel,
    cotangent_at,
    expand,
    in_dtype_of,
    log_gamma,
    logsumexp_grads,
    only_where,
    psi,
    unbroadcast,
    zero_tangent,
)
from .derive import pointwise
from .registry import adjoint, nondifferentiable, tangent

pointwise(special.expit, lambda x, out: out * (1 - out), name="scipy.special.expit")
if hasattr(special, "log_expit"):  # SciPy 1.8
    pointwise(special.log_expit, lambda x, out: 1 - np.exp(out), name="scipy.special.log_expit")
pointwise(special.logit, lambda x: 1 / (x * (1 - x)), name="scipy.special.logit")
pointwise(special.erf, lambda x: (2 / math.sqrt(math.pi)) * np.exp(-x * x),
          name="scipy.special.erf")
pointwise(special.erfc, lambda x: -(2 / math.sqrt(math.pi)) * np.exp(-x * x),
          name="scipy.special.erfc")
pointwise(special.erfinv, lambda x, out: (math.sqrt(math.pi) / 2) * np.exp(out * out),
          name="scipy.special.erfinv")
pointwise(special.erfcinv, lambda x, out: -(math.sqrt(math.pi) / 2) * np.exp(out * out),
          name="scipy.special.erfcinv")
pointwise(special.ndtr, lambda x: np.exp(-x * x / 2) / math.sqrt(2 * math.pi),
          name="scipy.special.ndtr")
pointwise(special.log_ndtr, lambda x, out: np.exp(-x * x / 2 - out) / math.sqrt(2 * math.pi),
          name="scipy.special.log_ndtr")
pointwise(special.ndtri, lambda x, out: math.sqrt(2 * math.pi) * np.exp(out * out / 2),
          name="scipy.special.ndtri")
pointwise(special.gammaln, lambda x: psi(0, x), name="scipy.special.gammaln")
pointwise(special.gamma, lambda x, out: out * psi(0, x), name="scipy.special.gamma")
pointwise(special.digamma, lambda x: psi(1, x), name="scipy.special.digamma")
pointwise(special.entr, lambda x: -(np.log(x) + 1), name="scipy.special.entr",
          singular=True)


@adjoint(special.polygamma, "x", name="scipy.special.polygamma")
def polygamma(out, d_out, n, x):
    """The order ``n`` is a constant."""
    return unbroadcast(d_out * psi(n + 1, x), x)


@tangent(special.polygamma, "x", name="scipy.special.polygamma")
def polygamma_tangent(out, n, x, d_x):
    return expand(d_x * psi(n + 1, x), out)


@adjoint(special.xlogy, name="scipy.special.xlogy")
def xlogy(out, d_out, x, y):
    return unbroadcast(d_out * np.log(y), x), unbroadcast(d_out * x / y, y)


@tangent(special.xlogy, name="scipy.special.xlogy")
def xlogy_tangent(out, x, y, d_x, d_y):
    # a zero tangent stays zero where a slope is infinite (log(0); fc71c7f, diff review D-33)
    return (expand(only_where(d_x * np.log(y), d_x != 0), out),
            expand(only_where(d_y * x / y, d_y != 0), out))


@adjoint(special.rel_entr, name="scipy.special.rel_entr")
def rel_entr(out, d_out, x, y):
    """``x log(x / y)`` (review s37 R5-2): ``log(x / y) + 1`` in ``x``, ``-x / y`` in
    ``y``; at ``x = 0`` the slope in ``x`` is ``-inf``, its true derivative."""
    return unbroadcast(d_out * (np.log(x / y) + 1), x), unbroadcast(-d_out * x / y, y)


@tangent(special.rel_entr, name="scipy.special.rel_entr")
def rel_entr_tangent(out, x, y, d_x, d_y):
    return (expand(only_where(d_x * (np.log(x / y) + 1), d_x != 0), out),
            expand(only_where(-d_y * x / y, d_y != 0), out))


@adjoint(special.kl_div, name="scipy.special.kl_div")
def kl_div(out, d_out, x, y):
    """``x log(x / y) - x + y``: ``log(x / y)`` in ``x``, ``1 - x / y`` in ``y``."""
    return unbroadcast(d_out * np.log(x / y), x), unbroadcast(d_out * (1 - x / y), y)


@tangent(special.kl_div, name="scipy.special.kl_div")
def kl_div_tangent(out, x, y, d_x, d_y):
    return (expand(only_where(d_x * np.log(x / y), d_x != 0), out),
            expand(only_where(d_y * (1 - x / y), d_y != 0), out))


@adjoint(special.xlog1py, name="scipy.special.xlog1py")
def xlog1py(out, d_out, x, y):
    return unbroadcast(d_out * np.log1p(y), x), unbroadcast(d_out * x / (1 + y), y)


@tangent(special.xlog1py, name="scipy.special.xlog1py")
def xlog1py_tangent(out, x, y, d_x, d_y):
    return expand(d_x * np.log1p(y), out), expand(d_y * x / (1 + y), out)


@adjoint(special.betaln, name="scipy.special.betaln")
def betaln(out, d_out, a, b):
    both = psi(0, a + b)
    return (unbroadcast(d_out * (psi(0, a) - both), a),
            unbroadcast(d_out * (psi(0, b) - both), b))


@tangent(special.betaln, name="scipy.special.betaln")
def betaln_tangent(out, a, b, d_a, d_b):
    both = psi(0, a + b)
    return expand(d_a * (psi(0, a) - both), out), expand(d_b * (psi(0, b) - both), out)


@adjoint(special.logsumexp, "a", "b", name="scipy.special.logsumexp")
def logsumexp(out, d_out, a, axis=None, b=None, keepdims=False, return_sign=False):
    """``a`` gets the softmax weights ``b * exp(a - out)``, ``b`` gets ``exp(a - out)``;
    with ``return_sign``, ``out`` is ``(log|S|, sign S)`` and ``d log|S| = dS / S``
    is that times the sign."""
    if return_sign:
        return logsumexp_grads(cotangent_at(d_out, 0) * out[1], out[0], a, axis, b, keepdims)
    return logsumexp_grads(d_out, out, a, axis, b, keepdims)


@tangent(special.logsumexp, "a", "b", name="scipy.special.logsumexp")
def logsumexp_tangent(out, a, axis=None, b=None, keepdims=False, return_sign=False, *, d_a,
                      d_b):
    if return_sign:
        if axis is None or keepdims:
            weights = out[1] * np.exp(a - out[0])
        else:
            weights = np.expand_dims(out[1], axis) * np.exp(a - np.expand_dims(out[0], axis))
        if b is None:
            return ((np.sum(weights * d_a, axis=axis, keepdims=keepdims), zero_tangent(out[1])),
                    None)
        return ((np.sum(b * weights * d_a, axis=axis, keepdims=keepdims), zero_tangent(out[1])),
                (np.sum(weights * d_b, axis=axis, keepdims=keepdims), zero_tangent(out[1])))
    if axis is None or keepdims:
        weights = np.exp(a - out)
    else:
        weights = np.exp(a - np.expand_dims(out, axis))
    if b is not None:
        return (np.sum(b * weights * d_a, axis=axis, keepdims=keepdims),
                np.sum(weights * d_b, axis=axis, keepdims=keepdims))
    if keepdims:
        return np.sum(weights * d_a, axis=axis, keepdims=True), 0.0
    if axis is None:
        return np.sum(weights * d_a), 0.0
    return np.sum(weights * d_a, axis=axis), 0.0


# with return_sign the terms are pairs (log|S|, sign): added part by part, where + joins them
logsumexp_tangent.adds_by_parts = True


@adjoint(special.softmax, name="scipy.special.softmax")
def softmax(out, d_out, x, axis=None):
    return out * (d_out - np.sum(d_out * out, axis=axis, keepdims=True))


@tangent(special.softmax, name="scipy.special.softmax")
def softmax_tangent(out, x, axis=None, *, d_x):
    return out * (d_x - np.sum(d_x * out, axis=axis, keepdims=True))


@adjoint(special.log_softmax, name="scipy.special.log_softmax")
def log_softmax(out, d_out, x, axis=None):
    """``d_out`` broadcast first: it may be the scalar 0.0 of no cotangent."""
    return d_out - np.exp(out) * np.sum(np.broadcast_to(d_out, np.shape(out)), axis=axis,
                                        keepdims=True)


@tangent(special.log_softmax, name="scipy.special.log_softmax")
def log_softmax_tangent(out, x, axis=None, *, d_x):
    return d_x - np.sum(np.exp(out) * d_x, axis=axis, keepdims=True)


# -- Bessel functions: derivatives in x (DLMF 10.6.1, 10.29.1), orders constant ---------

pointwise(special.i0, lambda x: bessel("i", 1, x), name="scipy.special.i0")
pointwise(special.i1, lambda x: (bessel("i", 0, x) + bessel("i", 2, x)) / 2,
          name="scipy.special.i1")
# the exponentially scaled ones, exp(-|x|) I_n(x) (review s37 R5-2): the scaled
# derivative of I_n, less sign(x) times the value
pointwise(special.i0e, lambda x, out: bessel("ie", 1, x) - np.sign(x) * out,
          name="scipy.special.i0e")
pointwise(special.i1e, lambda x, out: (bessel("ie", 0, x) + bessel("ie", 2, x)) / 2
          - np.sign(x) * out, name="scipy.special.i1e")
pointwise(special.j0, lambda x: -bessel("j", 1, x), name="scipy.special.j0")
pointwise(special.j1, lambda x: (bessel("j", 0, x) - bessel("j", 2, x)) / 2,
          name="scipy.special.j1")
pointwise(special.y0, lambda x: -bessel("y", 1, x), name="scipy.special.y0")
pointwise(special.y1, lambda x: (bessel("y", 0, x) - bessel("y", 2, x)) / 2,
          name="scipy.special.y1")


@adjoint(bessel, "x", name="bessel")
def bessel_(out, d_out, kind, v, x):
    """``I'_v = (I_{v-1} + I_{v+1}) / 2``; ``J'_v``, ``Y'_v``: the difference;
    ``ive = iv exp(-|x|)``: ``ive'_v = (ive_{v-1} + ive_{v+1}) / 2 - sign(x) ive_v``."""
    if kind == "i":
        return unbroadcast(d_out * (bessel("i", v - 1, x) + bessel("i", v + 1, x)) / 2, x)
    if kind == "ie":
        return unbroadcast(d_out * ((bessel("ie", v - 1, x) + bessel("ie", v + 1, x)) / 2
                                    - np.sign(x) * out), x)
    return unbroadcast(d_out * (bessel(kind, v - 1, x) - bessel(kind, v + 1, x)) / 2, x)


@tangent(bessel, "x", name="bessel")
def bessel_tangent(out, kind, v, x, d_x):
    if kind == "i":
        return expand(d_x * (bessel("i", v - 1, x) + bessel("i", v + 1, x)) / 2, out)
    if kind == "ie":
        return expand(d_x * ((bessel("ie", v - 1, x) + bessel("ie", v + 1, x)) / 2
                             - np.sign(x) * out), out)
    return expand(d_x * (bessel(kind, v - 1, x) - bessel(kind, v + 1, x)) / 2, out)


@adjoint(special.iv, "x", name="scipy.special.iv")
def iv(out, d_out, v, x):
    """The order ``v`` is a constant (as ``polygamma``'s ``n``)."""
    return unbroadcast(d_out * (bessel("i", v - 1, x) + bessel("i", v + 1, x)) / 2, x)


@tangent(special.iv, "x", name="scipy.special.iv")
def iv_tangent(out, v, x, d_x):
    return expand(d_x * (bessel("i", v - 1, x) + bessel("i", v + 1, x)) / 2, out)


@adjoint(special.ive, "x", name="scipy.special.ive")
def ive(out, d_out, v, x):
    return unbroadcast(d_out * ((bessel("ie", v - 1, x) + bessel("ie", v + 1, x)) / 2
                                - np.sign(x) * out), x)


@tangent(special.ive, "x", name="scipy.special.ive")
def ive_tangent(out, v, x, d_x):
    return expand(d_x * ((bessel("ie", v - 1, x) + bessel("ie", v + 1, x)) / 2
                         - np.sign(x) * out), out)


@adjoint(special.jv, "x", name="scipy.special.jv")
def jv(out, d_out, v, x):
    """``jn`` is this very ufunc (its order a float too: taken as a constant,
    refused where a differentiated value reaches it); SciPy may compute it in
    float64 for a float32 ``x``: the cotangent in ``x``'s dtype."""
    return in_dtype_of(unbroadcast(d_out * (bessel("j", v - 1, x) - bessel("j", v + 1, x))
                                   / 2, x), x)


@tangent(special.jv, "x", name="scipy.special.jv")
def jv_tangent(out, v, x, d_x):
    return in_dtype_of(expand(d_x * (bessel("j", v - 1, x) - bessel("j", v + 1, x)) / 2,
                              out), out)


@adjoint(special.yv, "x", name="scipy.special.yv")
def yv(out, d_out, v, x):
    return unbroadcast(d_out * (bessel("y", v - 1, x) - bessel("y", v + 1, x)) / 2, x)


@tangent(special.yv, "x", name="scipy.special.yv")
def yv_tangent(out, v, x, d_x):
    return expand(d_x * (bessel("y", v - 1, x) - bessel("y", v + 1, x)) / 2, out)


@adjoint(special.yn, "x", name="scipy.special.yn")
def yn(out, d_out, n, x):
    """(SciPy computes ``yn`` in float64 alone: the cotangent in ``x``'s dtype.)"""
    return in_dtype_of(unbroadcast(d_out * (bessel("y", n - 1, x) - bessel("y", n + 1, x))
                                   / 2, x), x)


@tangent(special.yn, "x", name="scipy.special.yn")
def yn_tangent(out, n, x, d_x):
    return in_dtype_of(expand(d_x * (bessel("y", n - 1, x) - bessel("y", n + 1, x)) / 2,
                              out), out)


# -- gamma and beta functions --------------------------------------------------------

pointwise(special.rgamma, lambda x, out: -out * psi(0, x), name="scipy.special.rgamma")
pointwise(log_gamma, lambda x: psi(0, x), name="log_gamma")
nondifferentiable(special.gammasgn)


@adjoint(special.beta, name="scipy.special.beta")
def beta(out, d_out, a, b):
    """``B(a, b) (psi(a) - psi(a + b))`` and likewise in ``b``."""
    both = psi(0, a + b)
    return (unbroadcast(d_out * out * (psi(0, a) - both), a),
            unbroadcast(d_out * out * (psi(0, b) - both), b))


@tangent(special.beta, name="scipy.special.beta")
def beta_tangent(out, a, b, d_a, d_b):
    both = psi(0, a + b)
    return expand(d_a * out * (psi(0, a) - both), out), expand(d_b * out * (psi(0, b) - both), out)


@adjoint(special.multigammaln, "a", name="scipy.special.multigammaln")
def multigammaln(out, d_out, a, d):
    """``sum_{j < d} psi(a - j / 2)``; the dimension ``d`` is a constant."""
    halves = np.arange(d) / 2
    return in_dtype_of(unbroadcast(
        d_out * np.sum(psi(0, np.expand_dims(a, -1) - halves), axis=-1), a), a)


@tangent(special.multigammaln, "a", name="scipy.special.multigammaln")
def multigammaln_tangent(out, a, d, d_a):
    halves = np.arange(d) / 2
    return in_dtype_of(expand(
        d_a * np.sum(psi(0, np.expand_dims(a, -1) - halves), axis=-1), out), out)


@adjoint(special.gammainc, "x", name="scipy.special.gammainc")
def gammainc(out, d_out, a, x):
    """The density of the gamma distribution, ``x^(a-1) e^-x / Gamma(a)``; ``a``
    is a constant."""
    return in_dtype_of(unbroadcast(d_out * np.exp((a - 1) * np.log(x) - x - log_gamma(a)), x), x)


@tangent(special.gammainc, "x", name="scipy.special.gammainc")
def gammainc_tangent(out, a, x, d_x):
    return in_dtype_of(expand(d_x * np.exp((a - 1) * np.log(x) - x - log_gamma(a)), out), out)


@adjoint(special.gammaincc, "x", name="scipy.special.gammaincc")
def gammaincc(out, d_out, a, x):
    """``1 - gammainc``: minus its density."""
    return in_dtype_of(unbroadcast(-d_out * np.exp((a - 1) * np.log(x) - x - log_gamma(a)), x),
                       x)


@tangent(special.gammaincc, "x", name="scipy.special.gammaincc")
def gammaincc_tangent(out, a, x, d_x):
    return in_dtype_of(expand(-d_x * np.exp((a - 1) * np.log(x) - x - log_gamma(a)), out), out)


@adjoint(special.betainc, "x", name="scipy.special.betainc")
def betainc(out, d_out, a, b, x):
    """The beta density ``x^(a-1) (1-x)^(b-1) / B(a, b)``; ``a``, ``b`` constants."""
    log_b = log_gamma(a) + log_gamma(b) - log_gamma(a + b)
    return in_dtype_of(unbroadcast(
        d_out * np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - log_b), x), x)


@tangent(special.betainc, "x", name="scipy.special.betainc")
def betainc_tangent(out, a, b, x, d_x):
    log_b = log_gamma(a) + log_gamma(b) - log_gamma(a + b)
    return in_dtype_of(expand(
        d_x * np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - log_b), out), out)
