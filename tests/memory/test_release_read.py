"""memory/release_read.py: in straight-line code, ``del`` after the adjoint
statement that reads an array last, so that the next array made reuses its
memory instead of growing the heap (the 30-operation benchmark chain peaked at
30 arrays of its size, 21 with the pass, as the careful hand-written gradient's
20).

Where it must not apply: a name read again later (by the sweep, in a branch,
by the return), an argument, the output, a scalar or Python float, an array
an in-place helper writes into in that statement, a name a lambda reads, and
any function with a loop.  Whole programs: the value the function's own bit
for bit, the gradient bit-identical to the code without the pass (a ``del``
changes no value), under every policy; views, aliases and integer arrays.
"""

from __future__ import annotations

import tracemalloc

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, check_policies

import srcgrad
from srcgrad import pipeline
from srcgrad.api import compiled
from srcgrad.ir.emit import show_statements
from srcgrad.memory.release_read import release_read


def _released(source, start=0, params=("x",), scalars=(), output=()):
    body = gast.parse(source).body
    return show_statements(release_read(body, start, params, scalars, output))


def _deleted(text):
    names = []
    for line in text.splitlines():
        if line.strip().startswith("del "):
            names += line.split("#")[0].replace("del", "").replace(",", " ").split()
    return names


# --- which names a del names, and where --------------------------------------------------

def test_after_the_last_read_only():
    out = _released("a = np.sin(x)\nd_b = a * x\nd_c = d_b * a\nd_x = d_c * d_b\n"
                    "return grad_like(d_x, x)")
    lines = out.splitlines()
    assert lines[3] == "del a  # read no more"          # after d_c, a's last reader
    assert _deleted(out) == ["a"]                     # d_c, d_b: read by the last statement


def test_not_before_the_forward_sweep_ends():
    out = _released("a = np.sin(x)\nb = a * 2.0\nd_b = b * x\nd_x = d_b * 2.0\ny = d_x * 1.0\n"
                    "return y", start=3)
    assert "del a" not in out and "del b" not in out  # read last in the forward sweep
    assert "del d_b" in out


def test_arguments_output_scalars_floats_and_seeds_are_kept():
    out = _released("t = np.sum(x)\nd_t = grad_seed(t)\nn = len(x)\nf = math.sin(t)\n"
                    "d_y = unreduced(d_t, x)\nd_x = d_y * x * n * f\nz = d_x * 2.0\n"
                    "return z", output=("t",), scalars=("n",))
    assert _deleted(out) == []


def test_the_array_a_helper_writes_into_is_not_named():
    out = _released("a = np.sin(x)\nd_a = into_first(np.multiply, a, x)\n"
                    "d_b = into_operand(np.cos, d_a)\nz = d_b * 2.0\nreturn z")
    assert _deleted(out) == []


def test_a_name_a_lambda_reads_is_kept():
    out = _released("a = np.sin(x)\nf = lambda: a\nd_b = a * x\nz = d_b * f()\nreturn z")
    assert "a" not in _deleted(out)


def test_a_name_bound_only_in_a_branch_is_kept():
    out = _released("if c:\n    a = np.sin(x)\nelse:\n    a = x\nd_b = a * x\nz = d_b * 2.0\n"
                    "return z", params=("x", "c"))
    assert "a" not in _deleted(out)   # (a top-level assignment binds on every path)


def test_a_read_in_a_later_branch_keeps_it():
    out = _released("a = np.sin(x)\nd_b = a * x\nif c:\n    d_b = d_b * a\nz = d_b * 2.0\n"
                    "return z", params=("x", "c"))
    assert "a" not in _deleted(out)


def test_functions_with_loops_are_left_alone():
    source = "a = np.sin(x)\nd_b = a * x\nfor i in r:\n    d_b = d_b * 2.0\nz = d_b * 2.0\nreturn z"
    assert _released(source) == show_statements(gast.parse(source).body)


# --- whole programs ------------------------------------------------------------------------

