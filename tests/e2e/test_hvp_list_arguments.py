"""hvp of ``xs *= k`` (list repetition) and ``xs += ys`` (concatenation) on
list arguments (outside tester T2 #18): grad and jvp were right, hvp raised a
raw ValueError from the runtime (``expand`` took the list for an array).

grad and jvp specialise their code on the lists and tuples they are passed
(``Options.sequences``), so ``*`` and ``+`` of them repeat and concatenate;
the levels of tangent code that hvp and hessian differentiate again were made
without it, so ``xs * k`` there was arithmetic.  Commit 8a30b66 specialised
each level on the lists passed (and the tangents of them, lists too); these
are the tester's programs, and the same in a loop, a branch and a helper.

Each program: value bit for bit and gradient against central differences
under every policy, tangent against differences, hvp against differences of
the gradient and against autograd's hvp of the same function (written with
a new list, which autograd follows).
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numeric import POLICIES, assert_close

import srcgrad

A = [np.array([0.5, 1.0]), np.array([2.0])]
B = [np.array([-1.0, 3.0])]
V = [np.array([1.0, -0.5]), np.array([0.7])]


def repeat(xs, k):
    xs *= k
    return sum(np.sum(v ** 2) for v in xs)


def concat(xs, ys):
    xs += ys
    return sum(np.sum(v ** 3) for v in xs)


def in_loop(xs, ys):
    for i in range(2):
        xs += ys
        xs[0] = xs[0] * 0.5 + xs[-1][0]
    return sum(np.sum(np.sin(v) * v) for v in xs)


def in_branch(xs, k):
    if k > 1:
        ys = xs * k
    else:
        ys = xs + xs[:1]
    return sum(np.sum(v ** 3) for v in ys) + np.sum(ys[0] * ys[2][0])


def _total(zs):
    return sum(np.sum(np.cos(v) * v) for v in zs)


def helper(xs, ys):
    xs += ys
    return _total(xs) * 2.0


def _ag(fn):
    """The same function written with a new list, for autograd."""
    def repeat_(xs, k):
        return sum(anp.sum(v ** 2) for v in list(xs) * k)

    def concat_(xs, ys):
        return sum(anp.sum(v ** 3) for v in list(xs) + list(ys))

    def in_loop_(xs, ys):
        xs = list(xs)
        for i in range(2):
            xs = xs + list(ys)
            xs[0] = xs[0] * 0.5 + xs[-1][0]
        return sum(anp.sum(anp.sin(v) * v) for v in xs)

    def in_branch_(xs, k):
        ys = list(xs) * k if k > 1 else list(xs) + list(xs)[:1]
        return sum(anp.sum(v ** 3) for v in ys) + anp.sum(ys[0] * ys[2][0])
    def helper_(xs, ys):
        return sum(anp.sum(anp.cos(v) * v) for v in list(xs) + list(ys)) * 2.0
    return {helper: helper_, repeat: repeat_, concat: concat_, in_loop: in_loop_, in_branch: in_branch_}[fn]


def _copy(xs):
    return [x.copy() for x in xs]


def _flat(xs):
    return np.concatenate([np.ravel(x) for x in xs])


def _unflat(flat, like):
    out, at = [], 0
    for x in like:
        out.append(flat[at:at + x.size].reshape(x.shape))
        at += x.size
    return out


def _fd(fn, xs, eps=1e-6):
    """Central differences of the scalar ``fn`` of a list, flattened."""
    base = _flat(xs)
    out = np.zeros_like(base)
    for i in range(base.size):
        up, down = base.copy(), base.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = (fn(_unflat(up, xs)) - fn(_unflat(down, xs))) / (2 * eps)
    return out


CASES = [(repeat, 2), (repeat, 3), (concat, B), (in_loop, B), (in_branch, 2),
         (in_branch, 1), (helper, B)]


@pytest.mark.parametrize("fn, other", CASES)
def test_value_gradient_and_tangent(fn, other):
    want = fn(_copy(A), _copy(other) if isinstance(other, list) else other)
    fd = _fd(lambda xs: fn(xs, _copy(other) if isinstance(other, list) else other), A)
    for policy in POLICIES:
        xs = _copy(A)
        value, g = srcgrad.value_and_grad(fn, policy=policy)(xs, other)
        assert value == want and type(value) is type(want), (policy, value, want)
        assert_close(_flat(g), fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__} {policy}")
        assert all(np.array_equal(x, y) for x, y in zip(xs, A)) and len(xs) == len(A)
    value, tangent = srcgrad.jvp(fn, (_copy(A), other), (V, None))
    assert value == want
    assert_close(tangent, float(fd @ _flat(V)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, other", CASES)
def test_hvp(fn, other):
    got = srcgrad.hvp(fn)(_copy(A), other, V)
    grad = srcgrad.grad(fn)
    want = _fd(lambda xs: float(_flat(grad(xs, other)) @ _flat(V)), A)
    assert_close(_flat(got), want, rtol=1e-5, atol=1e-7, what=fn.__name__)
    ag = _ag(fn)
    ag_grad = autograd.grad(ag)
    ag_hvp = autograd.grad(lambda xs: sum(anp.sum(p * q) for p, q in zip(ag_grad(xs, other), V)))
    assert_close(_flat(got), _flat(ag_hvp(_copy(A))), rtol=1e-10, atol=1e-12, what="autograd")


def test_hessian_of_a_list_repetition():
    def h(x, k):
        xs = [x * 1.0]
        xs *= k
        return sum(np.sum(v ** 3) for v in xs)
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(srcgrad.hessian(h)(x, 3), np.diag(18.0 * x))
