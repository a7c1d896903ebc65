"""Rules of ``scipy.stats`` densities and distribution functions, both modes.

Registered lazily, like :mod:`.scipy_special`, once the user's code has
imported ``scipy.stats``.  The primitives are the methods of SciPy's
distribution objects as the code calls them: ``norm.logpdf(x, loc, scale)``,
``norm.pdf``, ``norm.cdf``, ``norm.sf``, ``norm.logcdf`` (Black-Scholes),
``t.logpdf(x, df, loc, scale)``, ``gamma.logpdf(x, a, loc, scale)``,
``multivariate_normal.logpdf(x, mean, cov)``; and, as autograd has them
(session 37), ``norm.logsf``, ``t.pdf``, ``gamma.pdf``, ``chi2.logpdf`` and
``chi2.pdf``, ``beta.logpdf`` and ``beta.pdf``, ``poisson.logpmf`` and
``poisson.pmf`` (in ``mu``: the count is an integer),
``dirichlet.logpdf`` and ``dirichlet.pdf`` (``x`` of ``k`` or ``k - 1`` rows, the
last then ``1 - sum``, as SciPy reads it), ``multivariate_normal.pdf``; and the
distribution functions ``t.cdf``, ``t.logcdf``, ``gamma.cdf``, ``chi2.cdf``,
``beta.cdf`` in ``x``, ``loc`` and ``scale`` (their derivative the density,
written with :func:`~srcgrad.runtime.log_gamma`) and ``poisson.cdf`` in ``mu``:
in the shape parameters (``df``, ``a``, ``b``) they have no closed form, and
a differentiated value reaching one is refused (ad/constants.py) -- a density's rules are its log-density's times
the density (not frozen distributions such as ``norm(mu, sigma).logpdf(x)``, which are
objects made at run time).  Every parameter is differentiable.  SciPy
computes these densities in float64, whatever the inputs' dtype.

``multivariate_normal`` reads the lower triangle of a matrix ``cov`` (as
``np.linalg.eigh`` does), so ``cov``'s cotangent lies in that triangle; a
scalar ``cov`` (a multiple of the identity) or a vector (a diagonal) gets its
own shape.
"""

import math

import numpy as np
from scipy import stats

from ..runtime import log_gamma, mvn_logpdf_grads, only_where, psi, unbroadcast
from .registry import adjoint, tangent

_NORM = stats.norm.logpdf
_NORM_PDF, _NORM_CDF, _NORM_SF, _NORM_LOGCDF = (stats.norm.pdf, stats.norm.cdf, stats.norm.sf,
                                                stats.norm.logcdf)  # one object each: both rules' key
_T = stats.t.logpdf
_GAMMA = stats.gamma.logpdf
_MVN = stats.multivariate_normal.logpdf


@adjoint(_NORM, "x", "loc", "scale", name="scipy.stats.norm.logpdf")
def norm_logpdf(out, d_out, x, loc=0, scale=1):
    """With ``z = (x - loc) / scale``: ``-z / scale``, ``z / scale`` and
    ``(z^2 - 1) / scale``."""
    z = (x - loc) / scale
    return (unbroadcast(-d_out * z / scale, x), unbroadcast(d_out * z / scale, loc),
            unbroadcast(d_out * (z * z - 1) / scale, scale))


@tangent(_NORM, "x", "loc", "scale", name="scipy.stats.norm.logpdf")
def norm_logpdf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    return -d_x * z / scale, d_loc * z / scale, d_scale * (z * z - 1) / scale


@adjoint(_NORM_PDF, "x", "loc", "scale", name="scipy.stats.norm.pdf")
def norm_pdf(out, d_out, x, loc=0, scale=1):
    """With ``z = (x - loc) / scale``: ``-z p / scale``, ``z p / scale`` and
    ``(z^2 - 1) p / scale`` for the density ``p``."""
    z = (x - loc) / scale
    slope = d_out * out * z / scale
    return (unbroadcast(-slope, x), unbroadcast(slope, loc),
            unbroadcast(d_out * out * (z * z - 1) / scale, scale))


@tangent(_NORM_PDF, "x", "loc", "scale", name="scipy.stats.norm.pdf")
def norm_pdf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    return -d_x * out * z / scale, d_loc * out * z / scale, d_scale * out * (z * z - 1) / scale


