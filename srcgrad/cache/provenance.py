"""Where a generated module's dependencies come from, found again in another process.

The disk cache (:mod:`.store`) loads a generated module in a new process
without running the compiler, and must never load one that the user's code no
longer matches.  This module gives it both halves.

*Paths.*  Every object the generated code binds (a global array, a closure
value, a function called without differentiation, a value bound by
``functools.partial``) is reached from the differentiated function by a
*path*, a small JSON list found when the code is generated and followed when
it is loaded, so the new process binds its own objects::

    ["entry"]                                  the differentiated function
    ["receiver"]                               the class of ``self`` (methods)
    ["argument", 0]                            the function passed as argument 0
                                               (code specialised on it, Options.callees)
    ["global", P, "W"]                         global W of the function at P
    ["closure", P, "scale"]                    closure cell scale of the function at P
    ["attr", P, "run"]                         member run of the module, class,
                                               instance, partial or method at P
    ["index", P, 0]                            element 0 of the tuple, list or dict at P

*Survey.*  Starting at the differentiated function, :func:`survey` follows the
names each function reads to every user function reachable by name (callees,
methods, partial targets) and records, for each, a hash of its source and a
fingerprint of the value of every global and closure name it reads (a number or
string by value, an array by dtype and shape, a function or class by qualified
name, another object by type).  :func:`check` repeats that in the loading
process and reports the first difference, so editing a callee, rebinding a
global or changing a constant sends the caller back to the compiler.  The
survey over-approximates what the compiler used, which costs at worst a
needless recompilation, never a stale gradient.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import linecache
import marshal
import types
from collections import deque

import numpy as np

from ..frontend.linker import is_library_module, is_user_function
from ..frontend.source_lines import block_end, read_names

_MISSING = object()
_EMPTY = object()  # a closure cell not bound yet


class Mismatch(Exception):
    """The loading process's code differs from the one the module was made for."""


def _library(obj) -> bool:
    """Whether ``obj`` (a module, class or instance) belongs to a library or the
    standard library, the way :func:`..frontend.linker.is_user_function` decides for functions."""
    name = obj.__name__ if isinstance(obj, types.ModuleType) else \
        getattr(obj if isinstance(obj, type) else type(obj), "__module__", "") or ""
    return is_library_module(name) or name.partition(".")[0] == "builtins"


def _user_namespace(obj) -> bool:
    """A user module, class or object whose members the generated code may name
    (a callable object of a user class too: ``S(x)`` runs ``S.__call__``)."""
    if isinstance(obj, (types.ModuleType, type)):
        return not _library(obj)
    return hasattr(obj, "__dict__") and not _library(obj) \
        and (not callable(obj) or callable_object(obj))


def user_object(obj) -> bool:
    """An instance of a user class: its methods are found through the class."""
    return not isinstance(obj, (types.ModuleType, type)) and type(obj) not in _SPECIAL \
        and _user_namespace(obj)


def callable_object(obj) -> bool:
    """An instance of a user class that defines ``__call__`` in Python."""
    return not isinstance(obj, (type, types.FunctionType, types.MethodType,
                                functools.partial)) \
        and is_user_function(inspect.getattr_static(type(obj), "__call__", None))


def _member(obj, name):
    """``obj.name`` without running properties or other descriptors."""
    if isinstance(obj, types.ModuleType):
        return vars(obj).get(name, _MISSING)
    if not isinstance(obj, type):
        own = getattr(obj, "__dict__", None)
        if isinstance(own, dict) and name in own:
            return own[name]
        obj = type(obj)
    for klass in obj.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return _MISSING


_SPECIAL = {
    functools.partial: ("func", "args", "keywords"),
    types.MethodType: ("__func__", "__self__"),
    staticmethod: ("__func__",),
    classmethod: ("__func__",),
    types.FunctionType: ("__defaults__", "__kwdefaults__"),
}


