"""Imports point one way, down the pipeline (issue 14; the stages are drawn in ../shared/DESIGN.md).

Every module under ``srcgrad/`` is parsed with :mod:`ast`; every import
statement counts, at module level or inside a function (a function-local
import only delays a dependency, it does not remove it).  Docstring examples
are strings, so the imports they show are not seen.  The checks:

- every module sits in a stage of ``STAGES``; a module may import from its own
  stage and from earlier ones, never from a later one;
- no import cycle between modules (within a stage too);
- no private name (``_x``) crosses a module boundary: not imported, not read
  as ``module._x``; ``srcgrad._doctest_helpers`` is for docstring examples only;
- ``runtime/`` is what generated code imports, so it imports nothing of
  srcgrad outside itself -- except ``srcgrad.errors`` in ``runtime/errors.py``,
  looked up lazily so an exported module runs without srcgrad installed.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import srcgrad

ROOT = Path(srcgrad.__file__).resolve().parent

# Lowest first.  An entry is a module ("errors") or a package ("runtime/",
# meaning the package and everything below it).
STAGES = [
    ["errors", "version", "options", "_doctest_helpers"],
    ["runtime/"],
    ["ir/"],
    ["rules/"],
    ["frontend/"],
    ["normalize/"],
    ["analysis/"],
    ["optimize/"],  # AD-agnostic rewrites that ad/ and memory/ call
    ["ad/"],
    ["memory/"],
    ["assemble", "pipeline"],
    ["backends/"],  # engines that run the generated module (numba), below the cache that stores it
    ["cache/"],
    ["standalone/"],
    ["api/"],
    ["cli_inputs", "cli", "__main__", "__init__"],
]

# The one import runtime/ makes outside itself: error classes with source
# locations when srcgrad is installed, plain ones when an export runs alone.
RUNTIME_EXCEPTIONS = {("srcgrad.runtime.errors", "srcgrad.errors")}


def module_name(path: Path) -> str:
    parts = ["srcgrad", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def stage_of(module: str) -> int:
    rest = module.split(".")[1:]
    for index, entries in enumerate(STAGES):
        for entry in entries:
            if entry.endswith("/"):
                if rest and rest[0] == entry[:-1]:
                    return index
            elif rest == ([] if entry == "__init__" else [entry]):
                return index
    raise AssertionError(f"{module} is in no stage: add it to STAGES in {__file__}")


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class Import:
    """One imported srcgrad module, with the names taken from it."""

    def __init__(self, target: str, names: list[str], line: int):
        self.target, self.names, self.line = target, names, line


def imports_of(module: str, path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    aliases = {}  # a local name bound to a srcgrad module -> that module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "srcgrad" or alias.name.startswith("srcgrad."):
                    found.append(Import(alias.name, [], node.lineno))
                    aliases[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else "srcgrad")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source != "srcgrad" and not source.startswith("srcgrad."):
                continue
            plain = []
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in MODULES:
                    found.append(Import(submodule, [], node.lineno))
                    aliases[alias.asname or alias.name] = submodule
                else:
                    plain.append(alias.name)
            if plain:
                found.append(Import(source, plain, node.lineno))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and is_private(node.attr)):
            found.append(Import(aliases[node.value.id], [node.attr], node.lineno))
    return found


@functools.cache
def graph() -> dict[str, list[Import]]:
    """Each module's imports, parsed when a test first asks (not on import:
    every pytest-xdist worker collects this file, one runs its tests)."""
    return {module: imports_of(module, path) for module, path in MODULES.items()}


def where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT.parent)}:{line}"


def test_every_import_names_a_module():
    missing = [f"{where(m, i.line)} imports {i.target}"
               for m, imports in graph().items() for i in imports if i.target not in MODULES]
    assert not missing, "\n".join(missing)


def test_every_module_has_a_stage():
    for module in MODULES:
        stage_of(module)


def test_no_import_from_a_later_stage():
    upward = [f"{where(m, i.line)}: {m} (stage {stage_of(m)}) imports {i.target} "
              f"(stage {stage_of(i.target)})"
              for m, imports in graph().items() for i in imports
              if i.target in MODULES and stage_of(i.target) > stage_of(m)]
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    edges = {m: sorted({i.target for i in imports if i.target in MODULES and i.target != m})
             for m, imports in graph().items()}
    state, path, cycles = {}, [], []

    def visit(module):
        state[module] = "open"
        path.append(module)
        for target in edges[module]:
            if state.get(target) == "open":
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module)
    assert not cycles, "\n".join(cycles)


def test_no_private_name_crosses_modules():
    leaks = [f"{where(m, i.line)}: {m} takes {name} from {i.target}"
             for m, imports in graph().items() for i in imports if i.target != m
             for name in i.names if is_private(name)]
    leaks += [f"{where(m, i.line)}: {m} imports the private module {i.target}"
              for m, imports in graph().items() for i in imports
              if any(is_private(part) for part in i.target.split("."))]
    assert not leaks, "\n".join(leaks)


def test_runtime_imports_only_runtime():
    outside = [f"{where(m, i.line)}: {m} imports {i.target}"
               for m, imports in graph().items() if m.startswith("srcgrad.runtime")
               for i in imports
               if not (i.target + ".").startswith("srcgrad.runtime.")
               and (m, i.target) not in RUNTIME_EXCEPTIONS]
    assert not outside, "\n".join(outside)


@pytest.mark.parametrize("source, expected", [
    ("from .x import y", "srcgrad.pkg.x"),
    ("from .. import errors", "srcgrad.errors"),
    ("from ..ir import clone", "srcgrad.ir"),
    ("import srcgrad.ir.syntax", "srcgrad.ir.syntax"),
])
def test_relative_imports_resolve(tmp_path, source, expected, monkeypatch):
    """The checker itself: relative imports resolve against the module's package."""
    path = tmp_path / "mod.py"
    path.write_text(source + "\n")
    monkeypatch.setitem(MODULES, "srcgrad.pkg.x", path)
    monkeypatch.setitem(MODULES, "srcgrad.pkg.mod", path)
    [found] = imports_of("srcgrad.pkg.mod", path)
    assert found.target == expected
