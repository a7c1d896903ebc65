"""Unreachable branches: code under a condition known when srcgrad compiles.

``if False:``, ``if DEBUG:`` with a module-level ``DEBUG = False``, ``while
False:`` -- Python never runs such a branch, so what it holds must not make
the function an error (the fence runs after this).  The branch is dropped; a
condition that reads a global or a closure variable stays in the code, over
an empty branch, so that the compiled code still depends on that name (it is
regenerated when the name is rebound, as for any global it reads).

Before, a debugging branch that Python never runs (``with`` is not supported);
after, its body is gone and the condition, which reads a global, stays:

    >>> import gast
    >>> from ..ir.syntax import source_of
    >>> from .parse import Resolver
    >>> func = gast.parse('''
    ... def f(x):
    ...     if False:
    ...         print("never")
    ...     if DEBUG:
    ...         with open("log") as log:
    ...             log.write(str(x))
    ...     else:
    ...         x = x * 2.0
    ...     return x
    ... ''').body[0]
    >>> drop_unreachable(func, Resolver({"DEBUG": False}, {}, "f"))
    >>> print(source_of(func))
    def f(x):
        if DEBUG:
            pass
        else:
            x = x * 2.0
        return x
"""

from __future__ import annotations

import gast

from ..ir.syntax import assigned_names, walk

_MISSING = object()
_CONSTANTS = (bool, int, float, str, bytes, type(None))


def drop_unreachable(func: gast.FunctionDef, resolver) -> None:
    """Remove, in place, the branches of ``func`` whose condition is known."""
    nodes = walk(func)
    if not any(isinstance(n, (gast.If, gast.While)) for n in nodes):
        return  # no branch: nothing to drop (and no second walk for the local names)
    local = assigned_names(func) | {a.id for a in func.args.args}
    if func.args.vararg is not None:
        local.add(func.args.vararg.id)
    for node in nodes:
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt):
                setattr(node, field, _block(stmts, resolver, local))


def _block(stmts, resolver, local) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, (gast.If, gast.While)):
            value = _known(stmt.test, resolver, local)
            if value is not _MISSING:
                reads = any(isinstance(n, gast.Name) for n in walk(stmt.test))
                if isinstance(stmt, gast.While):
                    if not value:  # the loop never runs
                        if reads:
                            stmt.body = [gast.copy_location(gast.Pass(), stmt)]
                            out.append(stmt)
                        continue
                elif reads:  # keep the condition: the code depends on the name it reads
                    dead = "orelse" if value else "body"
                    setattr(stmt, dead, [gast.copy_location(gast.Pass(), stmt)]
                            if dead == "body" else [])
                else:
                    out.extend(_block(stmt.body if value else stmt.orelse, resolver, local))
                    continue
        out.append(stmt)
    return out


def _known(test, resolver, local):
    """The truth of ``test`` when it is known at compile time, else ``_MISSING``."""
    if isinstance(test, gast.Constant):
        return bool(test.value)
    if isinstance(test, gast.Name) and test.id not in local:
        value = resolver.lookup(test.id)
        if isinstance(value, _CONSTANTS) and not isinstance(value, type):
            return bool(value)
        return _MISSING
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        value = _known(test.operand, resolver, local)
        return _MISSING if value is _MISSING else not value
    return _MISSING
