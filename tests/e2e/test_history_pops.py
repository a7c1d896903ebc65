"""Lists trimmed with ``pop(0)`` and read through ``zip`` (outside tester T3,
F3-9): the L-BFGS two-loop recursion's history, ``if len(S) > m: S.pop(0);
Y.pop(0)``, then ``for s, y in zip(S, Y): ...``.

``S.pop(k)`` is followed on a list the function builds and only reads
(normalize/selections.private_list: the item read, the list rebound to the
rest); a loop over ``zip(S, Y)`` made the list look handed on, and the pop was
refused ("'S.pop(0)' may change 'S' in place").  A ``zip``, ``enumerate`` or
``reversed`` of the list is now read as the list itself would be: the loop (or
``list(...)``) over it, whose body neither pops from nor appends to it.  Each
program: value bit for bit under every policy and in jvp, gradient and tangent
against central differences; autograd where it runs the program.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.7, -0.4, 1.3])


def lbfgs_history(x):  # T3's program
    S, Y = [], []
    m = 2
    for k in range(4):
        S.append(x * (k + 1.0))
        Y.append(np.sin(x) + k)
        if len(S) > m:
            S.pop(0)
            Y.pop(0)
    q = x * 1.0
    for s, y in zip(S, Y):
        q = q - np.dot(s, q) / np.dot(y, s) * y
    return np.sum(q ** 2)


def lbfgs_steps(x):
    S, Y = [], []
    w = x * 1.0
    g = 2.0 * w + np.sin(w)
    for k in range(4):
        q = g * 1.0
        alphas = []
        for s, y in reversed(list(zip(S, Y))):
            a = np.dot(s, q) / np.dot(y, s)
            alphas.append(a)
            q = q - a * y
        if S:
            q = q * (np.dot(S[-1], Y[-1]) / np.dot(Y[-1], Y[-1]))
        for (s, y), a in zip(zip(S, Y), reversed(alphas)):
            b = np.dot(y, q) / np.dot(y, s)
            q = q + s * (a - b)
        w_new = w - 0.3 * q
        g_new = 2.0 * w_new + np.sin(w_new)
        S.append(w_new - w)
        Y.append(g_new - g)
        if len(S) > 2:
            S.pop(0)
            Y.pop(0)
        w, g = w_new, g_new
    return np.sum(w ** 2)


def enumerated_in_a_branch(x):
    hist = []
    for k in range(3):
        hist.append(x[k] * x)
        if len(hist) > 1:
            hist.pop(0)
    t = 0.0
    if x[0] > 0:
        for i, h in enumerate(hist):
            t = t + (i + 1.0) * np.sum(h ** 2)
    else:
        for h in reversed(hist):
            t = t * 0.5 + np.sum(h)
    return t


PROGRAMS = [lbfgs_history, lbfgs_steps, enumerated_in_a_branch]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (X,))


def test_the_other_branch():
    check(enumerated_in_a_branch, (-X,))


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_autograd_agrees(fn):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    namespace = dict(fn.__globals__, np=anp)
    theirs = type(fn)(fn.__code__, namespace, fn.__name__)
    assert_close(srcgrad.grad(fn)(X), autograd.grad(theirs)(X), rtol=1e-10, atol=1e-12)


def popped_inside_the_zip_loop(x):
    S = [x, x * 2.0, x * 3.0]
    t = 0.0
    for s, k in zip(S, range(3)):
        t = t + np.sum(s)
        S.pop(0)  # the loop sees it: refused, as before
    return t


def test_a_pop_inside_the_loop_over_the_list_stays_refused():
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.grad(popped_inside_the_zip_loop)(X)
    assert info.value.lineno == popped_inside_the_zip_loop.__code__.co_firstlineno + 5
