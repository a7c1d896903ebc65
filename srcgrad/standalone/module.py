"""Standalone gradient modules: generated code that imports NumPy and nothing of srcgrad.

:func:`write` merges the generated modules of several transformed functions
into one Python file that someone without srcgrad can import and ship:

* the srcgrad runtime helpers the code calls (``unbroadcast``, ``grad_like``,
  the cotangent containers, ...) are copied in as source with everything they
  use, and the values the code binds are written as literals or as the NumPy
  and standard-library objects they name (both by :mod:`.portable`).  Anything
  else (a user function called without differentiation, an arbitrary object)
  makes the export fail with an error naming it, since the module could not
  import it.  Errors are the module's own: its ``GradientError`` (see
  :mod:`.exported_errors`), raised alike with or without srcgrad installed;
* two generated modules may use the same module-level name for different
  things (two functions both named ``loss``, two globals ``W``): the later one
  is renamed (``grad_loss_2``) in that module's code, scope-aware and keeping
  every comment; definitions that are identical after renaming (the callee
  pair two gradients both use) are written once.

The header says what the module was generated from, when, and by which
versions of srcgrad, NumPy and Python.

(``srcgrad.export``, the package attribute, is the function of :mod:`.api`
that calls :func:`write`; this module is ``sys.modules["srcgrad.export"]``.)
"""

from __future__ import annotations

import ast
import datetime
import os
import platform
import re
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .. import runtime
from ..errors import SrcGradError
from ..version import __version__
from .bound import bind_fixed
from .portable import (
    ALWAYS,
    NotExportable,
    apply_edits,
    helpers,
    literal,
    unused_unpacked,
)


@dataclass
class Unit:
    """One generated module to export: its source, entry points and bindings."""

    source: str
    entries: tuple[str, ...]
    bindings: dict
    fn: object = None
    mode: str = "grad"
    wrt_names: list = field(default_factory=list)
    #: What the call passes before its own arguments: the object of a bound
    #: method or callable object, a partial's fixed arguments (``fixed``, filling
    #: the parameters ``fixed_names``) and keywords (see :mod:`.bound`).
    fixed: tuple = ()
    fixed_names: tuple = ()
    keywords: dict = field(default_factory=dict)

    def describe(self) -> str:
        code = getattr(self.fn, "__code__", None)
        where = f" ({Path(code.co_filename).name}, line {code.co_firstlineno})" if code else ""
        wrt = f" with respect to {', '.join(self.wrt_names)}" if self.wrt_names else ""
        name = getattr(self.fn, "__qualname__", "?")
        fixed = [*self.fixed_names[:len(self.fixed)], *self.keywords]
        bound = f", {', '.join(fixed)} bound" if fixed else ""
        return f"{', '.join(self.entries)}: {self.mode} of {name}{where}{wrt}{bound}"


# --- merging generated modules --------------------------------------------------------


@dataclass
class _Parsed:
    unit: Unit
    tree: ast.Module
    lines: list[bytes]
    imports: dict = field(default_factory=dict)    # alias -> module
    helpers: set = field(default_factory=set)
    helper_aliases: dict = field(default_factory=dict)  # psi_2 -> psi (a parameter is psi)
    functions: list = field(default_factory=list)  # ast.FunctionDef
    idents: set = field(default_factory=set)


def _parse(unit: Unit) -> _Parsed:
    if unit.fixed or unit.keywords:  # entry points with the gradient's own signature
        source, values, errors = bind_fixed(unit.source, unit.entries, unit.fixed_names,
                                            unit.fixed, unit.keywords)
        if errors:
            raise SrcGradError(f"cannot export {unit.describe()}: the values it is bound to "
                               f"cannot be written into a standalone module:\n  "
                               + "\n  ".join(errors) + "\nExport the gradient of a plain "
                               "function that takes them as arguments instead.")
        unit = replace(unit, source=source, bindings={**unit.bindings, **values})
    tree = ast.parse(unit.source)
    parsed = _Parsed(unit, tree, unit.source.encode("utf-8").splitlines(keepends=True))
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                parsed.imports[alias.asname or alias.name.partition(".")[0]] = \
                    alias.name if alias.asname else alias.name.partition(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module == runtime.__name__:
            parsed.helpers.update(alias.name for alias in node.names)
            parsed.helper_aliases.update((a.asname, a.name) for a in node.names if a.asname)
        elif isinstance(node, ast.FunctionDef):
            parsed.functions.append(node)
        else:
            raise SrcGradError(f"cannot export generated code with a top-level "
                               f"{type(node).__name__} statement")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            parsed.idents.add(node.id)
        elif isinstance(node, ast.arg):
            parsed.idents.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            parsed.idents.add(node.name)
    return parsed


def _locals(node: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            names.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.Lambda)) and sub is not node:
            names.update(a.arg for a in ast.walk(sub.args) if isinstance(a, ast.arg))
    return names


