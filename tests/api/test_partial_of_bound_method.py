"""``functools.partial`` of a bound method in jvp, vjp, hvp, hessian, jacobian (outside tester T1, session 30, #12).

``p = functools.partial(Model().loss, x=data)`` worked with grad and
value_and_grad but every other transformation refused it, with advice naming
a ``wrt=`` jvp does not take.  ``api/arguments.py function_of`` turned only a
partial of a plain function into the ``def`` it stands for (api/partials.py);
a partial of a bound method (its function written with ``def``) now is too:
the ``def`` calls the method, held, as a call of ``MODEL.loss(x)`` is.  Each
transformation checked: values bit for bit with the partial's own, gradient,
tangent, Hessian and Jacobian against differences, every policy, autograd.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad
from numeric import check_every_policy as check

import srcgrad

W = np.array([0.3, -0.2, 0.7])
DATA = np.array([1.0, 2.0, -1.0])


class Model:
    def __init__(self):
        self.s = 1.5

    def loss(self, w, x):
        return np.sum((x * w) ** 2) * self.s

    def looped(self, w, n=3):
        total = 0.0
        for k in range(n):
            if k % 2:
                total = total + self.loss(w, DATA * float(k))
            else:
                total = total + np.sum(np.sin(w) * k)
        return total


MODEL = Model()
P = functools.partial(MODEL.loss, x=DATA)       # the tester's form
Q = functools.partial(MODEL.looped, n=4)        # a loop, a branch, a helper method
P.__name__, Q.__name__ = "P", "Q"               # (named in check_every_policy's messages)


@pytest.mark.parametrize("p", [P, Q], ids=["keyword", "looped"])
def test_every_policy_and_jvp(p):
    check(p, (W,))


@pytest.mark.parametrize("p", [P, Q], ids=["keyword", "looped"])
def test_the_other_transformations(p):
    want = p(W.copy())
    value, tangent = srcgrad.jvp(p, (W.copy(),), (np.ones(3),))
    assert_bit_identical(value, want, "jvp")
    assert_close(tangent, jvp_fd(p, [W], [0], [np.ones(3)]))
    value, pullback = srcgrad.vjp(p, W.copy())
    assert_bit_identical(value, want, "vjp")
    grad = numeric_grad(p, [W], 0)
    assert_close(pullback(1.0)[0], grad)
    assert_close(srcgrad.jacobian(p)(W.copy()), grad)
    g = srcgrad.grad(p)
    eps = 1e-6
    hessian = np.stack([(g(W + eps * e) - g(W - eps * e)) / (2 * eps) for e in np.eye(3)], -1)
    assert_close(srcgrad.hessian(p)(W.copy()), hessian, rtol=1e-5, atol=1e-6)
    assert_close(srcgrad.hvp(p)(W.copy(), np.ones(3)), hessian @ np.ones(3),
                 rtol=1e-5, atol=1e-6)


def test_the_testers_numbers():
    p = functools.partial(Model().loss, x=np.array([1.0, 2.0]))
    w = np.array([0.3, -0.2])
    assert_close(srcgrad.jvp(p, (w,), (np.ones(2),))[1], -1.5)
    assert_close(srcgrad.hessian(p)(w), np.diag([3.0, 12.0]))


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    assert_close(srcgrad.vjp(P, W.copy())[1](1.0)[0],
                 autograd.grad(lambda w: anp.sum((DATA * w) ** 2) * 1.5)(W), what="autograd")
