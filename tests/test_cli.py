"""The command line, run as a subprocess the way a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

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
""")


def run(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "srcgrad", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120)


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