def _attr(obj, name):
    if name in _SPECIAL.get(type(obj), ()):
        return getattr(obj, name)
    if _user_namespace(obj):
        return _member(obj, name)
    return _MISSING


def resolve(path, entry, receiver, arguments=()):
    """Follow ``path`` from ``entry`` (and ``receiver``, and the functions passed
    as ``arguments``, ``(position, function)`` pairs); raise Mismatch if it
    leads nowhere."""
    kind = path[0]
    if kind == "entry":
        return entry
    if kind == "receiver":
        if receiver is None:
            raise Mismatch("no receiver class")
        return receiver
    if kind == "argument":
        passed = dict(arguments)
        if path[1] not in passed:
            raise Mismatch(f"no function passed as argument {path[1]}")
        return passed[path[1]]
    parent, key = resolve(path[1], entry, receiver, arguments), path[2]
    if kind == "global" and isinstance(parent, types.FunctionType):
        value = parent.__globals__.get(key, _MISSING)
    elif kind == "closure" and isinstance(parent, types.FunctionType):
        value = _cells(parent).get(key, _MISSING)
    elif kind == "attr":
        value = _attr(parent, key)
    elif kind == "index" and isinstance(parent, (tuple, list)) and isinstance(key, int):
        value = parent[key] if -len(parent) <= key < len(parent) else _MISSING
    elif kind == "index" and isinstance(parent, dict):
        value = parent.get(key, _MISSING)
    else:
        raise Mismatch(f"bad path {path!r}")
    if value is _MISSING or value is _EMPTY:
        raise Mismatch(f"nothing at {path!r}")
    return value


def _cells(fn) -> dict:
    cells = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            cells[name] = cell.cell_contents
        except ValueError:
            cells[name] = _EMPTY
    return cells


def source_text(fn) -> str | None:
    """The lines of ``fn``'s definition, decorators included, or None.

    What ``inspect.getsource`` returns, without its tokenizer (which costs
    25 ms for a 1000-line function, more than the rest of a cache hit): the
    lines from the code object's first line to the last line any of its
    instructions came from, then the rest of the indented block (comments,
    closing brackets): :func:`..frontend.source_lines.block_end`.  Read through
    :mod:`linecache`, refreshed first, as inspect does, so an edited file is seen.
    """
    code = fn.__code__
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", None))
    first = code.co_firstlineno
    if not lines or first > len(lines):
        return None
    return "".join(lines[first - 1:block_end(code, lines)]).rstrip() + "\n"


def source_hash(fn) -> str:
    """A hash of ``fn``'s source text (of its bytecode when it has no source),
    and of the function it wraps, if it is a decorator's wrapper.  The
    instructions of its code too: a function loaded before its file was
    edited has the new text but the old code, and must not find the code
    generated from the new text (the frontend refuses to compile it)."""
    digest = hashlib.sha256()
    for layer in dict.fromkeys([fn, inspect.unwrap(fn)]):
        text = source_text(layer) if isinstance(layer, types.FunctionType) else None
        digest.update(text.encode("utf-8") if text is not None
                      else b"code:" + marshal.dumps(getattr(layer, "__code__", None)))
        code = getattr(layer, "__code__", None)
        if text is not None and isinstance(code, types.CodeType):
            _digest_code(digest, code)
    return digest.hexdigest()[:32]


