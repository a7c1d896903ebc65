"""A parameter whose default is a module (review s35 R3-27).

Backend-agnostic NumPy code takes its array namespace as a parameter,
``def f(x, xp=np)``, and calls ``xp.tanh(...)``: that was refused ("no adjoint
rule for 'xp.tanh(...)'").  The code is compiled for the default module, as
for a function default, with a guard refusing another module when it runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad


def namespace_default(x, xp=np):
    return xp.sum(xp.tanh(x) ** 2)


def in_a_loop(x, xp=np):
    for _ in range(3):
        x = x + 0.5 * xp.sin(x)
    return xp.sum(x * x)


def in_a_branch(x, xp=np):
    if xp.sum(x) > 0:
        return xp.sum(xp.exp(-x) * x)
    return xp.sum(xp.cos(x))


def _layer(h, xp=np):
    return xp.tanh(h @ xp.ones((3, 3)) * 0.3)


def in_a_helper(x):
    return np.sum(_layer(x) ** 2)


def keyword_only(x, *, xp=np):
    return xp.sum(xp.log1p(x * x))


@pytest.mark.parametrize("fn", [namespace_default, in_a_loop, in_a_branch, in_a_helper,
                                keyword_only], ids=lambda f: f.__name__)
def test_a_module_default_is_that_module(fn):
    check_every_policy(fn, (np.array([0.3, -0.5, 0.9]),), 0)


def test_another_module_passed_is_compiled_for_or_refused_located():
    # (review s37 R5-9: a module passed is specialised on, as a function passed is;
    # before, the guard's plain TypeError refused any other module when the code ran)
    special = pytest.importorskip("scipy.special")
    g = srcgrad.grad(namespace_default)
    x = np.array([0.3, 0.5])
    g(x)
    with pytest.raises(srcgrad.SrcGradError) as info:
        g(x, special)
    error = info.value
    assert error.message == ("'xp.sum': the module scipy.special passed as 'xp' has no "
                             "attribute 'sum'")
    assert error.filename == __file__ and error.lineno == namespace_default.__code__.co_firstlineno + 1
    assert np.array_equal(g(x, np), g(x))


def test_a_module_passed_as_an_argument_is_that_module():
    # (review s37 R5-9: refused before, the message asking for a default)
    def passed(x, mod):
        return mod.sum(mod.tanh(x) ** 2)

    x = np.array([0.3, 0.5])
    assert np.allclose(srcgrad.grad(passed)(x, np), 2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
                       rtol=1e-14, atol=0)
