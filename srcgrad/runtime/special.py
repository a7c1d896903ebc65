"""Helpers of the rules of SciPy's functions (``scipy.special``, ``scipy.stats``,
``scipy.signal``), and the derivatives of ``np.sinc`` (:func:`sinc_derivative`).

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small and copied into exported modules.  SciPy is optional: srcgrad never
imports it, and the helpers that need it (:func:`psi`, :func:`signal_convolve`
and :func:`signal_convolve_grads`) import it when they are called, which only
code differentiating a call to SciPy does.  The others need NumPy alone.

    >>> import numpy as np
    >>> a = np.log(np.array([1.0, 3.0]))
    >>> logsumexp_grads(1.0, np.log(4.0), a)
    (array([0.25, 0.75]), 0.0)
"""

from __future__ import annotations

import math

import numpy as np

from .elementwise import unbroadcast
from .namespaces import as_array
from .structures import no_cotangent


def psi(n, x):
    """The polygamma function of order ``n`` at ``x``: ``scipy.special.polygamma``
    (``digamma`` for ``n = 0``), in ``x``'s floating dtype.  The derivatives of
    ``gammaln``, ``digamma``, ``polygamma``, ``betaln`` and of the Student t
    density; and, on a Python float, of ``math.lgamma`` and ``math.gamma``
    (computed here, without SciPy)."""
    if type(x) is float or type(x) is int:  # math.lgamma / math.gamma: no SciPy needed
        return _polygamma_of_float(n, float(x))
    from scipy import special  # noqa: PLC0415 - SciPy is optional: imported when used

    value = special.digamma(x) if np.ndim(n) == 0 and n == 0 else special.polygamma(n, x)
    dtype = np.result_type(x)
    if dtype.kind == "f" and isinstance(value, np.ndarray) and value.dtype != dtype:
        return value.astype(dtype)
    return value


#: Bernoulli numbers B_2, B_4, ..., B_18 of the asymptotic series below.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798)


def _polygamma_of_float(n, x):
    """``psi(n, x)`` for a Python float ``x``, with ``math`` alone: the
    recurrence ``psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1)`` carries ``x``
    past ``12 + 2n``, where the asymptotic series (Abramowitz and Stegun 6.3.18,
    6.4.11) to ``B_18`` is exact to rounding; the digamma of ``x < 1/2`` by
    reflection, ``psi(x) = psi(1 - x) - pi / tan(pi x)``.  NaN at the poles."""
    n = int(n)
    if x <= 0 and x == math.floor(x):
        return math.nan
    if n == 0 and x < 0.5:
        return _polygamma_of_float(0, 1 - x) - math.pi / math.tan(math.pi * x)
    sign = 1.0 if n % 2 else -1.0  # (-1)^(n+1)
    factorial = math.factorial(n)
    shift = 0.0
    while x < 12 + 2 * n:
        shift += sign * factorial / x ** (n + 1)
        x += 1.0
    if n == 0:
        total = math.log(x) - 0.5 / x
        for k, b in enumerate(_BERNOULLI, 1):
            total -= b / (2 * k * x ** (2 * k))
        return total + shift
    total = math.factorial(n - 1) / x ** n + factorial / (2 * x ** (n + 1))
    for k, b in enumerate(_BERNOULLI, 1):
        total += b * math.factorial(2 * k + n - 1) / (math.factorial(2 * k) * x ** (2 * k + n))
    return sign * total + shift


def sinc_derivative(k, x):
    """The ``k``-th derivative (``k >= 1``) of ``np.sinc`` at ``x``: the
    derivative in the rule of ``np.sinc``, differentiated again (its own rule
    reads ``k + 1``) for second and higher order.

    With ``u = pi x`` and ``s(u) = sin(u) / u``, the derivative is
    ``pi**k s^(k)(u)``.  The closed form ``s^(k)(u) = sum_j C(k, j)
    sin(u + j pi / 2) (-1)**(k-j) (k-j)! / u**(k-j+1)`` cancels
    catastrophically as ``u`` goes to 0 (and divides by 0 there), so for
    ``|u| < 1`` the Maclaurin series ``s^(k)(u) = sum_n (-1)**n
    u**(2n-k) / ((2n+1) (2n-k)!)`` (``2n >= k``) is summed instead, whose
    terms fall below rounding within 14 of them.  The result has ``x``'s
    floating dtype.

        >>> [round(float(sinc_derivative(k, 0.0)), 6) for k in (2, 4)]  # -pi**2 / 3, pi**4 / 5
        [-3.289868, 19.481818]
        >>> x = np.array([1e-12, 0.5, 2.0])
        >>> bool(np.allclose(sinc_derivative(1, x), (np.cos(np.pi * x) - np.sinc(x)) / x))
        True
    """
    u = np.pi * x
    small = np.abs(u) < 1
    # the series, at |u| < 1 (0 elsewhere: its powers would overflow there)
    v = np.where(small, u, 0.0)
    first = (k + 1) // 2  # the first n with 2n >= k
    total = 0.0
    for n in range(first + 13, first - 1, -1):  # Horner's scheme in u**2
        total = total * v * v + (-1) ** n / ((2 * n + 1) * math.factorial(2 * n - k))
    series = total * v ** (2 * first - k)
    # the closed form, at |u| >= 1 (1 elsewhere: no division by 0)
    w = np.where(small, 1.0, u)
    sin, cos = np.sin(w), np.cos(w)
    closed = 0.0
    for j in range(k + 1):
        phase = (sin, cos, -sin, -cos)[j % 4]  # sin(w + j pi / 2)
        closed = closed + (math.comb(k, j) * (-1) ** (k - j) * math.factorial(k - j)
                           * phase / w ** (k - j + 1))
    return np.pi ** k * np.where(small, series, closed)


