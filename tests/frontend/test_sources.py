"""Where people write functions: notebook cells, exec'd and importlib-loaded files,
the plain REPL.  srcgrad reads source through inspect/linecache, like tracebacks do."""

from __future__ import annotations

import importlib.util
import linecache
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import srcgrad
from srcgrad.frontend.parse import SourceNotFoundError

ROOT = Path(__file__).resolve().parents[2]

CELL = """import numpy as np

SCALE = 3.0

def cell_loss(x):
    y = np.tanh(x) * SCALE
    return np.sum(y ** 2)
"""


def expected(x, scale=3.0):
    return 2 * np.tanh(x) * scale ** 2 * (1 - np.tanh(x) ** 2)


def run_cell(filename: str, source: str = CELL) -> dict:
    """What IPython does with a cell: register its text in linecache, compile
    with the cell's pseudo file name, exec in the user namespace."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    return namespace


@pytest.mark.parametrize("filename", ["<ipython-input-3-0123456789ab>",
                                      "/tmp/ipykernel_4242/2718281828.py"])
def test_functions_defined_in_notebook_cells(filename):
    namespace = run_cell(filename)
    x = np.array([0.2, -0.4])
    g = srcgrad.grad(namespace["cell_loss"])
    np.testing.assert_allclose(g(x), expected(x))
    assert f"from cell_loss ({filename}, line 5)" in g.source


def test_errors_in_a_cell_point_at_the_cell_line():
    source = CELL.replace("return np.sum(y ** 2)", "return np.sum(y ** 2)\n    try:\n"
                                                   "        pass\n    finally:\n        pass")
    namespace = run_cell("<ipython-input-9-feedfacecafe>", source)
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(namespace["cell_loss"])(np.ones(2))
    assert info.value.filename == "<ipython-input-9-feedfacecafe>"
    assert info.value.lineno == 8 and info.value.source_line.strip() == "try:"


def test_a_redefined_cell_function_gets_its_new_gradient():
    first = run_cell("<ipython-input-4-aaaaaaaaaaaa>")
    second = run_cell("<ipython-input-5-bbbbbbbbbbbb>", CELL.replace("SCALE = 3.0", "SCALE = 5.0"))
    x = np.array([0.3])
    np.testing.assert_allclose(srcgrad.grad(first["cell_loss"])(x), expected(x))
    np.testing.assert_allclose(srcgrad.grad(second["cell_loss"])(x), expected(x, 5.0))


def test_modules_loaded_with_importlib_and_exec(tmp_path):
    path = tmp_path / "loaded_by_hand.py"
    path.write_text(CELL)
    spec = importlib.util.spec_from_file_location("some_name_not_on_the_path", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    namespace = {"__name__": "by_exec"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102
    x = np.array([0.5, 1.0])
    for fn in (module.cell_loss, namespace["cell_loss"]):
        np.testing.assert_allclose(srcgrad.grad(fn)(x), expected(x))


def test_a_function_typed_into_the_plain_repl_gives_a_clear_error():
    namespace = {}
    exec(compile(CELL, "<stdin>", "exec"), namespace)  # noqa: S102 - no linecache entry
    with pytest.raises(SourceNotFoundError, match="cannot find the source code of cell_loss"):
        srcgrad.grad(namespace["cell_loss"])(np.ones(2))


def test_the_real_repl(tmp_path):
    """``python -i`` reading from a pipe: the function has no source anywhere."""
    script = "import numpy as np, srcgrad\ndef f(x):\n    return np.sum(x)\n\n" \
             "try:\n    srcgrad.grad(f)(np.ones(2))\nexcept srcgrad.SrcGradError as e:\n" \
             "    print(type(e).__name__, e)\n\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT), SRCGRAD_CACHE_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "-i"], input=script, capture_output=True,
                            text=True, env=env, timeout=60, check=False)
    assert "SourceNotFoundError cannot find the source code of f" in result.stdout, \
        result.stdout + result.stderr


def test_a_string_after_the_return_with_lines_at_column_0(tmp_path):
    # review s37 D-4: the block was cut after the last instruction's line, in the
    # middle of the string ("unterminated triple-quoted string literal")
    path = tmp_path / "old_code_kept.py"
    path.write_text('import numpy as np\n\n\ndef loss(w):\n    l = np.sum(w ** 2)\n'
                    '    return l\n    """old version, kept for reference:\n'
                    'l = np.sum(np.abs(w))\n"""\n')
    spec = importlib.util.spec_from_file_location("old_code_kept", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.array([0.3, 0.5])
    np.testing.assert_allclose(srcgrad.grad(module.loss)(x), 2 * x)
