"""Refuse an np.matrix or a masked array the code reads from outside its arguments.

:func:`.arguments.check_args` refuses an argument that is (or holds) an
ndarray subclass whose arithmetic is not ndarray's (:mod:`.subclasses`).  The
same array reaches the generated code as well through a global (``M * x``),
a closure cell, a default (``def f(x, m=M)``), a field of a module-level
object (``OBJ.m``), an item of a module-level list or dict (``LIST[0]``,
``D["m"]``), or in a function the differentiated one calls: each is read as
the code runs, differentiated with ndarray's rules, silently wrong (review
s37 P-1: ``np.sum(M * x)`` with ``M`` masked gave the gradient 1.0 at the
masked entry, where the function's is 0; an ``np.matrix`` got the transposed
product's).  Every such value is among those the disk cache's survey reaches
from the function (:mod:`..cache.provenance`: globals and closure cells of each
user function reached, defaults, members of modules, classes and objects for
the names the code reads); :func:`check_reached` looks at each, and into the
lists, tuples, dicts and objects it holds, and raises
:class:`NonDifferentiableError` at the line that reads it.  It runs whenever
code is made or loaded from disk for the function (:class:`.compiled.Compiled`),
so rebinding a global regenerates and checks again; an item put into a
module-level list after the code was made is not seen.

    >>> import numpy as np
    >>> from srcgrad._doctest_helpers import caller
    >>> from ..cache import provenance
    >>> check_reached(provenance.survey(caller)) is None   # nothing refused
    True
    >>> M = np.ma.masked_array([1.0, 2.0], mask=[0, 1])
    >>> def f(x):
    ...     return np.sum(M * x)
    >>> check_reached(provenance.survey(f))
    Traceback (most recent call last):
    srcgrad.errors.NonDifferentiableError: M (a global) read by f is a masked array, whose sums ...
"""

from __future__ import annotations

import ast
import dis
import inspect
import textwrap
import types

from ..errors import NonDifferentiableError
from .subclasses import held_refusal, refusal

__all__ = ["check_reached"]

_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF"})


def check_reached(found) -> None:
    """Raise :class:`NonDifferentiableError` for the first value ``found`` (a
    :class:`..cache.provenance.Survey`) reached outside the arguments that is,
    or holds, an array :func:`.subclasses.refusal` refuses (module docstring)."""
    for obj, path in list(found.seen.values()):
        if path[0] in ("entry", "receiver", "argument") or isinstance(
                obj, (types.FunctionType, type, types.ModuleType)):
            continue  # arguments: check_args; functions: their reads are surveyed
        route, what = "", refusal(obj)
        if what is None:
            held = held_refusal(obj, found.names)
            if held is None:
                continue
            route, what = held
        _refuse(found, path, route, what)


#: Calls and attributes that make an ndarray of (or read metadata from) an
#: np.matrix or masked array: a read that is only their operand is no
#: arithmetic of the subclass (diff review D-5: np.asarray(M), MA.filled(0.0)).
_CONVERSIONS = frozenset({"np.asarray", "np.array", "np.ma.getdata", "np.ma.filled",
                          "numpy.asarray", "numpy.array", "len", "isinstance", "type",
                          "np.shape", "np.ndim", "np.size"})
_METADATA = frozenset({"filled", "data", "A", "getA", "shape", "mask", "ndim", "size",
                       "dtype", "count", "compressed"})


def _converted_only(functions, root, text) -> bool:
    """Whether every read of the name ``root`` in the source of each of
    ``functions`` is ``text`` (``M``, ``OBJ.m``, ``LIST[1]``) as the operand
    of a conversion or a metadata read (:data:`_CONVERSIONS`,
    :data:`_METADATA`), and there is one; False where a source cannot be read,
    or ``root`` is read otherwise (passed on, iterated: refused)."""
    found = False
    for fn in functions:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            return False
        parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and node.id == root):
                continue
            while ast.unparse(node) != text and isinstance(
                    parents.get(id(node)), (ast.Attribute, ast.Subscript)) \
                    and parents[id(node)].value is node:
                node = parents[id(node)]
            parent = parents.get(id(node))
            if ast.unparse(node) != text or not (
                    (isinstance(parent, ast.Attribute) and parent.attr in _METADATA)
                    or (isinstance(parent, ast.Call) and parent.args and parent.args[0] is node
                        and ast.unparse(parent.func) in _CONVERSIONS)):
                return False
            found = True
    return found


def _refuse(found, path, route, refused) -> None:
    what, advice = refused
    fn, name = _reader(found, path)
    text = _expression(fn, path)
    if not text.startswith("the default") and name is not None and _converted_only(
            [f for f, _ in found.functions], name, text + route):
        return  # A = np.asarray(M): ndarray arithmetic from there on
    if text.startswith("the default"):
        shown = f"{text} of {_name(fn)}" + (f" holds, at {route}," if route else " is")
    else:
        where = {"global": "a global", "closure": "a closure variable"}.get(
            _root(path), "a value")
        shown = f"{text}{route} ({where}) read by {_name(fn)} is"
    lineno, col = _where(fn, name)
    raise NonDifferentiableError(
        f"{shown} {what}: srcgrad's rules follow np.ndarray's arithmetic, which would "
        f"give the derivative of other code; use {advice}",
        filename=getattr(getattr(fn, "__code__", None), "co_filename", None),
        lineno=lineno, col=col)


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "the function")


def _function_at(found, path):
    for fn, at in found.functions:
        if at == path:
            return fn
    return None


def _root(path) -> str:
    """Where ``path`` starts in the code: 'global', 'closure', ..."""
    while path[0] in ("attr", "index") and path[1][0] not in ("entry", "receiver"):
        path = path[1]
    return path[0]


def _reader(found, path):
    """``(function, name)``: the function whose global, closure cell or
    default ``path`` starts at, and the name it reads (None for a default)."""
    while path[0] in ("attr", "index"):
        inner = path[1]
        if path[0] == "attr" and path[2] in ("__defaults__", "__kwdefaults__") \
                and _function_at(found, inner) is not None:
            return _function_at(found, inner), None
        path = inner
    if path[0] in ("global", "closure"):
        return _function_at(found, path[1]), path[2]
    return _function_at(found, path), None


def _expression(fn, path) -> str:
    """``path`` as the code reads it: ``LIST[0]``, ``OBJ.m``, ``helper``, or
    ``the default of parameter 'm'``."""
    kind = path[0]
    if kind in ("global", "closure"):
        return path[2]
    if kind == "index" and path[1][0] == "attr" \
            and path[1][2] in ("__defaults__", "__kwdefaults__"):
        key = path[2]
        if isinstance(key, int) and fn is not None and fn.__defaults__:
            code = fn.__code__
            params = code.co_varnames[:code.co_argcount]
            key = params[len(params) - len(fn.__defaults__) + key]
        return f"the default of parameter '{key}'"
    if kind == "attr":
        return f"{_expression(fn, path[1])}.{path[2]}"
    if kind == "index":
        return f"{_expression(fn, path[1])}[{path[2]!r}]"
    return "a value"


def _where(fn, name):
    """The line and column of the first read of ``name`` in ``fn`` (the
    functions it defines too), or its ``def`` line."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None, None
    if name is not None:
        todo = [code]
        while todo:
            current = todo.pop(0)
            for ins in dis.get_instructions(current):
                if ins.opname in _LOADS and ins.argval == name and ins.positions \
                        and ins.positions.lineno:
                    return ins.positions.lineno, ins.positions.col_offset
            todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return code.co_firstlineno, None