@adjoint(_NORM_CDF, "x", "loc", "scale", name="scipy.stats.norm.cdf")
def norm_cdf(out, d_out, x, loc=0, scale=1):
    """The density at ``z = (x - loc) / scale`` over ``scale``: ``x``'s
    derivative; ``loc``'s is its negative, ``scale``'s ``-z`` times it."""
    z = (x - loc) / scale
    slope = d_out * np.exp(-0.5 * z * z) / (2.5066282746310002 * scale)  # sqrt(2 pi)
    return unbroadcast(slope, x), unbroadcast(-slope, loc), unbroadcast(-slope * z, scale)


@tangent(_NORM_CDF, "x", "loc", "scale", name="scipy.stats.norm.cdf")
def norm_cdf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    density = np.exp(-0.5 * z * z) / (2.5066282746310002 * scale)
    return d_x * density, -d_loc * density, -d_scale * z * density


@adjoint(_NORM_SF, "x", "loc", "scale", name="scipy.stats.norm.sf")
def norm_sf(out, d_out, x, loc=0, scale=1):
    """``1 - cdf``: the cdf's derivatives, negated."""
    z = (x - loc) / scale
    slope = d_out * np.exp(-0.5 * z * z) / (2.5066282746310002 * scale)
    return unbroadcast(-slope, x), unbroadcast(slope, loc), unbroadcast(slope * z, scale)


@tangent(_NORM_SF, "x", "loc", "scale", name="scipy.stats.norm.sf")
def norm_sf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    density = np.exp(-0.5 * z * z) / (2.5066282746310002 * scale)
    return -d_x * density, d_loc * density, d_scale * z * density


@adjoint(_NORM_LOGCDF, "x", "loc", "scale", name="scipy.stats.norm.logcdf")
def norm_logcdf(out, d_out, x, loc=0, scale=1):
    """The density over the cdf, ``exp(logpdf(z) - logcdf(z)) / scale``, for
    ``x`` (finite far in the left tail, where both underflow); ``loc``'s is its
    negative, ``scale``'s ``-z`` times it."""
    z = (x - loc) / scale
    slope = d_out * np.exp(-0.5 * z * z - out) / (2.5066282746310002 * scale)
    return unbroadcast(slope, x), unbroadcast(-slope, loc), unbroadcast(-slope * z, scale)


@tangent(_NORM_LOGCDF, "x", "loc", "scale", name="scipy.stats.norm.logcdf")
def norm_logcdf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    ratio = np.exp(-0.5 * z * z - out) / (2.5066282746310002 * scale)
    return d_x * ratio, -d_loc * ratio, -d_scale * z * ratio


@adjoint(_T, "x", "df", "loc", "scale", name="scipy.stats.t.logpdf")
def t_logpdf(out, d_out, x, df, loc=0, scale=1):
    """With ``z = (x - loc) / scale`` and ``q = df + z^2``: ``x`` gets
    ``-(df + 1) z / (scale q)``, ``scale`` ``((df + 1) z^2 / q - 1) / scale``, and
    ``df`` ``(psi((df + 1) / 2) - psi(df / 2) - 1 / df - log1p(z^2 / df)
    + (df + 1) z^2 / (df q)) / 2``."""
    z = (x - loc) / scale
    q = df + z * z
    g_x = -d_out * (df + 1) * z / (scale * q)
    g_df = d_out * 0.5 * (psi(0, (df + 1) / 2) - psi(0, df / 2) - 1 / df
                          - np.log1p(z * z / df) + (df + 1) * z * z / (df * q))
    g_scale = d_out * ((df + 1) * z * z / q - 1) / scale
    return (unbroadcast(g_x, x), unbroadcast(g_df, df), unbroadcast(-g_x, loc),
            unbroadcast(g_scale, scale))


@tangent(_T, "x", "df", "loc", "scale", name="scipy.stats.t.logpdf")
def t_logpdf_tangent(out, x, df, loc=0, scale=1, *, d_x, d_df, d_loc, d_scale):
    z = (x - loc) / scale
    q = df + z * z
    slope = -(df + 1) * z / (scale * q)
    return (d_x * slope,
            d_df * 0.5 * (psi(0, (df + 1) / 2) - psi(0, df / 2) - 1 / df
                          - np.log1p(z * z / df) + (df + 1) * z * z / (df * q)),
            -d_loc * slope, d_scale * ((df + 1) * z * z / q - 1) / scale)


