"""The command line, run as a subprocess the way a user runs it."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import srcgrad

ROOT = Path(__file__).resolve().parents[2]

MODEL = textwrap.dedent("""
    import numpy as np

    def loss(W, b):
        return np.sum(np.tanh(W @ b) ** 2)

    def wrong(x):
        try:
            pass
        except ValueError:
            pass
        return x

    def wrong_free(x):
        return np.sum(x * UNDEFINED_NAME)
""")


def run(*args, cwd=None, env=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "srcgrad", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120, check=False)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def test_show_prints_generated_code(model):
    result = run("show", f"{model}:loss", "--wrt", "0,1")
    assert result.returncode == 0, result.stderr
    assert "def grad_loss(W, b):" in result.stdout
    assert "# Adjoint sweep" in result.stdout


def test_show_vjp_mode(model):
    result = run("show", f"{model}:loss", "--mode", "vjp")
    assert result.returncode == 0, result.stderr
    assert "def loss_forward(W, b):" in result.stdout


def test_show_forward_mode_prints_tangent_code(model):
    result = run("show", f"{model}:loss", "--mode", "forward", "--wrt", "0")
    assert result.returncode == 0, result.stderr
    assert "def jvp_loss(" in result.stdout and "d_" in result.stdout
    assert run("show", f"{model}:loss", "--mode", "reverse").stdout == \
        run("show", f"{model}:loss").stdout


def test_check_passes_on_a_correct_gradient(model):
    result = run("check", f"{model}:loss", "--shapes", "3x4,4")
    assert result.returncode == 0, result.stderr
    assert "gradcheck passed" in result.stdout


def test_rejected_function_exits_1_with_location(model):
    result = run("show", f"{model}:wrong")
    assert result.returncode == 1
    assert "UnsupportedSyntaxError" in result.stderr and "line 8" in result.stderr


def test_usage_errors_exit_2(model):
    assert run("show", f"{model}:missing").returncode == 2
    assert run("show", "no_colon").returncode == 2
    assert run("check", f"{model}:loss", "--shapes", "3x4").returncode == 2
    assert run("frobnicate").returncode == 2


def test_export_writes_a_module_that_runs_without_srcgrad(model, tmp_path):
    out = tmp_path / "dloss.py"
    result = run("export", f"{model}:loss,wrong_free", "-o", str(out), "--wrt", "loss:0,1")
    assert result.returncode == 1 and "UnsupportedSyntaxError" not in result.stderr
    assert "'UNDEFINED_NAME'" in result.stderr and not out.exists()
    result = run("export", f"{model}:loss", "-o", str(out), "--wrt", "0,1",
                 "--mode", "value_and_grad")
    assert result.returncode == 0, result.stderr
    assert "value_and_grad_loss" in result.stdout
    script = ("import sys; sys.modules['srcgrad'] = None; sys.path.insert(0, sys.argv[1]);"
              "import numpy as np, dloss; W = np.ones((2, 3)); b = np.arange(3.0);"
              "v, (gW, gb) = dloss.value_and_grad_loss(W, b);"
              "t = np.tanh(W @ b); print(v, np.allclose(gW, np.outer(2 * t * (1 - t**2), b)))")
    check = subprocess.run([sys.executable, "-I", "-c", script, str(tmp_path)],
                           capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stderr
    assert check.stdout.split()[1] == "True"


def test_export_usage_errors(model, tmp_path):
    assert run("export", f"{model}:loss").returncode == 2          # no -o
    assert run("export", f"{model}:", "-o", str(tmp_path / "x.py")).returncode == 2
    assert run("export", f"{model}:nope", "-o", str(tmp_path / "x.py")).returncode == 2
    assert run("export", f"{model}:loss", "-o", str(tmp_path / "x.py"),
               "--mode", "vjp").returncode == 2


def test_cache_info_and_clear(model, tmp_path):
    env = {"SRCGRAD_CACHE_DIR": str(tmp_path / "cache")}
    assert run("show", f"{model}:loss", env=env).returncode == 0  # show does not cache
    assert run("check", f"{model}:loss", "--shapes", "3x4,4", env=env).returncode == 0
    info = run("cache", "info", env=env)
    assert info.returncode == 0, info.stderr
    assert f"directory: {tmp_path / 'cache'}" in info.stdout
    assert "entries:   1" in info.stdout
    cleared = run("cache", "clear", env=env)
    assert cleared.returncode == 0 and "removed 3 files" in cleared.stdout
    assert "entries:   0" in run("cache", "info", env=env).stdout
    off = run("cache", "info", env={"SRCGRAD_CACHE": "0"})
    assert off.returncode == 0 and "the disk cache is off" in off.stdout
    assert run("cache", "frobnicate", env=env).returncode == 2


# -- srcgrad check: what it measured, the shapes it used and where they came from ----------

CHECKED = textwrap.dedent("""
    from typing import Annotated

    import numpy as np

    import srcgrad

    def cut(x):
        return np.sum(srcgrad.stop_gradient(x) * x)

    def xent(logits, labels):
        z = logits - np.max(logits, axis=1, keepdims=True)
        return -np.sum(z[np.arange(3), labels])

    def vector(x):
        return np.tanh(x)

    def annotated(W: Annotated[np.ndarray, (2, 3)], s: float, n: int, eps=1e-3, k=2):
        return np.sum(W ** 2) * s * n + eps * k

    def with_defaults(x, W=np.ones((2, 3)), scale=0.5, mode="sum"):
        return np.sum(np.tanh(W @ x)) * scale

    def flat(x):
        return np.sum(x * 0.0) + 1.0
