"""Revolve in O(snapshots) memory (issue 16): the binomial schedule is produced
lazily, the same actions in the same order as the list it once was, and a
checkpointed loop's peak memory does not grow with its length."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import srcgrad
from srcgrad.runtime.schedules import (OnlineSnapshots, _split, checkpoint_schedule,
                                       online_schedule)
from srcgrad.runtime.state import snapshot_state


def _reverse_list(a, b, snapshots, actions):
    """The schedule as it was built before it was lazy: every action in one list."""
    if b - a == 1:
        actions += [("restore", a, 0), ("record", a, b), ("unrecord", a, b)]
    elif snapshots <= 1:
        for j in range(b - 1, a - 1, -1):
            actions.append(("restore", a, 0))
            if j > a:
                actions.append(("advance", a, j))
            actions += [("record", j, j + 1), ("unrecord", j, j + 1)]
    else:
        m = a + _split(b - a, snapshots)
        actions += [("restore", a, 0), ("advance", a, m), ("save", m, 0)]
        _reverse_list(m, b, snapshots - 1, actions)
        actions.append(("free", m, 0))
        _reverse_list(a, m, snapshots, actions)


def _revolve_list(n, snapshots):
    backward = []
    _reverse_list(0, n, max(1, int(snapshots)), backward)
    return [("save", 0, 0), ("advance", 0, n)], backward + [("free", 0, 0)]


def _online_list(snapshots, n):
    positions, actions = sorted(snapshots), []
    for i in range(len(positions) - 1, -1, -1):
        a = positions[i]
        b = positions[i + 1] if i + 1 < len(positions) else int(n)
        if b > a:
            _reverse_list(a, b, max(1, snapshots.budget - i), actions)
        actions.append(("free", a, 0))
    return actions


@pytest.mark.parametrize("snapshots", [0, 1, 2, 3, 5, 8, 20])
def test_lazy_revolve_schedule_equals_the_list(snapshots):
    for n in [*range(1, 70), 100, 257, 1000, 1024]:
        forward, backward = checkpoint_schedule(n, "revolve", snapshots)
        old_forward, old_backward = _revolve_list(n, snapshots)
        assert forward == old_forward
        assert list(backward) == old_backward, (n, snapshots)
        assert list(backward) == old_backward  # iterable again: a pullback called twice


@pytest.mark.parametrize("budget, n", [(2, 1), (2, 9), (3, 40), (8, 1000), (5, 77)])
def test_lazy_online_schedule_equals_the_list(budget, n):
    snapshots = OnlineSnapshots(budget)
    for step in range(n):
        if snapshots.wants(step):
            snapshots[step] = None
    assert list(online_schedule(snapshots, n)) == _online_list(snapshots, n)


def _schedule_peak(n, snapshots):
    tracemalloc.start()
    try:
        _, backward = checkpoint_schedule(n, "revolve", snapshots)
        count = 0
        for _ in backward:
            count += 1
        return tracemalloc.get_traced_memory()[1], count
    finally:
        tracemalloc.stop()


def test_revolve_schedule_memory_does_not_grow_with_steps():
    small, small_count = _schedule_peak(1_000, 8)
    large, large_count = _schedule_peak(20_000, 8)  # 5 s under tracemalloc; 100,000 took 21
    assert large_count > 16 * small_count  # ~100,000 actions: a list of them is ~8 MB
    # only the nested generators of the binomial recursion (a few more levels) grow
    assert large <= 2 * small + 4096, (small, large)
    assert large < 64 * 1024


def test_snapshot_state_leaves_no_cyclic_garbage():
    """Its nested helpers referred to each other: every call left a cycle holding
    its copies (freed snapshots among them) until the collector ran, memory that
    grew with a checkpointed loop's length."""
    values = (np.ones(3), [np.ones(2), 4], {"a": np.ones(1)}, (np.ones(2),), 2.0)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        copies = snapshot_state(*values)
        found = gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    assert found == 0
    assert copies[0] is not values[0]
    np.testing.assert_array_equal(copies[1][0], values[1][0])


def rnn(W, xs):
    h = np.zeros(64)
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h)


def test_revolve_rnn_gradient_peak_stays_flat():
    """The peak of a revolve-8 gradient of a 64-wide RNN: flat from T=64 to T=1024
    (it grew 2.9x while the schedule was a list, 1.2-1.4x more with the cycles of
    snapshot_state)."""
    g = srcgrad.grad(rnn, policy=("revolve", 8))
    rng = np.random.default_rng(0)
    W = rng.standard_normal((64, 64)) * 0.1
    inputs = {T: rng.standard_normal((T, 64)) for T in (1024, 64)}
    peaks = {}
    for T, xs in inputs.items():
        g(W, xs)  # compiled, and the interpreter's free lists filled
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            g(W, xs)
            peaks[T] = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    assert peaks[1024] <= 1.5 * peaks[64], peaks