@adjoint(_GAMMA, "x", "a", "loc", "scale", name="scipy.stats.gamma.logpdf")
def gamma_logpdf(out, d_out, x, a, loc=0, scale=1):
    """``(a - 1) log z - z - gammaln(a) - log(scale)`` with ``z = (x - loc) /
    scale``: ``x`` gets ``((a - 1) / z - 1) / scale``, ``a`` ``log z - psi(a)``,
    ``scale`` ``(z - a) / scale``."""
    z = (x - loc) / scale
    g_x = d_out * ((a - 1) / z - 1) / scale
    return (unbroadcast(g_x, x), unbroadcast(d_out * (np.log(z) - psi(0, a)), a),
            unbroadcast(-g_x, loc), unbroadcast(d_out * (z - a) / scale, scale))


@tangent(_GAMMA, "x", "a", "loc", "scale", name="scipy.stats.gamma.logpdf")
def gamma_logpdf_tangent(out, x, a, loc=0, scale=1, *, d_x, d_a, d_loc, d_scale):
    z = (x - loc) / scale
    slope = ((a - 1) / z - 1) / scale
    return (d_x * slope, d_a * (np.log(z) - psi(0, a)), -d_loc * slope,
            d_scale * (z - a) / scale)


@adjoint(_MVN, "x", "mean", "cov", name="scipy.stats.multivariate_normal.logpdf")
def multivariate_normal_logpdf(out, d_out, x, mean=None, cov=1, allow_singular=False):
    """Samples ``x`` of shape ``(..., d)`` with ``d >= 2`` (a 1-D ``x`` of a
    one-dimensional normal is read by SciPy as several samples)."""
    return mvn_logpdf_grads(d_out, out, x, mean, cov)


@tangent(_MVN, "x", "mean", "cov", name="scipy.stats.multivariate_normal.logpdf")
def multivariate_normal_logpdf_tangent(out, x, mean=None, cov=1, allow_singular=False, *,
                                       d_x, d_mean, d_cov):
    """``-s . dx + s . dmean + (s^T dC s - tr(inv(C) dC)) / 2`` with
    ``s = inv(C) (x - mean)``; ``dC`` is the change of the covariance matrix
    SciPy reads (the lower triangle's symmetric matrix)."""
    d = np.shape(x)[-1]
    eye = np.eye(d)
    if np.ndim(cov) < 2:
        sigma = eye * cov
        d_sigma = eye * d_cov
    else:
        strict = np.tri(d, k=-1)
        sigma = cov * (strict + eye) + np.swapaxes(cov * strict, -1, -2)
        d_sigma = d_cov * (strict + eye) + np.swapaxes(d_cov * strict, -1, -2)
    precision = np.linalg.inv(sigma)
    if mean is None:
        s = x @ precision
    else:
        s = (x - mean) @ precision
    shape = np.shape(out)
    return (np.reshape(-np.sum(d_x * s, axis=-1), shape),
            np.reshape(np.sum(d_mean * s, axis=-1), shape),
            np.reshape(0.5 * (np.sum(s * (s @ d_sigma), axis=-1)
                              - np.sum(precision * d_sigma)), shape))


_NORM_LOGSF, _T_PDF, _GAMMA_PDF = stats.norm.logsf, stats.t.pdf, stats.gamma.pdf
_CHI2, _CHI2_PDF, _BETA, _BETA_PDF = (stats.chi2.logpdf, stats.chi2.pdf, stats.beta.logpdf,
                                      stats.beta.pdf)
_POISSON, _POISSON_PMF, _MVN_PDF = (stats.poisson.logpmf, stats.poisson.pmf,
                                    stats.multivariate_normal.pdf)


@adjoint(_NORM_LOGSF, "x", "loc", "scale", name="scipy.stats.norm.logsf")
def norm_logsf(out, d_out, x, loc=0, scale=1):
    """``log sf(z)``: with ``r = pdf(z) / sf(z)``, ``x`` gets ``-r / scale``,
    ``loc`` ``r / scale`` and ``scale`` ``z r / scale``."""
    z = (x - loc) / scale
    r = np.exp(-z * z / 2 - out) / math.sqrt(2 * math.pi)
    return (unbroadcast(-d_out * r / scale, x), unbroadcast(d_out * r / scale, loc),
            unbroadcast(d_out * z * r / scale, scale))


