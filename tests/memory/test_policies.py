"""Policies: what each saves, what checkpointed loops rerun, and the report.

Translation validation: whatever a policy saves, recomputes or reruns, the value
the generated code computes is the function's own value bit for bit
(``test_every_policy_gives_the_functions_own_value`` and the checks in the
tests that run a policy).
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad
from srcgrad.runtime.schedules import checkpoint_schedule, count_advanced, revolve_cost

from numeric import assert_bit_identical, assert_close

STEPS = {"count": 0}


def tick():
    STEPS["count"] += 1


def ode(x, n):
    """An explicit time-stepper; tick() counts forward iterations."""
    for i in range(n):
        tick()
        x = x + 0.01 * np.sin(x) * np.cos(0.5 * x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("n, snapshots", [(10, 2), (37, 3), (100, 4), (64, 1)])
def test_revolve_reruns_exactly_the_binomial_minimum(n, snapshots):
    x = np.linspace(0.1, 1.0, 4)
    g = srcgrad.grad(ode, policy=("revolve", snapshots))
    g(x, n)  # compile
    value, _ = srcgrad.value_and_grad(ode, policy=("revolve", snapshots))(x, n)
    assert_bit_identical(value, ode(x, n), f"ode, n={n}, policy ('revolve', {snapshots})")
    STEPS["count"] = 0
    grad = g(x, n)
    # the forward sweep, the reruns the schedule advances, and each recorded iteration
    assert STEPS["count"] == n + revolve_cost(n, snapshots) + n
    assert_close(grad, srcgrad.grad(ode)(x, n), rtol=1e-12)


def test_sqrt_reruns_one_extra_forward_sweep():
    x = np.linspace(0.1, 1.0, 4)
    g = srcgrad.grad(ode, policy="sqrt")
    g(x, 50)
    assert_bit_identical(srcgrad.value_and_grad(ode, policy="sqrt")(x, 50)[0], ode(x, 50),
                         "ode, policy 'sqrt'")
    STEPS["count"] = 0
    g(x, 50)
    assert STEPS["count"] == 2 * 50


def test_revolve_schedule_respects_the_snapshot_budget():
    for n, s in [(100, 3), (1000, 5), (57, 1)]:
        forward, backward = checkpoint_schedule(n, "revolve", s)
        backward = list(backward)
        held = peak = 1  # the initial state
        for action, _, _ in backward:
            held += {"save": 1, "free": -1}.get(action, 0)
            peak = max(peak, held)
        assert peak <= s
        assert count_advanced(backward) == revolve_cost(n, s)


def test_revolve_cost_matches_exhaustive_search():
    from functools import lru_cache

    @lru_cache(None)
    def best(length, free):
        if length <= 1:
            return 0
        if free == 0:
            return length * (length - 1) // 2
        return min(m + best(length - m, free - 1) + best(m, free) for m in range(1, length))

    for s in range(1, 5):
        for n in range(1, 40):
            assert revolve_cost(n, s) == best(n, s - 1)


def test_sources_show_save_and_recompute_points():
    def f(x):
        return np.sum(np.tanh(x @ np.ones((3, 3))) ** 2)

    saved = srcgrad.grad(f).source
    recomputed = srcgrad.grad(f, policy="recompute").source
    assert "# save:" in saved and "# recompute:" not in saved
    assert "# recompute:" in recomputed
    products = srcgrad.grad(f, policy="save_products").source
    assert "t1 = x @ t2" not in products.split("# Adjoint")[1] or "recompute: t1" not in products


def test_a_policy_callable_sees_each_value():
    seen = []

    def policy(candidate):
        seen.append((candidate.name, candidate.primitive))
        return "recompute"

    def f(x):
        return np.sum(np.exp(np.sin(x)))

    x = np.linspace(0, 1, 3)
    value, grad = srcgrad.value_and_grad(f, policy=policy)(x)
    assert_close(grad, srcgrad.grad(f)(x))
    assert_bit_identical(value, f(x), "a policy callable")
    assert ("t2", "np.exp") in seen


def test_a_policy_callable_answering_something_else_is_a_srcgrad_error():
    def f(x):
        return np.sum(np.exp(np.sin(x)) ** 2)

    with pytest.raises(srcgrad.SrcGradError, match="not True .asked about 't"):
        srcgrad.grad(f, policy=lambda candidate: True)(np.ones(3))


def test_unknown_policy_is_a_clear_error():
    with pytest.raises(srcgrad.SrcGradError, match="unknown policy"):
        srcgrad.grad(ode, policy="everything")
    with pytest.raises(srcgrad.SrcGradError, match=r"\('revolve', 0\): binomial "
                       r"checkpointing needs at least one snapshot: \('revolve', K\) with K >= 1"):
        srcgrad.grad(ode, policy=("revolve", 0))


@srcgrad.checkpoint
def block(W, h):
    return np.tanh(W @ h) * np.cos(h)


def uses_a_checkpointed_block(W, h):
    for i in range(3):
        h = block(W, h)
    return np.sum(h)


def test_checkpointed_function_is_recomputed_not_saved():
    W, h = np.eye(3) * 0.5, np.linspace(0.1, 0.3, 3)
    g = srcgrad.grad(uses_a_checkpointed_block, wrt=(0, 1))
    src = g.source
    assert "block_forward(W, h)  # recompute" in src
    assert "block_res_tape" not in src
    assert srcgrad.gradcheck(uses_a_checkpointed_block, W, h, wrt=(0, 1))
    value, _ = srcgrad.value_and_grad(uses_a_checkpointed_block, wrt=(0, 1))(W, h)
    assert_bit_identical(value, uses_a_checkpointed_block(W, h), "a checkpointed function")


def rnn(W, xs, h):
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h ** 2)


def test_saved_report_lists_values_and_shrinks_with_recomputation():
    rng = np.random.default_rng(0)
    W, xs, h = rng.standard_normal((4, 4)) * 0.3, rng.standard_normal((30, 4)), np.zeros(4)
    save = srcgrad.saved(rnn, W, xs, h)
    recompute = srcgrad.saved(rnn, W, xs, h, policy="recompute")
    sqrt = srcgrad.saved(rnn, W, xs, h, policy="sqrt")
    names = {v.name for v in save}
    assert {"W", "xs", "h_tape"} <= names
    tape = next(v for v in save if v.name == "h_tape")
    assert tape.kind == "tape" and tape.entries == 30 and tape.nbytes == 30 * 4 * 8
    assert recompute.total < save.total
    assert sum(v.nbytes for v in sqrt if v.kind == "tape") == 0
    assert "total" in str(save) and "h_tape" in str(save)


def settle(x):
    """A while loop: its length is known only when it ends."""
    k = 0
    while np.sum(x * x) < 50.0 and k < 500:
        tick()
        x = x * 1.01 + 0.01
        k += 1
    return np.sum(np.sin(x))


@pytest.mark.parametrize("policy", ["sqrt", ("revolve", 3)])
def test_while_loops_checkpoint_online_with_bounded_snapshots(policy):
    x = np.linspace(0.1, 1.0, 5)
    reference = srcgrad.grad(settle)(x)
    g = srcgrad.grad(settle, policy=policy)
    assert_close(g(x), reference, rtol=1e-10)
    assert_bit_identical(srcgrad.value_and_grad(settle, policy=policy)(x)[0], settle(x),
                         f"settle, policy {policy!r}")
    assert "OnlineSnapshots(" in g.source and "online_schedule(" in g.source
    report = srcgrad.saved(settle, x, policy=policy)
    snapshots = next(v for v in report if v.kind == "snapshots")
    assert snapshots.entries <= (16 if policy == "sqrt" else 3)
    assert sum(v.nbytes for v in report if v.kind == "tape") == 0


def test_a_pullback_can_be_called_more_than_once():
    """Tapes are popped, snapshots freed and elements restored by the adjoint sweep:
    each call of the pullback works on its own copy of the residuals."""
    def stepper(x):
        out = np.zeros(3)
        for i in range(6):
            x = np.sin(x) * 1.1
            out[i % 3] += np.sum(x)
        return out

    x = np.linspace(0.1, 0.5, 4)
    for policy in ["save", "sqrt", ("revolve", 2)]:
        value, pullback = srcgrad.vjp(stepper, x, policy=policy)
        assert_bit_identical(value, stepper(x), f"stepper, policy {policy!r}")
        u1, u2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 2.0, 1.0])
        a1, = pullback(u1)
        a2, = pullback(u2)
        b1, = pullback(u1)
        np.testing.assert_array_equal(a1, b1)
        _, fresh = srcgrad.vjp(stepper, x, policy=policy)
        assert_close(a2, fresh(u2)[0], rtol=1e-12)


# -- translation validation: every policy computes the function's own value ------------

def swaps_and_updates(x, w):
    """A loop that swaps, updates an array in place and rebinds: each policy saves,
    recomputes or reruns different parts of it."""
    a, b = x * 1.0, w * 0.5
    out = np.zeros(3)
    for i in range(7):
        a, b = b, np.sin(a) + 0.1 * b
        out[i % 3] += np.sum(a * b)
        if np.sum(a) > 0.0:
            b = b * 0.9
    return np.sum(out ** 2) + np.sum(np.tanh(a @ np.ones((4, 4))) * b)


def swap_in_a_loop(x, y):
    """A swap of two names in a loop, then an update of one of them.  Regression: the
    forward sweep compiled ``x, y = y, x`` as ``x = y; y = x`` (the temporary holding
    the old ``x`` propagated away), so every policy's value was wrong (for
    x = [1, 2, 3], y = [0.5, -1, 4]: 25.875 instead of 53.15625)."""
    for i in range(4):
        x, y = y, x
        x = x * 1.5
    return np.sum(x * y)


def _inputs(name):
    rng = np.random.default_rng(3)
    if name == "ode":
        return (np.linspace(0.1, 1.0, 4), 12)
    if name == "settle":
        return (np.linspace(0.1, 1.0, 5),)
    if name == "rnn":
        return (rng.standard_normal((4, 4)) * 0.3, rng.standard_normal((9, 4)), np.zeros(4))
    if name == "uses_a_checkpointed_block":
        return (rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3))
    return (rng.standard_normal(4), rng.standard_normal(4))


EVERY_POLICY = ["save", "recompute", "save_products", "sqrt", ("revolve", 1), ("revolve", 3),
                lambda c: "recompute" if c.primitive in ("np.sin", "np.tanh") else "save"]


@pytest.mark.parametrize("policy", EVERY_POLICY, ids=["save", "recompute", "save_products",
                                                      "sqrt", "revolve-1", "revolve-3",
                                                      "callable"])
@pytest.mark.parametrize("fn", [ode, settle, rnn, uses_a_checkpointed_block, swaps_and_updates,
                                swap_in_a_loop],
                         ids=lambda f: f.__name__)
def test_every_policy_gives_the_functions_own_value(fn, policy):
    args = _inputs(fn.__name__)
    expected = fn(*args)
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    value, grads = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy)(*args)
    assert_bit_identical(value, expected, f"{fn.__name__}: value_and_grad, policy {policy!r}")
    value, pullback = srcgrad.vjp(fn, *args, policy=policy)
    assert_bit_identical(value, expected, f"{fn.__name__}: vjp, policy {policy!r}")
    reference = srcgrad.grad(fn, wrt=wrt)(*args)
    for g, r in zip(grads, reference):
        assert_close(g, r, rtol=1e-10, atol=1e-12, what=f"{fn.__name__}, policy {policy!r}")
