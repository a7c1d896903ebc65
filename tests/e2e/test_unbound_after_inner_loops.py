"""A name only an inner loop binds, read after an inner loop of no step
(reviewer R1, findings R1-3): ``for j in range(2): for i in range(j): ...;
s = s + x[i]``.  Python raises UnboundLocalError at ``j == 0``; jvp did too,
but grad's forward sweep bound ``i = None`` before the loop (so that the first
save of ``i`` has a value) and read ``x[None]``: a value and a gradient, or a
misleading "returned a value of shape (1, 4)".  The placeholder is now
runtime's ``Unbound`` and each read that may find it is checked
(memory/unbound_reads.py): the same UnboundLocalError, Python's message,
under every policy; a program that reads ``i`` only where an earlier step
bound it runs as before, value bit for bit and gradient against differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -0.7, 1.1, 0.5])


def summed(x):  # R1's program
    s = 0.0
    for j in range(2):
        for i in range(j):
            s += x[i]
        s = s + np.sum(x[i])
    return s


def plain(x):
    s = 0.0
    for j in range(2):
        for i in range(j):
            s += x[i]
        s = s + x[i]
    return s


def in_a_branch(x):
    s = 0.0
    for j in range(3):
        for i in range(j):
            s = s + np.sin(x[i]) * s
        if x[0] > 0:
            s = s + x[i] ** 2
    return s


def _inner(x):
    s = 0.0
    for j in range(2):
        for k in range(j):
            s = s * x[k] + 1.0
        s = s + x[k]
    return s


def in_a_helper(x):
    return _inner(x * 2.0) + np.sum(x)


def under_a_while(x):
    s = 0.0
    j = 0
    while j < 2:
        for i in range(j):
            s = s + x[i] * x[i + 1]
        s = s * x[i]
        j += 1
    return s


@pytest.mark.parametrize("fn", [summed, plain, in_a_branch, in_a_helper, under_a_while],
                         ids=lambda f: f.__name__)
def test_raises_as_python(fn):
    with pytest.raises(UnboundLocalError) as theirs:
        fn(X)
    for policy in POLICIES:
        with pytest.raises(UnboundLocalError) as ours:
            srcgrad.value_and_grad(fn, policy=policy)(X)
        assert str(ours.value) == str(theirs.value), policy
    with pytest.raises(UnboundLocalError) as ours:
        srcgrad.jvp(fn, wrt=[0])(X, np.ones(4))
    assert str(ours.value) == str(theirs.value)


def bound_by_an_earlier_step(x):
    s = 0.0
    for j in range(3):
        for i in range(2 - j):  # j == 2: no step, i keeps 0
            s += x[i] * x[j + 1]
        s = s + x[i] * x[j]
    return s


def bound_by_an_earlier_step_while(x):
    s = 0.0
    j = 0
    while j < 3:
        for i in range(2 - j):
            s = s + np.sin(x[i]) * x[j + 1]
        if s > -10:
            s = s + x[i] * x[j]
        j += 1
    return s


def _kept(x):
    s = 1.0
    for j in range(3):
        for k in range(2 - j):
            s = s * x[k]
        s = s + x[k] ** 2
    return s


def bound_by_an_earlier_step_in_a_helper(x):
    return _kept(np.tanh(x))


@pytest.mark.parametrize("fn", [bound_by_an_earlier_step, bound_by_an_earlier_step_while,
                                bound_by_an_earlier_step_in_a_helper],
                         ids=lambda f: f.__name__)
def test_bound_by_an_earlier_step(fn):
    check(fn, (X,))


def test_the_check_is_only_where_the_name_may_be_unbound():
    gradient = srcgrad.grad(bound_by_an_earlier_step)
    source = gradient.source
    assert source.count("if i is Unbound:") == 1, source
    assert "i = Unbound" in source

    def bound_first(x):  # a name the loop binds before it reads: no check
        s = 0.0
        for j in range(3):
            z = x[j] * 2.0
            s = s + z * s + np.sin(z)
        return s
    assert "Unbound" not in srcgrad.grad(bound_first).source


def test_hvp():
    v = np.array([0.3, -1.0, 0.5, 0.2])
    eps = 1e-5
    for fn in (bound_by_an_earlier_step, bound_by_an_earlier_step_while):
        gradient = srcgrad.grad(fn)
        want = (gradient(X + eps * v) - gradient(X - eps * v)) / (2 * eps)
        np.testing.assert_allclose(srcgrad.hvp(fn)(X, v), want, rtol=1e-5, atol=1e-7)
    with pytest.raises(UnboundLocalError, match="'i'"):
        srcgrad.hvp(summed)(X, v)
