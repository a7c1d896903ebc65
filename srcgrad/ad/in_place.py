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

import gast

from .. import ir
from ..errors import UnsupportedSyntaxError
from ..frontend.fence import in_place_message


def check_in_place_calls(program: ir.Program, varied) -> None:
    """Raise a located :class:`UnsupportedSyntaxError` at the first opaque call
    statement that reads a value in ``varied`` (the names being differentiated
    at that point of ``program``)."""
    for stmt in ir.walk_statements(program.body):
        if isinstance(stmt, gast.Expr) and getattr(stmt, "op", None) is not None \
                and stmt.op.primitive is ir.OPAQUE and not harmless(stmt.value) \
                and any(n in varied for n in ir.names_in(stmt)):
            raise UnsupportedSyntaxError(
                    in_place_message(stmt.op.node, program.free), filename=program.filename,
                    lineno=getattr(stmt, "lineno", None), col=getattr(stmt, "col_offset", None))


def harmless(expr) -> bool:
    """A statement-level call that cannot change its arguments: print(...), and
    the run-time checks srcgrad itself inserts (``untouched(r, x, ...)``)."""
    return isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) \
        and (expr.func.id in ("print",) or getattr(expr.func, "helper", None) is not None)
