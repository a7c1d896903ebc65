"""Generated code on disk: compiled through a real file, and reused by later processes.

Generated code is written to a file in the cache directory before it is
compiled, so tracebacks, ``pdb`` and ``inspect.getsource`` show the generated
lines; the text is also put in :mod:`linecache`, so debugging keeps working if
the directory is unwritable or cleaned.

A later process finds the code again without running the compiler.  Next to
the source the cache keeps two files per entry::

    <dir>/code/grad_loss_<sha16>.py              the generated module
    <dir>/bytecode/grad_loss_<sha16>.<tag>.bin   its code object (marshal)
    <dir>/index/<key>.json                       the manifest

The manifest's name, the *key*, hashes what is known before compiling (the
function's source, the options, the versions of srcgrad, its rules, NumPy and
Python); the manifest records what only the compiler found out (every user
function the code reaches with a hash of its source, fingerprints of the
globals and closure values they read, and how to find every object the code
binds in another process): see :mod:`.manifest` and :mod:`.provenance`.
Loading checks all of it first, so editing a callee or rebinding a global
sends the function back to the compiler, never to a stale gradient.

Writes go to a temporary file that is renamed into place, so readers see a
whole file or none, and concurrent writers of the same entry write the same
bytes.  A truncated or corrupted entry (bad JSON, a hash that does not match,
code that does not compile) counts as a miss and is rewritten.  The directory
is created private to the user (0o700), and files not owned by the user or
writable by others are never loaded.

``SRCGRAD_CACHE_DIR`` chooses the directory (default: ``$XDG_CACHE_HOME/srcgrad``
or ``~/.cache/srcgrad``); ``SRCGRAD_CACHE=0`` keeps generated code in memory only.
The cache stays bounded: the first time a process writes to it, the least
recently used entries beyond ``SRCGRAD_CACHE_MAX_ENTRIES`` (default 2000) go.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import linecache
import marshal
import os
import stat
import sys
import tempfile
import threading
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

from .. import backends
from ..pipeline import Generated
from . import manifest, provenance

SUBDIRS = ("index", "code", "bytecode")
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by srcgrad.\n")

_warned = False
_lock = threading.Lock()


def cache_dir() -> Path | None:
    """The directory generated files go to, or None when the disk cache is off."""
    if os.environ.get("SRCGRAD_CACHE", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    explicit = os.environ.get("SRCGRAD_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "srcgrad"


def _warn(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(message, RuntimeWarning, stacklevel=5)


# --- files ----------------------------------------------------------------------------


def _ensure_dir(path: Path) -> None:
    """Create ``path`` (a subdirectory of the cache) private to the user."""
    root = path.parent
    if not root.is_dir():
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            (root / "CACHEDIR.TAG").write_text(_TAG, encoding="ascii")
        except OSError:
            pass
    path.mkdir(exist_ok=True, mode=0o700)


def _write(path: Path, data) -> bool:
    """Write ``data`` (str or bytes) to ``path`` atomically; False if impossible."""
    blob = data.encode("utf-8") if isinstance(data, str) else data
    try:
        _ensure_dir(path.parent)
        if _read_trusted(path, quiet=True) == blob:
            return True
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        return True
    except OSError as exc:
        _warn(f"srcgrad: cannot write generated code to {path.parent} ({exc}); "
              f"keeping it in memory")
        return False


def _read_trusted(path: Path, quiet: bool = False) -> bytes | None:
    """The bytes of ``path``, or None if it is missing, or not owned by the user,
    or writable by group or others (then it is never executed)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        owner = getattr(os, "geteuid", None)
        if (owner is not None and info.st_uid != owner()) or info.st_mode & 0o022:
            if not quiet:
                _warn(f"srcgrad: not loading {path}: it is not owned by you or is "
                      f"writable by others")
            return None
        return handle.read()


