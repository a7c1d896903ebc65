"""Calls run as written that may change a value being differentiated in place.

srcgrad follows in-place updates it can see as assignments (``x[i] = v``,
``x[i] += v``, ``xs.append(v)``, and what :mod:`..normalize` rewrites into
them: ``y.fill(v)``, ``np.copyto(y, v)``, ``f(x, out=y)`` on a whole local).
Any other statement-level call (``y.sort()``, ``np.put(y, i, v)``,
``np.add.at(y, i, v)``, ``y[1:].fill(v)``, ``np.exp(x, out=y, where=m)``) is
kept as written, opaque: its effect on its arguments is invisible to both
modes.  Reverse mode would give the changed array no cotangent path and forward
mode would leave its tangent as it was -- a silently wrong derivative either
way -- so both modes call :func:`check_in_place_calls` and refuse the same
code, naming the call, the array it may change and what to write instead.

    >>> import numpy as np
    >>> def f(x):
    ...     y = x * 1.0
    ...     y.sort()
    ...     return np.sum(y)
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> program = normalize(parse_function(f))
    >>> check_in_place_calls(program, set())        # nothing differentiated: fine
    >>> try:
    ...     check_in_place_calls(program, {"x", "y"})
    ... except UnsupportedSyntaxError as error:
    ...     print(error.message.split(":")[0])
    'y.sort()' may change 'y' in place, and a value being differentiated flows into it, in a way srcgrad cannot follow
"""

from __future__ import annotations

import io
import logging
import warnings

import gast

from .. import ir
from ..errors import UnsupportedSyntaxError
from ..frontend.fence import in_place_message
from ..ir.syntax import source_of, walk
from ..normalize.none_results import writes_into_argument


def check_in_place_calls(program: ir.Program, varied) -> None:
    """Raise a located :class:`UnsupportedSyntaxError` at the first opaque call
    statement that reads a value in ``varied`` (the names being differentiated
    at that point of ``program``)."""
    for stmt in ir.walk_statements(program.body):
        if isinstance(stmt, gast.Expr) and getattr(stmt, "op", None) is not None \
                and stmt.op.primitive is ir.OPAQUE and not harmless(stmt.value, program.free) \
                and not getattr(stmt, "records", False) \
                and any(n in varied for n in ir.names_in(stmt)):
            message = store_message(stmt, varied, program) if getattr(
                stmt, "attribute_store", None) is not None \
                else in_place_message(stmt.op.node, program.free)
            raise UnsupportedSyntaxError(
                    message, filename=program.filename,
                    lineno=getattr(stmt, "lineno", None), col=getattr(stmt, "col_offset", None))


def store_message(stmt, varied, program) -> str:
    """Why an attribute assignment kept as written (``self.m = v``, see
    normalize/attribute_stores.py) is refused where a value being
    differentiated reaches it."""
    user = stmt.op.node  # the statement as written: obj.a = v, obj.a op= v
    shown = source_of(user).strip()
    owner = source_of(stmt.attribute_target.value)
    obj, _, stored = stmt.value.args
    cls = getattr(program, "param_classes", {}).get(getattr(obj, "id", None))
    if cls is not None:  # self in a method, an object passed: its class named
        owner += f"' (an object of class {cls.__name__})"
    else:
        owner += "'"
    attr = stmt.attribute_target.attr
    if attr in ("shape", "dtype", "strides") and cls is None:  # v.shape = (2, 2) of an array
        # (review s37 R5-8: the message spoke of an object's fields)
        base = owner.rstrip("'")
        rewrite = {"shape": f"{base} = {base}.reshape(...)",
                   "dtype": f"{base} = {base}.view(...) or {base}.astype(...)",
                   "strides": f"np.lib.stride_tricks.sliding_window_view or indexing"}[attr]
        return (f"'{shown}' changes the {attr} of the array '{base}' in place, which "
                f"srcgrad does not follow (its derivative is carried by values, not by an "
                f"array's attributes set afterwards); write {rewrite}, a new array with "
                f"the same values")
    if any(n in varied for n in ir.names_in(stored)):
        return (f"'{shown}' stores a value being differentiated in an attribute of "
                f"'{owner}: srcgrad runs an attribute assignment as written and carries "
                f"no derivative through it (a step counter, a flag, a schedule -- values "
                f"without a derivative -- are followed).  Keep differentiated state in "
                f"local variables, passed to the method and returned "
                f"(w, m = opt.step(w, m, g)), or build a new dataclass object holding it")
    return (f"'{shown}' assigns an attribute of '{owner}, which holds values being "
            f"differentiated: srcgrad carries their derivatives through the fields the "
            f"object was built or passed with, not through attributes assigned "
            f"afterwards.  Keep the new value in a local variable, or build a new "
            f"dataclass object holding it")


#: Methods of a logger (and functions of the logging module) that only read
#: their arguments: they format and emit a record, as print writes a line.
_LOGGING = frozenset(("debug", "info", "warning", "warn", "error", "critical", "exception",
                      "log"))


#: Methods of a stream (``sys.stderr``, a file) that write what they are given and
#: change nothing else: no ``readinto``, which fills its argument.
_STREAM_WRITES = frozenset(("write", "writelines", "flush"))


def harmless(expr, free=None) -> bool:
    """A statement-level call that cannot change its arguments: ``print(...)``,
    logging (``log.debug("w=%s", w)`` on a logger, ``logging.info(...)``,
    ``warnings.warn(...)``), and the run-time checks srcgrad itself inserts
    (``untouched(r, x, ...)``).  Like print, they run as written, with the
    forward values, and give no derivative."""
    return isinstance(expr, gast.Call) and (
        getattr(expr.func, "helper", None) is not None
        or only_reports(expr, free) and not _writes_inside(expr, free or {}))


def _writes_inside(expr, free) -> bool:
    """Whether a call in the arguments of ``expr`` writes into its first
    argument (``print(np.putmask(y, m, v))``): showing its None result is
    harmless, the change it makes is not (it would go unseen by both modes)."""
    return any(isinstance(sub, gast.Call) and writes_into_argument(_callee(sub.func, free))
               for sub in walk(expr) if sub is not expr)


def _callee(func, free):
    """The object the callee ``func`` names through the free names (``np.putmask``,
    ``np.add.at``), or None."""
    if isinstance(func, gast.Name):
        return free.get(func.id)
    if isinstance(func, gast.Attribute):
        return getattr(_callee(func.value, free), func.attr, None)
    return None


def only_reports(expr, free=None) -> bool:
    """A call that only shows its arguments: ``print(...)``, a logger's or the
    logging module's record, ``warnings.warn(...)``, a stream's ``write``
    (``sys.stderr.write(text)``).  (``HISTORY.append(float(l))``, a number
    recorded in a global list, is one too where the function never reads the
    list: the normaliser marks it, normalize/records_outside.py.)  A checkpointed loop's
    reruns leave it out: Python shows each once (memory/checkpointing.py)."""
    if not isinstance(expr, gast.Call):
        return False
    func = expr.func
    if isinstance(func, gast.Name):
        return func.id == "print"
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and free:
        owner = free.get(func.value.id)
        if owner is logging or isinstance(owner, (logging.Logger, logging.LoggerAdapter)):
            return func.attr in _LOGGING
        if owner is warnings and func.attr == "warn":
            return True
    if isinstance(func, gast.Attribute) and func.attr in _STREAM_WRITES and free:
        # sys.stderr.write(f"y={y}\n"), a log file's write: the stream takes text
        # (or bytes) and changes only itself, as print does (review s34, R2-17)
        return isinstance(_callee(func.value, free), io.IOBase)
    return False