@tangent(_NORM_LOGSF, "x", "loc", "scale", name="scipy.stats.norm.logsf")
def norm_logsf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    r = np.exp(-z * z / 2 - out) / math.sqrt(2 * math.pi)
    return -d_x * r / scale, d_loc * r / scale, d_scale * z * r / scale


@adjoint(_T_PDF, "x", "df", "loc", "scale", name="scipy.stats.t.pdf")
def t_pdf(out, d_out, x, df, loc=0, scale=1):
    """``t.logpdf``'s cotangents times the density."""
    z = (x - loc) / scale
    q = df + z * z
    g = d_out * out
    g_x = -g * (df + 1) * z / (scale * q)
    g_df = g * 0.5 * (psi(0, (df + 1) / 2) - psi(0, df / 2) - 1 / df
                      - np.log1p(z * z / df) + (df + 1) * z * z / (df * q))
    return (unbroadcast(g_x, x), unbroadcast(g_df, df), unbroadcast(-g_x, loc),
            unbroadcast(g * ((df + 1) * z * z / q - 1) / scale, scale))


@tangent(_T_PDF, "x", "df", "loc", "scale", name="scipy.stats.t.pdf")
def t_pdf_tangent(out, x, df, loc=0, scale=1, *, d_x, d_df, d_loc, d_scale):
    z = (x - loc) / scale
    q = df + z * z
    slope = -out * (df + 1) * z / (scale * q)
    return (d_x * slope,
            d_df * out * 0.5 * (psi(0, (df + 1) / 2) - psi(0, df / 2) - 1 / df
                                - np.log1p(z * z / df) + (df + 1) * z * z / (df * q)),
            -d_loc * slope, d_scale * out * ((df + 1) * z * z / q - 1) / scale)


@adjoint(_GAMMA_PDF, "x", "a", "loc", "scale", name="scipy.stats.gamma.pdf")
def gamma_pdf(out, d_out, x, a, loc=0, scale=1):
    """``gamma.logpdf``'s cotangents times the density."""
    z = (x - loc) / scale
    g = d_out * out
    g_x = g * ((a - 1) / z - 1) / scale
    return (unbroadcast(g_x, x), unbroadcast(g * (np.log(z) - psi(0, a)), a),
            unbroadcast(-g_x, loc), unbroadcast(g * (z - a) / scale, scale))


@tangent(_GAMMA_PDF, "x", "a", "loc", "scale", name="scipy.stats.gamma.pdf")
def gamma_pdf_tangent(out, x, a, loc=0, scale=1, *, d_x, d_a, d_loc, d_scale):
    z = (x - loc) / scale
    slope = out * ((a - 1) / z - 1) / scale
    return (d_x * slope, d_a * out * (np.log(z) - psi(0, a)), -d_loc * slope,
            d_scale * out * (z - a) / scale)


@adjoint(_CHI2, "x", "df", "loc", "scale", name="scipy.stats.chi2.logpdf")
def chi2_logpdf(out, d_out, x, df, loc=0, scale=1):
    """``(h - 1) log z - z / 2 - h log 2 - gammaln(h) - log(scale)``, ``h = df / 2``,
    ``z = (x - loc) / scale``."""
    z = (x - loc) / scale
    g_z = d_out * ((df / 2 - 1) / z - 0.5)
    return (unbroadcast(g_z / scale, x),
            unbroadcast(d_out * 0.5 * (np.log(z) - math.log(2) - psi(0, df / 2)), df),
            unbroadcast(-g_z / scale, loc), unbroadcast(-(z * g_z + d_out) / scale, scale))


@tangent(_CHI2, "x", "df", "loc", "scale", name="scipy.stats.chi2.logpdf")
def chi2_logpdf_tangent(out, x, df, loc=0, scale=1, *, d_x, d_df, d_loc, d_scale):
    z = (x - loc) / scale
    slope = ((df / 2 - 1) / z - 0.5) / scale
    return (d_x * slope, d_df * 0.5 * (np.log(z) - math.log(2) - psi(0, df / 2)),
            -d_loc * slope, -d_scale * (z * slope + 1 / scale))


