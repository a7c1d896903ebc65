"""Lambdas for tests/frontend/test_lambdas.py (srcgrad reads their source, so
they live in a file of their own).  Line positions matter here: keep two
lambdas on the line that has them."""

import functools

import numpy as np

SCALE = 2.0


def log_lik(params, x):
    return -np.sum((x - params) ** 2)


objective = lambda params, x: -log_lik(params, x) * SCALE

cube, sine = lambda v: np.sum(v ** 3), lambda v: np.sum(np.sin(v))

same_a, same_b = lambda v: np.sum(v * 2.0), lambda v: np.sum((v * 2.0))

nested = lambda v: (lambda w: np.sum(w ** 2))(v * 3.0)

square = lambda v: v * v


def uses_a_global_lambda(v):
    return np.sum(square(v) + square(v * 2.0))


def make_scaled(k):
    return lambda v: np.sum(v * k) + np.sum(square(v))


def closures_with_defaults():
    return [lambda v, k=k: np.sum(v * k) for k in (2.0, 3.0)]


long_one = functools.reduce(
    lambda acc, f: f,
    [lambda v: np.sum(
        np.tanh(v) * SCALE)])

walrus = lambda v: np.sum(y := v * 2.0)

with_a_condition = lambda v, on=True: np.sum(v ** 2) if on else np.sum(v)
