"""Soundness of the memory passes that rewrite the sweeps (docs: each pass's
"Sound when"): release, tapes and remat.  The optimize passes' twin of this file
is tests/optimize/test_optimize_soundness.py.

Every program here hits one condition a pass must respect: a name reused across
loop iterations (the normaliser gives fresh SSA names only in straight-line
code), a parallel assignment lowered through a temporary, an in-place update, a
view, code in a branch.  Each is run under every policy with ``check=True`` (the
value must be the function's own, bit for bit, or srcgrad.TranslationError is
raised) and its gradient is compared with central finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad

from numeric import POLICIES, check_policies

X = np.linspace(0.1, 1.0, 4)
Y = np.linspace(-0.5, 0.7, 4)


_check = check_policies


def _source(fn, policy="save", wrt=0):
    return srcgrad.value_and_grad(fn, wrt=wrt, policy=policy).source


# -- release: del only what the adjoint sweep never reads -----------------------------

def read_by_adjoint_loop(x, n):
    w = np.cos(x)          # read inside the adjoint loop, every iteration
    unused = np.exp(x)     # read by nothing after the forward sweep
    h = x * 2.0
    for i in range(n):
        h = np.sin(h) * w
    return np.sum(h) + np.sum(unused)


@pytest.mark.parametrize("policy", POLICIES)
def test_release_keeps_values_read_through_loops(policy):
    _check(read_by_adjoint_loop, (X, 3), policies=(policy,))
    released = [line for line in _source(read_by_adjoint_loop, policy).splitlines()
                if line.strip().startswith("del ")]
    for line in released:
        names = line.split("#")[0].replace("del", "").replace(",", " ").split()
        assert "w" not in names and "h" not in names and "x" not in names


# -- tapes.insert_pushes: pushes in branches, first values, nested loops ---------------

def push_in_branch(x, n):
    h = x
    for i in range(n):
        if i % 2 == 0:
            h = np.tanh(h * 1.3)
        else:
            g = np.sin(h)
            h = g * h
    return np.sum(h * h)


def bound_on_some_iterations(x, n):
    h = x
    for i in range(n):
        if i % 2 == 0:
            g = np.sin(h)    # g from an earlier iteration on odd ones
        h = h * g
    return np.sum(h)


def bound_in_earlier_branch(x, n):
    if n > 2:
        g = x * 2.0
    for i in range(n):
        g = np.sin(x) * x + i   # first push: g may be unbound (None) or the branch's value
    return np.sum(g * g)


def nested_loops(x, n):
    h = x
    for i in range(n):
        for j in range(i):
            h = np.sin(h) * h
        h = h * 1.5
    return np.sum(h)


def list_grown_in_loop(x, n):
    hs = [x]
    for i in range(n):
        hs.append(np.sin(hs[-1]) * hs[-1])
    return np.sum(hs[-1] * hs[0])


@pytest.mark.parametrize("fn, args", [
    (push_in_branch, (X, 5)),
    (bound_on_some_iterations, (X, 4)),
    (bound_in_earlier_branch, (X, 3)),
    (bound_in_earlier_branch, (X, 2)),
    (nested_loops, (X, 3)),
    (list_grown_in_loop, (X, 3)),
])
def test_tapes(fn, args):
    _check(fn, args)


def test_push_in_branch_sits_in_the_branch():
    lines = _source(push_in_branch).splitlines()
    pushes = [line for line in lines if "h_tape.append(h)" in line]
    # one push per overwrite, each indented as deep as its overwrite (inside the if/else)
    assert len(pushes) == 2
    assert all(line.startswith(" " * 12) for line in pushes)


# -- remat: recompute only where the operands still hold their values ------------------

def output_assigned_in_loop(x, n):
    h = x
    for i in range(n):
        y = np.sum(np.sin(h))     # recomputed in the adjoint loop, but the output
        h = h * np.cos(y)
    return y


def recompute_across_swap(a, b, n):
    for i in range(n):
        t = np.sin(a)
        a, b = b, a * t
    return np.sum(a * b)


def view_updated_after(x):
    y = x * 1.0
    v = y[1:]
    t = np.sin(v)      # recomputing t after the update would read the new y[1]
    u = np.cos(t)
    y[1] = 0.0
    return np.sum(u) + np.sum(y * x)


def copy_updated_after(x):
    y = x * 1.0
    z = y
    t = np.sin(z)
    u = np.cos(t)
    y[1] = 0.0
    return np.sum(u) + np.sum(y * x)


def reshaped_updated_after(x):
    y = x * 1.0
    v = y.reshape(2, 2)
    t = np.sin(v)
    u = np.cos(t)
    y[1] = 0.0
    return np.sum(u) + np.sum(y * x)


def view_updated_in_loop(x, n):
    y = x * 1.0
    acc = 0.0
    for i in range(n):
        v = y[1:]
        t = np.sin(v)
        acc = acc + np.sum(np.cos(t))
        y[1] = y[1] * 0.5 + acc
    return acc + np.sum(y * x)


@pytest.mark.parametrize("fn, args", [
    (output_assigned_in_loop, (X, 3)),
    (recompute_across_swap, (X, Y, 3)),
    (view_updated_after, (X,)),
    (copy_updated_after, (X,)),
    (reshaped_updated_after, (X,)),
    (view_updated_in_loop, (X, 3)),
])
def test_recompute(fn, args):
    _check(fn, args)


def test_no_recompute_from_a_view_of_an_updated_array():
    src = _source(view_updated_after, "recompute")
    # u's recompute reads t before y[1] is restored: t is saved, not recomputed
    # there (after the restore, the reads of the adjoint of np.sin may recompute it)
    assert "t = np.sin(v)  # save" in src
    restore = src.index("restore: the elements of y")
    again = src.find("t = np.sin(v)  # recompute")
    assert again == -1 or again > restore
