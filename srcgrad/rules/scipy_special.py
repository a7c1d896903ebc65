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
"""

import math

import numpy as np
from scipy import special

from ..runtime import cotangent_at, expand, logsumexp_grads, psi, unbroadcast, zero_tangent
from .derive import pointwise
from .registry import adjoint, tangent

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
pointwise(special.entr, lambda x: -(np.log(x) + 1), name="scipy.special.entr")


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
    return expand(d_x * np.log(y), out), expand(d_y * x / y, out)


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
