"""Loops and builtins over dicts srcgrad cannot see are dicts where they are
made (tests/e2e/test_dicts_iterated_by_key.py, findings R1-1, R1-9, R1-10)."""
import numpy as np


def init_params(x):
    return {"a": x[0] * 2.0, "b": x[1] * 3.0}


def made_by_index(n, x):
    return {i: x[i] * 2.0 for i in range(n)}


def str_keys_from_a_helper(x):  # params = init(); for k in params
    params = init_params(x)
    s = 0.0
    for k in params:
        s = s + params[k] ** 2
    return s


def int_keys_from_a_helper(x):  # keys 0..n-1: positions and keys agree in type
    a = made_by_index(3, x)
    s = 0.0
    for k in a:
        s = s + k * x[3] + a[k]
    return s


def an_alias(x):
    a = {0: x[0], 2: x[2], 1: x[1]}
    b = a
    s = 0.0
    for k in b:
        s = s + k * x[3] + b[k] * k
    return s


def a_copy(x):
    d = {2: x[1], 0: x[0]}
    e = d.copy()
    s = 0.0
    for k in e:
        s = s + x[k] * e[k]
    return s


def a_set(x):
    s = 0.0
    for k in set([0, 2, 2]):
        s = s + x[k] ** 2
    return s


def sgd_step(params, grads, lr):
    for k in params:
        params[k] = params[k] - lr * grads[k]


def training_loop(x):  # the helper updates the dict an init function made
    params = init_params(x)
    for it in range(3):
        grads = {"a": 2.0 * params["a"] * x[3], "b": np.cos(params["b"])}
        sgd_step(params, grads, 0.1)
    return params["a"] ** 2 + params["b"] ** 3


def collect(out, xs):
    new = {i: xs[i] * 2.0 for i in range(len(xs))}
    for k in new:
        out.append(k * xs[0] + new[k])


def comprehension_in_a_helper(x):
    out = []
    collect(out, x[1:])
    return sum(out)


def zipped_and_enumerated(x):
    a = made_by_index(3, x)
    s = 0.0
    for k, w in zip(a, x):
        s = s + k * w
    for i, k in enumerate(a):
        s = s + i * a[k]
    return s + sum([k * x[3] for k in a])


def builtins_of_keys(x):
    a = made_by_index(3, x)
    ks = list(a)
    d = {2: x[1], 0: x[0]}
    return sum(a) * x[3] + ks[2] * x[0] + max(a) * x[1] + sum(d) * x[2] + sum(d, x[0])


def unpacked(x):
    d = init_params(x)
    a, b = d
    return x[0] * len(a + b)
