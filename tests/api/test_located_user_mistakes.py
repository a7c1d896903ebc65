"""User mistakes and common constructs an outside tester met as raw Python
errors from srcgrad's internals or generated code; each is now handled.

- ``d = dict.fromkeys(keys, 0.0)`` then ``d['a'] = x[0] * 2``: an
  AttributeError from the adjoint inliner (no rule to inline); the dict built
  from constants now differentiates (nothing flows back into it), and so does
  one built from a differentiated value (rules/dict_builders.py).
- an ``on_grad`` hook that returns None (a logging hook without
  ``return g``): a TypeError from the generated code; now GradientHookError at
  the ``on_grad`` line, naming the hook.
- ``vjp``'s pullback given a cotangent of the wrong shape: NumPy's
  ValueError from the backward sweep; now a SrcGradError, as ``jvp`` refuses a
  tangent of the wrong shape.
- ``grad(f)(x)`` with an argument missing: ``TypeError: grad_f() missing ...``
  naming srcgrad's function; now a SrcGradError naming ``f``.
- ``srcgrad show --policy revolve,3`` (or ``revolve:3``): refused as an
  unknown policy; now ``("revolve", 3)``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad

import srcgrad
from srcgrad.cli_inputs import parse_policy

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
X = np.array([0.5, -1.0, 2.0])


def from_keys(x):
    d = dict.fromkeys(["a", "b"], 0.0)
    d["a"] = x[0] * 2
    return d["a"] + d["b"] * x[1]


def from_keys_in_loop(x):
    total = 0.0
    for i in range(3):
        d = dict.fromkeys(("w", "v"), 1.0)
        d["w"] = np.sin(x[i]) * d["v"]
        total = total + helper_of_dict(d)
    return total


def helper_of_dict(d):
    return d["w"] ** 2 + d["v"]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn", [from_keys, from_keys_in_loop])
def test_dict_fromkeys_of_constants(fn, policy):
    value, g = srcgrad.value_and_grad(fn, policy=policy)(X)
    assert_bit_identical(value, fn(X))
    assert_close(g, numeric_grad(fn, (X,), 0), rtol=1e-6, atol=1e-8)
    tvalue, tangent = srcgrad.jvp(fn, (X,), (np.ones(3),))
    assert_bit_identical(tvalue, fn(X))
    assert_close(tangent, np.sum(g), rtol=1e-10)


def shared_value(x):
    d = dict.fromkeys(["a", "b"], x[0] * x[1])
    d["b"] = d["b"] + x[2]
    return d["a"] * d["b"] + sum(helper_of_dict(dict.fromkeys(("w", "v"), x[i])) for i in range(2))


@pytest.mark.parametrize("policy", POLICIES)
def test_dict_fromkeys_of_a_differentiated_value(policy):
    """Every key holds the same value: its cotangent is the sum of theirs."""
    value, g = srcgrad.value_and_grad(shared_value, policy=policy)(X)
    assert_bit_identical(value, shared_value(X))
    assert_close(g, numeric_grad(shared_value, (X,), 0), rtol=1e-6, atol=1e-8)
    _, tangent = srcgrad.jvp(shared_value, (X,), (np.array([0.3, -1.0, 2.0]),))
    assert_close(tangent, g @ np.array([0.3, -1.0, 2.0]), rtol=1e-10)


def log_norm(g):
    np.linalg.norm(g)  # forgot: return g


def halve(g):
    return 0.5 * g


def hooked_loop(x):
    for _ in range(2):
        x = srcgrad.on_grad(np.tanh(x) * 2.0, log_norm)
    return np.sum(x ** 2)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_hook_returning_none_is_refused_at_its_line(policy):
    with pytest.raises(srcgrad.GradientHookError) as info:
        srcgrad.grad(hooked_loop, policy=policy)(X)
    error = info.value
    assert "log_norm" in str(error) and "returned None" in str(error)
    assert error.lineno == hooked_loop.__code__.co_firstlineno + 2


def first_two(g):
    return g[:2]


def test_a_hook_returning_another_shape_is_refused():
    def f(x):
        return np.sum(srcgrad.on_grad(x * 2.0, first_two) ** 2)
    with pytest.raises(srcgrad.GradientHookError, match="shape"):
        srcgrad.grad(f)(X)


def test_lambda_and_def_hooks_still_work():
    def f(x):
        y = srcgrad.on_grad(x * 2.0, lambda g: g * 0.5)
        return np.sum(srcgrad.on_grad(y, halve) ** 2)
    assert_close(srcgrad.grad(f)(X), 0.25 * 2.0 * 2.0 * (2.0 * X), rtol=1e-12)


def two(x, y):
    return np.tanh(x) * y


def test_pullback_refuses_a_cotangent_of_the_wrong_shape():
    value, pullback = srcgrad.vjp(two, X, X)
    with pytest.raises(srcgrad.SrcGradError, match=r"cotangent of shape \(2,\) for an output of "
                                                   r"shape \(3,\)"):
        pullback(np.ones(2))
    d_x, _ = pullback(np.ones(3))  # the right shape still works, after a refused call
    assert_close(d_x, (1 - np.tanh(X) ** 2) * X, rtol=1e-12)
    assert_bit_identical(value, two(X, X))


def test_pullback_of_a_tuple_output_checks_each_part():
    def pair(x):
        return x * 2.0, np.sum(x)
    _, pullback = srcgrad.vjp(pair, X)
    with pytest.raises(srcgrad.SrcGradError, match="1 item"):
        pullback((np.ones(3),))
    with pytest.raises(srcgrad.SrcGradError, match=r"output\[0\] of shape \(3,\)"):
        pullback((np.ones(4), 1.0))
    assert_close(pullback((np.ones(3), 1.0))[0], np.full(3, 3.0))


@pytest.mark.parametrize("make", [srcgrad.grad, srcgrad.value_and_grad])
def test_a_missing_argument_names_the_users_function(make):
    with pytest.raises(srcgrad.SrcGradError, match=r"cannot call two .*missing a required "
                                                   r"argument: 'y'") as info:
        make(two)(X)
    assert "grad_two" not in str(info.value)
    with pytest.raises(srcgrad.SrcGradError, match="too many positional arguments"):
        make(two)(X, X, X)
    with pytest.raises(srcgrad.SrcGradError, match="cannot call two"):
        srcgrad.vjp(two, X)


def test_policy_option_parses_revolve_with_snapshots():
    assert parse_policy("revolve,3") == ("revolve", 3)
    assert parse_policy("revolve:2") == ("revolve", 2)
    assert parse_policy("sqrt") == "sqrt"
    for bad in ("revolve", "revolve,0", "fast", "save,2"):
        with pytest.raises(Exception, match="revolve,K"):
            parse_policy(bad)


def test_cli_show_with_revolve(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent("""
        import numpy as np

        def loop(x):
            for i in range(6):
                x = np.sin(x) * 1.1
            return np.sum(x)
    """))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for policy in ("revolve,3", "revolve:3"):
        result = subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{path}:loop",
                                 "--policy", policy], capture_output=True, text=True, env=env,
                                timeout=120, check=False)
        assert result.returncode == 0, result.stderr
        assert "policy ('revolve', 3)" in result.stdout
    result = subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{path}:loop",
                             "--policy", "revolve"], capture_output=True, text=True, env=env,
                            timeout=120, check=False)
    assert result.returncode == 2 and "revolve,K" in result.stderr
