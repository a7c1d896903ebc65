"""Functions the module docstrings' examples differentiate (srcgrad reads
source, so doctest examples need functions defined in a real file)."""

import numpy as np


def scale(v, k=2.0):
    return v * k


def caller(x):
    return np.sum(scale(x, k=3.0))


def chain(x):
    return np.sum(np.exp(np.sin(x)))


def recurrence(x):
    h = x
    for i in range(10):
        h = np.sin(h) * 1.5
    return np.sum(h)


def append_to_default(x, cache=[]):  # noqa: B006 (the shared default is the point)
    cache.append(x)
    return x * len(cache)