@adjoint(_CHI2_PDF, "x", "df", "loc", "scale", name="scipy.stats.chi2.pdf")
def chi2_pdf(out, d_out, x, df, loc=0, scale=1):
    """``chi2.logpdf``'s cotangents times the density."""
    z = (x - loc) / scale
    g = d_out * out
    g_z = g * ((df / 2 - 1) / z - 0.5)
    return (unbroadcast(g_z / scale, x),
            unbroadcast(g * 0.5 * (np.log(z) - math.log(2) - psi(0, df / 2)), df),
            unbroadcast(-g_z / scale, loc), unbroadcast(-(z * g_z + g) / scale, scale))


@tangent(_CHI2_PDF, "x", "df", "loc", "scale", name="scipy.stats.chi2.pdf")
def chi2_pdf_tangent(out, x, df, loc=0, scale=1, *, d_x, d_df, d_loc, d_scale):
    z = (x - loc) / scale
    slope = out * ((df / 2 - 1) / z - 0.5) / scale
    return (d_x * slope, d_df * out * 0.5 * (np.log(z) - math.log(2) - psi(0, df / 2)),
            -d_loc * slope, -d_scale * (z * slope + out / scale))


@adjoint(_BETA, "x", "a", "b", "loc", "scale", name="scipy.stats.beta.logpdf")
def beta_logpdf(out, d_out, x, a, b, loc=0, scale=1):
    """``(a - 1) log z + (b - 1) log(1 - z) - betaln(a, b) - log(scale)``."""
    z = (x - loc) / scale
    g_z = d_out * ((a - 1) / z - (b - 1) / (1 - z))
    both = psi(0, a + b)
    return (unbroadcast(g_z / scale, x), unbroadcast(d_out * (np.log(z) - psi(0, a) + both), a),
            unbroadcast(d_out * (np.log1p(-z) - psi(0, b) + both), b),
            unbroadcast(-g_z / scale, loc), unbroadcast(-(z * g_z + d_out) / scale, scale))


@tangent(_BETA, "x", "a", "b", "loc", "scale", name="scipy.stats.beta.logpdf")
def beta_logpdf_tangent(out, x, a, b, loc=0, scale=1, *, d_x, d_a, d_b, d_loc, d_scale):
    z = (x - loc) / scale
    slope = ((a - 1) / z - (b - 1) / (1 - z)) / scale
    both = psi(0, a + b)
    return (d_x * slope, d_a * (np.log(z) - psi(0, a) + both),
            d_b * (np.log1p(-z) - psi(0, b) + both), -d_loc * slope,
            -d_scale * (z * slope + 1 / scale))


@adjoint(_BETA_PDF, "x", "a", "b", "loc", "scale", name="scipy.stats.beta.pdf")
def beta_pdf(out, d_out, x, a, b, loc=0, scale=1):
    """``beta.logpdf``'s cotangents times the density."""
    z = (x - loc) / scale
    g = d_out * out
    g_z = g * ((a - 1) / z - (b - 1) / (1 - z))
    both = psi(0, a + b)
    return (unbroadcast(g_z / scale, x), unbroadcast(g * (np.log(z) - psi(0, a) + both), a),
            unbroadcast(g * (np.log1p(-z) - psi(0, b) + both), b),
            unbroadcast(-g_z / scale, loc), unbroadcast(-(z * g_z + g) / scale, scale))


@tangent(_BETA_PDF, "x", "a", "b", "loc", "scale", name="scipy.stats.beta.pdf")
def beta_pdf_tangent(out, x, a, b, loc=0, scale=1, *, d_x, d_a, d_b, d_loc, d_scale):
    z = (x - loc) / scale
    slope = out * ((a - 1) / z - (b - 1) / (1 - z)) / scale
    both = psi(0, a + b)
    return (d_x * slope, d_a * out * (np.log(z) - psi(0, a) + both),
            d_b * out * (np.log1p(-z) - psi(0, b) + both), -d_loc * slope,
            -d_scale * (z * slope + out / scale))


@adjoint(_POISSON, "mu", name="scipy.stats.poisson.logpmf")
def poisson_logpmf(out, d_out, k, mu, loc=0):
    """``(k - loc) log mu - mu - gammaln(k - loc + 1)``: ``mu`` gets ``(k - loc) / mu
    - 1``; the count is an integer."""
    return unbroadcast(d_out * ((k - loc) / mu - 1), mu)


