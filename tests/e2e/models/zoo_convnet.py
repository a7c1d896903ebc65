# ruff: noqa: RUF059  -- written as users write it (unused unpacked names)
"""A small convolutional net made of layer objects, each a class with a
``forward`` method: a 2-D convolution by slicing the padded input and
``np.einsum``, ReLU, 2x2 average pooling by reshaping, flatten, and a dense
layer; the parameters are a list with one entry per layer (None for a layer
without any), and the loss a softmax cross-entropy."""

import numpy as np


class Conv2D:
    def __init__(self, kernel_size, padding=1):
        self.k = kernel_size
        self.padding = padding

    def forward(self, x, params):
        W, b = params  # W: (out, in, k, k)
        p = self.padding
        x = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        n, c, h, w = x.shape
        out_h, out_w = h - self.k + 1, w - self.k + 1
        out = np.zeros((n, W.shape[0], out_h, out_w))
        for i in range(self.k):
            for j in range(self.k):
                patch = x[:, :, i:i + out_h, j:j + out_w]
                out = out + np.einsum("nchw,oc->nohw", patch, W[:, :, i, j])
        return out + b[None, :, None, None]


class ReLU:
    def forward(self, x, params):
        return np.maximum(x, 0.0)


class AvgPool2:
    def forward(self, x, params):
        n, c, h, w = x.shape
        return x.reshape(n, c, h // 2, 2, w // 2, 2).mean(axis=(3, 5))


class Flatten:
    def forward(self, x, params):
        return x.reshape(x.shape[0], -1)


class Dense:
    def forward(self, x, params):
        W, b = params
        return x @ W + b


def softmax_cross_entropy(logits, labels):
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(len(labels)), labels])


LAYERS = [Conv2D(3), ReLU(), AvgPool2(), Flatten(), Dense()]


def convnet_loss(params, images, labels):
    x = images
    for layer, p in zip(LAYERS, params):
        x = layer.forward(x, p)
    return softmax_cross_entropy(x, labels)


def convnet_loss_of(layers, params, images, labels):
    """The same loss with the layers passed in, as a training loop passes them."""
    x = images
    for layer, p in zip(layers, params):
        x = layer.forward(x, p)
    return softmax_cross_entropy(x, labels)
