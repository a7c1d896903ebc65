"""jvp's generated function of a function with a defaulted parameter (session 30, F1).

``g = srcgrad.jvp(f, wrt=[0])`` takes ``f``'s positional arguments, then one
tangent per ``wrt`` argument (``jvp``'s docstring: ``g(*args, *tangents)``),
as ``hvp``'s function takes its directions last.  For ``def f(x, s=2.0)``,
``g(x, d)`` passed ``d`` as ``s`` and raised a raw ``TypeError`` (missing
``d_x``), though ``jvp(f, (x,), (d,))`` worked.  The tangents are now always
the last arguments and the defaults of the parameters the call leaves out are
filled in (those it gives by keyword put in their places), on the first call
and on the fast path of later ones.  Each case: value bit for bit with ``f``'s
own, the tangent against differences and against ``jvp(f, primals,
tangents)``; the helper-reaching forms run under every policy.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.7, 1.3, 2.1])
D = np.array([1.0, -0.5, 0.25])


def f(x, s=2.0):
    return np.sum(np.sin(x) * s)


def several(x, y=None, s=2.0, n=3):
    out = x * s
    for _ in range(n):
        out = np.tanh(out) + (0.0 if y is None else y)
    return np.sum(out)


def with_a_helper(x):
    return f(x) + f(x, 0.5)


def in_a_branch(x, flip=False):
    if flip:
        return f(-x)
    return f(x, s=3.0)


def test_the_briefs_call():
    g = srcgrad.jvp(f, wrt=[0])
    for _ in range(3):  # the first call, then the fast path
        value, tangent = g(X.copy(), D)
        assert_bit_identical(value, f(X.copy()), "g(x, d)")
        assert_close(tangent, jvp_fd(f, [X], [0], [D]))
        want = srcgrad.jvp(f, (X.copy(),), (D,))
        assert_bit_identical(tangent, want[1], "jvp(f, (x,), (d,))")


def test_defaults_given_positionally_or_by_keyword():
    g = srcgrad.jvp(f, wrt=[0])
    for _ in range(2):
        for value, tangent in (g(X, 3.0, D), g(X, D, s=3.0)):
            assert_bit_identical(value, f(X, 3.0), "s=3.0")
            assert_close(tangent, jvp_fd(lambda x: f(x, 3.0), [X], [0], [D]))
        value, tangent = g(X, D)  # a keyword call before leaves the default as it is
        assert_bit_identical(value, f(X), "s left out")


def test_several_defaults_and_a_tangent_of_one():
    g = srcgrad.jvp(several, wrt=[0])
    value, tangent = g(X, D)
    assert_bit_identical(value, several(X), "several")
    assert_close(tangent, jvp_fd(several, [X], [0], [D]))
    value, tangent = g(X, X * 0.1, D, n=2)
    assert_bit_identical(value, several(X, X * 0.1, n=2), "several, n=2")
    g_s = srcgrad.jvp(f, wrt=[1])  # the tangent of the defaulted argument itself
    value, tangent = g_s(X, 2.0, 1.0)
    assert_close(tangent, np.sum(np.sin(X)))


@pytest.mark.parametrize("fn", [with_a_helper, in_a_branch], ids=lambda f: f.__name__)
def test_defaults_reached_through_helpers_and_branches(fn):
    check(fn, (X,))
    value, tangent = srcgrad.jvp(fn, wrt=[0])(X, D)
    assert_bit_identical(value, fn(X), fn.__name__)


def test_too_many_arguments_is_a_srcgrad_error():
    g = srcgrad.jvp(several, wrt=[0])
    with pytest.raises(SrcGradError) as info:
        g(X, None, 1.0, 2, 5, D)
    assert "several" in str(info.value)
