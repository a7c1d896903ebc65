"""``srcgrad.explain`` and ``srcgrad explain``: where the gradient flows, where it
is cut (file, line, expression), what is saved; and the warning ``grad`` gives
once for an argument whose gradient is always zero (issue 18)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import srcgrad

ROOT = Path(__file__).resolve().parents[2]


def line_of(fn, text: str) -> int:
    """The file line of ``fn``'s first source line holding ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def rounded(x, y):
    r = np.round(x)
    return np.sum(r * y)


def cast(x, y):
    k = x.astype(int)
    return np.sum(k * y)


def stopped(x, y):
    s = srcgrad.stop_gradient(x)
    return np.sum(np.sin(s) * y)


def compared(x, y):
    if np.sum(x) > 0:
        return np.sum(y)
    return np.sum(2.0 * y)


def dead(x, y):
    t = x * 2.0
    return np.sum(y ** 2)


def unused(x, y):
    return np.sum(y)


def after_return(x, y):
    if np.sum(y) > 0:
        return np.sum(y)
    else:
        return np.sum(-y)
    return np.sum(x)


@pytest.mark.parametrize("fn, text, kind", [
    (rounded, "np.round(x)", "zero derivative"),
    (cast, "x.astype(int)", "int cast"),
    (stopped, "srcgrad.stop_gradient(x)", "stop_gradient"),
    (compared, "np.sum(x) > 0", "comparison"),
])
def test_a_cut_argument_is_reported_with_its_line_and_expression(fn, text, kind):
    report = srcgrad.explain(fn, wrt=(0, 1))
    x, y = report.arguments
    assert (x.name, x.flows, x.status) == ("x", False, "cut")
    assert y.flows and y.status == "flows"
    assert report.zero == ("x",)
    [cut] = x.cuts
    assert cut.lineno == line_of(fn, text)
    assert cut.expression == text
    assert cut.kind == kind
    assert cut.filename == __file__
    shown = str(report)
    assert f"{__file__}:{cut.lineno}: {text}" in shown
    assert "x: gradient always zero" in shown and "y: flows" in shown


def test_a_used_argument_flows():
    report = srcgrad.explain(rounded, wrt=1)
    [y] = report.arguments
    assert (y.name, y.position, y.flows, y.cuts) == ("y", 1, True, ())
    assert report.zero == ()


def test_an_int_cast_gives_the_zero_gradient_explain_reports():
    x, y = np.array([1.5, 2.5]), np.array([3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", srcgrad.ZeroGradientWarning)
        assert np.array_equal(srcgrad.grad(cast, wrt=0)(x, y), np.zeros(2))
        assert np.array_equal(srcgrad.grad(cast, wrt=1)(x, y), np.array([1.0, 2.0]))


@pytest.mark.parametrize("fn, status, line", [
    (dead, "dead", "t = x * 2.0"),
    (unused, "unused", None),
    (after_return, "unreachable", "return np.sum(x)"),
])
def test_arguments_that_never_reach_the_output(fn, status, line):
    x = srcgrad.explain(fn, wrt=(0, 1))["x"]
    assert not x.flows and x.status == status and x.cuts == ()
    if line is not None:
        assert x.uses[0][0] == line_of(fn, line)


def test_saved_values_are_listed_with_their_lines_and_sizes():
    def model(W, b):
        h = np.tanh(W @ b)
        return np.sum(h ** 2)

    report = srcgrad.explain(model, wrt=(0, 1))
    saved = {s.name: s for s in report.saved}
    assert "h" in saved and saved["h"].lineno == line_of(model, "np.tanh(W @ b)")
    assert "saved for the adjoint sweep" in str(report)
    sized = srcgrad.explain(model, np.ones((50, 3)), np.ones(3), wrt=(0, 1))
    assert all(s.nbytes is not None for s in sized.saved)
    assert [s.nbytes for s in sized.saved] == sorted((s.nbytes for s in sized.saved),
                                                     reverse=True)
    assert sized.saved[0].name == "W"


def test_grad_warns_once_per_function_and_argument():
    def f(x, y):
        return np.sum(np.round(x) * y)

    x = np.array([0.4, 1.6])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = srcgrad.grad(f, wrt=(0, 1))
        g(x, x)
        g(x, x)
        srcgrad.grad(f, wrt=0)(x, x)
        srcgrad.value_and_grad(f, wrt=(0, 1))(x, x)
        srcgrad.grad(f, wrt=1)(x, x)
    zero = [w for w in caught if issubclass(w.category, srcgrad.ZeroGradientWarning)]
    assert len(zero) == 1
    assert issubclass(srcgrad.ZeroGradientWarning, srcgrad.SrcGradWarning)
    assert issubclass(srcgrad.SrcGradWarning, UserWarning)
    message = str(zero[0].message)
    assert "f with respect to x is always zero" in message and "srcgrad.explain" in message
    assert zero[0].filename == __file__ and zero[0].lineno == line_of(f, "def f(x, y)")


def test_no_warning_for_a_gradient_that_flows():
    with warnings.catch_warnings():
        warnings.simplefilter("error", srcgrad.SrcGradWarning)
        srcgrad.grad(rounded, wrt=1)(np.ones(2), np.ones(2))


MODEL = textwrap.dedent("""\
    import numpy as np

    def loss(w, b, scale):
        k = np.round(scale)
        return np.sum(np.tanh(w * b) * k)
""")


def test_the_command_line(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "srcgrad", "explain", f"{path}:loss"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "w: flows" in out and "b: flows" in out
    assert "scale: gradient always zero" in out
    assert f"{path}:4: np.round(scale)" in out
    assert "saved for the adjoint sweep" in out
    done = subprocess.run([sys.executable, "-m", "srcgrad", "explain", f"{path}:loss",
                           "--wrt", "scale"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "w:" not in done.stdout and "scale: gradient always zero" in done.stdout


def cast_by_numpy_name(x, y):
    k = x.astype(np.int64)
    return np.sum(k * x * y)


def converted(x, y):
    k = np.asarray(x, dtype=np.uint8)
    return np.sum(k * x * y)


@pytest.mark.parametrize("fn", [cast_by_numpy_name, converted])
def test_integer_casts_spelled_with_numpys_names_cut_the_flow(fn):
    """``x.astype(np.int64)``, ``np.asarray(x, dtype=np.uint8)``: the cast
    part has no derivative (it passed the cotangent straight through)."""
    x, y = np.array([0.3, 1.7, 2.2]), np.array([1.0, 2.0, 3.0])
    want = np.floor(x) * y
    np.testing.assert_allclose(srcgrad.grad(fn)(x, y), want)
    np.testing.assert_allclose(srcgrad.jvp(fn, (x, y), (np.ones(3), np.zeros(3)))[1],
                               np.sum(want))
