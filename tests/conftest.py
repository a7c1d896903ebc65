"""Shared pytest setup: make the ``srcgrad`` package importable from a checkout,
and the shared test modules importable by their plain names.

The tests use pytest's default ("prepend") import mode: each test file is
imported under its basename (so basenames are unique across tests/), with its own
folder put on ``sys.path``.  The modules every folder shares live in tests/data
(``import corpus``, ``from numeric import assert_close``); tests/ itself holds
the spec table (``import spec``).  Both folders go on ``sys.path`` here, so
that any one file or folder of tests runs on its own.  See tests/README.md.
"""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data"
for _path in (TESTS, DATA, ROOT):     # ends up ROOT, DATA, TESTS, ...
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


# --- the user's cache is left alone ---------------------------------------------------
#
# Generated code is cached on disk (srcgrad.cache); tests write theirs to a
# temporary directory, never to the user's ~/.cache/srcgrad.  Set here, at
# import, so that it holds before any test module compiles anything.

import atexit as _atexit
import os as _os
import shutil as _shutil
import tempfile as _tempfile

_CACHE = _tempfile.mkdtemp(prefix="srcgrad-test-cache-")
_atexit.register(_shutil.rmtree, _CACHE, ignore_errors=True)
_os.environ["SRCGRAD_CACHE_DIR"] = _CACHE

# And a home of their own: a test that drops SRCGRAD_CACHE_DIR (or anything else
# that writes under ~) writes here, and the session fails if anything was
# written (pytest_sessionfinish below), instead of filling the user's cache.
_HOME = _tempfile.mkdtemp(prefix="srcgrad-test-home-")
_atexit.register(_shutil.rmtree, _HOME, ignore_errors=True)
_os.environ["HOME"] = _HOME
_os.environ.pop("XDG_CACHE_HOME", None)


def pytest_sessionfinish(session, exitstatus):
    written = [_os.path.join(d, f) for d, _, files in _os.walk(_HOME) for f in files
               if f != ".python_history"]  # the interpreter's own, from the pdb tests
    if written:
        print(f"\nsrcgrad tests wrote under the user's home (a stand-in, {_HOME}): "
              f"{written[:5]}")
        session.exitstatus = 1


# --- fuzz and slow tests: skipped unless asked for -----------------------------------
#
# Tests marked ``fuzz`` are long property-based runs (``make fuzz``); tests marked
# ``slow`` are the rest of a matrix whose everyday part runs in ``make test`` (every
# corpus function under every policy, the full counts of the quick fuzzers, ...;
# ``make slow``).  A plain ``pytest`` / ``make test`` skips both; a marker's tests
# run when ``-m`` selects it (``pytest -m fuzz``, ``-m "slow and not fuzz"``) or
# SRCGRAD_FUZZ / SRCGRAD_SLOW is set to a value other than "" or "0".

import os as _os
import re as _re

import pytest as _pytest

_ASK = {
    "fuzz": ("SRCGRAD_FUZZ", "long fuzz run: use `make fuzz`, `pytest -m fuzz` or set "
                             "SRCGRAD_FUZZ=1"),
    "slow": ("SRCGRAD_SLOW", "the long part of a matrix `make test` samples: use `make slow`, "
                             "`pytest -m slow` or set SRCGRAD_SLOW=1"),
}


def _requested(config, marker) -> bool:
    if _os.environ.get(_ASK[marker][0], "").strip() not in ("", "0"):
        return True
    markexpr = config.getoption("markexpr", default="") or ""
    # the marker's name in the -m expression, not negated by "not"
    return any(not _re.search(r"\bnot\s*\(?\s*$", markexpr[:m.start()])
               for m in _re.finditer(rf"\b{marker}\b", markexpr))


def pytest_configure(config):
    # registered here, not in pyproject.toml (whose every edit rebuilds `make`'s venv)
    config.addinivalue_line("markers", "slow: the long part of a matrix `make test` samples; "
                                       "`make slow` runs them")


def pytest_collection_modifyitems(config, items):
    for marker, (_, reason) in _ASK.items():
        if _requested(config, marker):
            continue
        skip = _pytest.mark.skip(reason=reason)
        for item in items:
            if item.get_closest_marker(marker) is not None:
                item.add_marker(skip)
