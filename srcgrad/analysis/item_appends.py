"""``log['trace'].append(v)`` on a dict the function builds: appended in place.

The alias check writes an append to a list held by a container as a copy of
the list, appended to, stored back (analysis/slot_writes.py element_writes):

    part = st['log']
    part_1 = snapshot(part)
    part_1.append(v)
    slot_alone(st, 'log', part, ...)
    st['log'] = part_1

so that the other names for the old list can be followed.  Each step copies
the whole list, and the tape keeps every copy: a loop of n appends cost n**2/2
element copies and as much memory, 68x the function's time at n = 16000 (issue
16, scope 5).  Where the alias check found no other name to follow (nothing
between those statements), this pass appends to the list itself and stores
it back, as Python runs it:

    part = st['log']
    part.append(v)
    slot_alone(st, 'log', part, ...)
    st['log'] = part

The store of the same object keeps the dataflow: its adjoint moves the
cotangent of ``st['log']`` to ``part``'s, whose append's adjoint pops it and
the list (``part`` is a view of ``st``, whose updates the adjoint undoes:
aliasing.shared_names); the tape of ``st['log']`` holds that one list, as the
tape of a list appended to by name does.  Sound where

* the four statements are side by side and ``part_1`` is read there alone,
  ``part`` only by the copy and the check, and bound once, by ``st[K]``;
* ``K`` is a constant, ``st`` no parameter, bound only by dict displays
  whose item ``K`` is a name bound only by list displays (a list this
  function built, not the caller's), and stored into at ``K`` only by such
  stores;
* ``st`` is read only to index it, by the checks, or to store into it (no
  call, return or other container receives the dict, and with it the list).

Runs after the alias check, with analysis/list_extends.py.  Tested by
tests/e2e/test_item_appends.py.
"""

from __future__ import annotations

import operator

import gast

from .. import ir, runtime


#: The alias check's run-time checks of another item (slot_writes.follow_slot_writes):
#: they compare objects and memory, and keep none of them.
_CHECKS = frozenset({"slot_alone", "slot_same", "held_at"})


def item_appends_in_place(program, loads) -> None:
    """Append in place to a dict's item where the module docstring says it is
    sound; ``loads`` counts the reads of each name (list_extends._loads)."""
    statements = list(ir.walk_statements(program.body))
    found = []
    for block in ir.statement_blocks(program.body):
        for i in range(len(block) - 3):
            four = _item_append(block[i:i + 4], loads)
            if four is not None:
                found.append((block, four))
    if not found:
        return
    defs: dict[str, list] = {}
    for stmt in statements:
        for n in ir.target_names(stmt):
            defs.setdefault(n, []).append(stmt)
    stores = {id(four[3]) for _, four in found}
    for block, (snap, append, alone, store) in found:
        box, key = store.op.args[0].id, store.op.args[1].value
        part = snap.op.args[0].id
        if not _fresh_box(program, statements, defs, box, key, stores) \
                or not _view_of(defs.get(part, []), box, key):
            continue
        view = defs[part][0]
        if view not in block or any(box in ir.target_names(s) for s in ir.walk_statements(
                block[block.index(view) + 1:block.index(snap)])):
            continue  # (the item must still be part when it is stored back)
        append.value.func.value = ir.name(part)
        append.op.args[0] = ir.name(part)
        store.value = ir.name(part)
        store.op.args[2] = ir.name(part)
        store.slot_write = None
        store.stores_itself = True  # its adjoint restores nothing (ad/reverse.py)
        block.remove(snap)


def _item_append(four, loads):
    """The four statements, where they are ``part_1 = snapshot(part);
    part_1.append(v); slot_alone(st, K, part, ...); st[K] = part_1``."""
    snap, append, alone, store = four
    op = getattr(snap, "op", None)
    if not (isinstance(snap, gast.Assign) and isinstance(snap.targets[0], gast.Name)
            and op is not None and op.primitive is runtime.snapshot
            and isinstance(op.args[0], gast.Name)):
        return None
    copy_, part = snap.targets[0].id, op.args[0].id
    aop = getattr(append, "op", None)
    if not (isinstance(append, gast.Expr) and aop is not None and aop.primitive is ir.APPEND
            and getattr(append, "private_copy", False) and aop.args[0].id == copy_):
        return None
    call = alone.value if isinstance(alone, gast.Expr) else None
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
            and call.func.id == "slot_alone" and len(call.args) >= 3
            and isinstance(call.args[2], gast.Name) and call.args[2].id == part):
        return None
    sop = getattr(store, "op", None)
    if not (isinstance(store, gast.Assign) and ir.is_update(store) and sop is not None
            and sop.primitive is operator.setitem and getattr(store, "slot_append", False)
            and isinstance(sop.args[0], gast.Name) and isinstance(sop.args[1], gast.Constant)
            and isinstance(sop.args[2], gast.Name) and sop.args[2].id == copy_):
        return None
    if loads.get(copy_) != 2 or loads.get(part) != 2:
        return None
    return snap, append, alone, store


def _view_of(bindings, box, key) -> bool:
    """Whether ``part``'s one binding is ``part = box[key]``."""
    if len(bindings) != 1:
        return False
    op = getattr(bindings[0], "op", None)
    return isinstance(bindings[0], gast.Assign) and not ir.is_update(bindings[0]) \
        and op is not None and op.primitive is operator.getitem \
        and isinstance(op.args[0], gast.Name) and op.args[0].id == box \
        and isinstance(op.args[1], gast.Constant) and op.args[1].value == key


def _fresh_box(program, statements, defs, box, key, stores) -> bool:
    """Whether ``box`` is a dict this function built whose item ``key`` is a
    list it built, read only to index it (module docstring)."""
    if box in program.params or box in ir.names_in(program.output):
        return False
    for stmt in defs.get(box, []):
        op = getattr(stmt, "op", None)
        if ir.is_update(stmt):
            index = op.args[1] if op is not None and len(op.args) > 1 else None
            if id(stmt) not in stores and not (isinstance(index, gast.Constant)
                                               and index.value != key):
                return False
            continue
        if op is None or op.primitive is not ir.BUILD_DICT or not isinstance(stmt.value,
                                                                             gast.Dict):
            return False
        items = dict(zip((k.value if isinstance(k, gast.Constant) else object()
                          for k in stmt.value.keys), stmt.value.values))
        item = items.get(key)
        if not isinstance(item, gast.Name) or not all(
                getattr(getattr(d, "op", None), "primitive", None) is ir.BUILD_LIST
                and not ir.is_update(d) for d in defs.get(item.id, [])) \
                or item.id in program.params:
            return False
    for stmt in statements:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            if box in ir.names_in(stmt.test if not isinstance(stmt, gast.For) else stmt.iter):
                return False
            continue
        if box not in ir.names_in(stmt):
            continue
        op = getattr(stmt, "op", None)
        indexed = isinstance(stmt, gast.Assign) and op is not None and (
            (not ir.is_update(stmt) and op.primitive is operator.getitem
             and isinstance(op.args[0], gast.Name) and op.args[0].id == box
             and box not in ir.names_in(op.args[1]))
            or (ir.is_update(stmt) and ir.target_names(stmt) == [box]
                and box not in [n for a in op.args[1:] for n in ir.names_in(a)]))
        checked = isinstance(stmt, (gast.Expr, gast.Assign)) \
            and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name) \
            and stmt.value.func.id in _CHECKS
        if not (indexed or checked):
            return False
    return True
