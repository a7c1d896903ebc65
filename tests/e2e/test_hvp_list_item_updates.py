"""hvp and hessian of a helper that updates an item of the list it is passed
in a loop (``hs[0] += x``), where grad and jvp worked (outside tester T2 #1,
session 29).

The tangent code of the caller builds ``d_hs = [d_t1]`` with ``d_t1 = d_x``
and passes both ``d_hs`` and ``d_x`` to the helper's tangent function, which
works on copies (``hs_1 = snapshot(hs)``, ``d_hs_1 = fresh_tangent(snapshot(d_hs),
hs_1)``) and writes into those.  Differentiated once more, the scan of what
a function changes in place (normalize/memory_scan.py) took srcgrad's
``snapshot`` and ``fresh_tangent`` for calls that may return their argument,
so the writes into the copies were writes into ``d_hs``, and the run-time
check said that ``d_x``, held by ``d_hs``, would see them: AliasedUpdateError
naming srcgrad's variables.  The scan now knows srcgrad's own copies.

Each program: value bit for bit under every policy and in jvp, gradient and
tangent against central differences (numeric.check_every_policy), hvp against
central differences of the gradient and the Hessian's product, the Hessian
symmetric, and autograd's Hessian of the same function written without
updates in place.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

X = np.array([0.3, -1.2])
V = np.array([0.7, -0.4])


def _bump(hs, x):
    for h in range(1):
        hs[0] += x
    return hs


def bump_twice(x):  # the tester's program: hvp [8, 8] along ones
    hs = [x * 1.0]
    hs = _bump(hs, x)
    return np.sum(hs[0] ** 2)


def _accumulate(hs, x, n):
    for i in range(n):
        hs[i % len(hs)] += x * (i + 1)
        if i % 2:
            hs[0] *= 0.5
    return hs


def in_loops_and_branches(x):
    hs = [x * 1.0, np.sin(x)]
    hs = _accumulate(hs, x, 3)
    return np.sum(hs[0] * hs[1]) + np.sum(np.tanh(hs[1]) ** 2)


def _bump_dict(d, x):
    for k in ("a", "b"):
        d[k] += x * d["a"]
    return d


def dict_items(x):
    d = {"a": x * 1.0, "b": x ** 2}
    d = _bump_dict(d, x)
    return np.sum(d["a"] * d["b"])


def _outer(hs, x):
    hs = _bump(hs, x * 2.0)
    return hs


def helper_in_a_helper(x):
    hs = [np.cos(x)]
    hs = _outer(hs, x)
    return np.sum(hs[0] ** 3)


PROGRAMS = [bump_twice, in_loops_and_branches, dict_items, helper_in_a_helper]


def test_tester_s_hvp():
    np.testing.assert_allclose(srcgrad.hvp(bump_twice)(X.copy(), np.ones(2)), [8.0, 8.0],
                               rtol=1e-14)


@pytest.mark.parametrize("fn", PROGRAMS)
def test_hvp_of_a_helper_updating_list_items(fn):
    grad = check_every_policy(fn, (X.copy(),))
    assert_close(grad, srcgrad.grad(fn)(X.copy()), rtol=1e-14, what="grad")
    given = X.copy()
    hv = srcgrad.hvp(fn)(given, V)
    np.testing.assert_array_equal(given, X)  # the caller's array is left alone
    eps, g = 1e-6, srcgrad.grad(fn)
    assert_close(hv, (g(X + eps * V) - g(X - eps * V)) / (2 * eps), rtol=1e-6, atol=1e-8,
                 what=f"{fn.__name__} hvp")
    H = srcgrad.hessian(fn)(X.copy())
    assert_close(H, H.T, rtol=1e-12, atol=1e-12, what=f"{fn.__name__} Hessian symmetric")
    assert_close(H @ V, hv, rtol=1e-12, atol=1e-12, what=f"{fn.__name__} Hessian")


def test_autograd_hessians_agree():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain_tester(x):
        return anp.sum((x * 1.0 + x) ** 2)

    def plain_loops(x):  # in_loops_and_branches: i = 0, 1, 2 on a list of two
        a, b = x * 1.0, anp.sin(x)
        a = a + x
        b = b + 2 * x
        a = a * 0.5
        a = a + 3 * x
        return anp.sum(a * b) + anp.sum(anp.tanh(b) ** 2)

    def plain_dict(x):
        a, b = x * 1.0, x ** 2
        a = a + x * a
        b = b + x * a
        return anp.sum(a * b)

    def plain_nested(x):
        return anp.sum((anp.cos(x) + 2.0 * x) ** 3)

    for fn, plain in ((bump_twice, plain_tester), (in_loops_and_branches, plain_loops),
                      (dict_items, plain_dict), (helper_in_a_helper, plain_nested)):
        assert_close(srcgrad.hessian(fn)(X.copy()), autograd.hessian(plain)(X), rtol=1e-10,
                     what=f"{fn.__name__} against autograd")