@tangent(_POISSON, "mu", name="scipy.stats.poisson.logpmf")
def poisson_logpmf_tangent(out, k, mu, loc=0, *, d_mu):
    return d_mu * ((k - loc) / mu - 1) + np.zeros(np.shape(out))


@adjoint(_POISSON_PMF, "mu", name="scipy.stats.poisson.pmf")
def poisson_pmf(out, d_out, k, mu, loc=0):
    return unbroadcast(d_out * out * ((k - loc) / mu - 1), mu)


@tangent(_POISSON_PMF, "mu", name="scipy.stats.poisson.pmf")
def poisson_pmf_tangent(out, k, mu, loc=0, *, d_mu):
    return d_mu * out * ((k - loc) / mu - 1)


@adjoint(_MVN_PDF, "x", "mean", "cov", name="scipy.stats.multivariate_normal.pdf")
def multivariate_normal_pdf(out, d_out, x, mean=None, cov=1, allow_singular=False):
    """``multivariate_normal.logpdf``'s cotangents times the density."""
    return mvn_logpdf_grads(d_out * out, out, x, mean, cov)


@tangent(_MVN_PDF, "x", "mean", "cov", name="scipy.stats.multivariate_normal.pdf")
def multivariate_normal_pdf_tangent(out, x, mean=None, cov=1, allow_singular=False, *,
                                    d_x, d_mean, d_cov):
    d = np.shape(x)[-1]
    eye = np.eye(d)
    if np.ndim(cov) < 2:
        sigma = eye * cov
        d_sigma = eye * d_cov
    else:
        strict = np.tri(d, k=-1)
        sigma = cov * (strict + eye) + np.swapaxes(cov * strict, -1, -2)
        d_sigma = d_cov * (strict + eye) + np.swapaxes(d_cov * strict, -1, -2)
    precision = np.linalg.inv(sigma)
    if mean is None:
        s = x @ precision
    else:
        s = (x - mean) @ precision
    shape = np.shape(out)
    return (out * np.reshape(-np.sum(d_x * s, axis=-1), shape),
            out * np.reshape(np.sum(d_mean * s, axis=-1), shape),
            out * np.reshape(0.5 * (np.sum(s * (s @ d_sigma), axis=-1)
                                    - np.sum(precision * d_sigma)), shape))


_DIRICHLET, _DIRICHLET_PDF = stats.dirichlet.logpdf, stats.dirichlet.pdf


@adjoint(_DIRICHLET, "x", "alpha", name="scipy.stats.dirichlet.logpdf")
def dirichlet_logpdf(out, d_out, x, alpha):
    """``sum((alpha - 1) log x) + gammaln(sum alpha) - sum gammaln(alpha)`` over
    the rows of ``x`` (``(k,)`` or ``(k, n)``; with ``k - 1`` rows SciPy adds the
    last, ``1 - sum``, whose cotangent goes to each row with a minus sign)."""
    k = np.size(alpha)
    m = np.shape(x)[0]
    full = np.concatenate([x, 1 - np.sum(x, axis=0, keepdims=True)], axis=0)[:k]
    g_full = d_out * (np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1)) - 1) / full
    g_alpha = np.sum(np.reshape(d_out * np.log(full), (k, -1)), axis=1) \
        + np.sum(d_out) * (psi(0, np.sum(alpha)) - psi(0, alpha))
    return g_full[:m] - (m < k) * g_full[-1:], np.reshape(g_alpha, np.shape(alpha))


@tangent(_DIRICHLET, "x", "alpha", name="scipy.stats.dirichlet.logpdf")
def dirichlet_logpdf_tangent(out, x, alpha, *, d_x, d_alpha):
    k = np.size(alpha)
    full = np.concatenate([x, 1 - np.sum(x, axis=0, keepdims=True)], axis=0)[:k]
    moved = np.concatenate([d_x, -np.sum(d_x, axis=0, keepdims=True)], axis=0)[:k]
    column = (-1,) + (1,) * (np.ndim(x) - 1)
    return (np.reshape(np.sum((np.reshape(alpha, column) - 1) / full * moved, axis=0),
                       np.shape(out)),
            np.reshape(np.sum(np.reshape(d_alpha, column) * np.log(full), axis=0)
                       + np.sum(d_alpha) * psi(0, np.sum(alpha))
                       - np.sum(d_alpha * psi(0, alpha)), np.shape(out)))


