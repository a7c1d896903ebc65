"""hvp, hessian and grad(grad) specialise on the arguments as grad and jvp do.

An outside tester found hvp refusing ``opt.update(w, g)`` on an object passed
as an argument ("srcgrad finds the methods of an object by its class where it
knows the class ... an argument of the function differentiated") while grad
and jvp ran it: the second-order levels (api/second_order.py) were not
specialised on the classes of the user objects passed, nor on the list and
tuple arguments (``ws * 2`` is repetition).  Each case is checked against
differences of srcgrad's own gradient, which every other test checks.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad


class Opt:
    def __init__(self, lr=0.1):
        self.lr = lr

    def update(self, w, g):
        return w - self.lr * g


def train(w, opt):
    for _ in range(2):
        w = opt.update(w, 2 * w + np.sin(w))
    return np.sum(w ** 2)


def repeated(w, ws):
    total = 0.0
    for a in ws * 2:
        total = total + np.sum(np.tanh(a * w))
    return total


CASES = [(train, (np.array([1.0, -2.0]), Opt())),
         (repeated, (np.array([0.5, -1.0]), [np.array([1.0, 2.0]), np.array([0.3, -0.4])]))]


@pytest.mark.parametrize("fn,args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_hvp_and_hessian(fn, args):
    v = np.array([0.7, -1.3])
    want = numeric_grad(lambda w: float(srcgrad.grad(fn)(w, *args[1:]) @ v), [args[0]], 0)
    assert_close(srcgrad.hvp(fn)(*args, v), want, rtol=1e-5, atol=1e-7)
    H = srcgrad.hessian(fn)(*args)
    assert_close(H @ v, want, rtol=1e-5, atol=1e-7)
