"""Loops that append to a list: the adjoint pops the list's cotangent in place.

``ys = []; for t in range(n): ys.append(np.tanh(w * x[t])); np.sum(np.stack(ys))``:
the adjoint of each append reads the last element of ``d_ys`` and drops it.
``d_ys = drop_last(d_ys)`` copied all the other elements each step, n**2 / 2
copies for n appends: the gradient took 33x the function's time at n = 32000
and 13x at 16000 (issue 16, scope 5; benchmarks/run.py's ``append_loop``: 4.3x
at 1000).  optimize/owned_lists.py writes ``drop_last_in_place`` where no other
name can hold the list (one copy, then pops): 3.3-3.4x at every n.  Each
program here: the value bit for bit and the gradient against central
differences under every policy, jvp, autograd's gradient, the gradient bit
for bit that of the unoptimised code (which keeps ``drop_last``), in a loop,
a branch and a helper; and the generated adjoint of the plain loop, byte for
byte (tests/data/golden/append_loop_grad.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close
from numeric import check_every_policy as check

import srcgrad
from srcgrad import pipeline as compiler
from srcgrad.pipeline import Options

W = np.array([0.3, -0.7, 1.1])
X = np.array([[0.5, 2.0, -0.3], [1.5, -0.4, 0.2], [-1.0, 0.1, 0.8], [0.3, 0.3, -2.0],
              [0.9, -1.2, 0.4]])
GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden" / "append_loop_grad.py"


def stacked(w, x):  # the loop of the issue
    ys = []
    for t in range(x.shape[0]):
        y = np.tanh(w * x[t] + 0.5)
        ys.append(y)
    return np.sum(np.stack(ys))


def summed(w, x):  # Python's sum of the list
    ys = []
    for t in range(x.shape[0]):
        ys.append(np.sum(np.sin(w * x[t])))
    return sum(ys)


def in_a_branch(w, x):  # only some steps append: the lists' lengths differ
    ys, zs = [], []
    for t in range(x.shape[0]):
        v = np.tanh(w * x[t])
        if np.sum(v) > 0:
            ys.append(v)
        else:
            zs.append(v * 2.0)
    return np.sum(np.stack(ys) ** 2) + np.sum(np.stack(zs))


def reads_back(w, x):  # each step reads the last item appended (d_ys = d_ys + ...)
    ys = [w]
    for t in range(x.shape[0]):
        ys.append(np.tanh(ys[-1] * x[t]))
    return np.sum(np.stack(ys))


def nested(w, x):  # a list per row, appended in an inner loop
    total = 0.0
    for t in range(x.shape[0]):
        row = []
        for j in range(x.shape[1]):
            row.append(np.sin(w[j] * x[t, j]))
        total = total + sum(row) * row[0]
    return total


def _step(w, row):
    ys = []
    for v in row:
        ys.append(np.tanh(w * v))
    return np.stack(ys)


def in_a_helper(w, x):  # the append loop in a helper the function calls
    return np.sum(_step(w, x[0]) ** 2) + np.sum(_step(w, x[1]))


def returns_list(w, x):  # the list leaves the function: its cotangent reaches the caller
    ys = []
    for t in range(x.shape[0]):
        ys.append(w * x[t])
    return np.sum(np.stack(_with_squares(ys)))


def _with_squares(ys):
    out = []
    for y in ys:
        out.append(y ** 2)
    return out


PROGRAMS = [stacked, summed, in_a_branch, reads_back, nested, in_a_helper, returns_list]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_policy_and_jvp(fn):
    check(fn, (W, X))


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_the_gradient_is_the_unoptimised_ones_bit_for_bit(fn):
    want = srcgrad.grad(fn, optimize=False)(W, X)
    assert_bit_identical(srcgrad.grad(fn)(W, X), want, fn.__name__)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_autograd_agrees(fn):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    namespace = dict(fn.__globals__, np=anp)
    for helper in (_step, _with_squares):  # the helpers too, with autograd's np
        namespace[helper.__name__] = type(helper)(helper.__code__, namespace)
    theirs = type(fn)(fn.__code__, namespace, fn.__name__)
    assert_close(srcgrad.grad(fn)(W, X), autograd.grad(theirs)(W, X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", [stacked, summed, in_a_branch, reads_back, nested],
                         ids=lambda f: f.__name__)
def test_the_adjoint_pops_in_place(fn):
    source = srcgrad.grad(fn).source
    assert "drop_last_in_place(" in source and "drop_last(" not in source, source


def test_the_arguments_are_left_alone():
    x, w = X.copy(), W.copy()
    srcgrad.grad(stacked, wrt=(0, 1))(w, x)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(w, W)


def test_a_list_cotangent_handed_in_is_copied_not_popped():
    # vjp of a function returning the list: the caller's cotangent list is the
    # adjoint's d_ys at first, which must not shrink
    def make(w, x):
        ys = []
        for t in range(x.shape[0]):
            ys.append(np.tanh(w * x[t]))
        return ys
    value, back = srcgrad.vjp(make, W, X)
    given = [np.full(3, float(k)) for k in range(X.shape[0])]
    kept = list(given)
    (d_w,) = back(given)[:1]
    assert len(given) == len(kept) and all(a is b for a, b in zip(given, kept))
    want = sum(given[t] * X[t] * (1 - np.tanh(W * X[t]) ** 2) for t in range(X.shape[0]))
    assert_close(d_w, want, rtol=1e-12, atol=1e-12)


def test_the_golden_adjoint():
    source = compiler.generate(stacked, Options(mode="grad", wrt=(0,))).source
    source = source.replace(str(Path(__file__).resolve().parent), "<tests>")
    source = source.replace(__file__, "<tests>/test_append_loop_pops.py")
    if os.environ.get("SRCGRAD_UPDATE_GOLDEN"):
        GOLDEN.write_text(source)
    assert source == GOLDEN.read_text(), f"generated source changed; see {GOLDEN}"


def test_exported_module_pops_too(tmp_path):
    import importlib.util
    g = srcgrad.grad(stacked)
    path = tmp_path / "exported_append_loop.py"
    srcgrad.export(path, g)
    assert "class OwnedListCotangent(ListCotangent):" in path.read_text()
    spec = importlib.util.spec_from_file_location("exported_append_loop", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert_bit_identical(module.grad_stacked(W, X), g(W, X))
