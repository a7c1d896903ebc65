"""Module-level globals named like builtins the generated code calls (review s37 R5-11).

A module's ``type = "l2"`` (a config), ``slice = 2`` or ``len = 3`` read by a
differentiated function was bound in the generated module under its own
name, where the generated code calls the builtin (a loop's guards call
``type``, ``x[:k]``'s adjoint ``slice``, checkpointing ``len``): raw
TypeErrors under sqrt/revolve, in grad and hvp.  The linker binds such a
global under another name (``type_1``; frontend/linker.adopt), leaving the
builtins srcgrad writes alone.  Each (functions in data/builtin_named_globals.py):
value bit for bit under every policy and in jvp, gradient and tangent
against differences, hvp against differences of the gradient.
"""

from __future__ import annotations

import builtin_named_globals as m
import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

X = np.array([0.37, -0.81, 1.23, 0.2])
FUNCTIONS = [m.loss_type, m.loss_rev, m.loss_slice, m.loss_len]


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (X.copy(),))


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_hvp(fn):
    v, eps = np.array([1.0, 0.5, -0.2, 0.3]), 1e-6
    g = srcgrad.grad(fn)
    assert_close(srcgrad.hvp(fn)(X, v), (g(X + eps * v) - g(X - eps * v)) / (2 * eps),
                 rtol=1e-5, atol=1e-7)


def test_the_global_is_bound_under_another_name():
    source = srcgrad.grad(m.loss_slice).source
    assert "slice_1" in source and "slice(" in source
