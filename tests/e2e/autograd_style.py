"""Models written for autograd, as its examples write them: ``autograd.numpy``
imported as ``np``, SciPy functions from ``autograd.scipy``.  Written here in
the examples' style (a classifier MLP and Gaussian-process regression) for
tests/e2e/test_autograd_code.py; importing this module needs autograd."""

import autograd.numpy as np
import autograd.numpy.random as npr
import autograd.scipy.stats.multivariate_normal as mvn
from autograd.numpy.linalg import solve
from autograd.scipy.special import logsumexp


def make_layers(scale, sizes, rs=npr.RandomState(0)):  # noqa: B008 - as autograd writes it
    """(weights, biases) per layer."""
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(sizes[:-1], sizes[1:])]  # noqa: RUF007


def mlp_log_probs(params, inputs):
    """Class log-probabilities of an MLP with tanh layers."""
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def squared_norm(params):
    flat = np.concatenate([np.ravel(W) for W, _ in params] + [b for _, b in params])
    return np.dot(flat, flat)


def mlp_objective(params, inputs, targets, l2):
    """Negative log posterior of the classifier."""
    log_prior = -l2 * squared_norm(params)
    log_lik = np.sum(mlp_log_probs(params, inputs) * targets)
    return -(log_prior + log_lik)


def rbf_kernel(kernel_params, x, xp):
    scale = np.exp(kernel_params[0])
    lengths = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengths, 1) - np.expand_dims(xp / lengths, 0)
    return scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))


def gp_parts(params):
    mean = params[0]
    kernel_params = params[2:]
    noise = np.exp(params[1]) + 0.0001
    return mean, kernel_params, noise


def gp_log_marginal(params, x, y):
    """Log marginal likelihood of GP regression with an RBF kernel."""
    mean, kernel_params, noise = gp_parts(params)
    K = rbf_kernel(kernel_params, x, x) + noise * np.eye(len(y))
    return mvn.logpdf(y, mean * np.ones(len(y)), K)


def gp_predictive_mean(params, x, y, xstar):
    """Sum of the posterior mean at xstar (solve, transpose, dot)."""
    mean, kernel_params, noise = gp_parts(params)
    K = rbf_kernel(kernel_params, x, x) + noise * np.eye(len(y))
    Ks = rbf_kernel(kernel_params, x, xstar)
    return np.sum(mean + np.dot(solve(K, Ks).T, y - mean))
