"""The on-disk code cache: reuse across processes, invalidation, damage, permissions.

Most tests run a small script in a fresh process (the situation the disk cache
exists for) with its own cache directory; the script counts how often the
compiler pipeline runs by wrapping ``srcgrad.pipeline.generate``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import srcgrad
from srcgrad.api import compiled
from srcgrad.cache import store as cache, manifest, provenance
from srcgrad import pipeline as compiler
from srcgrad.pipeline import Options

ROOT = Path(__file__).resolve().parents[2]

MODEL = """
import functools
import numpy as np

SCALE = {scale}
W = np.array([1.0, 2.0, 3.0])


def squash(x):
    return np.{squash}(x)


def weigh(w, x):
    return w * x


weighted = functools.partial(weigh, {weight})


def loss(x):
    return np.sum(squash(x) * W) * SCALE + np.sum(weighted(x))
"""

RUNNER = """
import json, sys
import numpy as np
import srcgrad
from srcgrad import pipeline as compiler

calls = []
generate = compiler.generate
compiler.generate = lambda *a, **k: calls.append(1) or generate(*a, **k)
sys.path.insert(0, sys.argv[1])
import model
g = srcgrad.grad(model.loss)
value = g(np.array([0.1, 0.2, 0.3]))
print(json.dumps({"calls": len(calls), "grad": value.tolist(),
                  "disk": g._get().filename.startswith(sys.argv[2])}))
