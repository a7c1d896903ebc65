"""Two arguments holding one array, one of them updated with ``xs[k] op= v``
(found while fixing outside tester T2 #4 for arguments).

``def two(hs, t): hs[0] *= 3.0; return np.sum(t[0] * a)`` called as
``two(hs, list(hs))``, ``two(hs, [hs[0]])``, ``two([h], [h])`` or ``three([h],
h)``: Python changes the array both hold, so ``t[0]`` is the updated one; the
generated code works on a private copy of ``hs`` (it never changes the
caller's arrays), and gave the old value and gradient, no error (1.4 where
Python gives 4.2).  The check at the entry that refuses another argument
sharing an updated one (``unshared``) looked inside ``hs`` only where its
arrays were updated through another name; ``hs[k] op= v`` changes them too.
Refused now, located, in both modes, for the function differentiated and for
a helper it calls; arguments holding other arrays run as before.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_refused_both_modes
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.6, -1.1, 0.9])
A3 = np.arange(3.0)


def _two(hs, t):
    hs[0] *= 3.0
    return np.sum(t[0] * A3)


def _three(hs, h):
    hs[0] *= 3.0
    return np.sum(h * A3)


def copy_passed(x):
    hs = [x * 1.0]
    return _two(hs, list(hs))


def item_passed(x):
    hs = [x * 1.0]
    return _two(hs, [hs[0]])


def one_array_twice(x):
    h = x * 1.0
    return _two([h], [h])


def the_array_itself(x):
    h = x * 1.0
    return _three([h], h)


@pytest.mark.parametrize("fn", [copy_passed, item_passed, one_array_twice, the_array_itself],
                         ids=lambda f: f.__name__)
def test_a_helpers_arguments_sharing_an_updated_item_refused(fn):
    assert_refused_both_modes(fn, srcgrad.AliasedUpdateError, "updated in place", x=X)


def top(x, hs, t):
    hs[0] *= 3.0
    return np.sum(t[0] * A3) * x


def test_the_differentiated_functions_arguments():
    h = X.copy()
    with pytest.raises(srcgrad.AliasedUpdateError) as info:
        srcgrad.value_and_grad(top)(2.0, [h], [h])
    assert info.value.lineno and "'t'" in info.value.message
    assert np.array_equal(h, X)  # the caller's array untouched
    value, grad = srcgrad.value_and_grad(top)(2.0, [h], [h.copy()])
    assert value == top(2.0, [h.copy()], [h.copy()]) and grad == np.sum(X * A3)


def apart(x):
    return _two([x * 1.0], [np.sin(x)]) + _three([np.cos(x)], x * 2.0)


def test_arguments_holding_other_arrays_run():
    check(apart, (X.copy(),))
