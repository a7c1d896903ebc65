"""NumPy calls review s37 found refused (R5-2), each with a located
MissingRuleError in grad, jvp and hvp: ``np.lexsort`` (positions, as
``np.argsort``'s), ``np.delete``, ``np.diagflat``, ``np.spacing`` (a step,
constant between powers of two), ``np.nextafter`` and ``np.add.reduceat``.  Each rule is checked
by the spec table in both modes; here in programs, under every policy.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

X = np.array([0.37, -0.81, 1.23, -0.22, 0.9, 0.05])


def ranked_by_two_keys(x):
    order = np.lexsort((x, np.round(x * 2)))
    return np.sum(x[order] * np.arange(1.0, 7.0))


def dropped(x):
    M = x.reshape(2, 3)
    kept = np.delete(M, 1, axis=1)
    flat = np.delete(x, [0, 5])
    return np.sum(np.tanh(kept) ** 2) + flat @ flat


def diagonal_matrix(x):
    D = np.diagflat(np.exp(x[:3]))
    U = np.diagflat(x[3:5], 1)
    return np.sum((D + U) @ (D - U))


def within_an_ulp(x):
    s = 0.0
    for v in x:
        s = s + np.nextafter(v, np.inf) ** 2 + np.spacing(v) * 1e6
    return s


def segments_in_a_loop(x):
    total = 0.0
    for k in range(2):
        sums = np.add.reduceat(x.reshape(2, 3) * (k + 1), np.array([0, 2, 1]), axis=1)
        total = total + np.sum(np.tanh(sums) ** 2)
    return total + np.sum(np.add.reduceat(x, [0, 2, 5]) ** 2)


@pytest.mark.parametrize("fn", [ranked_by_two_keys, dropped, diagonal_matrix, within_an_ulp,
                                segments_in_a_loop], ids=lambda f: f.__name__)
def test_programs_with_the_calls(fn):
    check_every_policy(fn, (X,), 0)


@pytest.mark.parametrize("fn", [dropped, diagonal_matrix, segments_in_a_loop],
                         ids=lambda f: f.__name__)
def test_hvp_of_the_calls(fn):
    v = np.linspace(-1.0, 1.0, X.size)
    gradient = srcgrad.grad(fn)
    eps = 1e-6
    want = (gradient(X + eps * v) - gradient(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, v), want, rtol=1e-5, atol=1e-7)


def running_fmax(x):
    return np.sum(np.fmax.reduce(x.reshape(2, 3), 0))


def pairwise_minimum(x):
    return np.sum(np.minimum.outer(x, x))


@pytest.mark.parametrize("fn, shown", [(running_fmax, "np.fmax.reduce"),
                                       (pairwise_minimum, "np.minimum.outer")])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_ufunc_method_without_a_rule_is_named_as_written(fn, shown, mode):
    # (review s37 R5-2, R5-18: named 'ufunc.reduceat', 'ufunc.outer')
    with pytest.raises(srcgrad.MissingRuleError) as info:
        if mode == "grad":
            srcgrad.grad(fn)(X)
        else:
            srcgrad.jvp(fn, (X,), (X,))
    assert f"rule for '{shown}'" in info.value.message
    assert "ufunc." not in info.value.message
    assert info.value.lineno == fn.__code__.co_firstlineno + 1
