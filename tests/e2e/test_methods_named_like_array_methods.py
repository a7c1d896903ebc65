"""User methods named like ndarray methods on objects of a class srcgrad cannot see (review s35 R3-10).

``m.dot(x)``, ``q.mean()``, ``m.sum()`` on an object of a user's class got the
array method's rule where srcgrad could not tell the class when compiling (a
helper's result ``m = make(W)``, ``layers["enc"]``, ``layers[0]``, ``Lin(W) if
flag else Lin(-W)``): a silently zero gradient for ``dot``, raw TypeErrors for
``mean``/``var``/``sum``.  A check before such a call now refuses, located at
the call, an object whose class defines the method; arrays pass it, and the
user's method is followed, as before, where the class is known (an argument,
``m = Lin(W)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError


@dataclass
class Lin:
    W: np.ndarray

    def dot(self, h):
        return np.tanh(h @ self.W)

    def sum(self):
        return np.sum(self.W ** 2)

    def real(self, h):
        return np.sin(h @ self.W) * 3.0


@dataclass
class Normal:
    mu: np.ndarray
    log_sigma: np.ndarray

    def mean(self):
        return self.mu

    def var(self):
        return np.exp(2.0 * self.log_sigma)


def make(W):
    return Lin(W)


def posterior(theta):
    return Normal(theta[:2], theta[2:])


def from_helper(W, x):
    m = make(W)
    return np.sum(m.dot(x) ** 2)


def from_dict(W, x):
    layers = {"enc": Lin(W)}
    return np.sum(layers["enc"].dot(x) ** 2)


def from_list(W, x):
    layers = [Lin(W), Lin(W.T)]
    return np.sum(layers[0].dot(x) ** 2) + np.sum(layers[1].dot(x))


def from_choice(W, x):
    m = Lin(W) if np.sum(x) > 0 else Lin(-W)
    return np.sum(m.dot(x) ** 2)


def sum_of_helper_result(W, x):
    return make(W).sum() + np.sum(x)


def real_of_helper_result(W, x):
    m = make(W)
    return np.sum(m.real(x) ** 2)


def in_loop(W, x):
    h = x
    for i in range(2):
        m = make(W * (i + 1))
        h = m.dot(h)
    return np.sum(h)


def kl(W, x):
    q = posterior(W.ravel()[:4] + x[0])
    return 0.5 * np.sum(q.var() + q.mean() ** 2 - 1.0 - np.log(q.var()))


W0 = np.array([[0.5, -0.3, 0.2], [0.1, 0.8, -0.6], [-0.4, 0.3, 0.9]])
X0 = np.array([0.3, -0.5, 0.9])


@pytest.mark.parametrize("fn, shown, method", [
    (from_helper, "m", "dot"),
    (from_dict, "layers['enc']", "dot"),
    (from_list, "layers[0]", "dot"),
    (from_choice, "m", "dot"),
    (sum_of_helper_result, "make(W)", "sum"),
    (in_loop, "m", "dot"),
    (real_of_helper_result, "m", "real"),
    (kl, "q", None),
])
def test_user_method_on_an_object_of_unseen_class_refused(fn, shown, method):
    """grad under each policy and jvp: UnsupportedSyntaxError at the call,
    naming the user's expression and method (before: zero gradient or a raw
    TypeError)."""
    runs = [lambda p=p: srcgrad.grad(fn, policy=p)(W0, X0)
            for p in ("save", "recompute", "sqrt", ("revolve", 2))]
    runs.append(lambda: srcgrad.jvp(fn, wrt=[0])(W0, X0, np.ones((3, 3))))
    lines = [fn.__code__.co_firstlineno + i for i in range(1, 8)]
    for run in runs:
        with pytest.raises(UnsupportedSyntaxError) as info:
            run()
        text = str(info.value)
        assert f"'{shown}." in text and "np.ndarray." in text, text
        if method is not None:
            assert f"{shown}.{method}(...)" in text, text
        assert info.value.filename == __file__ and info.value.lineno in lines


def direct(W, x):
    m = Lin(W)
    return np.sum(m.dot(x) ** 2) + m.sum()


def as_argument(m, x):
    return np.sum(m.dot(x) ** 2) + m.sum()


def _arrays(W):
    return W * 2.0, [W, W.T]


def arrays_from_helper(W, x):
    A, pair = _arrays(W)
    h = A.dot(x)
    for B in pair:
        h = np.tanh(B.dot(h))
    t = 0.0
    if np.sum(x) > 0:
        t = pair[1].sum()
    return np.sum(h ** 2) + A.sum() + t + pair[0].mean() + A.copy().std()


def test_class_known_still_followed():
    check_every_policy(direct, (W0, X0), wrt=0)
    check_every_policy(as_argument, (Lin(W0), X0), wrt=1)


def test_arrays_from_helpers_and_lists_pass_the_check():
    """Array methods on a helper's arrays, items of a list, in a loop and a
    branch: checked and differentiated as before."""
    check_every_policy(arrays_from_helper, (W0, X0), wrt=0)
    check_every_policy(arrays_from_helper, (W0, X0), wrt=1)


@dataclass
class _Fields:
    W: np.ndarray


def _reads_its_dict(p, x):
    return np.sum(p.W * x) + len(p.__dict__)


def _iterates_its_dict(p, x):
    reg = 0.0
    for _, v in p.__dict__.items():
        reg = reg + np.sum(v ** 2)
    return np.sum(p.W * x) + reg


def test_an_objects_dict_read_does_not_crash_the_check():
    """Review s35 R3-36: the check's look for operators met the unhashable
    primitive of ``p.__dict__`` (a mappingproxy) and raised a raw TypeError."""
    p, x = _Fields(np.ones(3)), np.arange(3.0)
    np.testing.assert_array_equal(srcgrad.grad(_reads_its_dict, wrt=1)(p, x), np.ones(3))
    with pytest.raises(srcgrad.SrcGradError) as err:
        srcgrad.grad(_iterates_its_dict, wrt=0)(p, x)
    assert "test_methods_named_like_array_methods.py" in str(err.value)
