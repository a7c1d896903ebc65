"""srcgrad.export: standalone modules that reproduce the gradients without srcgrad.

Exported modules are imported in a subprocess started with ``-I`` (no
PYTHONPATH, no user site) in which ``import srcgrad`` fails, and must give the
same gradients as srcgrad, and values that are the functions' own bit for bit;
they must also compile and pass ruff's default rules.
"""

from __future__ import annotations

import importlib.util
import json
import math
import pickle
import py_compile
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from corpus import CORPUS
from numeric import assert_bit_identical, assert_close, float_positions, pure

import srcgrad
from srcgrad.standalone import portable

# Runs in the subprocess: no srcgrad; load the module, call its entries, pickle results.
RUNNER = """
import pickle, sys
sys.modules["srcgrad"] = None  # even an installed srcgrad cannot be imported
sys.path.insert(0, sys.argv[1])
import exported
calls = pickle.load(open(sys.argv[2], "rb"))
results = [getattr(exported, name)(*args) for name, args in calls]
pickle.dump(results, open(sys.argv[3], "wb"))
"""


def run_without_srcgrad(module: Path, calls):
    """Call ``(entry name, args)`` pairs of ``module`` in a process without srcgrad."""
    directory = module.parent
    (directory / "calls.pkl").write_bytes(pickle.dumps(calls))
    result = subprocess.run([sys.executable, "-I", "-c", RUNNER, str(directory),
                             str(directory / "calls.pkl"), str(directory / "results.pkl")],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return pickle.loads((directory / "results.pkl").read_bytes())


def ruff():
    local = Path(sys.executable).parent / "ruff"
    return str(local) if local.exists() else shutil.which("ruff")


def lint(path: Path) -> None:
    py_compile.compile(str(path), doraise=True)
    tool = ruff()
    if tool is None:
        return
    result = subprocess.run([tool, "check", "--isolated", "--no-cache", str(path)],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def load_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return isinstance(value, (np.ndarray, float, int))


def test_the_corpus_round_trips_through_one_exported_module(tmp_path):
    """Every corpus function's value_and_grad, exported: in a process without srcgrad
    its value is the function's own, bit for bit, and its gradients srcgrad's."""
    gradients, calls, expected, values, names = [], [], [], [], []
    for case in CORPUS:
        args = case.make_args(np.random.default_rng(0))
        wrt = float_positions(args)
        if not wrt or not _plain(args):
            continue
        g = srcgrad.value_and_grad(case.fn, wrt=wrt)
        try:
            _, value = g(*args)
            srcgrad.export(tmp_path / "probe.py", g)
        except srcgrad.SrcGradError:
            continue  # not differentiable by grad, or it binds an object
        gradients.append(g)
        calls.append(args)
        expected.append(value)
        values.append(pure(case.fn)(*args))
        names.append(case.name)
    assert len(gradients) >= 30
    module = tmp_path / "exported.py"
    entries = srcgrad.export(module, *gradients)
    assert len(entries) == len(gradients) == len(set(entries))
    lint(module)
    text = module.read_text()
    assert "srcgrad.runtime" not in text and "import srcgrad" not in text
    results = run_without_srcgrad(module, list(zip(entries, calls)))
    for name, entry, got, want, value in zip(names, entries, results, expected, values):
        assert_bit_identical(got[0], value, f"{name}: the exported {entry}")
        for g, w in zip(got[1], want):
            assert_close(g, w, rtol=1e-12, atol=1e-14, what=entry)


MODULE_A = """
import numpy as np
from numpy.linalg import norm
from math import sqrt

W = np.array([[1.0, 2.0], [3.0, float("nan")]])[:, :1]
OFFSET = (1.5, -2.0)
TABLE = {"k": 2}


def shared(x):
    return np.tanh(x) * TABLE["k"]


def loss(x):
    return np.sum(shared(x) * W[:, 0]) + norm(x) * sqrt(OFFSET[0])
"""

MODULE_B = """
import numpy as np

W = 3.0


def shared(x):
    return np.sin(x) * W


def loss(x):
    return np.sum(shared(x) ** 2)


def outputs(x):
    return np.tanh(x) * W
"""


@pytest.fixture
def two_modules(tmp_path):
    (tmp_path / "a.py").write_text(MODULE_A)
    (tmp_path / "b.py").write_text(MODULE_B)
    return load_file(tmp_path / "a.py", "export_a"), load_file(tmp_path / "b.py", "export_b")


def test_clashing_names_are_renamed_and_vjp_pullbacks_exported(tmp_path, two_modules):
    a, b = two_modules
    x = np.array([0.3, -0.7])
    _, pullback = srcgrad.vjp(b.outputs, x)
    functions = [srcgrad.grad(a.loss), srcgrad.grad(b.loss), srcgrad.value_and_grad(b.loss),
                 pullback]
    out = tmp_path / "exported.py"
    entries = srcgrad.export(out, *functions)
    assert entries == ["grad_loss", "grad_loss_2", "value_and_grad_loss", "outputs_forward",
                       "outputs_backward"]
    lint(out)
    text = out.read_text()
    assert "def shared_forward(" in text and "def shared_forward_2(" in text
    assert text.count("def shared_backward_2(") == 1  # b's pair, shared by two gradients
    assert "W_2 = 3.0" in text and "np.linalg.norm" in text and "math.sqrt" in text
    assert "Generated from:" in text and f"srcgrad {srcgrad.__version__}" in text
    u = np.array([1.0, 2.0])
    calls = [("grad_loss", (x,)), ("grad_loss_2", (x,)), ("value_and_grad_loss", (x,)),
             ("outputs_forward", (x,))]
    results = run_without_srcgrad(out, calls)
    assert_close(results[0], srcgrad.grad(a.loss)(x), rtol=1e-12)
    assert_close(results[1], srcgrad.grad(b.loss)(x), rtol=1e-12)
    assert_bit_identical(results[2][0], b.loss(x), "the exported value_and_grad_loss")
    value, residuals = results[3]
    assert_bit_identical(value, b.outputs(x), "the exported outputs_forward")
    exported = load_file(out, "exported_here")
    assert_close(exported.outputs_backward(residuals, u)[0], pullback(u)[0], rtol=1e-12)


def test_values_are_written_as_literals():
    literal = portable.literal
    for value in [1.5, -0.0, 3, True, None, "s", (1.0,), [1, 2.5], {"a": (1, 2)},
                  np.float32(2.5), np.arange(6.0).reshape(2, 3), np.array([1, 2], np.int32),
                  np.array(4.0), np.float64(math.pi)]:
        needs = set()
        text = literal(value, needs)
        back = eval(text, {"np": np, "math": math})
        if isinstance(value, np.ndarray):
            assert back.dtype == value.dtype and np.array_equal(back, value)
        else:
            assert back == value and type(back) is type(value)
    nan = eval(literal(float("nan")))
    assert math.isnan(nan) and eval(literal(-math.inf)) == -math.inf
    assert literal(np.tanh) == "np.tanh" and literal(np.linalg.inv) == "np.linalg.inv"


def test_objects_a_module_cannot_reproduce_are_named_in_the_error(tmp_path):
    source = textwrap.dedent("""
        import numpy as np

        class Config:
            scale = 2.0

        CONFIG = Config()
        BIG = np.ones(20000)

        def count(n):
            return n + 1

        def loss(x):
            return np.sum(x * CONFIG.scale) * count(2) + np.sum(BIG[:2] * x)
    """)
    (tmp_path / "bad.py").write_text(source)
    bad = load_file(tmp_path / "bad.py", "export_bad")
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.export(tmp_path / "out.py", srcgrad.grad(bad.loss))
    message = str(info.value)
    assert "'CONFIG' is an object of type export_bad.Config" in message
    assert "'count' is the function export_bad.count" in message
    assert "'BIG' is an array of 20000 elements" in message
    assert not (tmp_path / "out.py").exists()


def test_export_rejects_what_is_not_a_gradient_function(tmp_path):
    with pytest.raises(srcgrad.SrcGradError, match="made by grad"):
        srcgrad.export(tmp_path / "out.py", np.sum)
    with pytest.raises(srcgrad.SrcGradError, match="at least one"):
        srcgrad.export(tmp_path / "out.py")


def test_helpers_are_copied_with_what_they_use():
    definitions, imports, defined = portable.helpers({"grad_like", "einsum_grads"})
    text = "\n".join(definitions)
    assert {"grad_like", "gradient_like", "einsum_grads", "_einsum_parse", "_LETTERS",
            "unbroadcast"} <= set(defined)
    assert imports["np"] == "numpy"
    assert "# noqa" not in text and "from ." not in text


# -- the exported module's own error class, with or without srcgrad -------------------

RAISING = """
import numpy as np


def refused(x):
    v = x * 1.0
    total = 0.0
    r = v[1:]
    for i in range(3):
        if i == 0:
            r = v[1:]
        total = total + np.sum(r * r)
        v[1] = 2.0  # <- refused at run time: r shares v's memory
    return total


def doubled(x):
    return x * 2.0
"""

# Runs in the subprocesses: call each entry, describe what it raises, as JSON.
RAISES = """
import importlib.util, json, sys
sys.path[:0] = sys.argv[1:]
import numpy as np
import exported
found = []
for name in ("grad_refused", "grad_doubled"):
    try:
        getattr(exported, name)(np.ones(3))
    except Exception as error:
        found.append([type(error).__module__, type(error).__qualname__, error.kind,
                      isinstance(error, ValueError), str(error), error.filename,
                      error.lineno, error.col, type(error) is exported.GradientError])
print(json.dumps({"srcgrad": importlib.util.find_spec("srcgrad") is not None,
                  "raised": found}))
"""


def test_the_exported_module_raises_its_own_error_with_or_without_srcgrad(tmp_path):
    (tmp_path / "raising.py").write_text(RAISING)
    raising = load_file(tmp_path / "raising.py", "export_raising")
    out = tmp_path / "exported.py"
    assert srcgrad.export(out, srcgrad.grad(raising.refused), srcgrad.grad(raising.doubled)) \
        == ["grad_refused", "grad_doubled"]
    lint(out)
    text = out.read_text()
    assert "srcgrad.errors" not in text and "import srcgrad" not in text
    assert "from srcgrad" not in text and "class GradientError(ValueError):" in text
    assert '__all__ = ["GradientError", "grad_doubled", "grad_refused"]' in text
    root = str(Path(srcgrad.__file__).resolve().parents[1])
    site = str(Path(np.__file__).resolve().parents[1])  # numpy alone: no .pth files read
    runs = {}
    for label, command in [
            ("with srcgrad", [sys.executable, "-c", RAISES, str(tmp_path), root]),
            ("without srcgrad", [sys.executable, "-I", "-S", "-c", RAISES, str(tmp_path),
                                 site])]:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120,
                                check=False)
        assert result.returncode == 0, result.stderr
        runs[label] = json.loads(result.stdout)
    assert runs["with srcgrad"]["srcgrad"] and not runs["without srcgrad"]["srcgrad"]
    assert runs["with srcgrad"]["raised"] == runs["without srcgrad"]["raised"]
    refused, doubled = runs["without srcgrad"]["raised"]
    # srcgrad's own errors for the same calls: same message, same location
    with pytest.raises(srcgrad.AliasedUpdateError) as aliased:
        srcgrad.grad(raising.refused)(np.ones(3))
    with pytest.raises(srcgrad.NonDifferentiableError) as scalar:
        srcgrad.grad(raising.doubled)(np.ones(3))
    line = RAISING.splitlines().index("        v[1] = 2.0  # <- refused at run time: r shares "
                                      "v's memory") + 1
    assert refused == ["exported", "GradientError", "AliasedUpdateError", True,
                       str(aliased.value), str(tmp_path / "raising.py"), line, 8, True]
    assert str(aliased.value).endswith(f'line {line}, column 9\n'
                                       f'    v[1] = 2.0  # <- refused at run time: r shares '
                                       f"v's memory\n    ^")
    assert doubled == ["exported", "GradientError", "NonDifferentiableError", True,
                       str(scalar.value), None, None, None, True]