"""


def write_model(directory: Path, scale=2.0, squash="tanh", weight=0.5) -> None:
    (directory / "model.py").write_text(MODEL.format(scale=scale, squash=squash, weight=weight))
    for stale in (directory / "__pycache__").glob("*"):
        stale.unlink()  # the rewrite may keep the file's size and second


def expected(scale=2.0, squash="tanh", weight=0.5):
    x = np.array([0.1, 0.2, 0.3])
    d = 1 - np.tanh(x) ** 2 if squash == "tanh" else np.cos(x)
    return d * np.array([1.0, 2.0, 3.0]) * scale + weight


def run_model(directory: Path, cache_dir: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), SRCGRAD_CACHE_DIR=str(cache_dir))
    env.pop("SRCGRAD_CACHE", None)
    result = subprocess.run([sys.executable, "-c", RUNNER, str(directory), str(cache_dir)],
                            capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_code_without_compiling(tmp_path):
    write_model(tmp_path)
    first = run_model(tmp_path, tmp_path / "cache")
    second = run_model(tmp_path, tmp_path / "cache")
    assert first["calls"] == 1 and second["calls"] == 0
    assert second["disk"]
    np.testing.assert_allclose(second["grad"], expected())
    assert second["grad"] == first["grad"]


@pytest.mark.parametrize("change", [
    {"squash": "sin"},   # the body of a called function
    {"scale": 3.0},      # a global constant the caller reads
    {"weight": 1.5},     # a value bound by functools.partial
])
def test_editing_what_the_function_uses_invalidates_it(tmp_path, change):
    write_model(tmp_path)
    assert run_model(tmp_path, tmp_path / "cache")["calls"] == 1
    write_model(tmp_path, **change)
    after = run_model(tmp_path, tmp_path / "cache")
    assert after["calls"] == 1
    np.testing.assert_allclose(after["grad"], expected(**change))


def test_concurrent_processes_leave_a_consistent_cache(tmp_path):
    write_model(tmp_path)
    cache_dir = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(ROOT), SRCGRAD_CACHE_DIR=str(cache_dir))
    runs = [subprocess.Popen([sys.executable, "-c", RUNNER, str(tmp_path), str(cache_dir)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(4)]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        np.testing.assert_allclose(json.loads(out)["grad"], expected())
    files = [p for p in cache_dir.rglob("*") if p.is_file()]
    assert not [p for p in files if p.name.startswith(".tmp-")]
    manifests = list((cache_dir / "index").glob("*.json"))
    assert len(manifests) == 1
    json.loads(manifests[0].read_text())
    assert run_model(tmp_path, cache_dir)["calls"] == 0


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SRCGRAD_CACHE", raising=False)
    monkeypatch.setattr(cache, "_warned", False)
    return tmp_path / "cache"


def _cubes(x):
    return np.sum(x ** 3)


def _compiled_entry(cache_dir):
    compiled._MEMORY.pop(_cubes, None)
    srcgrad.grad(_cubes)(np.ones(2))
    (index,) = (cache_dir / "index").glob("*.json")
    return index, json.loads(index.read_text())


def _hit():
    return cache.lookup(_cubes, Options()) is not None


@pytest.mark.parametrize("damage", ["truncated manifest", "garbage manifest", "edited code",
                                    "missing code", "broken bytecode", "code that fails"])
def test_a_damaged_entry_is_detected_and_regenerated(fresh_cache, damage):
    index, data = _compiled_entry(fresh_cache)
    code = fresh_cache / "code" / data["file"]
    bytecode = fresh_cache / "bytecode" / cache._bytecode_name(code)
    assert _hit()
    if damage == "truncated manifest":
        index.write_bytes(index.read_bytes()[:40])
    elif damage == "garbage manifest":
        index.write_text(json.dumps({"format": manifest.FORMAT, "key": data["key"], "deps": "?"}))
    elif damage == "edited code":
        code.write_text(code.read_text().replace("3", "4"))
    elif damage == "missing code":
        code.unlink()
    elif damage == "broken bytecode":
        bytecode.write_bytes(b"\xe3" + os.urandom(64))
    else:  # a consistent entry whose source does not compile
        broken = "def grad__cubes(:\n"
        data["source_sha"] = cache._sha(broken.encode())
        data["file"] = f"grad__cubes_{data['source_sha'][:16]}.py"
        (fresh_cache / "code" / data["file"]).write_text(broken)
        index.write_text(json.dumps(data))
    if damage == "broken bytecode":
        assert _hit()  # the source is intact: it is compiled again, still no pipeline run
    else:
        assert not _hit()
    compiled._MEMORY.pop(_cubes, None)
    np.testing.assert_allclose(srcgrad.grad(_cubes)(np.ones(2)), [3.0, 3.0])
    assert _hit()


def test_files_others_could_have_written_are_not_loaded(fresh_cache):
    index, _ = _compiled_entry(fresh_cache)
    index.chmod(0o666)
    with pytest.warns(RuntimeWarning, match="not owned by you or is writable by others"):
        assert not _hit()
    index.chmod(0o600)
    assert _hit()
    if os.geteuid() == 0:  # as root, hand the file to someone else
        os.chown(index, 12345, 12345)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert not _hit()


def test_the_directory_is_private(fresh_cache):
    _compiled_entry(fresh_cache)
    for directory in [fresh_cache, *(fresh_cache / sub for sub in cache.SUBDIRS)]:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    for path in fresh_cache.rglob("*.json"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


def test_the_key_covers_options_and_versions(monkeypatch):
    base = manifest.key(_cubes, Options())
    assert base == manifest.key(_cubes, Options())
    assert manifest.key(_cubes, Options(optimize=False)) != base
    assert manifest.key(_cubes, Options(mode="value_and_grad")) != base
    monkeypatch.setattr(manifest, "ruleset_version", lambda: "another rule set")
    assert manifest.key(_cubes, Options()) != base
    monkeypatch.undo()
    monkeypatch.setattr(manifest, "__version__", "9.9")
    assert manifest.key(_cubes, Options()) != base
    monkeypatch.undo()
    monkeypatch.setattr(manifest.np, "__version__", "0.0")
    assert manifest.key(_cubes, Options()) != base
    assert manifest.key(lambda x: x, Options()) is not None  # a lambda in a file has source


def test_the_rule_set_version_hashes_every_source_file_of_srcgrad():
    package = Path(srcgrad.__file__).resolve().parent
    every = sorted(str(p) for p in package.rglob("*.py") if "__pycache__" not in p.parts)
    assert [str(Path(f).resolve()) for f in manifest.ruleset_files()] == every
    assert str(package / "rules" / "ufuncs.py") in every and str(package / "pipeline.py") in every


def test_an_object_that_cannot_be_found_again_is_not_described():
    found = provenance.survey(_cubes)
    assert found.locate("np", np) == ["global", ["entry"], "np"]
    assert found.locate("mystery", object()) is None


def test_info_and_clear(fresh_cache):
    _compiled_entry(fresh_cache)
    info = cache.info()
    assert info["directory"] == str(fresh_cache) and info["entries"] == 1
    assert info["files"] == 3 and info["bytes"] > 0
    assert cache.clear() == 3
    assert cache.info()["entries"] == 0


def test_the_disk_cache_can_be_off(monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    assert cache.lookup(_cubes, Options()) is None
    assert cache.info() == {"directory": None, "enabled": False, "entries": 0, "files": 0,
                            "bytes": 0}


def test_source_text_of_a_loaded_entry_is_the_generated_source(fresh_cache):
    _compiled_entry(fresh_cache)
    loaded = cache.lookup(_cubes, Options())
    assert loaded.from_disk and "def grad__cubes(x):" in loaded.generated.source
    assert textwrap.dedent(loaded.generated.source) == loaded.generated.source


def _inner(x):
    return np.sin(x) * 2.0


def _outer(x):
    return np.sum(_inner(x))


def test_marking_a_callee_invalidates_its_callers(fresh_cache):
    srcgrad.grad(_outer)(np.ones(2))
    assert cache.lookup(_outer, Options()) is not None
    srcgrad.checkpoint(_inner)
    try:
        assert cache.lookup(_outer, Options()) is None
    finally:
        del _inner.__srcgrad_checkpoint__


def test_a_loaded_entry_describes_the_module_like_the_compiler(fresh_cache):
    options = Options(mode="vjp", wrt=(0,), single=False)
    srcgrad.vjp(_outer, np.ones(2))
    loaded = cache.lookup(_outer, options)
    fresh = compiler.generate(_outer, options)
    assert loaded is not None and fresh.residuals
    for field in dataclasses.fields(fresh):
        if field.name not in ("program", "bindings", "free"):
            assert getattr(loaded.generated, field.name) == getattr(fresh, field.name), field.name
    assert loaded.generated.program.params == fresh.program.params


def test_concurrent_first_calls_from_threads_compile_once_and_agree(fresh_cache, monkeypatch):
    """Many threads calling the same new gradient at once: one compilation, one answer."""
    import threading  # noqa: PLC0415 - only this test uses threads

    calls = []
    real = compiler.generate

    def counting(fn, options):
        calls.append(options)
        return real(fn, options)

    monkeypatch.setattr(compiler, "generate", counting)

    def f(x):
        return np.sum(np.tanh(x) * x)

    g = srcgrad.grad(f)
    x = np.linspace(-1, 1, 7)
    start = threading.Barrier(16)
    results, errors = [None] * 16, []

    def work(i):
        try:
            start.wait()
            results[i] = g(x)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(calls) == 1
    for r in results[1:]:
        assert np.array_equal(r, results[0])


def test_the_cache_keeps_the_most_recently_used_entries(fresh_cache, monkeypatch):
    """Beyond SRCGRAD_CACHE_MAX_ENTRIES, the least recently used files go (an
    entry that loses a file is a miss, like a damaged one: see above)."""
    import time  # noqa: PLC0415

    directory = cache.cache_dir()
    for sub in cache.SUBDIRS:
        (directory / sub).mkdir(parents=True, exist_ok=True)
        for i in range(5):
            path = directory / sub / f"old_{i}.x"
            path.write_text("x")
            os.utime(path, (time.time() - 1000 + i, time.time() - 1000 + i))
    assert cache.prune(directory, 3) == 2 * len(cache.SUBDIRS)
    left = sorted(p.name for p in (directory / "index").iterdir())
    assert left == ["old_2.x", "old_3.x", "old_4.x"]