def _remember(source: str, filename: str) -> None:
    """Put ``source`` in linecache, so tracebacks show it even without the file."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)


def _sha(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def _execute(source: str, stem: str, namespace: dict):
    """Compile ``source`` through a file in the cache (or, without one, under a
    pseudo file name) and execute it in ``namespace``.  Returns the namespace,
    the file name and the code object."""
    digest = _sha(source.encode("utf-8"))[:16]
    directory = cache_dir()
    filename = f"<srcgrad:{stem}-{digest}>"
    if directory is not None:
        path = directory / "code" / f"{stem}_{digest}.py"
        with _lock:
            if _write(path, source):
                filename = str(path)
    if filename.startswith("<"):  # no file after all: numba cannot cache next to one
        source = backends.in_memory(source)
    _remember(source, filename)
    code = compile(source, filename, "exec")
    exec(code, namespace)  # noqa: S102 - this is the compiler's output
    return namespace, filename, code


# --- entries --------------------------------------------------------------------------


@dataclass
class Loaded:
    """A generated module, executed: from the compiler or from the disk."""

    generated: Generated
    namespace: dict
    filename: str
    from_disk: bool = False


def lookup(fn, options) -> Loaded | None:
    """The cached module for ``fn`` and ``options``, if the disk has a valid one.

    No part of the compiler runs: the cost is reading the manifest, checking
    the sources and values it lists, and executing the stored code.  Anything
    unexpected in the stored files (they may be truncated, corrupted or from
    an incompatible writer) makes this a miss, and the compiler rewrites them.
    """
    directory = cache_dir()
    if directory is None:
        return None
    target = manifest.target(fn)
    key = manifest.key(target, options)
    if key is None:
        return None
    raw = _read_trusted(directory / "index" / f"{key}.json")
    if raw is None:
        return None
    try:
        loaded = _from_manifest(directory, json.loads(raw), key, target, options)
    except Exception:  # noqa: BLE001 - any damage to the files is a miss
        return None
    if loaded is not None:  # used now: the last to be pruned
        for path in (directory / "index" / f"{key}.json",
                     directory / "code" / Path(loaded.filename).name):
            try:
                os.utime(path)
            except OSError:
                pass
    return loaded


def _from_manifest(directory, data, key, target, options) -> Loaded | None:
    if data["format"] != manifest.FORMAT or data["key"] != key:
        return None
    try:
        bindings, free = manifest.restore(data, target, options.receiver,
                                          manifest.arguments(options))
    except provenance.Mismatch:
        return None
    path = directory / "code" / Path(data["file"]).name
    blob = _read_trusted(path)
    digest = data["source_sha"]
    if blob is None or _sha(blob) != digest or not path.stem.endswith(digest[:16]):
        return None
    source, filename = blob.decode("utf-8"), str(path)
    code = None
    stored = _read_trusted(directory / "bytecode" / _bytecode_name(path))
    if stored is not None and _sha(stored) == data["bytecode_sha"]:
        code = marshal.loads(stored)
    if not isinstance(code, types.CodeType) or code.co_filename != filename:
        code = compile(source, filename, "exec")
    namespace = dict(bindings)
    namespace["__name__"] = f"srcgrad.generated.{data['name']}"
    _remember(source, filename)
    exec(code, namespace)  # noqa: S102 - the compiler's output, checked above
    generated = manifest.rebuild(data, source, bindings, free, target)
    if not all(isinstance(getattr(namespace.get(e), "py_func", namespace.get(e)), types.FunctionType)
               for e in generated.entries):  # a function, or numba's dispatcher of one
        return None
    return Loaded(generated, namespace, filename, from_disk=True)


def _bytecode_name(path: Path) -> str:
    """Where the code object of the generated file ``path`` is kept (per Python version)."""
    return f"{path.stem}.{sys.implementation.cache_tag}.bin"


def store(fn, options, generated: Generated) -> Loaded:
    """Execute freshly generated code, through a file, and save it for later
    processes when everything it binds can be found again.  A backend's code
    (:mod:`..backends`) is the one written: the NumPy code, decorated for numba."""
    generated = backends.adapt(generated, options, disk=cache_dir() is not None)
    namespace = dict(generated.bindings)
    namespace["__name__"] = f"srcgrad.generated.{generated.program.name}"
    namespace, filename, code = _execute(generated.source, generated.entries[0], namespace)
    if filename.startswith("<"):
        generated = dataclasses.replace(generated, source=backends.in_memory(generated.source))
    directory = cache_dir()
    if directory is not None and not filename.startswith("<"):
        if directory not in _pruned:  # once per process: keep the cache bounded
            _pruned.add(directory)
            prune(directory, max_entries())
        try:
            data = _describe(fn, options, generated, Path(filename), code)
        except Exception:  # noqa: BLE001 - describing an entry is an optimisation
            data = None
        if data is not None:
            with _lock:
                _write(directory / "index" / f"{data['key']}.json",
                       json.dumps(data, indent=1, sort_keys=True))
    return Loaded(generated, namespace, filename)


def _describe(fn, options, generated: Generated, path: Path, code) -> dict | None:
    target = manifest.target(fn)
    key = manifest.key(target, options)
    data = manifest.describe(target, options, generated, key) if key else None
    if data is None:
        return None
    blob = marshal.dumps(code)
    with _lock:
        if not _write(path.parent.parent / "bytecode" / _bytecode_name(path), blob):
            return None
    data.update({"file": path.name, "source_sha": _sha(generated.source.encode("utf-8")),
                 "bytecode_sha": _sha(blob)})
    return data


# --- maintenance ----------------------------------------------------------------------


def info() -> dict:
    """The cache directory, whether it is on, its entries and its size in bytes."""
    directory = cache_dir()
    result = {"directory": str(directory) if directory else None,
              "enabled": directory is not None, "entries": 0, "files": 0, "bytes": 0}
    if directory is None:
        return result
    for sub in SUBDIRS:
        for path in _files(directory / sub):
            result["files"] += 1
            result["bytes"] += path.stat().st_size
            result["entries"] += sub == "index" and path.suffix == ".json"
    return result


#: Directories this process has pruned (pruning runs once, at the first store).
_pruned: set = set()


def max_entries() -> int:
    """How many entries the cache keeps (``SRCGRAD_CACHE_MAX_ENTRIES``, default 2000)."""
    try:
        return max(1, int(os.environ.get("SRCGRAD_CACHE_MAX_ENTRIES", "2000")))
    except ValueError:
        return 2000


def prune(directory: Path, keep: int) -> int:
    """Remove the least recently used files beyond ``keep`` in each part of the
    cache; return how many.  An entry that loses its code or bytecode file to
    pruning is a miss, regenerated like a damaged one."""
    removed = 0
    with _lock:
        for sub in SUBDIRS:
            files = _files(directory / sub)
            if len(files) <= keep:
                continue
            aged = []
            for path in files:
                try:
                    aged.append((path.stat().st_mtime, path.name, path))
                except OSError:
                    pass
            aged.sort()
            for _, _, path in aged[:len(aged) - keep]:
                try:
                    path.unlink()
                    removed += 1
                except OSError:
                    pass
    return removed


def clear() -> int:
    """Remove every file srcgrad put in the cache directory; return how many."""
    directory = cache_dir()
    removed = 0
    if directory is None:
        return 0
    with _lock:
        for sub in SUBDIRS:
            for path in _files(directory / sub):
                try:
                    path.unlink()
                    removed += 1
                except FileNotFoundError:
                    pass
    return removed


def _files(directory: Path):
    try:
        return sorted(p for p in directory.iterdir() if p.is_file())
    except OSError:
        return []
