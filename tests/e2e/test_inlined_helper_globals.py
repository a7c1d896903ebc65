"""An inlined helper reading a global the caller also has as a variable (review s37 R5-14).

``apply_bc(u)`` (``u[0] = T[0]; u[-1] = T[-1]``, ``T`` module-level boundary
values) called from ``energy(x, T)`` (``T`` the caller's own parameter) was
refused: 'apply_bc() reads the global T, and T is also a variable of energy
... rename one of them'.  srcgrad inlines such a helper; its copy now reads
the global under a name of its own (normalize/inlining.check_globals_seen),
as a helper of another module's does.  Each: value bit for bit under every
policy and in jvp, gradient and tangent against differences; a global
rebound regenerates the code.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

T = np.array([1.0, 2.0, 3.0])  # boundary values
X = np.array([0.37, -0.81, 1.23])
PROFILE = np.array([-1.0, 0.5, 4.0])


def apply_bc(u):
    u[0] = T[0]
    u[-1] = T[-1]


def energy(x, T):  # the caller's own T
    u = x.copy()
    apply_bc(u)
    return np.sum(u ** 2 * T)


def scale(v):
    return v * W


W = 3.0


def uses_both(x):
    W = x * 2.0  # a local W; scale reads the global
    return np.sum(scale(W) * x)


def in_a_loop(x, T):
    s = 0.0
    for i in range(2):
        u = x * float(i + 1)
        apply_bc(u)
        s = s + np.sum(u * T)
    return s


@pytest.mark.parametrize("fn", [energy, in_a_loop])
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (X.copy(), PROFILE.copy()))


def test_a_returning_helper_inlined_beside_a_local_of_the_name():
    check_every_policy(uses_both, (X.copy(),))


def test_the_global_rebound_regenerates():
    global T
    g = srcgrad.grad(energy)
    assert_close(g(X, PROFILE), np.array([0.0, 2 * X[1] * PROFILE[1], 0.0]), rtol=1e-12)
    old = T
    try:
        T = np.array([5.0, 6.0, 7.0])
        assert_close(srcgrad.value_and_grad(energy)(X, PROFILE)[0], energy(X, PROFILE),
                     rtol=1e-15)
        assert_close(g(X, PROFILE)[1], 2 * X[1] * PROFILE[1], rtol=1e-12)
    finally:
        T = old
