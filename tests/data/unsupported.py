"""Functions with constructs srcgrad rejects; test_errors.py checks that each
error names the right line and column.  The marker comment on each offending
line says which line the error must point at."""

import numpy as np


def uses_try(x):
    try:  # <- error
        y = np.sin(x)
    except ValueError:
        y = x
    return np.sum(y)


def uses_yield(x):
    yield np.sum(x)  # <- error


def uses_global(x):
    global COUNTER  # <- error
    return np.sum(x)


def uses_with(x):
    with open("f") as handle:  # <- error
        pass
    return np.sum(x)


def passes_a_local_function(x):
    f = lambda v: v * 2  # noqa: E731
    return np.sum(np.apply_along_axis(f, 0, x))  # <- error


def uses_del(x):
    y = x * 2
    del y  # <- error
    return np.sum(x)


def local_function_defined_in_two_branches(x):
    if np.sum(x) > 0:
        act = lambda v: v * 2.0  # noqa: E731  # <- error
    else:
        act = lambda v: v * 3.0  # noqa: E731
    return np.sum(list(map(act, x)))  # (called only, it would be chosen per call)


def starred_argument_of_unknown_length(x):
    return np.sum(np.maximum(*x))  # <- error


def recursive_local_function(x):
    def inner(v, n):
        if n == 0:
            return v
        return inner(v * 2, n - 1)  # <- error
    return np.sum(inner(x, 3))


def uses_walrus(x):
    return np.sum(y := x * 2)  # <- error


def uses_import(x):
    import math  # <- error
    return np.sum(x) * math.pi


def uses_starred_args(*xs):  # <- error
    return np.sum(xs[0])


def updates_an_alias_read_later(x):
    y = x * 1.0
    r = y[1:]  # (r += 3.0 of a view alone is followed, since fd761fb of a reshape too)
    r *= 2.0
    r[0] = 3.0  # <- error
    return np.sum(y)


def calls_unknown_function(x):
    return np.sum(np.fft.hfft(x))  # <- error


def undefined_name(x):
    return np.sum(x * not_defined_anywhere)  # <- error  # noqa: F821


def unknown_method(x):
    return np.sum(x.compress(x > 0))  # <- error


def rule_cannot_bind(x):
    return np.sum(x, keep_dims=True)  # <- error (NumPy spells it keepdims)


def returns_tuple(x):
    return np.sum(x), np.sum(x * 2)  # <- error


def uses_exec(x):
    exec("y = 1")  # <- error
    return np.sum(x)
