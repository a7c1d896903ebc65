"""Rules of more ``scipy.stats`` log-densities, both modes (review s37 R5-13).

Registered lazily with :mod:`.scipy_stats` (the same loader imports both once
the user's code has imported ``scipy.stats``).  Location-scale families in
``x``, ``loc`` and ``scale``, ``z = (x - loc) / scale``:

- ``expon.logpdf``: ``-z - log(scale)`` for ``z >= 0`` (``-inf`` below, where
  it is constant: no gradient there);
- ``laplace.logpdf``: ``-|z| - log(2 scale)`` (at ``z = 0`` the subgradient 0,
  as ``np.abs``'s);
- ``cauchy.logpdf``: ``-log(pi scale) - log1p(z ** 2)``;

and ``binom.logpmf(k, n, p)`` in ``p``: ``(k - loc) / p - (n - k + loc) / (1 - p)``
(the counts are integers).

    >>> from scipy import stats
    >>> from .registry import display_name
    >>> display_name(stats.laplace.logpdf)
    'scipy.stats.laplace.logpdf'
"""

import numpy as np
from scipy import stats

from ..runtime import unbroadcast
from .registry import adjoint, tangent

_EXPON, _LAPLACE, _CAUCHY, _BINOM = (stats.expon.logpdf, stats.laplace.logpdf,
                                     stats.cauchy.logpdf, stats.binom.logpmf)


@adjoint(_EXPON, "x", "loc", "scale", name="scipy.stats.expon.logpdf")
def expon_logpdf(out, d_out, x, loc=0, scale=1):
    z = (x - loc) / scale
    slope = np.where(z < 0, 0.0, d_out / scale)
    return (unbroadcast(-slope, x), unbroadcast(slope, loc),
            unbroadcast(slope * (z - 1), scale))


@tangent(_EXPON, "x", "loc", "scale", name="scipy.stats.expon.logpdf")
def expon_logpdf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    inside = np.where(z < 0, 0.0, 1.0 / scale)
    return -d_x * inside, d_loc * inside, d_scale * (z - 1) * inside


@adjoint(_LAPLACE, "x", "loc", "scale", name="scipy.stats.laplace.logpdf")
def laplace_logpdf(out, d_out, x, loc=0, scale=1):
    z = (x - loc) / scale
    slope = d_out * np.sign(z) / scale
    return (unbroadcast(-slope, x), unbroadcast(slope, loc),
            unbroadcast(d_out * (np.abs(z) - 1) / scale, scale))


@tangent(_LAPLACE, "x", "loc", "scale", name="scipy.stats.laplace.logpdf")
def laplace_logpdf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    return (-d_x * np.sign(z) / scale, d_loc * np.sign(z) / scale,
            d_scale * (np.abs(z) - 1) / scale)


@adjoint(_CAUCHY, "x", "loc", "scale", name="scipy.stats.cauchy.logpdf")
def cauchy_logpdf(out, d_out, x, loc=0, scale=1):
    z = (x - loc) / scale
    slope = d_out * 2 * z / (scale * (1 + z * z))
    return (unbroadcast(-slope, x), unbroadcast(slope, loc),
            unbroadcast(d_out * (z * z - 1) / (scale * (1 + z * z)), scale))


@tangent(_CAUCHY, "x", "loc", "scale", name="scipy.stats.cauchy.logpdf")
def cauchy_logpdf_tangent(out, x, loc=0, scale=1, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale
    slope = 2 * z / (scale * (1 + z * z))
    return -d_x * slope, d_loc * slope, d_scale * (z * z - 1) / (scale * (1 + z * z))


@adjoint(_BINOM, "p", name="scipy.stats.binom.logpmf")
def binom_logpmf(out, d_out, k, n, p, loc=0):
    return unbroadcast(d_out * ((k - loc) / p - (n - k + loc) / (1 - p)), p)


@tangent(_BINOM, "p", name="scipy.stats.binom.logpmf")
def binom_logpmf_tangent(out, k, n, p, loc=0, *, d_p):
    return d_p * ((k - loc) / p - (n - k + loc) / (1 - p)) + np.zeros(np.shape(out))
