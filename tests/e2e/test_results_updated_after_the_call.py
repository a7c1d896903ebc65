"""A helper that updates its argument in place and returns it, its result then
updated in place (reviewer s33, F19).

``u = step(u, c); u *= 0.9`` was refused ("step() updates its argument 'u' in
place, and this function reads 'u' (line ...) after the call ... pass a
copy"): the call's own statement rebinds ``u`` to the result, which excuses
later reads of ``u``, but ``u *= 0.9`` counted as another binding of ``u``
after the call.  An augmented update leaves ``u`` the result (updated in
place) or a new number, never the old memory (normalize/call_updates.py).  A
read through another name for the old array (``v = u`` before the call) is
still refused, located.  Each program: value bit for bit and gradient against
differences under every policy, jvp against differences; straight, in a loop,
a branch and a helper.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy as check

import srcgrad

X = np.array([1.0, 2.0, 3.0, -0.5])


def _step(u, c):
    u[1:] = u[1:] + c * u[:-1]  # updates its argument in place ...
    return u                    # ... and returns it


def straight(x):  # the reviewer's program, differentiated with respect to x
    u = x.copy()
    u = _step(u, 0.5)
    u *= 0.9
    return np.sum(u ** 2)


def in_a_loop(x):
    u = x * 1.0
    for t in range(3):
        u = _step(u, 0.5 * x[0])
        u *= 0.9
        u += 1.0
    return np.sum(u ** 2)


def in_a_branch(x):
    u = x * 1.0  # (x.copy() may be a list's, holding x's items: reading x below is checked)
    s = x[2]
    u = _step(u, x[1])
    if u[0] > 0:
        u *= s
    else:
        u -= 1.0
    return np.sum(u ** 3)


def _twice(x):
    u = x.copy()
    u = _step(u, 0.3)
    u *= 2.0
    u = _step(u, 0.3)
    return u


def in_a_helper(x):
    return np.sum(_twice(x) * _twice(x * x))


@pytest.mark.parametrize("fn", [straight, in_a_loop, in_a_branch, in_a_helper],
                         ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))


def old_array_read(x):
    u = x.copy()
    v = u
    u = _step(u, 0.5)
    u *= 0.9
    return np.sum(u ** 2) + np.sum(v)  # v is the array step updated: refused


def test_another_name_for_the_old_array_is_still_refused():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(old_array_read)(X.copy())
    assert info.value.filename == __file__ and "_step(u, 0.5)" in info.value.source_line
    assert "'v'" in info.value.message, info.value.message