def _digest_code(digest, code) -> None:
    """Add what ``code`` runs to ``digest``: its bytecode and the names and
    constants it reads, nested code included (not its line numbers, which
    move when lines are added above it; marshal's bytes are not the same
    from one process to the next)."""
    digest.update(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _digest_code(digest, const)
        elif isinstance(const, frozenset):  # (x in {"a", "b"}: its order varies by process)
            digest.update(repr(sorted(map(repr, const))).encode("utf-8", "backslashreplace"))
        else:
            digest.update(repr(const).encode("utf-8", "backslashreplace"))


def fingerprint(value, depth: int = 0):
    """A JSON description of ``value`` that changes when the compiler could
    have generated different code for it.

    >>> fingerprint(2.5), fingerprint(np.zeros((2, 3)))
    (['float', '2.5'], ['ndarray', '<f8', [2, 3]])
    >>> fingerprint((np.tanh, np))
    ['tuple', [['callable', 'ufunc', 'numpy', 'tanh'], ['module', 'numpy']]]
    """
    if value is _EMPTY:
        return ["empty"]
    if value is _MISSING:
        return ["missing"]
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str, bytes):
        return [kind.__name__, repr(value)]
    if isinstance(value, np.ndarray):
        return ["ndarray", value.dtype.str, list(value.shape)]
    if isinstance(value, np.generic):
        return ["scalar", value.dtype.str, repr(value.item())]
    if isinstance(value, types.ModuleType):
        return ["module", value.__name__]
    if isinstance(value, (types.FunctionType, type)):
        return [kind.__name__, value.__module__, value.__qualname__]
    if depth > 3:
        return ["deep", kind.__module__, kind.__qualname__]
    if isinstance(value, functools.partial):
        return ["partial", fingerprint(value.func, depth + 1),
                [fingerprint(a, depth + 1) for a in value.args],
                sorted([k, fingerprint(v, depth + 1)] for k, v in value.keywords.items())]
    if isinstance(value, (types.MethodType, staticmethod, classmethod)):
        owner = getattr(value, "__self__", None)
        return [kind.__name__, fingerprint(value.__func__, depth + 1),
                [type(owner).__module__, type(owner).__qualname__]]
    if kind in (tuple, list) and len(value) <= 32:
        return [kind.__name__, [fingerprint(v, depth + 1) for v in value]]
    if kind is dict and len(value) <= 32:
        return ["dict", sorted([repr(k), fingerprint(v, depth + 1)] for k, v in value.items())]
    if kind in (tuple, list, dict):
        return [kind.__name__, "len", len(value)]
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if callable(value) and isinstance(name, str):  # builtins, ufuncs
        return ["callable", kind.__qualname__, getattr(value, "__module__", None), name]
    return ["object", kind.__module__, kind.__qualname__]


class Survey:
    """The user functions reachable from an entry function, with their paths,
    the fingerprints of what they read, and a path to every object seen."""

    def __init__(self, entry, receiver, interest: set[str], arguments=()):
        self.functions: list[tuple[object, list]] = []
        self.reads: list[list] = []
        self.seen: dict[int, tuple[object, list]] = {}
        self.names: set[str] = set()
        self.interest = interest
        self._queue: deque = deque()
        self.visit(entry, ["entry"])
        if receiver is not None:
            self.visit(receiver, ["receiver"])
        for position, passed in arguments:
            self.visit(passed, ["argument", position])
        while self._queue:
            self._scan(*self._queue.popleft())

    def visit(self, obj, path) -> None:
        if id(obj) in self.seen or obj is _EMPTY:
            return
        self.seen[id(obj)] = (obj, path)
        if isinstance(obj, types.FunctionType):
            if path == ["entry"] or is_user_function(obj):
                self.functions.append((obj, path))
                self._queue.append((len(self.functions) - 1, obj, path))
        elif type(obj) in _SPECIAL:
            for name in _SPECIAL[type(obj)]:
                self._visit_member(getattr(obj, name), ["attr", path, name])
        elif _user_namespace(obj):
            # S(x) of a callable object reads no name '__call__': its method, too
            called = ("__call__",) if callable_object(obj) else ()
            for name in (*called, *sorted(self.interest)):
                member = _member(obj, name)
                if member is not _MISSING:
                    self.visit(member, ["attr", path, name])

    def _visit_member(self, value, path) -> None:
        if isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                self.visit(item, ["index", path, i])
        elif isinstance(value, dict):
            for key, item in value.items():
                self.visit(item, ["index", path, key])
        elif value is not None:
            self.visit(value, path)

    def _scan(self, index: int, fn, path) -> None:
        names = read_names(fn.__code__)
        self.names |= names
        for name, value in sorted(_cells(fn).items()):
            self.reads.append([index, "closure", name, fingerprint(value)])
            self.visit(value, ["closure", path, name])
        for name in sorted(names):
            value = fn.__globals__.get(name, _MISSING)
            if value is not _MISSING:
                self.reads.append([index, "global", name, fingerprint(value)])
                self.visit(value, ["global", path, name])
        self.reads.append([index, "defaults", "", fingerprint(
            [fn.__defaults__, sorted((fn.__kwdefaults__ or {}).items())])])
        self._visit_member(fn.__defaults__, ["attr", path, "__defaults__"])
        self._visit_member(fn.__kwdefaults__, ["attr", path, "__kwdefaults__"])

    def locate(self, name: str, obj):
        """A path to ``obj``, bound as ``name`` in the generated module, or None."""
        for fn, path in self.functions:
            cells = _cells(fn)
            if name in cells and cells[name] is obj:
                return ["closure", path, name]
            if name not in cells and fn.__globals__.get(name, _MISSING) is obj:
                return ["global", path, name]
        hit = self.seen.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else None

    def dependencies(self) -> list[list]:
        """JSON rows [path, module, qualname, filename, first line, source hash, marks]."""
        return [[path, fn.__module__, fn.__qualname__, fn.__code__.co_filename,
                 fn.__code__.co_firstlineno, source_hash(fn), marks(fn)]
                for fn, path in self.functions]


