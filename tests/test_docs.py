"""The docs and examples stay true: the generated list of supported operations
matches the registry, and the scripts in docs/ and examples/ run."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_supported_md_is_generated_from_the_current_registry():
    """Checked in a fresh process: rules that other tests register in this one
    (users' rules, which may replace built-in ones) must not count."""
    run("docs/gen_supported.py", "--check")


USERS_RULE = """
import sys
sys.argv = ["gen_supported.py"]
import importlib.util
import numpy as np
import srcgrad

class Opaque:
    def __call__(self, x):
        return np.log1p(np.exp(x))

def opaque_vjp(out, d_out, x):
    return d_out / (1.0 + np.exp(-x))

def opaque_jvp(out, x, d_x):
    return d_x / (1.0 + np.exp(-x))

opaque = Opaque()
srcgrad.register_vjp(opaque, opaque_vjp, name="opaque")
srcgrad.register_jvp(opaque, opaque_jvp, name="opaque")
spec = importlib.util.spec_from_file_location("gen_supported", "docs/gen_supported.py")
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)
text = gen.render()
assert "opaque" not in text, "a user's rule leaked into supported.md"
assert text == gen.OUT.read_text(encoding="utf-8"), "supported.md is out of date"
"""


def test_users_rules_are_left_out_of_the_supported_list():
    run("-c", USERS_RULE)


def test_the_supported_list_shows_forward_mode_per_operation():
    gen = _script("gen_supported")
    text = gen.render()
    assert "| operation | differentiated | other parameters | forward mode |" in text
    assert re.search(r"^\| `np\.tanh` \| x \| \| yes \|$", text, flags=re.MULTILINE)
    assert "with tangent rules" in text


def test_every_doc_link_points_at_an_existing_file():
    for doc in (ROOT / "docs").glob("*.md"):
        text = re.sub(r"```.*?```|`[^`]*`", "", doc.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"


def run(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                            cwd=ROOT, timeout=timeout, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_walkthrough_prints_every_stage():
    out = run("docs/walkthrough.py")
    for stage in ("frontend", "fence", "normalize", "analyze", "reverse", "optimize + emit"):
        assert f"=== {stage}" in out
    assert "def predict_forward(W, x):" in out


@pytest.mark.parametrize("script", [["examples/rnn_clipping.py", "--steps", "30"],
                                    ["examples/export_standalone.py"],
                                    ["examples/newton_logistic.py"],
                                    ["examples/dask_mlp.py", "--rows", "20000", "--chunk",
                                     "5000", "--steps", "2"]],
                         ids=["rnn_clipping", "export_standalone", "newton_logistic", "dask_mlp"])
def test_examples_run(script):
    out = run(*script)
    assert "gradcheck against finite differences: passed" in out or "agree to 1e-12" in out \
        or "matches the Hessian: True" in out


def test_the_debugging_chapter_runs_as_written():
    """docs/debugging.md's examples (anomaly mode, explain, on_grad sites) are a doctest."""
    import doctest
    result = doctest.testfile(str(ROOT / "docs" / "debugging.md"), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 10
