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

import builtins
import types

import gast

from ..ir.syntax import assigned_names, walk
from ..ir.transformer import Transformer

_MISSING = object()
_CONSTANTS = (bool, int, float, str, bytes, type(None))


def drop_unreachable(func: gast.FunctionDef, resolver) -> None:
    """Remove, in place, the branches of ``func`` whose condition is known."""
    nodes = walk(func)
    if not any(isinstance(n, (gast.If, gast.While, gast.IfExp)) for n in nodes):
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
                reads = _reads(stmt.test, resolver, local)
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
                    if out and isinstance(out[-1], _ENDS):
                        break  # the rest of the block never runs (if hasattr(...): return)
                    continue
        _drop_dead_choices(stmt, resolver, local)
        out.append(stmt)
    return out


#: Statements after which the rest of their block never runs.
_ENDS = (gast.Return, gast.Raise, gast.Break, gast.Continue)


def _drop_dead_choices(stmt, resolver, local) -> None:
    """Replace, in ``stmt``'s own expressions (not its nested blocks, which
    :func:`drop_unreachable` reaches), ``a if c else b`` by the side Python
    takes where ``c`` is known and reads nothing that may change
    (``np.trapezoid(y) if hasattr(np, "trapezoid") else np.trapz(y)``)."""
    for field, value in gast.iter_fields(stmt):
        if isinstance(value, gast.expr):
            setattr(stmt, field, _ChoiceDropper(resolver, local).visit(value))
        elif isinstance(value, list):
            value[:] = [_ChoiceDropper(resolver, local).visit(v)
                        if isinstance(v, gast.expr) else v for v in value]


class _ChoiceDropper(Transformer):
    def __init__(self, resolver, local):
        self.resolver, self.local = resolver, local

    def visit_IfExp(self, node):
        self.generic_visit(node)
        value = _known(node.test, self.resolver, self.local)
        if value is _MISSING or _reads(node.test, self.resolver, self.local):
            return node
        return node.body if value else node.orelse


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
    has = _module_hasattr(test, resolver, local)
    if has is not None:
        return has
    return _MISSING


def _module_hasattr(test, resolver, local):
    """``hasattr(np, "trapezoid")`` (a module, by a global name or its
    attribute, and a constant name): what it is, or None.  Version checks in
    library code pick a branch this way; the disk cache's key holds NumPy's
    version, and the branch Python never runs may name what this version
    lacks (``np.trapz``)."""
    if not (isinstance(test, gast.Call) and isinstance(test.func, gast.Name)
            and test.func.id == "hasattr" and test.func.id not in local
            and resolver.lookup("hasattr") is builtins.hasattr
            and len(test.args) == 2 and not test.keywords
            and isinstance(test.args[1], gast.Constant) and isinstance(test.args[1].value, str)):
        return None
    module = _module(test.args[0], resolver, local)
    return None if module is None else hasattr(module, test.args[1].value)


def _module(node, resolver, local):
    """The module ``node`` names (``np``, ``np.linalg``) as the function's
    globals or closure hold it, or None."""
    if isinstance(node, gast.Name) and node.id not in local:
        where = resolver.closure if node.id in resolver.closure else resolver.globals
        value = where.get(node.id)
    elif isinstance(node, gast.Attribute):
        value = getattr(_module(node.value, resolver, local), node.attr, None)
    else:
        return None
    return value if isinstance(value, types.ModuleType) else None


def _reads(test, resolver, local) -> bool:
    """Whether the known condition ``test`` reads a name that may be rebound
    (a global flag): then the code keeps it, to depend on that name.  A
    module's ``hasattr`` does not count."""
    if _module_hasattr(test, resolver, local) is not None:
        return False
    if isinstance(test, gast.UnaryOp):
        return _reads(test.operand, resolver, local)
    return any(isinstance(n, gast.Name) for n in walk(test))
