"""Dead-code elimination over generated statements.

Rule inlining produces every cotangent a rule can compute and every local it
needs; the reverse pass asks only for the cotangents of active operands, and
this pass removes whatever is then unused.  It runs backwards with the set of
live names, understands ``if`` statements (from rules with runtime tests) and
keeps every statement ``keep`` vouches for (calls with side effects in the
forward sweep).

    >>> import gast
    >>> tree = gast.parse("a = x * 2\\nb = a + 1\\nc = x - 1\\nd = c * b")
    >>> print(show_statements(eliminate_dead(tree.body, {"b"})))
    a = x * 2
    b = a + 1
"""

from __future__ import annotations

import gast

from . import ir
from .inline import show


def show_statements(stmts) -> str:
    return "\n".join(show(s) for s in stmts)


def _defs(stmt) -> set[str]:
    names = set()
    for target in getattr(stmt, "targets", []):
        for node in gast.walk(target):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                names.add(node.id)
    return names


def _uses(node) -> set[str]:
    if isinstance(node, gast.Assign):
        return set(ir.names_in(node.value))
    return set(ir.names_in(node))


def eliminate_dead(stmts, live, keep=lambda stmt: False) -> list:
    """``stmts`` without the assignments whose values nothing in ``live`` needs.

    ``live`` is updated in place to the names live before ``stmts``.
    """
    live = live if isinstance(live, set) else set(live)
    kept = []
    for stmt in reversed(stmts):
        if isinstance(stmt, gast.If):
            live_body, live_else = set(live), set(live)
            stmt.body = eliminate_dead(stmt.body, live_body, keep)
            stmt.orelse = eliminate_dead(stmt.orelse, live_else, keep)
            if not stmt.body and not stmt.orelse:
                continue
            if not stmt.body:
                stmt.body = [gast.Pass()]
            live.clear()
            live.update(live_body | live_else | _uses(stmt.test))
            kept.append(stmt)
            continue
        defs = _defs(stmt)
        if isinstance(stmt, gast.Assign) and not (defs & live) and not keep(stmt):
            continue
        live.difference_update(defs)
        live.update(_uses(stmt))
        kept.append(stmt)
    kept.reverse()
    return kept


def propagate_copies(stmts) -> list:
    """Replace reads of ``a`` after ``a = b`` by ``b`` while neither is reassigned.

    The reverse pass assigns pass-through cotangents by copying (the adjoint of
    ``t = a + b`` is ``d_a = d_t``, ``d_b = d_t``); after propagation the copies
    are dead and :func:`eliminate_dead` removes them.

        >>> import gast
        >>> tree = gast.parse("d_a = d_t\\nd_b = d_a * 2\\nd_a = d_a + 1")
        >>> print(show_statements(propagate_copies(tree.body)))
        d_a = d_t
        d_b = d_t * 2
        d_a = d_t + 1
    """
    copies: dict[str, str] = {}
    for stmt in stmts:
        _Rename(copies).visit(stmt if not isinstance(stmt, gast.Assign) else stmt.value)
        if isinstance(stmt, gast.If):
            _Rename(copies).visit(stmt)
        defined = set()
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                defined.add(node.id)
        for name in list(copies):
            if name in defined or copies[name] in defined:
                del copies[name]
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name) \
                and stmt.targets[0].id != stmt.value.id:
            copies[stmt.targets[0].id] = stmt.value.id
    return stmts


class _Rename(gast.NodeTransformer):
    def __init__(self, copies):
        self.copies = copies

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.copies:
            node.id = self.copies[node.id]
        return node
