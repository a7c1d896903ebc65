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


def test_another_module_passed_is_refused_when_the_code_runs():
    special = pytest.importorskip("scipy.special")
    g = srcgrad.grad(namespace_default)
    g(np.array([0.3, 0.5]))
    with pytest.raises(TypeError, match="xp=np, its default: pass no other module"):
        g(np.array([0.3, 0.5]), special)


def test_a_module_passed_as_an_argument_says_to_make_it_the_default():
    def passed(x, mod):
        return mod.sum(mod.tanh(x) ** 2)

    with pytest.raises(srcgrad.SrcGradError, match="mod=np"):
        srcgrad.grad(passed)(np.array([0.3, 0.5]), np)
