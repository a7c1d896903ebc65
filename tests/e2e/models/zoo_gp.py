"""Gaussian-process regression: the negative log marginal likelihood of the
hyperparameters, through a Cholesky factor and two triangular solves (with
``np.linalg.solve``, or SciPy's ``solve_triangular`` and ``cholesky``),
written as GP tutorials write it."""

import numpy as np
import scipy.linalg
from scipy.linalg import cho_factor, cho_solve, solve_triangular


def rbf_kernel(params, x, xp):
    output_scale = np.exp(params[0])
    lengthscales = np.exp(params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))


def unpack(params):
    mean = params[0]
    noise_var = np.exp(params[1]) + 1e-4
    kernel_params = params[2:]
    return mean, noise_var, kernel_params


def neg_log_marginal(params, x, y):
    mean, noise_var, kernel_params = unpack(params)
    n = len(y)
    K = rbf_kernel(kernel_params, x, x) + noise_var * np.eye(n)
    L = np.linalg.cholesky(K)
    r = y - mean
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, r))
    log_det = 2.0 * np.sum(np.log(np.diag(L)))
    return 0.5 * np.dot(r, alpha) + 0.5 * log_det + 0.5 * n * np.log(2 * np.pi)


def predictive_mean(params, x, y, x_test):
    """The posterior mean at test points, summed: a gradient through a solve."""
    mean, noise_var, kernel_params = unpack(params)
    K = rbf_kernel(kernel_params, x, x) + noise_var * np.eye(len(y))
    K_star = rbf_kernel(kernel_params, x_test, x)
    return np.sum(mean + K_star @ np.linalg.solve(K, y - mean))


def neg_log_marginal_triangular(params, x, y):
    """The same likelihood with SciPy's triangular solve: ``|L^-1 r|^2``."""
    mean, noise_var, kernel_params = unpack(params)
    K = rbf_kernel(kernel_params, x, x) + noise_var * np.eye(len(y))
    L = np.linalg.cholesky(K)
    v = solve_triangular(L, y - mean, lower=True)
    return 0.5 * np.dot(v, v) + np.sum(np.log(np.diag(L))) + 0.5 * len(y) * np.log(2 * np.pi)


def neg_log_marginal_scipy(params, x, y):
    """SciPy's upper Cholesky factor and two triangular solves."""
    mean, noise_var, kernel_params = unpack(params)
    K = rbf_kernel(kernel_params, x, x) + noise_var * np.eye(len(y))
    U = scipy.linalg.cholesky(K)
    r = y - mean
    alpha = solve_triangular(U, solve_triangular(U, r, trans="T"))
    return 0.5 * r @ alpha + np.sum(np.log(np.diag(U))) + 0.5 * len(y) * np.log(2 * np.pi)


def neg_log_marginal_cho(params, x, y):
    """With SciPy's cho_factor and cho_solve, the factor kept as SciPy returns it."""
    mean, noise_var, kernel_params = unpack(params)
    K = rbf_kernel(kernel_params, x, x) + noise_var * np.eye(len(y))
    factor = cho_factor(K, lower=True)
    r = y - mean
    alpha = cho_solve(factor, r)
    log_det = 2.0 * np.sum(np.log(np.diag(factor[0])))
    return 0.5 * r @ alpha + 0.5 * log_det + 0.5 * len(y) * np.log(2 * np.pi)
