"""Soundness of the optimize passes that rewrite the sweeps (docs: each pass's
"Sound when"): copy propagation, dead code, zero starts, folding, simplify and
shape reads.  The memory passes' twin of this file (release, tapes, remat) is
tests/memory/test_memory_soundness.py.

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

from numeric import check_policies

X = np.linspace(0.1, 1.0, 4)
Y = np.linspace(-0.5, 0.7, 4)
M = np.linspace(-0.4, 0.9, 6).reshape(2, 3)


_check = check_policies


def _source(fn, policy="save", wrt=0):
    return srcgrad.value_and_grad(fn, wrt=wrt, policy=policy).source


# -- optimize.propagate_copies: a copy is valid until either side is rebound -----------

def copy_source_rebound_in_loop(x, n):
    s = x
    for i in range(n):
        t = s              # a copy inside the loop ...
        s = np.sin(s)      # ... whose source is rebound later in the body
        s = s + t * s
    return np.sum(s)


def swap_in_loop(x, y, n):
    # lowered through a temporary; the adjoint passes cotangents along by copies
    # (d_t4 = d_y; ...; d_y = d_x) that the next statements rebind
    for i in range(n):
        x, y = y, x * 0.5 + np.sin(y)
    return np.sum(x * y)


def copy_before_loop_that_rebinds_it(x, n):
    a = x * 2.0
    b = a              # b == a until the loop rebinds a
    for i in range(n):
        a = np.cos(a) * b
    return np.sum(a * b)


@pytest.mark.parametrize("fn, args", [
    (copy_source_rebound_in_loop, (X, 3)),
    (swap_in_loop, (X, Y, 3)),
    (copy_before_loop_that_rebinds_it, (X, 3)),
])
def test_copy_propagation(fn, args):
    _check(fn, args)


def test_swap_cotangent_copies_are_not_propagated_across_the_rebinding():
    src = _source(swap_in_loop)
    # the adjoint loop moves d_y into d_t4 before it rebinds d_y: still there
    assert "d_t4 = d_y" in src and "d_y = d_x" in src


# -- optimize.eliminate_dead: liveness through loop back-edges -------------------------

def read_on_next_iteration(x, n):
    prev = x
    acc = 0.0
    for i in range(n):
        cur = np.sin(prev) * x
        if i > 0:
            acc = acc + np.sum(cur * old)   # old: set by the previous iteration
        old = cur
        prev = cur
    return acc


def while_test_reads_body_value(x, n):
    i = 0
    h = x
    while i < n:
        h = np.cos(h) * h
        i = i + 1
    return np.sum(h)


def update_in_loop(x, n):
    y = x * 1.0
    for i in range(n):
        y[i] = y[i] * np.sin(y[i - 1])   # kept: y is live after the loop
    return np.sum(y * y)


def loop_with_break(x, n):
    h = x
    for i in range(n):
        h = np.sin(h) + h
        if np.sum(h) > 6.0:
            break
    return np.sum(h)


@pytest.mark.parametrize("fn, args", [
    (read_on_next_iteration, (X, 4)),
    (while_test_reads_body_value, (X, 3)),
    (update_in_loop, (X, 4)),
    (loop_with_break, (X, 30)),
])
def test_dead_code_through_back_edges(fn, args):
    _check(fn, args)


def test_value_read_only_on_the_next_iteration_is_kept():
    src = _source(read_on_next_iteration)
    assert "old = cur" in src


# -- optimize.drop_zero_starts: d = 0.0; d = d + x -> d = x, straight-line only --------

def accumulate_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(x) * i)
    return s


def accumulate_in_branch(x, n):
    s = x * 0.0
    for i in range(n):
        if i % 2 == 0:
            s = s + x * x
        else:
            s = s * np.cos(x)
    return np.sum(s)


@pytest.mark.parametrize("fn, args", [(accumulate_in_loop, (X, 3)),
                                      (accumulate_in_branch, (X, 5))])
def test_zero_starts(fn, args):
    _check(fn, args)


# -- fold.fold_temporaries: only into the very next statement --------------------------

def fold_across_rebinding(x, y, n):
    # t = x * 0.5 + np.sin(y) is read by `y = t`, after `x = y` rebinds an operand
    h = x
    for i in range(n):
        h, y = y, h * 0.5 + np.sin(y)
    return np.sum(h * y)


def while_test_temporary(x):
    # the test's temporary is computed at the end of the body, read by the
    # next iteration's test: never folded into a while header
    h = x
    while np.sum(h) < 6.0:
        h = h * 1.5 + np.sin(h)
    return np.sum(h * h)


def parallel_swap_then_use(a, b, n):
    for i in range(n):
        a, b = b, a
        a = a * np.cos(b)
    return np.sum(a * b)


@pytest.mark.parametrize("fn, args", [(fold_across_rebinding, (X, Y, 3)),
                                      (while_test_temporary, (X,)),
                                      (parallel_swap_then_use, (X, Y, 3))])
def test_folding(fn, args):
    _check(fn, args)


def test_no_fold_across_a_statement_that_rebinds_an_operand():
    src = _source(fold_across_rebinding)
    assert "y = h * 0.5" not in src and "y = t" in src


# -- simplify: x * x differentiated as x ** 2; shift-neutral extrema ------------------

def square_in_loop(x, n):
    h = x
    for i in range(n):
        h = h * h * 0.5 + x   # the same name twice: one value, whatever the iteration
    return np.sum(h)


def log_softmax(z):
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    return np.sum(z * (s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))))


def max_used_again(z):
    m = np.max(z, axis=1, keepdims=True)   # not shift-neutral: read again below
    s = z - m
    return np.sum(s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))) + np.sum(m * m)


@pytest.mark.parametrize("fn, args", [(square_in_loop, (X, 3)), (log_softmax, (M,)),
                                      (max_used_again, (M,))])
def test_simplify(fn, args):
    _check(fn, args)


# -- broadcast.retarget_shape_reads: only to arguments never rebound -------------------

def param_rebound_in_loop(x, n):
    y = x * 2.0
    for i in range(n):
        x = np.sum(x) * np.ones(3)
    return np.sum(y * y) + np.sum(x)


def param_rebound_in_branch(x, w, n):
    y = np.tanh(x)
    if n > 1:
        x = np.sum(x)      # another shape on this path
    z = y * w
    return np.sum(z) + np.sum(x * x)


def param_steady(x):
    y = np.tanh(x)
    return np.sum(y * 2.0)


@pytest.mark.parametrize("fn, args, wrt", [(param_rebound_in_loop, (np.full(3, 0.3), 2), 0),
                                           (param_rebound_in_branch, (M, M, 2), 0),
                                           (param_rebound_in_branch, (M, M, 2), 1),
                                           (param_steady, (M,), 0)])
def test_shape_reads(fn, args, wrt):
    _check(fn, args, wrt=wrt)


def test_shape_reads_retarget_only_steady_arguments():
    assert "has the shape of x" in _source(param_steady)
    assert "has the shape of x" not in _source(param_rebound_in_branch)
    assert "has the shape of x" not in _source(param_rebound_in_loop)
