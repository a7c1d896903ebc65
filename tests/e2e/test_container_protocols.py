"""Containers and stores that read their items their own way (review s35 R3-4, R3-12).

A list subclass applying its layers last-to-first (``__iter__``), one scaling
what it returns (``__getitem__``), a named-tuple subclass doing the same, a
dict subclass with its own ``items()``/``values()``: srcgrad differentiated
them with the built-in's rules -- the value of another program (RevList 2.779
for 1.183) or the gradient of the stored items rather than of what was read,
silently.  Such an argument is now refused, located at the ``def``, naming the
argument, the class and the method.  A user's class (no container) with its own
``items()``/``values()`` passed as an argument is followed: ``s.items()`` is its
method, differentiated through its source (before: dict's ``items``, value
0.53 for 2.0498).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from numeric import assert_close, check_every_policy, numeric_grad

import srcgrad
from srcgrad.errors import NonDifferentiableError


class RevList(list):
    """Layers applied last-to-first."""

    def __iter__(self):
        return iter(reversed(list(super().__iter__())))


class ScaledList(list):
    def __getitem__(self, i):
        return 2.0 * super().__getitem__(i)


_P = namedtuple("_P", "a b")


class NTGet(_P):
    def __getitem__(self, i):
        return super().__getitem__(i) * 10.0


class PosDict(dict):
    def items(self):
        return [(k, np.exp(v)) for k, v in super().items()]

    def values(self):
        return [np.exp(v) for v in super().values()]


class Store:
    """Unconstrained parameters; items()/values() give the positive ones."""

    def __init__(self, raw):
        self.raw = raw

    def __iter__(self):
        return iter(self.raw)

    def __getitem__(self, k):
        return self.raw[k]

    def items(self):
        return [(k, np.exp(v)) for k, v in self.raw.items()]

    def values(self):
        return [np.exp(v) for v in self.raw.values()]


def rl_loss(L, x):
    h = x
    for W in L:
        h = np.tanh(W @ h)
    return np.sum(h ** 2)


def sl_loss(L, x):
    return np.sum(L[0] * x) + np.sum(L[1] ** 2)


def nt_loss(p, x):
    return np.sum(p[0] * x) + np.sum(p[1])


def items_loss(s, x):
    t = 0.0
    for k, v in s.items():
        t = t + np.sum(v * x)
    return t


def values_loss(s, x):
    return sum(np.sum(v * x) for v in s.values())


def values_in_loop(s, x):
    t = 0.0
    for i in range(2):
        for v in s.values():
            t = t + np.sum(np.tanh(v * x) * (i + 1))
    return t


def values_in_branch(s, x):
    if np.sum(x) > 0:
        vs = s.values()
    else:
        vs = [x]
    return sum(np.sum(v * x ** 2) for v in vs)


def _apply_items(s, x):
    return sum(np.sum(v * x) for k, v in s.items())


def items_in_helper(s, x):
    return _apply_items(s, x) * 2.0


def nested_loss(ps, x):
    return np.sum(ps["layers"][0] * x)


rs = np.random.RandomState(0)
X = rs.randn(3)
RAW = {"a": np.array([0.1, 0.2, 0.3]), "b": np.array([-0.1, 0.0, 0.4])}


@pytest.mark.parametrize("fn, arg, method, base", [
    (rl_loss, RevList([rs.randn(3, 3), rs.randn(3, 3)]), "RevList.__iter__", "list"),
    (sl_loss, ScaledList([rs.randn(3), rs.randn(3)]), "ScaledList.__getitem__", "list"),
    (nt_loss, NTGet(rs.randn(3), rs.randn(3)), "NTGet.__getitem__", "tuple"),
    (items_loss, PosDict(RAW), "PosDict.items", "dict"),
    (values_loss, PosDict(RAW), "PosDict.items", "dict"),
    (nested_loss, {"layers": ScaledList([X, X])}, "ScaledList.__getitem__", "list"),
])
@pytest.mark.parametrize("wrt", [0, 1])
def test_container_with_its_own_reading_refused(fn, arg, method, base, wrt):
    """Refused, in grad, jvp (both forms), hvp and jacobian, naming the
    argument, the class and the method, located at the def (before: a wrong
    value, gradient or tangent, silently)."""
    param = fn.__code__.co_varnames[0]
    for run in (lambda: srcgrad.value_and_grad(fn, wrt=wrt)(arg, X),
                lambda: srcgrad.jvp(fn, wrt=[1])(arg, X, np.ones(3)),
                lambda: srcgrad.jvp(fn, (arg, X), (None, np.ones(3))),
                lambda: srcgrad.hvp(fn, wrt=1)(arg, X, np.ones(3)),
                lambda: srcgrad.jacobian(fn, wrt=1)(arg, X)):
        with pytest.raises(NonDifferentiableError) as info:
            run()
        text = str(info.value)
        assert f"argument '{param}' of {fn.__name__}" in text and method in text \
            and f"subclass of {base}" in text, text
        assert info.value.filename == __file__
        assert info.value.lineno == fn.__code__.co_firstlineno


def test_plain_containers_and_subclasses_reading_as_built_in_still_work():
    """A list subclass adding a method only, and a dict subclass overriding
    __getitem__ (followed), are not refused."""
    class Tagged(list):
        def describe(self):
            return "layers"

    L = Tagged([rs.randn(3, 3) * 0.5, rs.randn(3, 3) * 0.5])
    g = srcgrad.grad(rl_loss, wrt=1)(L, X)
    assert_close(g, numeric_grad(rl_loss, [L, X], 1), rtol=1e-6, atol=1e-8)
    check_every_policy(rl_loss, ([rs.randn(3, 3) * 0.5, rs.randn(3, 3) * 0.5], X), wrt=1)


@pytest.mark.parametrize("fn", [items_loss, values_loss, values_in_loop, values_in_branch])
def test_user_items_values_followed(fn):
    """s.items() / s.values() of a Store passed is Store's method (the value
    was the sum over the raw values, 0.53 for 2.0498, and the gradient theirs)."""
    check_every_policy(fn, (Store(dict(RAW)), X), wrt=1)


def test_user_items_in_a_helper_refused_as_it_runs():
    """In a helper, whose parameter's class srcgrad does not see, s.items() is
    read as a dict's: a Store there is refused as the code runs, located at the
    call (before: dict's items, silently)."""
    line = _apply_items.__code__.co_firstlineno + 1
    for run in (lambda: srcgrad.grad(items_in_helper, wrt=1)(Store(dict(RAW)), X),
                lambda: srcgrad.jvp(items_in_helper, wrt=[1])(Store(dict(RAW)), X, np.ones(3))):
        with pytest.raises(srcgrad.errors.UnsupportedSyntaxError) as info:
            run()
        assert "Store.items" in str(info.value) and info.value.lineno == line
        assert info.value.filename == __file__
    # a dict there is read as before
    check_every_policy(items_in_helper, (dict(RAW), X), wrt=1)
