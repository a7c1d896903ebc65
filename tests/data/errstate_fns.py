"""Functions with ``with np.errstate(...)`` blocks (tests/e2e/test_errstate_blocks.py)."""
import numpy as np


def entropy(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = np.where(p > 0, np.log(p), 0.0)
    return -np.sum(p * logp)


def in_a_loop(x):
    y = x * 1.0
    for k in range(3):
        with np.errstate(all="ignore"):
            y = y / (1.0 + y * y)
        y = np.sin(y) + 0.1 * k
    return np.sum(y ** 2)


def in_a_branch(x):
    if np.sum(x) > 0:
        with np.errstate(divide="ignore"):
            r = np.log(np.abs(x))
    else:
        r = x * 2.0
    return np.sum(np.where(np.isfinite(r), r, 0.0) * x)


def safe_log(x):
    with np.errstate(divide="ignore"):
        return np.log(x)


def through_a_helper(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.where(x > 0, safe_log(np.abs(x) + i), 0.0) * x)
    return s


def nested(x):
    with np.errstate(over="ignore"):
        with np.errstate(under="ignore", divide="warn"):
            y = np.exp(x) / (1.0 + np.exp(x))
    return np.sum(y)


def raises(x):
    with np.errstate(divide="raise"):
        return np.sum(np.log(x))


def bound_to_a_name(x):
    with np.errstate(divide="ignore") as state:
        y = np.log(x) + 0.0 * len(str(state))
    return np.sum(y)


def other_context(x):
    with open(__file__) as handle:
        y = x * len(handle.read(1))
    return np.sum(y)


def log_into(out, v):
    with np.errstate(divide="ignore"):
        out[:] = np.log(v)


def helper_called_for_its_update(x):
    u = np.zeros(4)
    log_into(u, np.abs(x) + 0.5)
    return np.sum(u * x)
