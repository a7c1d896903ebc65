"""Making generated code portable: literals for bound values, copies of runtime helpers.

Two things stand between a generated module and a file that runs without
srcgrad, and :mod:`.module` uses this module for both:

* the objects the code binds must be written as source: :func:`literal` turns
  numbers, strings, containers of them and small NumPy arrays into literals,
  and NumPy or standard-library objects into their names (``np.linalg.norm``),
  and raises :class:`NotExportable` for anything else;
* the runtime helpers the code calls (:mod:`srcgrad.runtime` and the modules
  it re-exports) must be copied in: :func:`helpers` collects their
  source and, following the names it reads (``symtable``), the source of
  everything they use; where a helper imports a srcgrad exception, a small
  stand-in class replaces the import.  The one helper that raises srcgrad's
  error classes, ``error_at``, is copied from :mod:`.exported_errors` instead,
  with the module's own error class ``GradientError``, which every exported
  module defines: it raises the same error whether or not srcgrad is installed.

Copied code drops srcgrad's ``# noqa`` comments (an exported module is linted
with its users' settings) and marks never-read unpacked variables with a
leading underscore (``_b`` in ``a, _b = f(x)``), as linters expect.

    >>> literal((1.5, np.arange(2.0)))
    '(1.5, np.array([\\n    0.0, 1.0\\n], dtype="float64"))'
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import math
import re
import symtable
import sys
import textwrap
import types

import numpy as np

from .. import runtime
from ..errors import SrcGradError
from ..runtime import accumulate as runtime_accumulate
from ..runtime import aliases as runtime_aliases
from ..runtime import anomaly as runtime_anomaly
from ..runtime import decompositions as runtime_decompositions
from ..runtime import dicts as runtime_dicts
from ..runtime import elementwise as runtime_elementwise
from ..runtime import errors as runtime_errors
from ..runtime import forward as runtime_forward
from ..runtime import gradients as runtime_gradients
from ..runtime import indexing as runtime_indexing
from ..runtime import inplace as runtime_inplace
from ..runtime import linalg as runtime_linalg
from ..runtime import namespaces as runtime_namespaces
from ..runtime import owned_lists as runtime_owned_lists
from ..runtime import picks as runtime_picks
from ..runtime import reductions as runtime_reductions
from ..runtime import scatter as runtime_scatter
from ..runtime import schedules as runtime_schedules
from ..runtime import shapes as runtime_shapes
from ..runtime import signals as runtime_signals
from ..runtime import special as runtime_special
from ..runtime import state as runtime_state
from ..runtime import steps as runtime_steps
from ..runtime import structures
from ..runtime import summed_products as runtime_summed_products
from . import exported_errors

#: Arrays up to this many elements are written into the module as literals.
MAX_ARRAY_LITERAL = 10_000
#: Where helpers live, in the order their copies are written (a module after
#: those it imports from; the package itself, a facade, last).
_HOMES = (exported_errors, runtime_namespaces, runtime_state, structures, runtime_owned_lists,
          runtime_forward, runtime_dicts,
          runtime_gradients,
          runtime_aliases, runtime_anomaly, runtime_elementwise, runtime_linalg,
          runtime_decompositions,
          runtime_reductions, runtime_summed_products, runtime_signals, runtime_special,
          runtime_shapes, runtime_picks, runtime_scatter, runtime_indexing, runtime_accumulate,
          runtime_steps, runtime_inplace,
          runtime_schedules,
          runtime)
#: Helpers whose copy in an exported module is another definition: srcgrad's
#: ``error_at`` raises srcgrad's classes, the export's raises its own class.
_EXPORTED_AS = {runtime_errors.error_at: exported_errors.error_at}
#: What every exported module defines, used or not: its error class.
ALWAYS = ("GradientError",)
_NOQA = re.compile(r"[ \t]*# noqa\b[^\n]*")


# --- literals -------------------------------------------------------------------------


class NotExportable(Exception):
    pass


def _float(x: float) -> str:
    if math.isfinite(x):
        return repr(x)
    return 'float("nan")' if math.isnan(x) else ('float("inf")' if x > 0 else '-float("inf")')


def literal(value, needs: set | None = None) -> str:
    """Python source that evaluates to ``value``; the modules it needs imported
    (``numpy``, imported as ``np``, or a standard-library module) go to ``needs``."""
    needs = set() if needs is None else needs
    if value is None or type(value) in (bool, int, str, bytes):
        return repr(value)
    if type(value) is float:
        return _float(value)
    if type(value) is complex:
        return f"complex({_float(value.real)}, {_float(value.imag)})"
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        needs.add("numpy")
        return f"np.{type(value).__name__}({literal(value.item())})"
    if isinstance(value, np.dtype):
        needs.add("numpy")
        return f"np.dtype({str(value)!r})"
    if type(value) is np.ndarray and value.dtype.kind in "biufc":
        needs.add("numpy")
        if value.size > MAX_ARRAY_LITERAL:
            raise NotExportable(f"an array of {value.size} elements (more than "
                                 f"{MAX_ARRAY_LITERAL} are not written as literals)")
        items = ", ".join(literal(v) for v in value.ravel().tolist())
        body = textwrap.fill(items, 84, initial_indent="    ", subsequent_indent="    ",
                             break_long_words=False, break_on_hyphens=False)
        shape = f".reshape({value.shape!r})" if value.ndim != 1 else ""
        return f'np.array([\n{body}\n], dtype="{value.dtype.name}"){shape}'
    if type(value) in (tuple, list):
        items = [literal(v, needs) for v in value]
        if type(value) is tuple:
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        return f"[{', '.join(items)}]"
    if type(value) is dict:
        return "{" + ", ".join(f"{literal(k, needs)}: {literal(v, needs)}"
                               for k, v in value.items()) + "}"
    if type(value) is types.SimpleNamespace:  # an object's attributes (bound.py)
        fields = [f"{k}={literal(v, needs)}" for k, v in vars(value).items()]
        needs.add("types")
        return f"types.SimpleNamespace({', '.join(fields)})"
    named = _library_name(value)
    if named is not None:
        if named[1]:
            needs.add(named[1])
        return named[0]
    raise NotExportable(_kind(value))


def _library_name(value):
    """``(expression, module to import)`` for a NumPy or standard-library object."""
    name = getattr(value, "__name__", None)
    if isinstance(name, str):
        for prefix, module in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft),
                               ("np.random", np.random)):
            if getattr(module, name, None) is value:
                return f"{prefix}.{name}", "numpy"
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    if module == "builtins" and getattr(builtins, qualname, None) is value:
        return qualname, None
    if module.partition(".")[0] not in sys.stdlib_module_names:
        return None
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return (f"{module}.{qualname}", module) if obj is value else None


def _kind(value) -> str:
    if isinstance(value, types.FunctionType):
        return f"the function {value.__module__}.{value.__qualname__}"
    if isinstance(value, type):
        return f"the class {value.__module__}.{value.__qualname__}"
    kind = type(value)
    return f"an object of type {kind.__module__}.{kind.__qualname__}"


# --- the runtime helpers --------------------------------------------------------------


def _global_refs(source: str) -> set[str]:
    """Module-level names a definition's source reads."""
    refs = set()

    def walk(table, top):
        for sym in table.get_symbols():
            if sym.is_referenced() and sym.is_global() and not (top and sym.is_assigned()):
                refs.add(sym.get_name())
        for child in table.get_children():
            walk(child, False)

    walk(symtable.symtable(source, "<helper>", "exec"), True)
    return refs