def _function_text(parsed: _Parsed, node: ast.FunctionDef, rename: dict) -> str:
    """The function's source with module-level names renamed, comments kept."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    local = _locals(node)
    edits = [(n.lineno, n.col_offset, n.end_col_offset, rename[n.id]) for n in ast.walk(node)
             if isinstance(n, ast.Name) and n.id in rename and n.id not in local]
    if node.name in rename:
        line = parsed.lines[node.lineno - 1]
        match = re.compile(rb"\bdef\s+(" + re.escape(node.name.encode()) + rb")\b").search(line)
        edits.append((node.lineno, match.start(1), match.end(1), rename[node.name]))
    edits.extend(unused_unpacked(node))
    return apply_edits(parsed.lines[first - 1:node.end_lineno], first, edits)


class _Module:
    """The exported module being assembled: module-level names and their meaning."""

    def __init__(self, reserved: dict, taken_idents: set):
        self.names: dict[str, tuple] = dict(reserved)
        self.avoid = set(taken_idents) | set(reserved)
        self.imports: dict[str, str] = {}
        self.bindings: list[str] = []
        self.functions: list[str] = []
        self.entries: list[str] = []
        self.errors: list[str] = []
        self.origin: dict[str, str] = {}  # emitted function name -> its name when generated

    def fresh(self, name: str) -> str:
        n = 2
        while f"{name}_{n}" in self.avoid or f"{name}_{n}" in self.names:
            n += 1
        self.avoid.add(f"{name}_{n}")
        return f"{name}_{n}"

    def add(self, parsed: _Parsed) -> None:
        unit, meaning, rename = parsed.unit, {}, {}
        for alias, module in parsed.imports.items():
            if module.partition(".")[0] not in ("numpy", *sys.stdlib_module_names):
                self.errors.append(f"'{alias}' is the module {module}, which is neither "
                                   f"NumPy nor part of the standard library")
            meaning[alias] = ("module", module)
        for name in parsed.helpers:
            meaning[name] = ("helper", name)
        for name, helper in sorted(parsed.helper_aliases.items()):  # psi_2 = psi
            meaning[name] = ("value", helper)
        for name, value in sorted(unit.bindings.items()):
            needs: set = set()
            try:
                meaning[name] = ("value", literal(value, needs))
                for needed in sorted(needs):
                    alias = "np" if needed == "numpy" else needed.partition(".")[0]
                    if self.names.get(alias, ("module", needed))[0] != "module" or \
                            meaning.get(alias, ("module", needed))[0] != "module":
                        self.errors.append(f"'{name}' needs the module {needed}, but the "
                                           f"name '{alias}' is taken")
                    self.imports.setdefault(alias, needed)
                    self.names.setdefault(alias, ("module", needed))
            except NotExportable as exc:
                self.errors.append(f"'{name}' is {exc}, which a standalone module can neither "
                                   f"import nor write as a literal")
        for name, kind in meaning.items():
            if self.names.get(name, kind) != kind:  # taken: reuse a name meaning the same
                same = [n for n, k in self.names.items() if k == kind and n.startswith(name)
                        and n not in parsed.idents]
                rename[name] = same[0] if same else self.fresh(name)
        choice = self._match_functions(parsed, rename)
        for name, kind in meaning.items():
            final = rename.get(name, name)
            if final in self.names:
                continue
            self.names[final] = kind
            if kind[0] == "module":
                self.imports[final] = kind[1]
            elif kind[0] == "value":
                self.bindings.append(f"{final} = {kind[1]}\n")
        for node in parsed.functions:
            if choice[node.name] is not None:
                rename[node.name] = choice[node.name]
            elif node.name in self.names:
                rename[node.name] = self.fresh(node.name)
        for node in parsed.functions:
            if choice[node.name] is None:
                final = rename.get(node.name, node.name)
                text = _function_text(parsed, node, rename)
                self.names[final] = ("function", text)
                self.origin[final] = node.name
                self.functions.append(text)
        self.entries.extend(rename.get(e, e) for e in unit.entries)

    def _match_functions(self, parsed: _Parsed, rename: dict) -> dict:
        """For each function of ``parsed``, the name of an identical definition
        already in the module (given ``rename``), or None.  Calls between
        functions make this a fixpoint: start from the first candidate of each
        (a definition made from the same original name) and move on from every
        one whose text, with the current choices applied, differs."""
        candidates = {node.name: [n for n, orig in self.origin.items() if orig == node.name]
                      for node in parsed.functions}
        index = {name: 0 for name in candidates}
        changed = True
        while changed:
            changed = False
            current = {name: (options[index[name]] if index[name] < len(options)
                              else f"{name}\0") for name, options in candidates.items()}
            for node in parsed.functions:
                target = current[node.name]
                if target.endswith("\0"):
                    continue
                text = _function_text(parsed, node, {**rename, **current})
                if self.names.get(target) != ("function", text):
                    index[node.name] += 1
                    changed = True
        return {name: options[index[name]] if index[name] < len(options) else None
                for name, options in candidates.items()}


def render(units: list[Unit], now: datetime.datetime | None = None) -> tuple[str, list[str]]:
    """The exported module's source and its entry point names."""
    parsed = [_parse(u) for u in units]
    definitions, helper_imports, defined = helpers(set().union(*(p.helpers for p in parsed)))
    reserved = {name: ("helper", name) for name in defined}
    reserved.update({alias: ("module", module) for alias, module in helper_imports.items()})
    module = _Module(reserved, set().union(*(p.idents for p in parsed)))
    module.imports.update(helper_imports)
    for p in parsed:
        module.add(p)
    if module.errors:
        raise SrcGradError("cannot export: the generated code uses values a standalone module "
                           "cannot reproduce:\n  " + "\n  ".join(module.errors) +
                           "\nPass them as arguments, or make them numbers or arrays.")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    header = [
        f'"""Gradient code generated by srcgrad {__version__} on {now:%Y-%m-%d %H:%M} UTC',
        f"(NumPy {np.__version__}, Python {platform.python_version()}).",
        "",
        "Generated from:",
        "",
        *(f"    {u.describe()}" for u in units),
        "",
        "It imports only NumPy and the standard library: the srcgrad runtime",
        "helpers it calls are copied in below.  Where srcgrad raises one of its",
        "errors, it raises its own GradientError (a ValueError; `kind` names",
        "srcgrad's class), whether or not srcgrad is installed.  Regenerate it",
        "with srcgrad.export (or the `srcgrad export` command) rather than",
        "editing it.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
    ]
    imports = {False: [], True: []}  # isort's order: the standard library, then NumPy
    for alias, m in sorted(module.imports.items(), key=lambda item: item[1]):
        line = f"import {m}" if m.partition(".")[0] == alias else f"import {m} as {alias}"
        imports[m.partition(".")[0] == "numpy"].append(line)
    blocks = "\n\n".join("\n".join(b) for b in (imports[False], imports[True]) if b)
    names = ", ".join(f'"{e}"' for e in sorted([*module.entries, *ALWAYS]))
    parts = ["\n".join(header) + "\n" + blocks + "\n\n" + f"__all__ = [{names}]\n",
             "# --- srcgrad runtime helpers " + "-" * 58 + "\n"]
    parts.extend(definitions)
    if module.bindings:
        bound = " and the bound objects" if any(u.fixed or u.keywords for u in units) else ""
        title = f"values bound from the source functions' globals and closures{bound} "
        parts.append(f"# --- {title}" + "-" * max(3, 81 - len(title)) + "\n\n"
                     + "".join(module.bindings))
    parts.append("# --- generated code " + "-" * 66 + "\n")
    parts.extend(module.functions)
    text = "\n\n".join(p.rstrip("\n") + "\n" for p in parts)
    return text, module.entries


def write(path, units: list[Unit]) -> list[str]:
    """Write the standalone module for ``units`` to ``path`` (atomically);
    return the names of its entry points, in order."""
    if not units:
        raise SrcGradError("srcgrad.export needs at least one gradient function")
    text, entries = render(units)
    compile(text, str(path), "exec")  # a bug here must not leave a broken file behind
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=".tmp-", suffix=".py")
    except OSError as exc:  # a missing or read-only folder: the user's path, not ours
        raise SrcGradError(f"cannot write the exported module {path}: "
                           f"{exc.strerror or exc} ({target.parent})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # the path a folder, the disk full
            raise SrcGradError(f"cannot write the exported module {path}: "
                               f"{exc.strerror or exc}") from None
        raise
    return entries


__all__ = ["Unit", "render", "write"]