def logsumexp_grads(g, out, a, axis=None, b=None, keepdims=False):
    """Cotangents of ``a`` and ``b`` in ``scipy.special.logsumexp(a, axis, b,
    keepdims)``: the softmax weights ``b * exp(a - out)`` and ``exp(a - out)``."""
    if no_cotangent(g):
        return 0.0, 0.0
    a = as_array(a)
    shape = np.broadcast_shapes(a.shape, np.shape(b)) if b is not None else a.shape
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        kept = tuple(sorted(k % len(shape) for k in axes))
        out, g = np.expand_dims(out, kept), np.expand_dims(g, kept)
    weights = np.exp(a - out)
    if b is None:
        return g * weights, 0.0
    return unbroadcast(g * b * weights, a), unbroadcast(g * weights, b)


def _symmetric(cov, d):
    """The covariance matrix ``scipy.stats.multivariate_normal`` reads from
    ``cov``: a multiple of the identity, a diagonal, or the lower triangle."""
    cov = as_array(cov)
    if cov.ndim < 2:
        return np.eye(d, dtype=np.result_type(cov, 1.0)) * cov
    return np.tril(cov) + np.tril(cov, -1).T


def mvn_logpdf_grads(g, out, x, mean=None, cov=1):
    """Cotangents of ``x``, ``mean`` and ``cov`` in
    ``scipy.stats.multivariate_normal.logpdf(x, mean, cov)``, for samples ``x``
    of shape ``(..., d)``: with ``s = inv(cov) (x - mean)``, ``-s``, the sum of
    ``s`` and ``(s s^T - inv(cov)) / 2`` summed over the samples, the last as
    ``cov`` was given (its trace for a scalar, its diagonal for a vector, its
    lower triangle, which is what SciPy reads, for a matrix)."""
    if no_cotangent(g):
        return 0.0, 0.0, 0.0
    x = as_array(x)
    d = x.shape[-1]
    g = np.reshape(g, x.shape[:-1])
    precision = np.linalg.inv(_symmetric(cov, d))
    s = (x - (0.0 if mean is None else mean)) @ precision
    g_x = -g[..., None] * s
    g_mean = 0.0 if mean is None else np.reshape(-np.sum(g_x.reshape(-1, d), axis=0),
                                                 np.shape(mean))
    flat_s, flat_g = s.reshape(-1, d), np.ravel(g)
    full = 0.5 * ((flat_s * flat_g[:, None]).T @ flat_s - np.sum(flat_g) * precision)
    cov = as_array(cov)
    if cov.ndim == 0:
        g_cov = np.trace(full)
    elif cov.ndim == 1:
        g_cov = np.diagonal(full).copy()
    else:
        g_cov = np.tril(full + full.T) - np.diag(np.diagonal(full))
    return g_x, g_mean, g_cov


def signal_convolve(in1, in2, mode="full", method="auto"):
    """``scipy.signal.convolve(in1, in2, mode, method)``: what generated tangent
    code calls (a rule body names NumPy and these helpers only)."""
    from scipy import signal  # noqa: PLC0415 - SciPy is optional: imported when used

    return signal.convolve(in1, in2, mode, method)