@adjoint(_DIRICHLET_PDF, "x", "alpha", name="scipy.stats.dirichlet.pdf")
def dirichlet_pdf(out, d_out, x, alpha):
    """``dirichlet.logpdf``'s cotangents times the density."""
    k = np.size(alpha)
    m = np.shape(x)[0]
    g = d_out * out
    full = np.concatenate([x, 1 - np.sum(x, axis=0, keepdims=True)], axis=0)[:k]
    g_full = g * (np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1)) - 1) / full
    g_alpha = np.sum(np.reshape(g * np.log(full), (k, -1)), axis=1) \
        + np.sum(g) * (psi(0, np.sum(alpha)) - psi(0, alpha))
    return g_full[:m] - (m < k) * g_full[-1:], np.reshape(g_alpha, np.shape(alpha))


@tangent(_DIRICHLET_PDF, "x", "alpha", name="scipy.stats.dirichlet.pdf")
def dirichlet_pdf_tangent(out, x, alpha, *, d_x, d_alpha):
    k = np.size(alpha)
    full = np.concatenate([x, 1 - np.sum(x, axis=0, keepdims=True)], axis=0)[:k]
    moved = np.concatenate([d_x, -np.sum(d_x, axis=0, keepdims=True)], axis=0)[:k]
    column = (-1,) + (1,) * (np.ndim(x) - 1)
    return (out * np.reshape(np.sum((np.reshape(alpha, column) - 1) / full * moved, axis=0),
                             np.shape(out)),
            out * np.reshape(np.sum(np.reshape(d_alpha, column) * np.log(full), axis=0)
                             + np.sum(d_alpha) * psi(0, np.sum(alpha))
                             - np.sum(d_alpha * psi(0, alpha)), np.shape(out)))


_T_CDF, _T_LOGCDF, _GAMMA_CDF, _CHI2_CDF, _BETA_CDF, _POISSON_CDF = (
    stats.t.cdf, stats.t.logcdf, stats.gamma.cdf, stats.chi2.cdf, stats.beta.cdf,
    stats.poisson.cdf)


@adjoint(_T_CDF, "x", "loc", "scale", name="scipy.stats.t.cdf")
def t_cdf(out, d_out, x, df, loc=0, scale=1):
    """The density at ``z = (x - loc) / scale`` over ``scale``: ``x`` gets it,
    ``loc`` minus it, ``scale`` ``-z`` times it; ``df`` is a constant."""
    z = (x - loc) / scale
    f = d_out * np.exp(log_gamma((df + 1) / 2) - log_gamma(df / 2) - 0.5 * np.log(df * math.pi)
                       - (df + 1) / 2 * np.log1p(z * z / df)) / scale
    return unbroadcast(f, x), unbroadcast(-f, loc), unbroadcast(-z * f, scale)