""")


@pytest.fixture
def checked(tmp_path):
    path = tmp_path / "checked.py"
    path.write_text(CHECKED)
    return path


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_check_prints_the_worst_errors_where_they_are_the_shapes_and_the_seed(model):
    result = run("check", f"{model}:loss", "--shapes", "3x4,4", "--seed", "3")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"gradcheck passed: loss(W, b) with respect to W, b ({model}, line 4)")
    assert "inputs:   W: 3x4, b: 4 (from --shapes)\n" in out
    assert "random, uniform in [0.5, 1.5), --seed 3" in out
    assert "checked:  16 elements against central differences (eps 1e-06),\n" \
        "            and a dot-product test per argument (agreeing to " in out
    for kind in ("absolute", "relative"):
        line = next(line for line in out.splitlines() if f"worst {kind} error:" in line)
        error, where = line.split(": ")[1].split(" at ")
        assert float(error) < 1e-5 and where.split("[")[0] in ("W", "b") and "numeric" in line
    assert "tolerance: |analytic - numeric| <= 1e-08 + 1e-05 * |numeric|" in out
    again = run("check", f"{model}:loss", "--shapes", "3x4,4", "--seed", "3")
    assert again.stdout == out  # the seed reproduces the inputs, so the measurement
    other = run("check", f"{model}:loss", "--shapes", "3x4,4", "--seed", "4")
    assert other.returncode == 0 and other.stdout != out and "--seed 4" in other.stdout


def test_check_names_the_worst_element_of_a_wrong_gradient(checked):
    """stop_gradient makes srcgrad's gradient of sum(x * x) x where finite differences
    give 2x: the absolute error is x itself, largest at x's largest element, which the
    documented inputs (uniform in [0.5, 1.5) from the seed) let the test find."""
    result = run("check", f"{checked}:cut", "--shapes", "2x3", "--seed", "5")
    assert result.returncode == 1
    x = np.random.default_rng(5).uniform(0.5, 1.5, (2, 3))
    i, j = np.unravel_index(np.argmax(x), x.shape)
    assert result.stdout.startswith("gradcheck FAILED: cut(x) with respect to x")
    assert f"worst absolute error: {x.max():.2e} at x[{i}, {j}] (analytic {x.max():.10g}" in \
        result.stdout
    assert "worst relative error: 5.00e-01 at x[" in result.stdout
    assert ("srcgrad: GradcheckError: gradient of cut with respect to argument 0 (x) "
            f"disagrees with finite differences at element ({i}, {j}): analytic "
            f"{float(x[i, j])!r}") in result.stderr


def test_check_infers_shapes_from_defaults_and_annotations(checked, tmp_path):
    for path in (checked, tmp_path / "postponed.py"):
        if path != checked:  # annotations as strings: `from __future__ import annotations`
            path.write_text("from __future__ import annotations\n" + CHECKED)
        result = run("check", f"{path}:annotated")
        assert result.returncode == 0, result.stderr
        assert ("inputs:   W: 2x3, s: a float (from its annotation); "
                "n = 3 (guessed for an int without a default, held fixed); eps: a float "
                "(from its default); k = 2 (its default, held fixed)") in result.stdout
        assert "with respect to W, s, eps" in result.stdout
        assert "guessed:  " not in result.stdout  # every shape is known
    # --shapes may leave out the last arguments where a default or annotation gives them
    result = run("check", f"{checked}:annotated", "--shapes", "4x1")
    assert result.returncode == 0, result.stderr
    assert "W: 4x1 (from --shapes); s: a float (from its annotation)" in result.stdout


def test_check_takes_shapes_from_float_defaults_and_holds_other_defaults_fixed(checked):
    result = run("check", f"{checked}:with_defaults", "--shapes", "3")
    assert result.returncode == 0, result.stderr
    assert ("inputs:   x: 3 (from --shapes); W: 2x3, scale: a float (from its default); "
            "mode = 'sum' (its default, held fixed)\n") in result.stdout
    assert "with respect to x, W, scale (" in result.stdout


def test_check_of_a_zero_gradient_measures_no_relative_error(checked):
    result = run("check", f"{checked}:flat", "--shapes", "2")
    assert result.returncode == 0, result.stderr
    assert "worst absolute error: 0.00e+00 at x[0] (analytic 0, numeric 0)" in result.stdout
    assert ("worst relative error: none measured (every derivative is within atol 1e-08 of "
            "zero)") in result.stdout


def test_check_without_shapes_guesses_and_says_so(model):
    result = run("check", f"{model}:loss")
    assert result.returncode == 0, result.stderr
    assert "inputs:   W: 3, b: 3 (guessed)\n" in result.stdout
    assert ("guessed:  W, b (no --shapes, default or annotation gives their shape); "
            "choose with --shapes 3x4,4, one per argument") in result.stdout


def test_check_without_shapes_a_function_cannot_take_names_its_line_and_what_to_pass(checked):
    result = run("check", f"{checked}:xent")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    first, failing = line_of(checked, "def xent"), line_of(checked, "np.max(logits")
    assert result.stderr.startswith(
        f"srcgrad: SrcGradError: xent(logits, labels) ({checked}, line {first}) fails on the "
        f"inputs srcgrad check made for it:\n"
        f"  inputs: logits: 3, labels: 3 (guessed)\n"
        f"  AxisError: axis 1 is out of bounds for array of dimension 1\n"
        f"srcgrad check guessed logits, labels: no --shapes, default or annotation gives "
        f"their shape.  Pass the shapes xent takes with --shapes, one per argument, e.g. "
        f"--shapes 3x4,4 (3x4: a 3-by-4 array, 4: a vector of 4, s: a float)")
    assert (f'  File "{checked}", line {failing}, column 18\n'
            f'    z = logits - np.max(logits, axis=1, keepdims=True)\n'
            f'                 ^') in result.stderr


def test_check_with_shapes_the_function_cannot_take_names_its_line(model):
    result = run("check", f"{model}:loss", "--shapes", "3x4,5")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(
        f"srcgrad: SrcGradError: loss(W, b) ({model}, line 4) fails on the inputs srcgrad "
        f"check made for it:\n  inputs: W: 3x4, b: 5 (from --shapes)\n"
        f"  ValueError: matmul: Input operand 1 has a mismatch")
    assert "guessed" not in result.stderr and "e.g. --shapes 3x4,4" in result.stderr
    assert (f'  File "{model}", line 5, column 27\n'
            f'    return np.sum(np.tanh(W @ b) ** 2)\n'
            f'                          ^') in result.stderr


def test_check_of_a_function_with_a_non_scalar_output(checked):
    result = run("check", f"{checked}:vector", "--shapes", "2x2")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (f"srcgrad: SrcGradError: vector(x) ({checked}, line {line_of(checked, 'def vector')})"
            f" returns an array of shape (2, 2) on the inputs srcgrad check made for it, and "
            f"gradcheck needs a scalar output:\n  inputs: x: 2x2 (from --shapes)") in \
        result.stderr


def test_check_usage_errors_say_what_is_wrong(model, checked):
    def error(*args):
        result = run("check", *args)
        assert result.returncode == 2, result.stdout + result.stderr
        return result.stderr.strip()

    assert error(f"{model}:loss", "--shapes", "3x4") == (
        "srcgrad: error: --shapes gives 1 shape for loss's 2 arguments (W, b); give one per "
        "argument (the last ones may be left out where a default or an annotation gives "
        "their shape)")
    assert error(f"{model}:loss", "--shapes", "3x4,4,5") == \
        "srcgrad: error: --shapes gives 3 shapes for loss's 2 arguments (W, b)"
    assert error(f"{model}:loss", "--shapes", "3xfour,4") == \
        "srcgrad: error: --shapes takes shapes such as 3x4,4,s; got '3xfour'"
    assert error(f"{model}:loss", "--wrt", "2") == (
        "srcgrad: error: --wrt 2: there is no argument 2; loss's arguments are W, b "
        "(positions count from 0)")
    assert error(f"{model}:loss", "--wrt", "V") == \
        "srcgrad: error: --wrt V: there is no argument 'V'; loss's arguments are W, b"
    assert error(f"{model}:loss", "--wrt", "0,W") == \
        "srcgrad: error: --wrt 0,W names argument W twice"
    assert error(f"{model}:loss", "--seed", "x").endswith("invalid int value: 'x'")


def test_check_and_show_take_argument_names_for_wrt(model, checked):
    result = run("check", f"{model}:loss", "--shapes", "3x4,4", "--wrt", "b")
    assert result.returncode == 0, result.stderr
    assert "with respect to b (" in result.stdout and "checked:  4 elements" in result.stdout
    assert run("show", f"{model}:loss", "--wrt", "W,b").stdout == \
        run("show", f"{model}:loss", "--wrt", "0,1").stdout


def test_help_describes_check_and_export():
    check = run("check", "--help").stdout
    assert "--seed" in check and "worst absolute and relative errors" in check
    assert "guess" in check and "Annotated[np.ndarray, (3, 4)]" in check
    export = " ".join(run("export", "--help").stdout.split())
    assert "--wrt loss:0,1,2,3 step:0" in export and "GradientError" in export


# -- srcgrad export: --wrt per function ---------------------------------------------------

TWO = textwrap.dedent("""
    import numpy as np

    def loss(W, b, x, y):
        return np.sum((np.tanh(x @ W + b) - y) ** 2)

    def step(w, lr=0.1):
        return np.sum(w ** 2) * lr
