"""srcgrad.export under every policy and mode: checkpointed loops included.

A gradient made with policy "sqrt" or ("revolve", k) calls the checkpointing
schedules of srcgrad.runtime (checkpoint_schedule, online_schedule for a
while loop); the exported module must carry them like every other runtime
helper (found by review: export refused every such gradient).  Each exported
entry runs in a process started with ``-I -S`` whose sys.path holds only the
export's folder and NumPy's site-packages, so srcgrad cannot be imported; its
values are the function's own bit for bit and its gradients srcgrad's, which
are checked against central differences here.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from numeric import (
    POLICIES,
    assert_bit_identical,
    assert_close,
    jvp_fd,
    numeric_grad,
    pure,
)

import srcgrad
import srcgrad.runtime
from srcgrad.standalone import portable


def rnn(W, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h ** 2)


def relax(x):
    while np.max(np.abs(x)) > 0.1:  # a while loop: the online schedule
        x = 0.5 * np.sin(x) + 0.1 * x
    return np.sum(x ** 2)


def branchy(W, xs):
    s = 0.0
    for i in range(len(xs)):
        if s < 1.0:
            s = s + np.sum(np.sin(W @ xs[i]))
        else:
            s = s * 0.9 + np.sum(xs[i] * W[0])
    return s


def cell(W, h, x):
    return np.tanh(W @ h + x)


def with_helper(W, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = cell(W, h, x)
    return np.sum(h * h)


_rng = np.random.default_rng(7)
_W, _XS = 0.5 * _rng.normal(size=(3, 3)), _rng.normal(size=(6, 3))
CASES = [(rnn, (_W, _XS)), (relax, (np.array([1.0, -2.0, 0.5]),)), (branchy, (_W, _XS)),
         (with_helper, (_W, _XS))]

# Runs in the subprocess: only the export's folder and NumPy importable.
RUNNER = """
import importlib.util, pickle, sys
sys.path[:0] = sys.argv[1:3]
assert importlib.util.find_spec("srcgrad") is None
import exported
results = []
for kind, names, args in pickle.load(open(sys.argv[1] + "/calls.pkl", "rb")):
    if kind == "vjp":
        value, residuals = getattr(exported, names[0])(*args)
        results.append((value, getattr(exported, names[1])(residuals, 1.0)))
    else:
        results.append(getattr(exported, names[0])(*args))
pickle.dump(results, open(sys.argv[1] + "/results.pkl", "wb"))
"""


def run_isolated(directory: Path, calls):
    (directory / "calls.pkl").write_bytes(pickle.dumps(calls))
    site = str(Path(np.__file__).resolve().parents[1])
    result = subprocess.run([sys.executable, "-I", "-S", "-c", RUNNER, str(directory), site],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return pickle.loads((directory / "results.pkl").read_bytes())


def _flat(value) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(item for v in value for item in _flat(v))
    return (np.asarray(value),)


def test_every_policy_and_mode_exports_and_runs_without_srcgrad(tmp_path):
    functions, calls, checks = [], [], []
    for fn, args in CASES:
        grad_fd = numeric_grad(pure(fn), list(args), 0)
        value = pure(fn)(*args)
        for policy in POLICIES:
            functions.append(srcgrad.grad(fn, policy=policy))
            calls.append(("call", args))
            checks.append((fn, policy, "grad", lambda got, g=grad_fd: assert_close(
                got, g, rtol=1e-5, atol=1e-6)))
            functions.append(srcgrad.value_and_grad(fn, policy=policy))
            calls.append(("call", args))
            checks.append((fn, policy, "value_and_grad", lambda got, v=value, g=grad_fd: (
                assert_bit_identical(got[0], v, "value"),
                assert_close(got[1], g, rtol=1e-5, atol=1e-6))))
            _, pullback = srcgrad.vjp(fn, *args, policy=policy)
            functions.append(pullback)
            calls.append(("vjp", args))
            checks.append((fn, policy, "vjp", lambda got, v=value, g=grad_fd: (
                assert_bit_identical(got[0], v, "value"),
                assert_close(got[1][0], g, rtol=1e-5, atol=1e-6))))
        direction = np.ones_like(args[0])
        functions.append(srcgrad.jvp(fn, wrt=[0]))
        calls.append(("call", (*args, direction)))
        tangent = jvp_fd(pure(fn), list(args), [0], [direction])
        checks.append((fn, None, "jvp", lambda got, v=value, t=tangent: (
            assert_bit_identical(got[0], v, "value"),
            assert_close(got[1], t, rtol=1e-5, atol=1e-6))))
    module = tmp_path / "exported.py"
    entries = srcgrad.export(module, *functions)
    text = module.read_text()
    assert "import srcgrad" not in text and "srcgrad.runtime" not in text
    assert "def checkpoint_schedule(" in text and "def online_schedule(" in text
    ruff = Path(sys.executable).parent / "ruff"
    if ruff.exists():  # ruff's default rules, as test_export.py checks
        linted = subprocess.run([str(ruff), "check", "--isolated", "--no-cache", str(module)],
                                capture_output=True, text=True, timeout=60, check=False)
        assert linted.returncode == 0, linted.stdout + linted.stderr
    named, i = [], 0
    for kind, _ in calls:
        named.append(tuple(entries[i:i + (2 if kind == "vjp" else 1)]))
        i += len(named[-1])
    assert i == len(entries)
    results = run_isolated(tmp_path, [(kind, names, args) for (kind, args), names
                                      in zip(calls, named)])
    for (fn, policy, mode, check), got, function, (_, args) in zip(checks, results, functions,
                                                                   calls):
        try:
            check(got)
            if mode != "vjp":  # the exported code is srcgrad's, bit for bit
                assert_bit_identical(_flat(got), _flat(function(*args)), "srcgrad's result")
        except AssertionError as error:
            raise AssertionError(f"{fn.__name__}, {mode}, policy {policy!r}: {error}") from None


def test_every_runtime_helper_can_be_copied():
    """Each helper srcgrad.runtime offers generated code is copied with what it
    uses, in one namespace: two private helpers of one name (steps.py and
    schedules.py each had a _split) are refused, not silently mixed up."""
    names = [n for n in dir(srcgrad.runtime) if not n.startswith("_")
             and isinstance(getattr(srcgrad.runtime, n), (types.FunctionType, type))]
    definitions, imports, defined = portable.helpers(names)
    assert set(names) <= set(defined)
    namespace: dict = {}
    source = "".join(f"import {m} as {a}\n" for a, m in imports.items()) + "\n".join(definitions)
    exec(compile(source, "<exported helpers>", "exec"), namespace)  # noqa: S102
    for name in names:
        assert callable(namespace[name]), name


@pytest.mark.parametrize("policy", ["sqrt", ("revolve", 2)])
def test_the_exported_schedules_are_srcgrad_s(policy):
    definitions, imports, _ = portable.helpers({"checkpoint_schedule"})
    namespace: dict = {}
    exec("".join(f"import {m} as {a}\n" for a, m in imports.items())  # noqa: S102
         + "\n".join(definitions), namespace)
    snapshots = policy[1] if isinstance(policy, tuple) else None
    name = policy[0] if isinstance(policy, tuple) else policy
    for n in (0, 1, 5, 17):
        ours = namespace["checkpoint_schedule"](n, name, snapshots)
        theirs = srcgrad.runtime.checkpoint_schedule(n, name, snapshots)
        assert ours[0] == theirs[0] and list(ours[1]) == list(theirs[1])
