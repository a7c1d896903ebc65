# ruff: noqa: RUF059  -- written as users write it (unused unpacked names)
"""A Gaussian mixture's log-likelihood with a dict of parameters: mixture
weights through a log-softmax, full covariances from lower-triangular
factors, the log-density by hand, and the mixture by logsumexp -- SciPy's
and a hand-written one."""

import numpy as np
from scipy.special import logsumexp


def my_logsumexp(a, axis=0):
    a_max = np.max(a, axis=axis)
    return a_max + np.log(np.sum(np.exp(a - np.expand_dims(a_max, axis)), axis=axis))


def mvn_logpdf(x, mean, cov):
    d = mean.shape[0]
    diff = x - mean
    sign, logdet = np.linalg.slogdet(cov)
    maha = np.sum(diff * np.linalg.solve(cov, diff.T).T, axis=1)
    return -0.5 * (d * np.log(2 * np.pi) + logdet + maha)


def cluster_log_likelihoods(params, data):
    log_weights = params["log proportions"] - logsumexp(params["log proportions"])
    rows = []
    for log_weight, mean, chol in zip(log_weights, params["means"], params["lower triangles"]):
        cov = np.dot(chol, chol.T) + 1e-6 * np.eye(data.shape[1])
        rows.append(log_weight + mvn_logpdf(data, mean, cov))
    return np.vstack(rows)


def gmm_log_likelihood(params, data):
    return np.sum(logsumexp(cluster_log_likelihoods(params, data), axis=0))


def gmm_log_likelihood_by_hand(params, data):
    return np.sum(my_logsumexp(cluster_log_likelihoods(params, data), axis=0))