def _drop_relative_imports(source: str, home) -> tuple[str, dict]:
    """``source`` without its ``from .errors import X`` statements, and stand-in
    definitions for the exception classes they imported."""
    tree, lines, standins = ast.parse(source), source.splitlines(keepends=True), {}
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level),
                       key=lambda n: -n.lineno):
        package = importlib.import_module("." * node.level + (node.module or ""),
                                          home.__package__)
        for alias in node.names:
            cls = getattr(package, alias.name)
            if not (isinstance(cls, type) and issubclass(cls, Exception)):
                raise SrcGradError(f"srcgrad cannot export {alias.name}, which the runtime "
                                   f"helpers import from {package.__name__}")
            doc = f"Raised where srcgrad raises {cls.__module__.partition('.')[0]}.{cls.__name__}."
            standins[alias.asname or alias.name] = (
                f"class {alias.asname or alias.name}(Exception):\n    \"\"\"{doc}\"\"\"\n")
        del lines[node.lineno - 1:node.end_lineno]
    return "".join(lines), standins


def helpers(names) -> tuple[list[str], dict[str, str], list[str]]:
    """Copies of the runtime helpers ``names`` and everything they use.

    Returns the definitions (in source order), the modules they import (name
    -> module) and the names they define at module level, which include
    :data:`ALWAYS` (the module's error class) whatever ``names`` are.
    """
    pending = [(name, runtime) for name in sorted(names)]
    pending.extend((name, exported_errors) for name in ALWAYS)
    found: dict[str, tuple] = {}
    imports: dict[str, str] = {}
    standins: dict[str, str] = {}
    copied: dict[str, object] = {}
    while pending:
        name, home = pending.pop()
        if name in standins:
            continue
        obj = vars(home).get(name, getattr(builtins, name, None))
        if obj is None or getattr(builtins, name, None) is obj:
            continue
        if name in copied:  # one namespace: two helpers of one name would clash
            if copied[name] is not obj:
                raise SrcGradError(f"srcgrad cannot export two runtime helpers both named "
                                   f"{name}")
            continue
        copied[name] = obj
        if isinstance(obj, types.ModuleType):
            if obj.__name__.partition(".")[0] == "srcgrad":
                raise SrcGradError(f"the runtime helpers use {obj.__name__}, which an "
                                   f"exported module cannot import")
            imports[name] = obj.__name__
            continue
        if isinstance(obj, types.FunctionType):
            obj = _EXPORTED_AS.get(obj, obj)
        if isinstance(obj, (types.FunctionType, type)):
            owner = sys.modules[obj.__module__]
            if owner not in _HOMES:
                raise SrcGradError(f"the runtime helper {name} is not defined in srcgrad")
            source, extra = _drop_relative_imports(textwrap.dedent(inspect.getsource(obj)), owner)
            source = _tidy(_NOQA.sub("", source))  # srcgrad's lint exceptions are not the export's
            standins.update(extra)
            order = (_HOMES.index(owner), obj.__code__.co_firstlineno if isinstance(
                obj, types.FunctionType) else inspect.getsourcelines(obj)[1])
            found[name] = (order, source)
            pending.extend((ref, owner) for ref in _global_refs(source))
        else:
            found[name] = ((-1, 0), f"{name} = {literal(obj)}\n")
    definitions = list(standins.values()) + [src for _, src in sorted(found.values())]
    defined = sorted(set(found) | set(standins))
    return definitions, imports, defined


