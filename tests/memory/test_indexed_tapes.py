"""Tapes of a loop over ``range(n)`` written and read by the loop's index
(memory/indexed_tapes.py): ``a_tape[i] = a`` before the overwrite, ``a =
a_tape[i]`` in the adjoint loop, where the tapes pass appends and pops.

Moves only, never arithmetic: every gradient here is, bit for bit, the one of
the same code with the pass switched off (``index_tapes`` made the identity),
under every policy, in grad and vjp, and close to central differences; the
value is the function's own.  Loops the pass must leave alone (nested in a
loop, a tape pushed twice a step, ``range`` with a start, a while loop, a
checkpointing policy) keep ``append`` and ``pop``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numeric import assert_close, bit_identical, numeric_grad, pure

import srcgrad
from srcgrad import pipeline
from srcgrad.pipeline import Options

POLICIES = ("save", "recompute", "save_products", "sqrt", ("revolve", 2))


def coupled(a, b):
    for i in range(7):
        a = a + 0.1 * math.sin(b)
        b = b + 0.1 * math.cos(a)
    return a * b


def coupled_arrays(a, b):
    for i in range(5):
        a = a + 0.1 * np.sin(b)
        b = b + 0.1 * np.cos(a)
    return np.sum(a * b)


def with_break(a, b):
    for i in range(9):
        a = a + 0.1 * np.sin(b)
        if np.sum(a) > 2.5:
            break
        b = b * 0.9 + np.cos(a)
    return np.sum(a * b)


def with_continue(a, b):
    for i in range(6):
        if i % 2 == 1:
            a = a * np.cos(b)
            continue
        b = b + np.tanh(a)
    return np.sum(a * b)


def early_return(a, b):
    for i in range(8):
        a = a + 0.2 * np.sin(b)
        if np.sum(a) > 2.0:
            return np.sum(a * b)
        b = b * np.cos(a)
    return np.sum(a - b)


def in_branch(a, b):
    c = np.cos(a) * b
    if np.sum(a) > 0.0:
        for i in range(4):
            a = np.tanh(a * b)
    else:
        c = c * 2.0
    return np.sum(a * b + c)


def over_a_list(a, xs):
    for x in xs:            # normalised into a loop over range(len(xs))
        a = a * np.sin(x + a)
    return np.sum(a)


def helper(a, b):
    for i in range(3):
        a = np.sin(a) * b
    return a


def calls_a_helper(a, b):
    for i in range(2):
        a = helper(a, b) + a
    return np.sum(a * b)


# -- loops the pass leaves alone -------------------------------------------------------

def nested(a, b):
    for i in range(3):
        for j in range(2):
            a = a + 0.1 * np.sin(b)
        b = b + 0.1 * np.cos(a)
    return np.sum(a * b)


def twice_a_step(a, b):
    for i in range(4):
        a = np.sin(a) * b
        a = np.cos(a) + b
    return np.sum(a)


def from_one(a, b):
    for i in range(1, 5):
        a = np.sin(a) * b
    return np.sum(a)


def while_loop(a, b):
    k = 0
    while k < 4:
        a = np.sin(a) * b
        k = k + 1
    return np.sum(a)


A = np.linspace(0.1, 0.9, 4)
B = np.linspace(-0.3, 0.6, 4)
XS = [np.linspace(0.0, 0.5, 4), np.linspace(-0.2, 0.1, 4), np.linspace(0.3, 0.4, 4)]

INDEXED = [(coupled, (0.4, 0.7), ("a_tape", "b_tape")),
           (coupled_arrays, (A, B), ("a_tape", "b_tape")),
           (with_continue, (A, B), ("a_tape", "b_tape")),
           (in_branch, (A, B), ("a_tape",)),
           (over_a_list, (A, XS), ("a_tape",)),
           (calls_a_helper, (A, B), ("a_tape",))]
# (a loop left early may run over an endless range -- enumerate(itertools.count()) --
# whose len() slots would not fit in memory: it keeps its lists)
LEFT = [(nested, (A, B), "a_tape"), (twice_a_step, (A, B), "a_tape"),
        (from_one, (A, B), "a_tape"), (while_loop, (A, B), "a_tape"),
        (with_break, (A, B), "a_tape"), (early_return, (A, B), "a_tape")]


def _without_the_pass(monkeypatch, fn, options):
    """The functions generated with every pass but index_tapes."""
    with monkeypatch.context() as m:
        m.setattr(pipeline, "index_tapes", lambda forward, backward, tapes, free:
                  (forward, backward))
        made = pipeline.generate(fn, options)
    namespace = dict(made.bindings)
    exec(compile(made.source, "<no index_tapes>", "exec"), namespace)  # noqa: S102
    return [namespace[e] for e in made.entries]


def _wrt(args):
    return (0, 1) if not isinstance(args[1], list) else (0,)


@pytest.mark.parametrize("fn, args, tapes", INDEXED,
                         ids=[f"{fn.__name__}-{type(args[0]).__name__}" for fn, args, _ in INDEXED])
def test_a_counted_loop_writes_its_tapes_by_index(fn, args, tapes):
    g = srcgrad.grad(fn, wrt=_wrt(args))
    g(*args)
    source = g.source if g._shown is None else g._shown.source
    if type(args[0]) is float:
        source = g._specialised(g._options, (float, float)).source
    for tape in tapes:
        assert f"{tape} = [None] * len(" in source, source
        assert f"{tape}.append(" not in source and f"{tape}.pop()" not in source, source


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn, args, tapes", INDEXED,
                         ids=[f"{fn.__name__}-{type(args[0]).__name__}" for fn, args, _ in INDEXED])
def test_the_gradient_is_that_of_pushes_and_pops_bit_for_bit(monkeypatch, fn, args, tapes,
                                                              policy):
    wrt = _wrt(args)
    floats = tuple(i for i, a in enumerate(args) if type(a) is float)
    value, got = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy, check=True)(*args)
    assert bit_identical(value, fn(*args))
    (plain,) = _without_the_pass(monkeypatch, fn, Options(wrt=wrt, policy=policy,
                                                          floats=floats, single=False))
    want = plain(*args)
    assert bit_identical(got, want), (fn.__name__, policy, got, want)
    for i in wrt:
        assert_close(got[i], numeric_grad(pure(fn), list(args), i),
                     rtol=1e-5, atol=1e-6, what=f"{fn.__name__}, policy {policy!r}")


@pytest.mark.parametrize("fn, args, tapes", INDEXED[1:],
                         ids=[fn.__name__ for fn, _, _ in INDEXED[1:]])
def test_vjp_splits_an_indexed_tape_between_its_two_functions(monkeypatch, fn, args, tapes):
    wrt = _wrt(args)
    options = Options(mode="vjp", wrt=wrt)
    made = pipeline.generate(fn, options)
    assert f"{tapes[0]}[" in made.source
    namespace = dict(made.bindings)
    exec(compile(made.source, "<vjp>", "exec"), namespace)  # noqa: S102
    forward, backward = (namespace[e] for e in made.entries)
    plain_forward, plain_backward = _without_the_pass(monkeypatch, fn, options)
    value, residuals = forward(*args)
    plain_value, plain_residuals = plain_forward(*args)
    assert bit_identical(value, plain_value)
    assert bit_identical(backward(residuals, 1.0), plain_backward(plain_residuals, 1.0))
    # the public vjp: its pullback may be called twice
    value, pullback = srcgrad.vjp(fn, *args, wrt=wrt)
    first, second = pullback(1.0), pullback(1.0)
    assert bit_identical(first, second)


@pytest.mark.parametrize("fn, args, tape", LEFT, ids=[fn.__name__ for fn, _, _ in LEFT])
def test_loops_the_pass_cannot_prove_keep_push_and_pop(fn, args, tape):
    source = srcgrad.grad(fn, wrt=(0, 1)).source
    assert f"{tape}.append(" in source and f"{tape}.pop()" in source, source
    for policy in POLICIES:
        _, got = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy, check=True)(*args)
        for i in (0, 1):
            assert_close(got[i], numeric_grad(pure(fn), list(args), i), rtol=1e-5, atol=1e-6,
                         what=f"{fn.__name__}, policy {policy!r}")


@pytest.mark.parametrize("policy", ["sqrt", ("revolve", 2)], ids=str)
def test_checkpointing_policies_keep_their_own_tapes(policy):
    source = srcgrad.grad(coupled, wrt=(0, 1), policy=policy).source
    assert "[None] * len(" not in source, source


def test_a_shadowed_range_is_not_taken_for_the_builtin():
    import gast

    from srcgrad.memory.indexed_tapes import index_tapes
    forward = gast.parse("a_tape = []\nt1 = range(3)\nfor i in t1:\n    a_tape.append(a)\n"
                         "    a = a * 2").body
    backward = gast.parse("for i in reversed(t1):\n    a = a_tape.pop()").body
    same, _ = index_tapes(forward, backward, {"a_tape"}, {"range": lambda n: [0, 1, 2]})
    assert same is forward
