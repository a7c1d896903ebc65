"""optimize/batched_steps.py's _first_entry_only: where the guard of a steady
adjoint loop checks ``stackable_tape(h_tape, 1, h)``, its
``steady_tape(h_tape, h.shape, 0)`` checks only the first entry
(``h_tape[:1]``): the others are checked by ``stackable_tape``.

The claim is that the guard's conjunction is the same: checked on tapes of
every kind of entry (arrays of other shapes, dtypes and layouts, subclasses,
numbers, None), and on whole programs, whose code with and without the
rewrite gives the same bits under every policy.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, check_every_policy, pure
from recurrences import compiled_without, rnn
from recurrences import rnn_args as _rnn_args

from srcgrad.optimize import batched_steps
from srcgrad.runtime import stackable_tape, steady_tape


class Sub(np.ndarray):
    pass


def _entries(rng):
    shape = (3, 4)
    return [np.ones(shape), rng.normal(size=shape), np.ones(shape, np.float32),
            np.ones((4, 3)), np.ones(4), np.asfortranarray(rng.normal(size=shape)),
            np.ones((3, 8))[:, ::2], np.ones(shape).view(Sub), 1.5, None, np.ones(shape, int)]


def test_the_conjunction_is_the_same_for_every_kind_of_tape():
    rng = np.random.default_rng(5)
    entries = _entries(rng)
    h = np.zeros((3, 4))
    for _ in range(3000):
        n = int(rng.integers(0, 5))
        tape = [entries[int(k)] for k in rng.integers(len(entries), size=n)]
        last = entries[int(rng.integers(len(entries)))] if rng.random() < 0.3 else h
        if not isinstance(last, np.ndarray):
            continue   # the guard checks the value an ndarray before (type(h) is np.ndarray)
        before = steady_tape(tape, last.shape, 0) and stackable_tape(tape, 1, last)
        after = steady_tape(tape[:1], last.shape, 0) and stackable_tape(tape, 1, last)
        assert before == after, (tape, last)
        dropped = steady_tape(tape, last.shape, 1) and stackable_tape(tape, 1, last)
        assert dropped == stackable_tape(tape, 1, last), (tape, last)


def test_the_rnn_guard_checks_the_first_entry_only(monkeypatch):
    _, _, source = compiled_without(monkeypatch, rnn, None, wrt=(0, 1))
    assert "steady_tape(h_tape[:1], h.shape, 0)" in source
    assert "steady_tape(h_tape, h.shape, 0)" not in source


def _programs():
    rng = np.random.default_rng(37)
    yield "steady", _rnn_args(rng)
    yield "float32", _rnn_args(rng, dtype=np.float32)
    yield "one step", _rnn_args(rng, steps=1)
    w, u, xs, _ = _rnn_args(rng)
    yield "an h0 in Fortran order", [w, u, xs, np.asfortranarray(rng.normal(size=(3, 5)))]
    yield "a first step that broadcasts", [w, u, xs, rng.normal(size=(1, 5))]
    yield "a vector h0", [w, u, xs, rng.normal(size=5)]
    yield "a float32 h0", [w, u, xs, rng.normal(size=(3, 5)).astype(np.float32)]


@pytest.mark.parametrize("what, args", list(_programs()), ids=[p[0] for p in _programs()])
def test_gradients_are_bit_identical_to_the_full_check(monkeypatch, what, args):
    for policy in POLICIES:
        options = dict(mode="value_and_grad", wrt=(0, 1, 3), policy=policy)
        _, with_rewrite, _ = compiled_without(monkeypatch, rnn, None, **options)
        with monkeypatch.context() as patch:
            patch.setattr(batched_steps, "_first_entry_only", lambda *a: None)
            _, without, plain = compiled_without(monkeypatch, rnn, None, **options)
        assert "steady_tape(h_tape[:1]" not in plain
        value, grad = with_rewrite(*args)
        value0, grad0 = without(*args)
        assert_bit_identical(value, pure(rnn)(*args), f"{what}, {policy!r}")
        assert_bit_identical((value, grad), (value0, grad0), f"{what}, {policy!r}")


def test_every_policy_and_jvp():
    check_every_policy(rnn, _rnn_args(np.random.default_rng(10)), 1)
