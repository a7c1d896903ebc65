"""One-line errors, no traceback, for a user's file that does not parse and an
export path that cannot be written (outside tester T1 #13): ``srcgrad show`` on
a file with a syntax error printed Python's traceback, and ``export`` to a
missing folder raised FileNotFoundError naming a temporary file the user never
chose (``/nonexistent/dir/.tmp-n7iilq7w.py``).  Now ``srcgrad: error:
FILE:LINE:COL: syntax error: ...`` and a SrcGradError naming the output path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import SrcGradError

ROOT = Path(__file__).resolve().parents[2]


def run(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT), SRCGRAD_CACHE="0")
    return subprocess.run([sys.executable, "-m", "srcgrad", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120, check=False)


def test_show_on_a_file_with_a_syntax_error_says_where_in_one_line(tmp_path):
    (tmp_path / "broken.py").write_text("def broken(x:\n  return x\n")
    result = run("show", "broken.py:broken", cwd=tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("srcgrad: error: "), result.stderr
    assert "broken.py:1:" in lines[0] and "syntax error" in lines[0], lines[0]


def test_export_command_to_a_missing_folder_names_the_path(tmp_path):
    (tmp_path / "sq.py").write_text("import numpy as np\ndef sq(x):\n    return np.sum(x ** 2)\n")
    out = tmp_path / "missing" / "x.py"
    result = run("export", "sq.py:sq", "-o", str(out), cwd=tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and ".tmp-" not in result.stderr, result.stderr
    assert str(out) in result.stderr and "SrcGradError" in result.stderr, result.stderr


def sq(x):
    return np.sum(x ** 2)


def test_export_to_a_missing_folder_raises_a_srcgrad_error(tmp_path):
    out = tmp_path / "missing" / "x.py"
    with pytest.raises(SrcGradError) as info:
        srcgrad.export(str(out), srcgrad.grad(sq))
    assert str(out) in str(info.value) and ".tmp-" not in str(info.value)
    assert not out.parent.exists()


def test_export_onto_a_folder_raises_a_srcgrad_error_and_leaves_nothing(tmp_path):
    with pytest.raises(SrcGradError) as info:
        srcgrad.export(str(tmp_path), srcgrad.grad(sq))
    assert str(tmp_path) in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_export_still_writes_where_it_can(tmp_path):
    out = tmp_path / "g.py"
    srcgrad.export(str(out), srcgrad.grad(sq))
    assert "def grad_sq" in out.read_text()