def marks(fn) -> list:
    """The srcgrad marks set on ``fn`` (``srcgrad.checkpoint`` sets one): they
    change the code generated for its callers without changing its source."""
    return [[name, fingerprint(value)] for name, value in sorted(vars(fn).items())
            if name.startswith("__srcgrad")]


def survey(entry, receiver=None, arguments=()) -> Survey:
    """Survey what ``entry`` reaches.  Members of modules, classes and objects
    are followed for the names the reached functions read, so the survey runs
    again until that set of names stops growing."""
    interest: set[str] = set()
    while True:
        result = Survey(entry, receiver, interest, arguments)
        if result.names <= interest:
            return result
        interest = interest | result.names


def check(dependencies, reads, entry, receiver, arguments=()) -> list:
    """Re-resolve and compare what a manifest recorded; return the functions.

    Raises :class:`Mismatch` at the first difference.
    """
    functions = []
    for path, module, qualname, filename, first, _, _ in dependencies:
        fn = resolve(path, entry, receiver, arguments)
        if not isinstance(fn, types.FunctionType) or fn.__module__ != module \
                or fn.__qualname__ != qualname or fn.__code__.co_filename != filename \
                or fn.__code__.co_firstlineno != first:
            raise Mismatch(f"{qualname} is not the function it was")
        functions.append(fn)
    for fn, row in zip(functions, dependencies):
        if _jsonish(marks(fn)) != row[6]:
            raise Mismatch(f"{row[2]} was marked differently")
        if row[0] != ["entry"] and source_hash(fn) != row[5]:  # the key holds the entry's
            raise Mismatch(f"the source of {row[2]} changed")
    for index, kind, name, expected in reads:
        fn = functions[index]
        if kind == "closure":
            value = _cells(fn).get(name, _MISSING)
        elif kind == "global":
            value = fn.__globals__.get(name, _MISSING)
        else:
            value = [fn.__defaults__, sorted((fn.__kwdefaults__ or {}).items())]
        if _jsonish(fingerprint(value)) != expected:
            raise Mismatch(f"{name!r} read by {fn.__qualname__} changed")
    return functions


def _jsonish(value):
    """``value`` as it reads back from JSON (tuples become lists)."""
    if isinstance(value, (list, tuple)):
        return [_jsonish(v) for v in value]
    return value


__all__ = ["Mismatch", "Survey", "callable_object", "check", "fingerprint", "marks", "resolve",
           "source_hash", "source_text", "survey", "user_object"]
