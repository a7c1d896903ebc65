"""A checkpointed loop runs again in the adjoint sweep, reading what it read
the first time (found by the fuzzer, seed 1800071): a name the loop reads and
a later statement overwrites (``acc = c`` in a loop after it) was read with its
new value, so the rerun took the other branch -- the gradient 11x too large
under policy 'sqrt', right under 'save'."""

import numpy as np
import pytest

import srcgrad


def overwritten_after(y, s):
    acc = np.mean(y ** 2)
    c = 0.05 * (np.mean(y) - acc)
    for k in range(6):
        if acc > 0.5:
            c = 0.5 * (0.9 * c + np.tanh(s))
    for w in range(2):
        acc = c
    return c


def updated_after(y, s):
    w = y * 1.0
    h = 0.0
    for k in range(6):
        h = np.tanh(h + np.sum(w) * s)
    w[0] = 10.0
    return h + np.sum(w)


@pytest.mark.parametrize("fn", [overwritten_after, updated_after])
@pytest.mark.parametrize("policy", ["sqrt", ("revolve", 2), "recompute", "save"])
def test_a_rerun_loop_reads_what_it_read(fn, policy):
    y = np.array([0.3, -1.2, 0.5, 1.1])
    s = 0.4
    expected = srcgrad.grad(fn, wrt=(0, 1), policy="save", optimize=False)(y, s)
    got = srcgrad.grad(fn, wrt=(0, 1), policy=policy)(y, s)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-13)
    assert got[1] == pytest.approx(expected[1], rel=1e-13)
    eps = 1e-6
    numeric = [(fn(y + eps * e, s) - fn(y - eps * e, s)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(got[0], numeric, rtol=1e-6, atol=1e-9)
