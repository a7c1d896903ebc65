"""The command line, run as a subprocess the way a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
    result = run("export", f"{model}:loss,wrong_free", "-o", str(out), "--wrt", "0,1")
    assert result.returncode == 1 and "UnsupportedSyntaxError" not in result.stderr
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
