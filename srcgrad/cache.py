"""Compiling generated source through a real file, and the in-memory cache.

Generated code is written to a file in the cache directory before it is
compiled, so tracebacks, ``pdb`` and ``inspect.getsource`` show the generated
lines.  The file name carries a digest of the source, writes are atomic
(temporary file, then rename), and the text is also put in :mod:`linecache`,
so debugging keeps working if the directory is unwritable or cleaned.

``SRCGRAD_CACHE_DIR`` chooses the directory (default: ``$XDG_CACHE_HOME/srcgrad``
or ``~/.cache/srcgrad``); ``SRCGRAD_CACHE=0`` keeps generated files in memory only.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import tempfile
import threading
import warnings
from pathlib import Path

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


def _write(path: Path, source: str) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.exists() and path.read_text(encoding="utf-8") == source:
            return True
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(source)
        os.replace(tmp, path)
        return True
    except OSError as exc:
        global _warned
        if not _warned:
            _warned = True
            warnings.warn(f"srcgrad: cannot write generated code to {path.parent} ({exc}); "
                          f"keeping it in memory", RuntimeWarning, stacklevel=4)
        return False


def load(source: str, stem: str, namespace: dict) -> tuple[dict, str]:
    """Compile ``source`` through a file and execute it in ``namespace``.

    Returns the namespace and the file name the code was compiled under.
    """
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]
    directory = cache_dir()
    filename = f"<srcgrad:{stem}-{digest}>"
    if directory is not None:
        path = directory / "code" / f"{stem}_{digest}.py"
        with _lock:
            if _write(path, source):
                filename = str(path)
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    code = compile(source, filename, "exec")
    exec(code, namespace)  # noqa: S102 - this is the compiler's output
    return namespace, filename
