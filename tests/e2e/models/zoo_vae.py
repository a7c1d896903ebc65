"""A variational autoencoder's negative ELBO on a minibatch: an encoder and a
decoder MLP (lists of (W, b)), a reparameterised sample with the noise passed
in, diagonal-Gaussian densities, and a Bernoulli likelihood of binary data."""

import numpy as np


def relu(x):
    return np.maximum(0.0, x)


def mlp(params, inputs):
    for W, b in params[:-1]:
        inputs = relu(np.dot(inputs, W) + b)
    W, b = params[-1]
    return np.dot(inputs, W) + b


def diag_gaussian_log_density(x, mu, log_std):
    return np.sum(-0.5 * (x - mu) ** 2 / np.exp(2 * log_std) - log_std
                  - 0.5 * np.log(2 * np.pi), axis=-1)


def unpack_gaussian(params):
    d = params.shape[-1] // 2
    return params[:, :d], params[:, d:]


def bernoulli_log_density(targets, logits):
    signs = targets * 2 - 1
    return -np.sum(np.logaddexp(0.0, -logits * signs), axis=-1)


def neg_elbo(enc_params, dec_params, data, noise):
    mean, log_std = unpack_gaussian(mlp(enc_params, data))
    z = mean + np.exp(log_std) * noise
    logits = mlp(dec_params, z)
    log_px = bernoulli_log_density(data, logits)
    log_pz = diag_gaussian_log_density(z, np.zeros_like(z), np.zeros_like(z))
    log_qz = diag_gaussian_log_density(z, mean, log_std)
    return -np.mean(log_px + log_pz - log_qz)