def chain(x):
    a = np.sin(x)
    b = np.exp(a)
    c = a * b
    d = np.tanh(c + x)
    e = d * x - a
    f = np.sqrt(e * e + 1.0) / (np.cos(d) + 2.0)
    return np.sum(f * c + d)


def views(x):
    a = np.sin(x)
    v = a[1:]            # a view: deleting a keeps the array v holds
    w = a.T
    b = np.exp(v) * w[:-1]
    return np.sum(b * v) + np.sum(a * a)


def integers(x, k):
    m = k * 3              # an integer array, read by the adjoint
    y = x * m
    z = np.sin(y) * (m > 2)
    return np.sum(z * z + x)


def signed(x):
    a = x * -0.0           # -0.0, inf and NaN flow through unchanged
    b = np.exp(x * 800.0)  # inf
    c = a + np.sqrt(x - 1.0)   # NaN below 1
    return np.sum(a * x + c * 0.0 + np.tanh(b))


def _without(monkeypatch):
    monkeypatch.setattr(pipeline, "release_read", lambda body, *a, **k: body)
    compiled._MEMORY.clear()


def _compare(monkeypatch, fn, args, wrt=0, mode="grad", fired=True):
    """Gradient with and without the pass: bit for bit; the value the function's own."""
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    compiled._MEMORY.clear()
    make = getattr(srcgrad, mode)
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    g = make(fn, wrt=wrt)
    got = g(*copies)
    for a, c in zip(args, copies):
        assert_bit_identical(a, c)
    if fired is not None:
        assert ("# read no more" in g.source) == fired, g.source
    if mode == "value_and_grad":
        assert_bit_identical(got[0], fn(*args))
    with monkeypatch.context() as m:
        _without(m)
        expected = make(fn, wrt=wrt)(*args)
    compiled._MEMORY.clear()
    assert_bit_identical(got, expected)
    return g


@pytest.mark.parametrize("mode", ["grad", "value_and_grad"])
def test_a_chain(monkeypatch, mode):
    g = _compare(monkeypatch, chain, [np.linspace(-1.0, 1.5, 301)], mode=mode)
    assert g.source.count("# read no more") >= 3


def test_views_aliases_integers_and_special_values(monkeypatch):
    _compare(monkeypatch, views, [np.linspace(-1.0, 1.0, 40)])
    x, k = np.linspace(0.1, 1.0, 12), np.arange(12)
    _compare(monkeypatch, integers, [x, k], fired=None)
    with np.errstate(all="ignore"):
        _compare(monkeypatch, signed, [np.array([-0.0, 0.0, 0.5, 1.0, 2.0, 1.0, np.nan, np.inf])])


@pytest.mark.parametrize("fn", [chain, views])
def test_every_policy(fn):
    check_policies(fn, (np.linspace(-0.9, 1.2, 17),), policies=POLICIES)


def test_loops_keep_their_code(monkeypatch):
    def looped(x):
        h = np.sin(x)
        for i in range(3):
            h = np.tanh(h * x)
        return np.sum(h * h)
    g = _compare(monkeypatch, looped, [np.linspace(-1.0, 1.0, 9)], fired=False)
    assert "del " not in g.source.split("# Adjoint sweep")[1]


def test_the_peak_falls():
    """The chain on 1e5 floats: fewer arrays alive at the adjoint sweep's peak."""
    x = np.linspace(-1.0, 1.5, 100_000)

    def peak(g):
        g(x)
        tracemalloc.start()
        g(x)
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top / x.nbytes

    g = srcgrad.grad(chain)
    with_pass = peak(g)
    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("SRCGRAD_CACHE", "0")
        _without(mp)
        without = peak(srcgrad.grad(chain))
    finally:
        mp.undo()
        compiled._MEMORY.clear()
    assert with_pass <= without - 2, (with_pass, without)


def test_the_thunk_a_seed_calls_at_once_is_no_closure():
    out = _released("a = np.sin(x)\nd_t = summed_elementwise_seed(np.sum, (a, x), lambda: a * x)\n"
                    "d_b = d_t * a\nz = d_b * 2.0\nreturn z", start=1)
    assert "del a  # read no more" in out    # after d_b, its last reader
