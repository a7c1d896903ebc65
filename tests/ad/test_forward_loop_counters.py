"""A loop counter whose name another binding gives a tangent (review s36 R4-22).

``for i in range(3): ...`` then ``for i in x: ...``: the name ``i`` carries a
tangent (the second loop's items do), so the first loop's body read ``d_i``,
which nothing bound there: jvp raised a raw UnboundLocalError from the
generated code, hvp a SrcGradError about srcgrad's own tangent code.  A loop
over a value without a tangent binds its target's tangent to zeros
(ad/forward.py loop_target_tangents).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad


def counter_then_items(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * i
    for i in x:
        s = s + i ** 2
    return s


def enumerate_then_items(x):
    s = 0.0
    for i, e in enumerate(x):
        s = s + e * i
    for i in x:
        s = s + i * s * 0.1
    return s


def enumerate_then_zip(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * (i + 1)
    for v, i in zip(x, x[::-1]):
        s = s + v * i
    return s


X = np.array([0.3, -0.5, 0.8])


@pytest.mark.parametrize("fn", [counter_then_items, enumerate_then_items, enumerate_then_zip])
def test_a_counters_name_reused_for_items(fn):
    check_every_policy(fn, (X.copy(),))
    grad = srcgrad.grad(fn)
    e, v = 1e-5, np.array([1.0, -0.5, 2.0])
    assert_close(srcgrad.hvp(fn)(X.copy(), v), (grad(X + e * v) - grad(X - e * v)) / (2 * e),
                 rtol=1e-6, atol=1e-8)
