"""A global read by any function the differentiated one calls is watched.

``g`` calls ``helpers_module.smooth``, which reads ``helpers_module.SCALE``:
rebinding ``SCALE`` (or ``helpers_module.smooth`` itself) after the gradient
was made must regenerate the code, as rebinding one of ``g``'s own globals
does (found by review: the gradient object kept the old value, silently).  The
remembered short call path notices it as well as the first call does."""

from __future__ import annotations

import helpers_module
import numpy as np
from numeric import assert_bit_identical

import srcgrad
from srcgrad.rules.registry import GENERATION

X = np.array([0.3, 0.7, 1.1])
K = 2.0


def calls_other_module(x):
    return np.sum(helpers_module.smooth(x) ** 2)


def scaled(v):  # a helper of this module reading this module's global
    return np.sin(v) * K


def calls_same_module(x):
    return np.sum(scaled(x) ** 2)


def middle(v):  # a helper calling a helper of another module
    return helpers_module.smooth(v) * 2.0


def calls_through_a_helper(x):
    return np.sum(middle(x) ** 2)


SOFTPLUS = helpers_module.make_softplus(3.0)  # a closure reading helpers_module.SCALE


def calls_a_closure_of_another_module(x):
    return np.sum(SOFTPLUS(x))


def _agree(made, fn):
    """The remembered path (called twice) and a fresh look both give fn's value."""
    for _ in range(2):
        assert_bit_identical(made(X)[0], fn(X))


def test_a_global_of_another_module_rebound(monkeypatch):
    for fn in (calls_other_module, calls_through_a_helper, calls_a_closure_of_another_module):
        made = srcgrad.value_and_grad(fn)
        _agree(made, fn)
        monkeypatch.setattr(helpers_module, "SCALE", 0.25)
        _agree(made, fn)
        value, tangent = srcgrad.jvp(fn, (X,), (np.ones(3),))
        assert_bit_identical(value, fn(X))
        monkeypatch.undo()
        _agree(made, fn)


def test_a_function_of_another_module_rebound(monkeypatch):
    made = srcgrad.value_and_grad(calls_other_module)
    _agree(made, calls_other_module)
    monkeypatch.setattr(helpers_module, "smooth", lambda v: v * 2.0)
    _agree(made, calls_other_module)
    assert list(made(X)[1]) == list(8.0 * X)


def test_a_global_read_by_a_helper_of_this_module_rebound(monkeypatch):
    made = srcgrad.value_and_grad(calls_same_module)
    _agree(made, calls_same_module)
    monkeypatch.setitem(globals(), "K", 3.0)
    _agree(made, calls_same_module)


def test_a_plain_function_watches_nothing_more():
    def plain(x):
        return np.sum(np.tanh(x))

    made = srcgrad.grad(plain)
    made(X)
    made(X)
    # its code object and defaults, and the rules' generation: no more per call
    assert {holder for holder, _ in made._watch} == {id(plain), id(GENERATION)}
