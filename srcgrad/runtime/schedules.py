"""Checkpointing schedules for loops: which states to keep, what to rerun.

A checkpointed loop of ``n`` iterations runs its forward sweep without tapes,
keeping a few snapshots of its state, and its adjoint sweep follows a list of
actions ``(action, a, b)``:

* ``("save", a, 0)`` / ``("restore", a, 0)`` / ``("free", a, 0)``: the state
  before iteration ``a`` into, from, or out of the snapshots;
* ``("advance", a, b)``: rerun iterations ``a..b-1`` without tapes;
* ``("record", a, b)``: rerun them saving what their adjoint needs;
* ``("unrecord", a, b)``: their adjoint, last iteration first.

``"sqrt"`` snapshots every ~sqrt(n) iterations and records one segment at a
time: one extra forward sweep, O(sqrt(n)) memory.  ``("revolve", s)`` is
Griewank's binomial checkpointing with ``s`` snapshots (the loop's initial state
included): the fewest reruns any schedule with ``s`` snapshots can do, namely
``r*n - binomial(s + r, s + 1)`` advanced iterations, where ``r`` is the
smallest integer with ``binomial(s + r, s) >= n`` (Griewank and Walther 2000).

    >>> forward, backward = checkpoint_schedule(4, "sqrt")
    >>> forward
    [('save', 0, 0), ('advance', 0, 2), ('save', 2, 0), ('advance', 2, 4)]
    >>> list(backward)[:3]
    [('restore', 2, 0), ('record', 2, 4), ('unrecord', 2, 4)]
    >>> revolve_cost(10, 3), count_advanced(checkpoint_schedule(10, "revolve", 3)[1])
    (15, 15)
"""

from __future__ import annotations

import math


def _beta(s: int, t: int) -> int:
    return math.comb(s + t, s)


def revolve_cost(n: int, snapshots: int) -> int:
    """Griewank and Walther's minimal number of advanced iterations for reversing
    ``n`` iterations with ``snapshots`` snapshots (the initial state included)."""
    if n <= 1:
        return 0
    r = 0
    while _beta(snapshots, r) < n:
        r += 1
    return r * n - _beta(snapshots + 1, r - 1)


def _split(n: int, snapshots: int) -> int:
    """The first snapshot's offset that minimises the total cost (the cost is
    convex in the offset, so a binary search on its slope finds the minimum)."""
    def cost(m):
        return m + revolve_cost(n - m, snapshots - 1) + revolve_cost(m, snapshots)
    lo, hi = 1, n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cost(mid + 1) < cost(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo


def _reverse(a, b, snapshots):
    """Actions reversing iterations a..b-1; the state before ``a`` is in a snapshot.
    A generator: the schedule is produced as the adjoint sweep consumes it, so it
    costs no memory of its own."""
    if b - a == 1:
        yield from (("restore", a, 0), ("record", a, b), ("unrecord", a, b))
    elif snapshots <= 1:
        for j in range(b - 1, a - 1, -1):
            yield ("restore", a, 0)
            if j > a:
                yield ("advance", a, j)
            yield from (("record", j, j + 1), ("unrecord", j, j + 1))
    else:
        m = a + _split(b - a, snapshots)
        yield from (("restore", a, 0), ("advance", a, m), ("save", m, 0))
        yield from _reverse(m, b, snapshots - 1)
        yield ("free", m, 0)
        yield from _reverse(a, m, snapshots)


class _Revolve:
    """The revolve adjoint schedule, produced lazily each time it is iterated."""

    def __init__(self, n, snapshots):
        self.n, self.snapshots = n, snapshots

    def __iter__(self):
        yield from _reverse(0, self.n, self.snapshots)
        yield ("free", 0, 0)


def checkpoint_schedule(n, policy, snapshots=None):
    """``(forward actions, adjoint actions)`` for a loop of ``n`` iterations (the
    adjoint's is produced lazily as it is iterated)."""
    n = int(n)
    if n == 0:
        return [], []
    if policy == "sqrt":
        k = max(1, math.isqrt(n - 1) + 1)
        starts = list(range(0, n, k))
        forward = [step for a in starts for step in (("save", a, 0),
                                                     ("advance", a, min(a + k, n)))]
        backward = [step for a in reversed(starts)
                    for step in (("restore", a, 0), ("record", a, min(a + k, n)),
                                 ("unrecord", a, min(a + k, n)), ("free", a, 0))]
        return forward, backward
    if policy == "revolve":
        return [("save", 0, 0), ("advance", 0, n)], _Revolve(n, max(1, int(snapshots)))
    raise ValueError(f"unknown checkpointing schedule {policy!r}")


class OnlineSnapshots(dict):
    """Snapshots of a loop whose length is unknown while it runs (a ``while``).

    It keeps the state before every ``stride``-th iteration and doubles the
    stride, dropping every other snapshot, whenever ``budget`` are held: memory
    stays bounded however long the loop runs, and the kept states stay evenly
    spread.
    """

    def __init__(self, budget):
        super().__init__()
        self.budget = max(2, int(budget))
        self.stride = 1

    def wants(self, step) -> bool:
        """Whether to keep the state before iteration ``step``."""
        if step % self.stride:
            return False
        if len(self) >= self.budget:
            self.stride *= 2
            for position in [p for p in self if p % self.stride]:
                del self[position]
        return step % self.stride == 0


def online_schedule(snapshots: OnlineSnapshots, n):
    """Adjoint actions for a loop that ran ``n`` iterations and kept ``snapshots``:
    each stretch between kept states is reversed last first, binomially, with the
    snapshots the earlier stretches do not hold."""
    positions = sorted(snapshots)
    for i in range(len(positions) - 1, -1, -1):
        a = positions[i]
        b = positions[i + 1] if i + 1 < len(positions) else int(n)
        if b > a:
            yield from _reverse(a, b, max(1, snapshots.budget - i))
        yield ("free", a, 0)


def count_advanced(actions) -> int:
    """How many iterations a list of actions reruns without tapes."""
    return sum(b - a for action, a, b in actions if action == "advance")

