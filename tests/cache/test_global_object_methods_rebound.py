"""A method of a global object's class rebound after compiling (reviewer R1,
findings R1-7): ``Scale2.__call__ = Scale.__call__`` with ``S_G`` a
``Scale2`` read by the function (``S_G(x)``), or ``Runner.run = _run_cos``
with ``RUNNER.run(x)``, kept the old generated code in the process: the
memory cache watched the global holding the object, not its class's method,
and the cache's survey did not look into a callable object at all.  The
survey now follows a callable user object to its class's ``__call__``
(cache/provenance.callable_object), and the memory cache watches the method
of an object's class it reached (api/compiled.py): the gradient made before
the rebinding, and a new one, compute the function's new value, bit for bit,
and its gradient; a second process after the edit too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad

import srcgrad


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k * x


class Scale2:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return np.sin(x) * self.k


class Runner:
    def run(self, x):
        return np.sin(x)


def _run_cos(self, x):
    return np.cos(x)


S_G = Scale2(2.0)
RUNNER = Runner()


def calls_a_global_object(x):  # R1's program
    return np.sum(S_G(x) * x)


def calls_a_global_objects_method(x):  # R1's second program
    return np.sum(RUNNER.run(x) * x)


def _helper(x):
    return S_G(x) ** 2


def calls_it_in_a_helper_and_a_loop(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(_helper(x) * x[i])
    return s


X = np.array([0.3, -0.7, 1.1])


def _check(fn, gradient):
    value, grad = gradient(X)
    assert_bit_identical(value, fn(X), fn.__name__)
    assert_close(grad, numeric_grad(fn, [X], 0), rtol=1e-6, atol=1e-8, what=fn.__name__)


@pytest.mark.parametrize("fn,cls,name,new", [
    (calls_a_global_object, Scale2, "__call__", Scale.__call__),
    (calls_it_in_a_helper_and_a_loop, Scale2, "__call__", Scale.__call__),
    (calls_a_global_objects_method, Runner, "run", _run_cos)],
    ids=["object", "helper_loop", "method"])
def test_a_rebound_method_regenerates_the_code(fn, cls, name, new, monkeypatch):
    for policy in ("save", ("revolve", 2)):
        gradient = srcgrad.value_and_grad(fn, policy=policy)
        _check(fn, gradient)
        with monkeypatch.context() as patch:
            patch.setattr(cls, name, new)
            _check(fn, gradient)  # the gradient made before
            _check(fn, srcgrad.value_and_grad(fn, policy=policy))
        _check(fn, gradient)  # and back
    value, tangent = srcgrad.jvp(fn, (X,), (np.ones(3),))
    with monkeypatch.context() as patch:
        patch.setattr(cls, name, new)
        value, tangent = srcgrad.jvp(fn, (X,), (np.ones(3),))
        assert_bit_identical(value, fn(X), "jvp")
        assert_close(tangent, np.sum(numeric_grad(fn, [X], 0)), rtol=1e-6, atol=1e-8,
                     what="jvp")


def test_an_unchanged_class_keeps_its_code():
    gradient = srcgrad.value_and_grad(calls_a_global_object)
    gradient(X)
    first = gradient._get()
    S_G.k = 3.0  # a field is read as the code runs: no new code
    try:
        _check(calls_a_global_object, gradient)
        assert gradient._get() is first
    finally:
        S_G.k = 2.0


MODULE = '''
import numpy as np


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return np.sin(x) * self.k * {k}


S = Scale(2.0)


def f(x):
    return np.sum(S(x) * x)
'''

CHILD = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import srcgrad, callmod
x = np.array([0.3, 0.5])
value, grad = srcgrad.value_and_grad(callmod.f)(x)
print(json.dumps([float(value), float(callmod.f(x))]))
'''


def test_an_edited_call_of_a_global_object_regenerates_the_code_in_a_new_process(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), SRCGRAD_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("SRCGRAD_CACHE", None)
    for k in (2.0, 7.0):
        (tmp_path / "callmod.py").write_text(MODULE.format(k=k))
        for stale in (tmp_path / "__pycache__").glob("*"):
            stale.unlink()
        result = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)],
                                capture_output=True, text=True, env=env, timeout=120,
                                check=False)
        assert result.returncode == 0, result.stderr
        value, want = json.loads(result.stdout.strip().splitlines()[-1])
        assert value == want, k
