"""Logging and f-strings in a differentiated function run as written, like print.

``log.debug("iter %d: w=%s", i, w)`` in a training loop, ``logging.info(...)``
and ``warnings.warn(...)`` only read their arguments; they were refused as
calls that might change a value in place (outside tester), with a message
about changing the format string.  They now run with the forward values and
give no derivative, in both modes and under every policy; a call of an
unknown object's method with a differentiated value stays refused.  f-strings
were refused outright (outside raise/assert); the frontend now rewrites each
into the equivalent ``str.format`` call (frontend/fstrings.py), which has no
derivative."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad

import srcgrad

log = logging.getLogger("srcgrad.tests.training")
X = np.arange(6.0).reshape(2, 3) / 6
W = np.array([0.5, -0.2, 0.1])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


def train(w):
    for i in range(3):
        w = w - 0.1 * X.T @ np.tanh(X @ w)
        log.debug("iter %d: w=%s", i, w)
        if np.sum(w) > 10.0:
            logging.warning("diverging: %.3f", np.sum(w))
    loss = np.sum(w ** 2)
    logging.info("loss %.3f", loss)
    return loss


def warned(w):
    s = np.sum(np.sin(w))
    if s < 100.0:
        warnings.warn(f"small sum {s:.2f}")
    return s * s


@pytest.mark.parametrize("policy", POLICIES)
def test_logging_runs_as_written(policy, caplog):
    with caplog.at_level(logging.DEBUG, logger="srcgrad.tests.training"):
        value, grad = srcgrad.value_and_grad(train, policy=policy)(W.copy())
    assert_bit_identical(value, train(W))
    assert_close(grad, numeric_grad(train, [W], 0), what="gradient")
    assert any("iter 2" in r.getMessage() for r in caplog.records)
    value, tangent = srcgrad.jvp(train, (W,), (np.ones(3),))
    assert_bit_identical(value, train(W))
    assert_close(tangent, numeric_grad(train, [W], 0) @ np.ones(3), what="tangent")


def test_warnings_warn_runs_as_written():
    with pytest.warns(UserWarning, match="small sum"):
        grad = srcgrad.grad(warned)(W)
    assert_close(grad, numeric_grad(warned, [W], 0), what="gradient")


def _report(i, s, width):  # a helper formatting with nested fields, conversions, {x=}
    return f"step {i}: {s:.{width}f} {s!r} {{literal}} {s=}"


def formatted(w, width=3):
    s = np.sum(np.sin(w))
    lines = []
    for i in range(2):
        s = s * 1.1 + w[i]
        lines.append(_report(i, s, width))
        print(f"{w[0]:>8.2f}|{'x'}|{s!s:>12}")
    if s > 100.0:
        raise ValueError(f"diverged at {s:.1f}")
    return s * s + len(lines[-1]) * 0.0


@pytest.mark.parametrize("policy", POLICIES)
def test_f_strings_run_as_written(policy, capsys):
    expected = formatted(W)
    python_printed = capsys.readouterr().out.splitlines()
    value, grad = srcgrad.value_and_grad(formatted, policy=policy)(W.copy())
    assert capsys.readouterr().out.splitlines()[:2] == python_printed  # the same text
    assert_bit_identical(value, expected)
    assert_close(grad, numeric_grad(formatted, [W], 0), what="gradient")
    value, tangent = srcgrad.jvp(formatted, (W,), (np.ones(3),))
    assert_bit_identical(value, expected)
    assert_close(tangent, numeric_grad(formatted, [W], 0) @ np.ones(3), what="tangent")
    step = 1e-5
    hvp = srcgrad.hvp(formatted)(W, np.ones(3))
    assert_close(hvp, (srcgrad.grad(formatted)(W + step) - srcgrad.grad(formatted)(W - step))
                 / (2 * step), what="hvp", rtol=1e-4)


def test_an_f_string_the_code_formats_is_python_s_text():
    s = np.float64(2.5)
    assert _report(1, s, 2) == "step 1: 2.50 np.float64(2.5) {literal} s=np.float64(2.5)"
    seen = []

    def hook(g):
        seen.append(g)
        return g

    def f(w):
        t = srcgrad.on_grad(w * 2.0, hook)
        return np.sum(t ** 2) + len(_report(0, np.sum(t), 1)) * 0.0
    srcgrad.grad(f)(W)
    assert len(seen) == 1


class _Kept(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


quiet = logging.getLogger("srcgrad.tests.steps")


def logged_steps(x):
    h = x
    for t in range(6):
        h = np.tanh(h * 1.1)
        quiet.info("step %d", t)
        print("step", t)
    return np.sum(h)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_checkpointed_loop_reports_each_step_once(policy, capsys):
    """The reruns of "sqrt" and "revolve" leave print and logging out, as Python
    reports each step once (review: log.info was emitted again by every rerun,
    12 and 20 records for Python's 6)."""
    kept = _Kept()
    quiet.addHandler(kept)
    quiet.setLevel(logging.INFO)
    try:
        srcgrad.grad(logged_steps, policy=policy)(W.copy())
    finally:
        quiet.removeHandler(kept)
    assert kept.messages == [f"step {t}" for t in range(6)]
    assert capsys.readouterr().out.splitlines() == [f"step {t}" for t in range(6)]
