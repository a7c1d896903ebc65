"""Models written the way NumPy and SciPy users write them, for
tests/e2e/test_linalg_models.py: matrix factorisations, Fourier transforms,
reductions that skip NaNs, interpolation, and SciPy's special functions and
densities.  Each is one self-contained function, so that the test can also
run the same code under autograd (its globals rebound to autograd's
modules)."""

import numpy as np

try:  # SciPy is optional: the tests of the models that use it skip without it
    from scipy import signal, special, stats
except ImportError:  # pragma: no cover - the test extra installs SciPy
    signal = special = stats = None


def gp_neg_log_marginal(log_params, X, y):
    """A Gaussian process's negative log marginal likelihood, through Cholesky."""
    ell, sf, sn = np.exp(log_params)
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = sf ** 2 * np.exp(-0.5 * sq / ell ** 2) + (sn ** 2 + 1e-6) * np.eye(len(y))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    diagonal = L[np.arange(len(y)), np.arange(len(y))]
    return 0.5 * y @ alpha + np.sum(np.log(diagonal)) + 0.5 * len(y) * np.log(2 * np.pi)


def gp_neg_log_marginal_eigh(log_params, X, y):
    """The same likelihood through the eigendecomposition of the kernel matrix."""
    ell, sf, sn = np.exp(log_params)
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = sf ** 2 * np.exp(-0.5 * sq / ell ** 2) + (sn ** 2 + 1e-6) * np.eye(len(y))
    w, V = np.linalg.eigh(K)
    alpha = V @ ((V.T @ y) / w)
    return 0.5 * y @ alpha + 0.5 * np.sum(np.log(w))


def gmm_log_likelihood(logits, means, log_sigmas, X):
    """A mixture of isotropic Gaussians: log-likelihood of the rows of X."""
    log_weights = logits - special.logsumexp(logits)
    sq = np.sum((X[:, None, :] - means[None, :, :]) ** 2, axis=-1)
    d = X.shape[1]
    log_density = (-0.5 * sq / np.exp(2 * log_sigmas) - d * log_sigmas
                   - 0.5 * d * np.log(2 * np.pi))
    return np.sum(special.logsumexp(log_weights + log_density, axis=1))


def spectral_power(x, weights):
    """The power of a signal filtered in the frequency domain."""
    filtered = np.fft.irfft(np.fft.rfft(x) * weights)
    return np.sum(filtered ** 2)


def spectral_loss(x, target):
    """Match the log power spectrum of a real signal."""
    power = np.abs(np.fft.rfft(x)) ** 2
    return np.sum((np.log1p(power) - target) ** 2)


def circular_filter_loss(x, h, y):
    """A circular convolution through rfft and irfft, with complex intermediates."""
    filtered = np.fft.irfft(np.fft.rfft(x) * np.fft.rfft(h))
    return np.sum((filtered - y) ** 2)


def image_spectrum_energy(img, weights):
    """Weighted energy of a 2-D spectrum."""
    spectrum = np.fft.fft2(img)
    return np.sum(weights * np.abs(spectrum))


def student_t_regression(w, log_scale, X, y):
    """Robust regression: a Student t likelihood with 4 degrees of freedom."""
    return -np.sum(stats.t.logpdf(y, 4.0, X @ w, np.exp(log_scale)))


def normal_regression(w, log_scale, X, y):
    return -np.sum(stats.norm.logpdf(y, X @ w, np.exp(log_scale)))


def logistic_loss(w, X, y):
    """Logistic regression with scipy.special.expit and xlogy."""
    p = special.expit(X @ w)
    return -np.sum(special.xlogy(y, p) + special.xlogy(1 - y, 1 - p))


def mvn_fit(mean, chol_offdiag, X):
    """A multivariate normal's log-likelihood, the covariance from a Cholesky factor."""
    L = np.eye(2) + np.array([[0.0, 0.0], [chol_offdiag, 0.0]])
    return np.sum(stats.multivariate_normal.logpdf(X, mean, L @ L.T))


def gamma_log_prior(a, b):
    """Log density of a beta prior and a gamma normaliser."""
    return np.sum(special.gammaln(a) - special.betaln(a, b) + special.digamma(b))


def smooth_2d(img, kernel):
    return np.sum(signal.convolve(img, kernel, mode="same") ** 2)


def nuclear_regression(W, A, B):
    """Least squares with a nuclear-norm penalty (low rank)."""
    return np.sum((A @ W - B) ** 2) + 0.1 * np.linalg.norm(W, "nuc")


def spectral_norm_penalty(W):
    return np.linalg.norm(W, 2) ** 2 + np.sum(np.linalg.svd(W, compute_uv=False))


def least_squares_norm(A, b):
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    return np.sum(x ** 2)


def pinv_projection(A, v):
    return np.sum((A @ (np.linalg.pinv(A) @ v)) ** 2) + np.sum(np.linalg.pinv(A) ** 2)


def qr_log_volume(A):
    """log |det| of the tall A's column space, through R's diagonal."""
    q, r = np.linalg.qr(A)
    k = np.arange(r.shape[0])
    return np.sum(np.log(np.abs(r[k, k]))) + np.sum(q[:, 0] ** 2)


def matrix_power_trace(A):
    return np.trace(np.linalg.matrix_power(A, 3)) + np.sum(np.linalg.matrix_power(A, -1))


def nan_robust_loss(x, y):
    """Statistics over the observed entries of y (NaN where missing).  (A NaN
    multiplied into a differentiated value, ``(x - y) ** 2``, would poison the
    gradient there, 0 * NaN, as in autograd and JAX.)"""
    return (np.nanmean(x + y) + np.nanstd(y - x) + np.nanmax(y + 2 * x)
            + np.nansum(np.nancumsum(x - y, axis=1)) + np.nanvar(x + y, axis=0)[1])


def survival(z):
    """Probability of surviving each step: a cumulative product."""
    return np.sum(np.cumprod(1 / (1 + np.exp(-z))))


def interpolated_curve(x, values, knots):
    return np.sum(np.interp(x, knots, values) ** 2)


def smoothed(x, kernel):
    return np.sum(np.convolve(x, kernel, "same") ** 2) + np.sum(np.convolve(x, kernel) ** 3)
