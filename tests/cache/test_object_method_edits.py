"""Code specialised on a user object passed as an argument is generated anew
when a method of the object's class is edited (outside tester T2, session 30,
#2): the disk cache keyed the code on the entry function and what it reaches
from its globals, not on the class whose method it inlines, so a second
process, the method edited in between, was served the old code (value 0.6
where the function now gives 2.1, no error).  The class of each object passed
is now a root of the cache's survey (cache/manifest.arguments), as a function
passed is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import srcgrad

ROOT = Path(__file__).resolve().parents[2]

MODULE = '''
import numpy as np
from dataclasses import dataclass


class M:
    def act(self, z):
        return z * {k}


@dataclass
class D:
    w: float

    def act(self, z):
        return z * self.w * {k}


def f_obj(x, m):
    return np.sum(m.act(x) ** 2)
'''

RUNNER = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import srcgrad, objmod
x = np.array([0.3, 0.5])
out = {}
for name, obj in (("plain", objmod.M()), ("dataclass", objmod.D(1.5))):
    value, grad = srcgrad.value_and_grad(objmod.f_obj)(x, obj)
    out[name] = [float(value), grad.tolist(), float(objmod.f_obj(x, obj))]
print(json.dumps(out))
'''


def write(directory: Path, k: float) -> None:
    (directory / "objmod.py").write_text(MODULE.format(k=k))
    for stale in (directory / "__pycache__").glob("*"):
        stale.unlink()  # the rewrite may keep the file's size and second


def run(directory: Path, cache_dir: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), SRCGRAD_CACHE_DIR=str(cache_dir))
    env.pop("SRCGRAD_CACHE", None)
    result = subprocess.run([sys.executable, "-c", RUNNER, str(directory)], capture_output=True,
                            text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_an_edited_method_of_an_object_passed_regenerates_the_code(tmp_path):
    x = np.array([0.3, 0.5])
    write(tmp_path, 2.0)
    run(tmp_path, tmp_path / "cache")
    write(tmp_path, 7.0)
    after = run(tmp_path, tmp_path / "cache")
    for name, scale in (("plain", 7.0), ("dataclass", 1.5 * 7.0)):
        value, grad, want = after[name]
        assert value == want, name  # bit for bit the edited function's value
        np.testing.assert_allclose(grad, 2 * scale * scale * x, rtol=1e-12, err_msg=name)


def test_an_unchanged_class_is_still_served_from_disk(tmp_path):
    write(tmp_path, 2.0)
    first = run(tmp_path, tmp_path / "cache")
    second = run(tmp_path, tmp_path / "cache")
    assert first == second


class Scaled:
    def act(self, z):
        return z * 2.0

    @classmethod
    def factor(cls):
        return 3.0

    @staticmethod
    def shift(z):
        return z + 1.0


def through_methods(x, m):
    return np.sum(m.act(x) * m.factor() + m.shift(x))


def _times_seven(self, z):
    return z * 7.0


def test_a_method_rebound_in_the_process_regenerates_the_code(tmp_path, monkeypatch):
    # M.act = other: the code, specialised on the class, watches its methods
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path / "cache"))
    from srcgrad import pipeline
    made = []
    generate = pipeline.generate
    monkeypatch.setattr(pipeline, "generate", lambda *a, **k: made.append(1) or generate(*a, **k))
    monkeypatch.setattr(Scaled, "act", Scaled.act)  # restored after the test
    x = np.array([0.3, 0.5])
    g = srcgrad.value_and_grad(through_methods)
    for _ in range(3):  # a classmethod and a staticmethod read: no new code each call
        value, grad = g(x, Scaled())
    assert len(made) == 1
    assert value == through_methods(x, Scaled())
    np.testing.assert_allclose(grad, np.full(2, 7.0))
    Scaled.act = _times_seven
    value, grad = g(x, Scaled())
    assert value == through_methods(x, Scaled())
    np.testing.assert_allclose(grad, np.full(2, 22.0))
    assert len(made) == 2
