"""``ys += [v]`` (``ys.extend([v])``) on a local list: appended in place, as Python does.

Python's ``ys += [v]`` extends the list ``ys`` in place: O(1) a step.  The
normaliser writes it as the sum it is for every other type, ``t = [v]; u =
ys + t; ys = u`` (the alias check following or refusing the other names for
``ys``, as for ``x += v`` on an array).  For a list that sum is a new list
each step: a loop of n ``+=`` made n**2/2 element copies in the forward
sweep, kept n lists alive on the tape, and ``cotangent_part`` copied as much
again in the adjoint -- 41x the function's time at n = 16000 (issue 16,
scope 5).  This pass writes it ``ys.append(v)`` (one append per item of the
display), whose adjoint pops the list and its cotangent (ad/reverse.py,
optimize/owned_lists.py), where

* the three statements are still side by side: the alias check put nothing
  between them, so no other name for the list is read afterwards (where
  one is, it follows it there: ``same_or_untouched``, then a rebinding);
* ``t`` and ``u`` are temporaries read nowhere else;
* ``ys`` is no parameter (the caller's list is left alone) and every
  binding of ``ys`` is a list display, an append, or such a ``+=``: so it
  is a list this function built, whose ``+=`` Python runs in place.

Runs after the alias check (analysis/aliasing.py), before activity; then
``log['trace'].append(v)`` on a dict built here is appended in place too
(analysis/item_appends.py).  Tested by tests/e2e/test_list_extends.py and
tests/e2e/test_item_appends.py.

    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize, unparse_body
    >>> from ..normalize.sequences import type_sequence_operators
    >>> from .aliasing import check_aliases
    >>> def f(x):
    ...     ys = []
    ...     for i in range(3):
    ...         ys += [x * i, x]
    ...     return ys
    >>> program = normalize(parse_function(f))
    >>> type_sequence_operators(program)
    >>> check_aliases(program)
    >>> print(unparse_body(program).split("for")[1])
     i in t1:
        t2 = x * i
        t3 = [t2, x]
        t4 = ys + t3
        ys = t4
    return ys
    >>> append_in_place(program)
    >>> print(unparse_body(program).split("for")[1])
     i in t1:
        t2 = x * i
        ys.append(t2)
        ys.append(x)
    return ys
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import clone
from .item_appends import item_appends_in_place


def append_in_place(program) -> None:
    """Write each ``ys += [a, b]`` of a local list ``ys`` as ``ys.append(a);
    ys.append(b)`` where the module docstring says it is sound."""
    statements = list(ir.walk_statements(program.body))
    # both forms need an augmented assignment (ys += [v]) or an append: without
    # one, no read needs counting
    if not any(getattr(s, "augmented", None) is not None
               or getattr(getattr(s, "op", None), "primitive", None) is ir.APPEND
               for block in ir.statement_blocks(program.body) for s in block):
        return
    loads = _loads(program, statements)
    found = []
    for block in ir.statement_blocks(program.body):
        for i in range(len(block) - 2):
            three = _extend(block[i:i + 3], loads, program.namer.temps)
            if three is not None:
                found.append((block, three))
    lists = {ys for _, (ys, _, _) in found}
    bad = {ys for ys in lists if ys in program.params
           or not all(_list_binding(s, ys, found) for s in statements
                      if ys in ir.target_names(s))}
    for block, (ys, items, first) in found:
        if ys in bad:
            continue
        at = next(k for k, s in enumerate(block) if s is first)
        node = block[at + 2].op.node
        block[at:at + 3] = [gast.copy_location(_append(ys, item, node), first)
                            for item in items]
    # log['trace'].append(v) on a dict built here: the same, through its item
    item_appends_in_place(program, _loads(program, list(ir.walk_statements(program.body))))


def _loads(program, statements) -> dict[str, int]:
    """How many times each name is read in the program (its output included)."""
    loads: dict[str, int] = {}
    for stmt in statements:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            parts = [stmt.test] if isinstance(stmt, (gast.If, gast.While)) else [stmt.iter]
        else:
            parts = [stmt]
        for part in parts:
            for n in ir.names_in(part):
                loads[n] = loads.get(n, 0) + 1
    for n in ir.names_in(program.output):
        loads[n] = loads.get(n, 0) + 1
    return loads


def _extend(three, loads, temps):
    """``(ys, items, first)`` where ``three`` is ``t = [items]; u = ys + t; ys =
    u``, the ``+=`` of a list by a display, ``t`` and ``u`` read there alone."""
    build, concat, store = three
    ops = [getattr(s, "op", None) for s in three]
    if not all(isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
               for s in three) or None in ops:
        return None
    t, u, ys = (s.targets[0].id for s in three)
    shown = ops[0].args[0] if ops[0].primitive is list and len(ops[0].args) == 1 else None
    if not (ops[0].primitive is ir.BUILD_LIST or isinstance(shown, gast.List)) \
            or ops[1].primitive is not ir.CONCAT \
            or getattr(store, "augmented", None) != ys or not (t in temps and u in temps):
        return None
    left, right = ops[1].args
    if not (isinstance(left, gast.Name) and left.id == ys and isinstance(right, gast.Name)
            and right.id == t and isinstance(store.value, gast.Name) and store.value.id == u):
        return None
    if loads.get(t) != 1 or loads.get(u) != 1 or ys in (t, u):
        return None
    # [a, b], or list([a, b]) (ys.extend([a, b]), which the normaliser writes ys += so)
    items = list(build.value.elts) if isinstance(build.value, gast.List) else \
        list(shown.elts) if isinstance(shown, gast.List) else None
    if items is None or not all(isinstance(e, (gast.Name, gast.Constant)) for e in items):
        return None
    return ys, items, build


def _list_binding(stmt, ys, found) -> bool:
    """Whether ``stmt``, which binds or changes ``ys``, keeps it a list this
    function built: a display, an append, or one of the ``+=`` found."""
    op = getattr(stmt, "op", None)
    if op is not None and op.primitive is ir.APPEND:
        return True
    if isinstance(stmt, gast.Assign) and not ir.is_update(stmt) and op is not None \
            and op.primitive is ir.BUILD_LIST:
        return True
    return any(stmt is block[block.index(first) + 2] for block, (y, _, first) in found
               if y == ys)


def _append(ys, item, node):
    """``ys.append(item)`` as the normaliser writes a user's append."""
    made = gast.Expr(value=gast.Call(func=gast.Attribute(value=ir.name(ys), attr="append",
                                                         ctx=gast.Load()),
                                     args=[clone(item)], keywords=[]))
    made.op = ir.Op(ir.APPEND, [ir.name(ys), clone(item)], {}, node, ".append()")
    return made
