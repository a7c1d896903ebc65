# ruff: noqa: B008, RUF007  -- written as users write it
"""A multilayer perceptron written the way autograd users write one: the
parameters are a list of ``(W, b)`` tuples, the log-softmax uses a hand-written
logsumexp, and the prior flattens the parameters with a helper that returns
the flat vector and a function to undo it."""

import numpy as np


def init_params(scale, layer_sizes, rs=np.random.RandomState(0)):
    """A list of (weights, biases) tuples, one per layer."""
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def flatten(params):
    """All parameters in one vector, and the function that puts a vector back."""
    shapes = [(W.shape, b.shape) for W, b in params]
    flat = np.concatenate([np.concatenate([W.ravel(), b.ravel()]) for W, b in params])

    def unflatten(vector):
        out, start = [], 0
        for w_shape, b_shape in shapes:
            w_size, b_size = np.prod(w_shape), np.prod(b_shape)
            W = vector[start:start + w_size].reshape(w_shape)
            b = vector[start + w_size:start + w_size + b_size].reshape(b_shape)
            out.append((W, b))
            start += w_size + b_size
        return out

    return flat, unflatten


def logsumexp(x, axis=None, keepdims=False):
    top = np.max(x, axis=axis, keepdims=True)
    out = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def log_posterior(params, inputs, targets, l2):
    flat, _ = flatten(params)
    log_prior = -l2 * np.sum(flat ** 2)
    log_lik = np.sum(predict(params, inputs) * targets)
    return -(log_prior + log_lik)


def loss_no_flatten(params, inputs, targets, l2):
    """The same objective with the L2 prior summed layer by layer."""
    log_prior = -l2 * sum(np.sum(W ** 2) + np.sum(b ** 2) for W, b in params)
    return -(log_prior + np.sum(predict(params, inputs) * targets))


def flat_objective(vector, template, inputs, targets, l2):
    """The objective of the flat parameter vector, as optimisers want it."""
    _, unflatten = flatten(template)
    return log_posterior(unflatten(vector), inputs, targets, l2)
