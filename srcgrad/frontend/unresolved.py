"""Names that do not resolve: refused where Python would fail, as the code runs.

A function may name what does not exist on a path it never takes: a
version check's other branch (``np.trapz`` where NumPy 2.4 has only
``np.trapezoid``), a debugging helper imported only elsewhere.  Python fails
there only if that line runs, so srcgrad must not refuse the whole function
when it compiles (it does where every call gets there: a statement of the
function's own body before any ``return`` or ``raise``).  Each other statement that reads a free name bound nowhere, or
an attribute a module lacks, becomes a ``raise`` of a located
:class:`SrcGradError` carrying Python's own message: it fires where Python's
``NameError`` or ``AttributeError`` would, and nowhere else.  (A condition
known when srcgrad compiles, ``hasattr(np, "trapezoid")``, has already
dropped its dead branch: :mod:`.reachable`.)

Before, a branch naming an attribute this NumPy lacks; after, that branch
raises, located:

    >>> import gast
    >>> import numpy as np
    >>> from ..ir.syntax import source_of
    >>> from .parse import Resolver
    >>> func = gast.parse('''
    ... def f(y):
    ...     if y.ndim > 1:
    ...         y = np.no_such_function(y)
    ...     return np.sum(y)
    ... ''').body[0]
    >>> defer_unresolved(func, Resolver({"np": np}, {}, "f"), "model.py")
    >>> print(source_of(func))
    def f(y):
        if y.ndim > 1:
            raise error_at('SrcGradError', "module 'numpy' has no attribute 'no_such_function'", ('model.py', 4, 12))
        return np.sum(y)
"""

from __future__ import annotations

import builtins
import types

import gast

from ..errors import SrcGradError
from ..ir.syntax import child_nodes, walk, walk_nodes
from ..runtime.errors import error_at

_NESTED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)
#: Statements that hold no statement: a return or raise among their nodes is themselves.
_SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return, gast.Raise,
           gast.Pass, gast.Break, gast.Continue, gast.Delete, gast.Assert, gast.Import,
           gast.ImportFrom, gast.Global, gast.Nonlocal)


def defer_unresolved(func: gast.FunctionDef, resolver, filename: str) -> None:
    """Replace, in place, each statement of ``func`` (not of the functions it
    defines) that reads a name or module attribute that does not exist by a
    ``raise`` of the located error Python's own would be."""
    bound = _bound_anywhere(func)
    always = True  # the function's own statements run until one may leave it
    complete = set()  # ids of the statements found reading nothing missing
    for stmt in func.body:
        if always and not isinstance(stmt, _NESTED):
            missing = _first_missing(stmt, resolver, bound)
            if missing is not None:  # every call fails there: refused now
                node, message = missing
                raise SrcGradError(message, filename=filename, lineno=node.lineno,
                                   col=node.col_offset)
            complete.add(id(stmt))
        always = always and not _may_leave(stmt)
    _blocks(func, resolver, bound, filename, complete)


def _may_leave(stmt) -> bool:
    """Whether ``stmt`` holds a ``return`` or ``raise`` (not in a nested function);
    a statement holding no statement only by being one (no walk of its nodes)."""
    if isinstance(stmt, _SIMPLE):
        return isinstance(stmt, (gast.Return, gast.Raise))
    return any(isinstance(n, (gast.Return, gast.Raise)) for n in _reads(stmt))


def _blocks(node, resolver, bound, filename, complete=frozenset()) -> None:
    """Each statement of ``node``'s blocks that reads a missing name replaced by
    its ``raise``; those in ``complete`` are known not to (not looked at again:
    the function's own statements were, just before)."""
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        for i, stmt in enumerate(stmts):
            # (try is refused on its own: what its handlers catch is Python's error)
            if isinstance(stmt, gast.stmt) and not isinstance(stmt, (*_NESTED, gast.Try)):
                missing = None if id(stmt) in complete else \
                    _first_missing(stmt, resolver, bound)
                if missing is not None:
                    stmts[i] = _raise(stmt, *missing, filename)
                    continue
                _blocks(stmt, resolver, bound, filename)


def _first_missing(stmt, resolver, bound):
    """``(node, message)`` for the first free name or module attribute that
    ``stmt`` itself reads (its nested blocks are statements of their own) and
    that does not exist; None if all do."""
    for field, value in gast.iter_fields(stmt):
        if field in ("body", "orelse"):
            continue
        for part in value if isinstance(value, list) else [value]:
            if not isinstance(part, gast.AST):
                continue
            # nearly every part reads nothing missing: told from its nodes in any
            # order (no nested function: those are not entered), and walked in
            # source order only to find the first missing one
            nodes = walk_nodes(part)
            if not any(isinstance(n, _NESTED) or _missing(n, resolver, bound) is not None
                       for n in nodes):
                continue
            for node in _reads(part):
                found = _missing(node, resolver, bound)
                if found is not None:
                    return node, found
    return None


def _reads(node) -> list:
    """The nodes of ``node`` in source order, not entering nested functions (a
    list made depth first with a stack: a recursive generator was most of the
    parse of a long function)."""
    if isinstance(node, _NESTED):
        return []
    out, todo = [], [node]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(reversed([c for c in child_nodes(current) if not isinstance(c, _NESTED)]))
    return out


def _missing(node, resolver, bound):
    """Python's message where ``node`` (a name, or an attribute of a module
    named by one) would fail, or None."""
    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
        name = node.id
        if name in bound or name in resolver.closure or name in resolver.globals \
                or hasattr(builtins, name):
            return None
        return f"name '{name}' is not defined"
    if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load):
        owner = _module(node.value, resolver, bound)
        if owner is not None:
            try:
                getattr(owner, node.attr)
            except AttributeError as exc:
                return str(exc)
            except Exception:  # noqa: BLE001 -- a module's __getattr__ failing otherwise
                return None
    return None


def _module(node, resolver, bound):
    if isinstance(node, gast.Name) and node.id not in bound:
        value = resolver.closure.get(node.id, resolver.globals.get(node.id))
    elif isinstance(node, gast.Attribute):
        value = getattr(_module(node.value, resolver, bound), node.attr, None)
    else:
        return None
    return value if isinstance(value, types.ModuleType) else None


def _bound_anywhere(func) -> set:
    """Every name ``func`` binds anywhere, nested functions and comprehensions
    included: those are left to the compiler (a name bound on some path is
    not a missing one)."""
    bound = set()
    for node in walk_nodes(func):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            bound.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, gast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, gast.ExceptHandler) and isinstance(node.name, str):
            bound.add(node.name)
    return bound


def _raise(stmt, node, message, filename):
    """``raise error_at('SrcGradError', message, where)`` in place of ``stmt``."""
    name = gast.Name(id="error_at", ctx=gast.Load(), annotation=None, type_comment=None)
    name.helper = error_at
    where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
        filename, node.lineno, node.col_offset)], ctx=gast.Load())
    call = gast.Call(func=name, args=[gast.Constant(value="SrcGradError", kind=None),
                                      gast.Constant(value=message, kind=None), where],
                     keywords=[])
    out = gast.Raise(exc=call, cause=None)
    for sub in walk(out):
        gast.copy_location(sub, node)
    return gast.copy_location(out, stmt)