def signal_convolve_grads(g, in1, in2, mode="full"):
    """Cotangents of ``in1`` and ``in2`` in ``scipy.signal.convolve(in1, in2,
    mode)``: ``g`` placed in the full output (``'same'`` is centred on ``in1``,
    ``'valid'`` is where the smaller input fits), then convolved with the
    other input reversed along every axis."""
    if no_cotangent(g):
        return 0.0, 0.0
    in1, in2 = as_array(in1), as_array(in2)
    full_shape = [n + m - 1 for n, m in zip(in1.shape, in2.shape)]
    if mode == "full":
        starts = [0] * in1.ndim
    elif mode == "same":
        starts = [(f - n) // 2 for f, n in zip(full_shape, in1.shape)]
    else:
        starts = [min(n, m) - 1 for n, m in zip(in1.shape, in2.shape)]
    full = np.zeros(full_shape, np.result_type(g, in1, in2))
    full[tuple(slice(s, s + k) for s, k in zip(starts, np.shape(g)))] = g
    flip = tuple(slice(None, None, -1) for _ in range(in1.ndim))
    return (signal_convolve(full, in2[flip], "valid"),
            signal_convolve(full, in1[flip], "valid"))


def expm_frechet(a, e):
    """The Frechet derivative of the matrix exponential at ``a`` in the direction
    ``e``: the upper-right block of ``expm([[a, e], [0, a]])`` (Higham, Functions
    of Matrices, (3.16)), stacks of matrices too.  ``scipy.linalg.expm``'s
    tangent, and (at ``a``'s conjugate transpose) its adjoint.

        >>> a = np.array([[0.5, 0.0], [0.0, -1.0]])
        >>> bool(np.allclose(expm_frechet(a, np.eye(2)), np.diag(np.exp([0.5, -1.0]))))
        True
    """
    from scipy import linalg  # noqa: PLC0415 - SciPy is optional: imported when used

    a, e = np.broadcast_arrays(np.asarray(a), np.asarray(e))
    n = a.shape[-1]
    big = np.concatenate([np.concatenate([a, e], -1),
                          np.concatenate([np.zeros_like(a), a], -1)], -2)
    return linalg.expm(big)[..., :n, n:]


def sqrtm_frechet(s, e):
    """The Frechet derivative of the matrix square root at ``a = s @ s`` in the
    direction ``e``: the ``x`` with ``s x + x s = e`` (differentiate ``s s =
    a``), a Sylvester equation, stacks of matrices too.  ``scipy.linalg.sqrtm``'s
    tangent, and (at ``s``'s conjugate transpose) its adjoint.

        >>> s = np.array([[2.0, 0.0], [0.0, 3.0]])
        >>> sqrtm_frechet(s, np.eye(2))
        array([[0.25      , 0.        ],
               [0.        , 0.16666667]])
    """
    from scipy import linalg  # noqa: PLC0415 - SciPy is optional: imported when used

    s, e = np.broadcast_arrays(np.asarray(s), np.asarray(e))
    if s.ndim == 2:
        return linalg.solve_sylvester(s, s, e)
    kind = np.result_type(s, e)
    x = np.empty(s.shape, dtype=kind if kind.kind in "fc" else np.float64)
    for i in np.ndindex(*s.shape[:-2]):
        x[i] = linalg.solve_sylvester(s[i], s[i], e[i])
    return x


#: The Bessel functions :func:`bessel` computes, by kind.
_BESSEL = {"i": "iv", "ie": "ive", "j": "jv", "y": "yv"}


def bessel(kind, v, x):
    """The Bessel function of ``kind`` (``'i'``: modified, ``'ie'``: modified and
    scaled by ``exp(-|x|)``, ``'j'``: first kind, ``'y'``: second kind) of order
    ``v`` at ``x``, in ``x``'s floating dtype: the derivatives of SciPy's
    ``i0``, ``i1``, ``iv``, ``ive``, ``j0``, ``j1``, ``jv``, ``jn``, ``y0``, ``y1``,
    ``yv``, ``yn`` are such functions of orders ``v - 1`` and ``v + 1`` (DLMF
    10.6.1, 10.29.1), and this helper's own rules are too, for any order.

        >>> bool(np.isclose(bessel("j", 0, 0.0), 1.0))
        True
    """
    from scipy import special  # noqa: PLC0415 - SciPy is optional: imported when used

    value = getattr(special, _BESSEL[kind])(v, x)
    dtype = np.result_type(x)
    if dtype.kind == "f" and isinstance(value, np.ndarray) and value.dtype != dtype:
        return value.astype(dtype)
    return value


def log_gamma(x):
    """``log |Gamma(x)|`` (``scipy.special.gammaln``; ``math.lgamma`` on a Python
    float): the normalising constants in the derivatives of ``gammainc`` and
    ``betainc``."""
    if type(x) is float or type(x) is int:
        return math.lgamma(x)
    from scipy import special  # noqa: PLC0415 - SciPy is optional: imported when used

    return special.gammaln(x)


def sylvester(a, b, q):
    """The ``x`` with ``a x + x b = q`` (``scipy.linalg.solve_sylvester``), stacks
    of matrices too: the adjoint and tangent of ``solve_sylvester`` are such
    solves again (at ``a^H, b^H``), so this helper's rules are too.

        >>> sylvester(np.eye(2), 2.0 * np.eye(2), np.eye(2))
        array([[0.33333333, 0.        ],
               [0.        , 0.33333333]])
    """
    from scipy import linalg  # noqa: PLC0415 - SciPy is optional: imported when used

    a, b, q = np.asarray(a), np.asarray(b), np.asarray(q)
    if a.ndim == 2 and b.ndim == 2 and q.ndim == 2:
        return linalg.solve_sylvester(a, b, q)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    q = np.broadcast_to(q, batch + q.shape[-2:])
    kind = np.result_type(a, b, q)
    x = np.empty(q.shape, dtype=kind if kind.kind in "fc" else np.float64)
    for i in np.ndindex(*batch):
        x[i] = linalg.solve_sylvester(a[i], b[i], q[i])
    return x