@tangent(_T_CDF, "x", "loc", "scale", name="scipy.stats.t.cdf")
def t_cdf_tangent(out, x, df, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    f = np.exp(log_gamma((df + 1) / 2) - log_gamma(df / 2) - 0.5 * np.log(df * math.pi)
               - (df + 1) / 2 * np.log1p(z * z / df)) / scale
    return d_x * f, -d_loc * f, -d_scale * z * f


@adjoint(_T_LOGCDF, "x", "loc", "scale", name="scipy.stats.t.logcdf")
def t_logcdf(out, d_out, x, df, loc=0, scale=1):
    """``t.cdf``'s over the distribution function, ``exp(log f - out)``."""
    z = (x - loc) / scale
    f = d_out * np.exp(log_gamma((df + 1) / 2) - log_gamma(df / 2) - 0.5 * np.log(df * math.pi)
                       - (df + 1) / 2 * np.log1p(z * z / df) - out) / scale
    return unbroadcast(f, x), unbroadcast(-f, loc), unbroadcast(-z * f, scale)


@tangent(_T_LOGCDF, "x", "loc", "scale", name="scipy.stats.t.logcdf")
def t_logcdf_tangent(out, x, df, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    f = np.exp(log_gamma((df + 1) / 2) - log_gamma(df / 2) - 0.5 * np.log(df * math.pi)
               - (df + 1) / 2 * np.log1p(z * z / df) - out) / scale
    return d_x * f, -d_loc * f, -d_scale * z * f


@adjoint(_GAMMA_CDF, "x", "loc", "scale", name="scipy.stats.gamma.cdf")
def gamma_cdf(out, d_out, x, a, loc=0, scale=1):
    """The gamma density ``z^(a-1) e^-z / Gamma(a)`` over ``scale``; ``a`` constant."""
    z = (x - loc) / scale
    inside = z > 0  # (outside the support the cdf is constant: 0, not log(z)'s NaN)
    f = only_where(d_out * np.exp((a - 1) * np.log(np.where(inside, z, 1.0)) - z
                                  - log_gamma(a)) / scale, inside)
    return unbroadcast(f, x), unbroadcast(-f, loc), unbroadcast(-z * f, scale)


@tangent(_GAMMA_CDF, "x", "loc", "scale", name="scipy.stats.gamma.cdf")
def gamma_cdf_tangent(out, x, a, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    inside = z > 0
    f = only_where(np.exp((a - 1) * np.log(np.where(inside, z, 1.0)) - z - log_gamma(a))
                   / scale, inside)
    return d_x * f, -d_loc * f, -d_scale * z * f


@adjoint(_CHI2_CDF, "x", "loc", "scale", name="scipy.stats.chi2.cdf")
def chi2_cdf(out, d_out, x, df, loc=0, scale=1):
    """The chi-squared density ``z^(h-1) e^(-z/2) / (2^h Gamma(h))``, ``h = df / 2``."""
    z = (x - loc) / scale
    inside = z > 0
    f = only_where(d_out * np.exp((df / 2 - 1) * np.log(np.where(inside, z, 1.0)) - z / 2
                                  - df / 2 * math.log(2) - log_gamma(df / 2)) / scale, inside)
    return unbroadcast(f, x), unbroadcast(-f, loc), unbroadcast(-z * f, scale)


@tangent(_CHI2_CDF, "x", "loc", "scale", name="scipy.stats.chi2.cdf")
def chi2_cdf_tangent(out, x, df, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    inside = z > 0
    f = only_where(np.exp((df / 2 - 1) * np.log(np.where(inside, z, 1.0)) - z / 2
                          - df / 2 * math.log(2) - log_gamma(df / 2)) / scale, inside)
    return d_x * f, -d_loc * f, -d_scale * z * f


@adjoint(_BETA_CDF, "x", "loc", "scale", name="scipy.stats.beta.cdf")
def beta_cdf(out, d_out, x, a, b, loc=0, scale=1):
    """The beta density ``z^(a-1) (1-z)^(b-1) / B(a, b)``; ``a``, ``b`` constants."""
    z = (x - loc) / scale
    inside = (z > 0) & (z < 1)  # (the cdf is 0 below, 1 above)
    zs = np.where(inside, z, 0.5)
    f = only_where(d_out * np.exp((a - 1) * np.log(zs) + (b - 1) * np.log1p(-zs)
                                  - log_gamma(a) - log_gamma(b) + log_gamma(a + b)) / scale,
                   inside)
    return unbroadcast(f, x), unbroadcast(-f, loc), unbroadcast(-z * f, scale)


@tangent(_BETA_CDF, "x", "loc", "scale", name="scipy.stats.beta.cdf")
def beta_cdf_tangent(out, x, a, b, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    inside = (z > 0) & (z < 1)
    zs = np.where(inside, z, 0.5)
    f = only_where(np.exp((a - 1) * np.log(zs) + (b - 1) * np.log1p(-zs) - log_gamma(a)
                          - log_gamma(b) + log_gamma(a + b)) / scale, inside)
    return d_x * f, -d_loc * f, -d_scale * z * f


@adjoint(_POISSON_CDF, "mu", name="scipy.stats.poisson.cdf")
def poisson_cdf(out, d_out, k, mu, loc=0):
    """``d/dmu P(K <= k) = -pmf(floor(k - loc); mu)``; the count is an integer."""
    n = np.floor(k - loc)
    return unbroadcast(-d_out * np.exp(n * np.log(mu) - mu - log_gamma(n + 1.0))
                       * (n >= 0), mu)


@tangent(_POISSON_CDF, "mu", name="scipy.stats.poisson.cdf")
def poisson_cdf_tangent(out, k, mu, loc=0, *, d_mu):
    n = np.floor(k - loc)
    return -d_mu * np.exp(n * np.log(mu) - mu - log_gamma(n + 1.0)) * (n >= 0) \
        + np.zeros(np.shape(out))