""")


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_export_takes_wrt_per_function(tmp_path):
    (tmp_path / "two.py").write_text(TWO)
    two = load(tmp_path / "two.py", "cli_two")
    rng = np.random.default_rng(0)
    W, b, x, y, w = (rng.standard_normal(s) for s in [(3, 2), 2, (4, 3), (4, 2), 5])
    for n, wrt in enumerate([["loss:0,1,2,3", "step:0"], ["loss:W,b,x,y", "step:w"]]):
        out = tmp_path / f"per_function_{n}.py"
        result = run("export", f"{tmp_path / 'two.py'}:loss,step", "--wrt", *wrt, "-o",
                     str(out))
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"wrote {out}: grad_loss, grad_step\n"
        text = out.read_text()
        assert "grad_loss: grad of loss (two.py, line 4) with respect to W, b, x, y" in text
        assert "grad_step: grad of step (two.py, line 7) with respect to w" in text
        exported = load(out, f"cli_per_function_{n}")
        for got, want in zip(exported.grad_loss(W, b, x, y),
                             srcgrad.grad(two.loss, wrt=(0, 1, 2, 3))(W, b, x, y)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(exported.grad_step(w), srcgrad.grad(two.step)(w))
    # the single form still gives every function the same positions; a name's own
    # --wrt overrides it, and --wrt may come before the file
    out = tmp_path / "mixed.py"
    result = run("export", "--wrt", "0", "loss:1", f"{tmp_path / 'two.py'}:loss,step", "-o",
                 str(out))
    assert result.returncode == 0, result.stderr
    assert "grad of loss (two.py, line 4) with respect to b\n" in out.read_text()
    assert "grad of step (two.py, line 7) with respect to w\n" in out.read_text()
    result = run("export", f"{tmp_path / 'two.py'}:loss,step", "--wrt", "0", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "grad of loss (two.py, line 4) with respect to W\n" in out.read_text()


def test_export_wrt_errors_name_the_function(tmp_path):
    (tmp_path / "two.py").write_text(TWO)
    target, out = f"{tmp_path / 'two.py'}:loss,step", str(tmp_path / "out.py")

    def error(*wrt):
        result = run("export", target, "-o", out, "--wrt", *wrt)
        assert result.returncode == 2, result.stdout + result.stderr
        return result.stderr.strip()

    assert error("lost:0") == \
        "srcgrad: error: --wrt lost:0: 'lost' is not one of the functions exported (loss, step)"
    assert error("loss:0", "loss:1") == "srcgrad: error: --wrt gives the positions of loss twice"
    assert error("0", "1") == (
        "srcgrad: error: --wrt gives the positions of every function twice (0 and 1); name "
        "the function for one of them, as in --wrt loss:1")
    assert error("step:2") == (
        "srcgrad: error: --wrt step:2: there is no argument 2; step's arguments are w, lr "
        "(positions count from 0)")
    assert error("step:v") == \
        "srcgrad: error: --wrt step:v: there is no argument 'v'; step's arguments are w, lr"
    assert error("2") == (  # the single form, checked against each function
        "srcgrad: error: --wrt 2: there is no argument 2; step's arguments are w, lr "
        "(positions count from 0)")
    assert not (tmp_path / "out.py").exists()


def test_the_readme_shows_what_check_prints(tmp_path):
    """README's Command line section: its `srcgrad check` line, run on the tour's
    `loss` in model.py, prints the report shown there (numbers and the places of the
    worst errors aside, which depend on the machine's last bits)."""
    readme = (ROOT / "README.md").read_text()
    tour = readme[readme.index("def loss(W, b, x, y):"):]
    (tmp_path / "model.py").write_text("import numpy as np\n\n\n" +
                                       tour[:tour.index("\n\n")] + "\n")
    section = readme[readme.index("## Command line"):]
    command = next(line for line in section.splitlines() if line.startswith("srcgrad check"))
    shown = section[section.index("```\ngradcheck passed") + 4:]
    shown = shown[:shown.index("```")]
    result = run(*command.partition("#")[0].split()[1:], cwd=tmp_path)
    assert result.returncode == 0, result.stderr

    def masked(text):
        text = re.sub(r"-?\d+\.\d+(e[-+]\d+)?", "N", text)
        return re.sub(r"\[\d+(, \d+)*\]", "[I]", text)

    assert masked(result.stdout) == masked(shown)


PARTS = textwrap.dedent("""
    import functools
    import numpy as np

    def base(W, x, k=2.0):
        return np.sum(np.tanh(W @ x)) * k

    part = functools.partial(base, np.eye(2), k=3.0)

    class Model:
        def __init__(self):
            self.W = np.eye(2)

        def loss(self, x):
            return np.sum(np.tanh(self.W @ x))
""")


def test_show_takes_a_partial_as_grad_does(tmp_path):
    """Review s36 R4-7: show refused a module-level functools.partial (rc 2, a
    message with a memory address) that check, export and explain take."""
    path = tmp_path / "parts.py"
    path.write_text(PARTS)
    for wrt in ("0", "x"):
        result = run("show", f"{path}:part", "--wrt", wrt)
        assert result.returncode == 0, result.stderr
        assert "def grad_base(W, x, k=2.0):" in result.stdout
        assert "Gradient of base with respect to x." in result.stdout
    result = run("show", f"{path}:part", "--mode", "forward")
    assert result.returncode == 0 and "def jvp_base(W, x, k, d_x):" in result.stdout


def test_check_of_a_method_says_it_cannot_make_self(tmp_path):
    path = tmp_path / "parts.py"
    path.write_text(PARTS)
    result = run("check", f"{path}:Model.loss")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("srcgrad: error: Model.loss is a method: srcgrad check ")
    assert "Model(...).loss(x)" in result.stderr and "AttributeError" not in result.stderr
