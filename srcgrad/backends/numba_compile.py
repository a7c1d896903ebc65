"""Compiling a numba module for its first call's arguments, and checking its integers.

The api settles a numba module at its first call (:func:`srcgrad.backends.settle`):
:func:`compile_for` types and compiles every generated function for those
arguments now, before any generated code runs, so that code numba cannot
compile falls back to the NumPy code whole, never in the middle of a sweep.
Kept apart from the overloads (:mod:`.numba_rules`) because what it decides
is not how a helper is computed but whether the compiled code may run at
all: numba's typing failed (:func:`summary` says on which call), or the
typed code does integer arithmetic where numba's 64-bit integers wrap and
Python's grow (:func:`checked`, remembered next to the generated module for
the processes that load it from numba's disk cache).
"""

from __future__ import annotations

import inspect
import json
import operator
import os
import re
from pathlib import Path

import numba
from numba import types
from numba.core import ir as numba_ir
from numba.core.dispatcher import Dispatcher
from numba.core.errors import NumbaError

from .numba_rules import importable


def compile_for(dispatcher, args, kwargs=None) -> str | None:
    """Compile ``dispatcher`` (a generated function, and with it every
    generated function it calls) for the call ``dispatcher(*args, **kwargs)``;
    None on success (or when the call does not fit the signature: then the
    call itself raises Python's TypeError), else why not."""
    func = dispatcher.py_func
    try:
        bound = inspect.signature(func).bind(*args, **(kwargs or {}))
    except TypeError:
        return None
    bound.apply_defaults()
    for name, value in bound.arguments.items():
        if type(value) not in (float, int, bool):
            return (f"argument {name} is a {type(value).__name__}: the numba backend compiles "
                    f"functions of Python floats and ints")
    try:
        signature = tuple(numba.typeof(value) for value in bound.args)
    except (ValueError, OverflowError) as exc:
        return f"an argument has no numba type ({exc})"
    importable(func.__globals__, func.__code__.co_filename)
    try:
        dispatcher.compile(signature)
    except Exception as exc:  # noqa: BLE001 - numba's typing, or a crash inside numba
        return summary(exc)
    return checked(dispatcher, signature)


#: Integer operations whose result grows past 2**63, where numba's int64 wraps
#: and Python's int does not (or, for ``**`` of a negative exponent, is a float).
_WRAPPING = {operator.mul, operator.pow, operator.lshift, operator.imul, operator.ipow,
             operator.ilshift}
_SUMS = {operator.add, operator.sub, operator.iadd, operator.isub}
_CHECKS = 3                 # what _integer_hazard looks for: a verdict of another is not read


def checked(dispatcher, signature) -> str | None:
    """:func:`_integer_hazard` of a compiled ``dispatcher``, remembered in a file
    next to the generated module: a later process that loads the compiled code
    from numba's disk cache has no typed IR to look at, and reads the verdict
    instead ("" for none; no verdict at all: not compiled, to be safe)."""
    filename = dispatcher.py_func.__code__.co_filename
    on_disk = os.path.isfile(filename)  # not a module kept in memory only
    marker, key = Path(filename + ".numba-checks"), f"{_CHECKS}:{signature}"
    verdicts = {}
    if on_disk:
        try:
            verdicts = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    try:
        reason = _integer_hazard(dispatcher)
    except _NoTypes:
        if key in verdicts:
            return verdicts[key] or None
        # numba's cache of a module no verdict was kept for: compile it again
        for each in _dispatchers(dispatcher):
            if each.signatures:
                each.recompile()
        try:
            reason = _integer_hazard(dispatcher)
        except _NoTypes:
            return "numba loaded it from its cache without the types srcgrad checks " \
                   "integers with"
    if on_disk:
        verdicts[key] = reason or ""
        try:
            marker.write_text(json.dumps(verdicts, sort_keys=True), encoding="utf-8")
        except OSError:
            pass  # an unwritable cache: the next process checks again or runs NumPy
    return reason


class _NoTypes(Exception):
    """A compiled function numba loaded from its disk cache: no typed IR."""


def _integer_hazard(dispatcher) -> str | None:
    """Why the compiled code may give another value than Python's on integers, or
    None: an integer product, power or shift (numba's int64 wraps where Python's
    int grows; ``n ** -2`` is a float in Python), a sum or difference of two
    integer variables (``k = k + k``, Fibonacci's ``a + b`` double each time), or
    an integer made by a call (``int(x * 1e19)``).  A counter (``k + 1``: a
    constant added, so it grows with the iterations) and a loop's own index are
    kept, and so is ``len(...)``.  Looks at every generated function compiled
    with it."""
    for each in _dispatchers(dispatcher):
        for signature in each.signatures:
            annotation = each.overloads[signature].type_annotation
            if not hasattr(annotation, "blocks"):
                raise _NoTypes
            constants = {stmt.target.name: getattr(stmt.value, "value", None)
                         for block in annotation.blocks.values()
                         for stmt in block.body if isinstance(stmt, numba_ir.Assign)
                         and isinstance(stmt.value, (numba_ir.Const, numba_ir.Global,
                                                     numba_ir.FreeVar))}
            for block in annotation.blocks.values():
                for stmt in block.body:
                    if not (isinstance(stmt, numba_ir.Assign)
                            and isinstance(stmt.value, numba_ir.Expr)
                            and isinstance(annotation.typemap.get(stmt.target.name),
                                           types.Integer)):
                        continue
                    expr = stmt.value
                    if expr.op in ("binop", "inplace_binop") and \
                            expr.list_vars() and _operator(expr) in _WRAPPING:
                        return ("it multiplies, raises to a power or shifts integers, which "
                                "numba's 64-bit integers wrap where Python's grow")
                    if expr.op in ("binop", "inplace_binop") and _operator(expr) in _SUMS \
                            and expr.lhs.name not in constants \
                            and expr.rhs.name not in constants:
                        return ("it adds or subtracts integer variables, whose sums "
                                "numba's 64-bit integers may wrap where Python's grow")
                    if expr.op == "call" and constants.get(expr.func.name, None) is not len:
                        # (the length of a range or a tape, as hvp's code takes, is bounded)
                        return ("it makes an integer with a call (int(), round(), len()...), "
                                "which numba's 64-bit integers may wrap")
    return None


def _dispatchers(dispatcher) -> list:
    """``dispatcher`` and the other compiled functions of its module."""
    module = dispatcher.py_func.__globals__
    return [dispatcher] + [v for v in module.values()
                           if isinstance(v, Dispatcher) and v is not dispatcher]


def _operator(expr):
    try:
        return expr.fn
    except (AttributeError, KeyError):  # numba keeps an Expr's fields in a dict
        return None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def summary(exc: Exception) -> str:
    """The line of numba's message that says what it could not compile: the
    call it found no implementation for, or its first line that says something."""
    lines = [line.strip() for line in _ADDRESS.sub("", _ANSI.sub("", str(exc))).splitlines()]
    calls = [line[4:] for line in lines if line.startswith(">>> ")]
    if calls:
        text = f"numba cannot type {calls[0]}"
    else:
        useful = [line for line in lines if line and not line.startswith(("Failed in", "During:"))]
        text = useful[0] if useful else type(exc).__name__
        if not isinstance(exc, NumbaError):  # numba failed on code it should have typed
            text = f"numba failed ({type(exc).__name__}: {text})"
    return text if len(text) <= 160 else text[:157] + "..."


__all__ = ["checked", "compile_for", "summary"]