# --- tidying copied code --------------------------------------------------------------


def unused_unpacked(node) -> list:
    """Edits renaming ``b`` to ``_b`` in ``a, b = f(x)`` when ``b`` is never read
    (in every function in ``node``), the convention linters expect."""
    edits = []
    for fn in ast.walk(node):
        if not isinstance(fn, ast.FunctionDef):
            continue
        loaded = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Load)}
        idents = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        unpacked = {n.id for stmt in ast.walk(fn) if isinstance(stmt, ast.Assign)
                    for target in stmt.targets if isinstance(target, (ast.Tuple, ast.List))
                    for n in ast.walk(target) if isinstance(n, ast.Name)}
        for name in sorted(unpacked - loaded):
            if not name.startswith("_") and f"_{name}" not in idents:
                edits.extend((n.lineno, n.col_offset, n.end_col_offset, f"_{name}")
                             for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name)
    return edits


def apply_edits(lines: list[bytes], first: int, edits) -> str:
    """``lines`` (starting at line ``first``) with ``(line, start, end, text)`` edits,
    columns in UTF-8 bytes as :mod:`ast` gives them."""
    lines = list(lines)
    for lineno, start, end, new in sorted(set(edits), reverse=True):
        i = lineno - first
        lines[i] = lines[i][:start] + new.encode("utf-8") + lines[i][end:]
    return b"".join(lines).decode("utf-8")


def _tidy(source: str) -> str:
    """``source`` with never-read unpacked variables marked as such."""
    return apply_edits(source.encode("utf-8").splitlines(keepends=True), 1,
                  unused_unpacked(ast.parse(source)))


__all__ = ["MAX_ARRAY_LITERAL", "NotExportable", "apply_edits", "helpers", "literal",
           "unused_unpacked"]
