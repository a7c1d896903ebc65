"""Module-level names that are builtins' names (review s37 R5-11), for
tests/e2e/test_globals_named_like_builtins.py: a module's own globals shadow
the builtins for every function in it, so these live in a module of their own."""

import numpy as np

type = "l2"  # noqa: A001 - a config read by the loss
slice = 2  # noqa: A001
len = 3  # noqa: A001


def reversed(xs):  # noqa: A001 - the user's own helper (returns a list)
    return xs[::-1]


def loss_type(x):
    h = x
    for i in range(3):
        h = np.tanh(h) * 1.1
    if type == "l2":
        return np.sum(h ** 2)
    return np.sum(np.abs(h))


def loss_rev(x):
    h = x
    acc = 0.0
    for i in range(4):
        h = np.tanh(h * 1.3)
        acc = acc + np.sum(reversed(h) * h)
    return acc


def loss_slice(x):
    return np.sum(x[:slice] ** 2) + np.sum(x[slice:] ** 3)


def loss_len(x):
    out = []
    for i in range(len):
        out.append(x[i] ** 2)
    return sum(out)
