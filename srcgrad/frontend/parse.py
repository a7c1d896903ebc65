"""Frontend: from a live Python function to a located gast tree and its names.

Three jobs, each a function here:

* :func:`parse_function` finds the function's source (``inspect``; works for
  functions in files, nested and indented definitions, decorated functions),
  parses it with gast and moves every node's ``lineno``/``col_offset`` back to
  where it stands in the user's file, so that errors point at the real line;
* :class:`Resolver` answers what a free name means (closure cell, then the
  function's globals, then builtins), the way Python itself would at call time;
* :func:`static_value` evaluates an attribute chain such as ``np.linalg.norm``
  against the resolver, which is how calls get matched to adjoint rules.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.tanh(x)
    >>> parsed = parse_function(f)
    >>> parsed.node.name, [a.id for a in parsed.node.args.args]
    ('f', ['x'])
    >>> call = parsed.node.body[0].value
    >>> static_value(call.func, parsed.resolver) is np.tanh
    True
"""

from __future__ import annotations

import builtins
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field

import gast

from ..errors import SourceNotFoundError, SrcGradError, UnsupportedSyntaxError
from ..ir.syntax import walk

_MISSING = object()


@dataclass
class ParsedFunction:
    """A function's gast tree with locations in the user's file."""

    fn: object
    node: gast.FunctionDef
    filename: str
    resolver: "Resolver"
    lines: list[str] = field(default_factory=list)

    def error(self, cls, message: str, node=None) -> SrcGradError:
        """Build an error of class ``cls`` located at ``node``."""
        return located_error(cls, message, node, self.filename)


def located_error(cls, message, node, filename):
    lineno = getattr(node, "lineno", None) if node is not None else None
    col = getattr(node, "col_offset", None) if node is not None else None
    return cls(message, filename=filename, lineno=lineno, col=col)


def parse_function(fn) -> ParsedFunction:
    """Parse ``fn``'s definition into a gast ``FunctionDef`` located in its file."""
    target = inspect.unwrap(fn, stop=lambda f: hasattr(f, "__srcgrad_primal__"))
    target = getattr(target, "__srcgrad_primal__", target)
    if not inspect.isfunction(target):
        hint = ""
        method = target.__func__ if inspect.ismethod(target) else inspect.getattr_static(
            type(target), "__call__", None)
        if inspect.isfunction(method):  # a bound method, a callable object
            hint = (f": pass the plain function {method.__qualname__} and the instance as its "
                    f"first argument (srcgrad.grad and the other transformations take bound "
                    f"methods and callable objects themselves)")
        raise SrcGradError(f"srcgrad differentiates Python functions; got {fn!r}{hint}")
    filename = target.__code__.co_filename
    try:
        lines, first = inspect.getsourcelines(target)
    except (OSError, TypeError):
        raise SourceNotFoundError(
            f"cannot find the source code of {target.__qualname__} (defined in "
            f"{filename}); srcgrad reads a function's source, so define it in a file, "
            f"a notebook cell or a module") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _indent_width(text) - _indent_width(dedented)
    try:
        module = gast.parse(dedented)
    except SyntaxError as exc:  # pragma: no cover - inspect found valid code
        raise SrcGradError(f"cannot parse the source of {target.__qualname__}: {exc}") from exc
    node = _find_definition(module, target)
    if node is None:
        raise SourceNotFoundError(
            f"the source of {target.__qualname__} at {filename}:{first} is not a plain "
            f"'def' statement (a lambda?)")
    node.decorator_list = []
    _relocate(node, first - 1, indent)
    resolver = Resolver.for_function(target)
    all_lines = linecache.getlines(filename) or lines
    return ParsedFunction(target, node, filename, resolver, all_lines)


def _indent_width(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0


def _find_definition(module, fn):
    for node in walk(module):
        if isinstance(node, gast.FunctionDef) and node.name == fn.__name__:
            return node
    return None


def _relocate(tree, line_offset: int, col_offset: int) -> None:
    for node in walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno += line_offset
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno += line_offset
            if getattr(node, "col_offset", None) is not None:
                node.col_offset += col_offset
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += col_offset


class Resolver:
    """What a free name of the function refers to, looked up as Python would."""

    def __init__(self, globals_: dict, closure: dict[str, object], qualname: str):
        self.globals = globals_
        self.closure = closure
        self.qualname = qualname

    @classmethod
    def for_function(cls, fn) -> "Resolver":
        cells = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                cells[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                cells[name] = _MISSING
        return cls(fn.__globals__, cells, fn.__qualname__)

    def lookup(self, name: str):
        """The object ``name`` refers to, or ``_MISSING``."""
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        return getattr(builtins, name, _MISSING)

    def where(self, name: str) -> str:
        """'closure', 'global' or 'builtin': where ``name`` was found."""
        if name in self.closure:
            return "closure"
        if name in self.globals:
            return "global"
        return "builtin"

    def has(self, name: str) -> bool:
        return self.lookup(name) is not _MISSING


def static_value(node, resolver: Resolver, local_names=frozenset()):
    """The object a Name or attribute chain of free names refers to, or
    ``_MISSING`` when it is not static (it starts at a local variable, or an
    attribute does not exist)."""
    if isinstance(node, gast.Name):
        if getattr(node, "helper", None) is not None:  # a runtime helper the compiler wrote
            return node.helper
        if node.id in local_names:
            return _MISSING
        return resolver.lookup(node.id)
    if isinstance(node, gast.Attribute):
        base = static_value(node.value, resolver, local_names)
        if base is _MISSING:
            return _MISSING
        return getattr(base, node.attr, _MISSING)
    return _MISSING


def root_name(node) -> str | None:
    """``np`` for ``np.linalg.norm``; None when the chain does not start at a name."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


MISSING = _MISSING

__all__ = ["MISSING", "ParsedFunction", "Resolver", "SourceNotFoundError", "located_error",
           "parse_function", "root_name", "static_value", "UnsupportedSyntaxError"]
