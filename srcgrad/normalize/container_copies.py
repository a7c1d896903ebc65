"""Shallow copies of lists, tuples and dicts hold the same items.

``ks = hs.copy()`` of a list is resolved by its method's name to
``np.ndarray.copy``: a new array that shares nothing with ``hs``.  But a list's
copy (``hs.copy()``, ``copy.copy(hs)``, ``hs[:]``, ``hs[::-1]``) and a dict's
(``d.copy()``, ``dict(d)``, ``copy.copy(d)``) is a new container of the *same*
arrays: ``ks[0] *= 3.0`` changes ``hs[0]`` too.  Taken for an array copy, that
update was lost (value and gradient silently wrong), and taken for a view, the
program was refused.  This pass gives such a copy the primitive that says what
it is, as ``list(hs)`` already has -- ``list`` for a list's copy, ``tuple`` for
``copy.copy`` of a tuple (the tuple itself), ``ir.DICT_COPY`` for a dict's --
and marks a slice of a list or tuple (``element_copy``): the alias checks then
see a container holding the operand's items (:mod:`..analysis.sharing`), and
follow an update of one through every container that holds it.  The text
(``hs.copy()``) does not change, so the value is the function's own.

Sound because it retypes only where the operand is a list, tuple or dict on
every path (a display, ``list()``, ``dict()``, a concatenation, a slice or a
copy of one), where Python's copy is shallow.

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(x):
    ...     hs = [x * 1.0]
    ...     ks = hs.copy()
    ...     d = {'a': x}
    ...     e = d.copy()
    ...     return ks[0] + e['a'] + hs[:][0]
    >>> program = normalize(parse_function(f))
    >>> type_container_copies(program)
    >>> print(unparse_body(program))
    t1 = x * 1.0
    hs = [t1]
    ks = hs.copy()
    d = {'a': x}
    e = d.copy()
    t2 = ks[0]
    t3 = e['a']
    t4 = t2 + t3
    t5 = hs[:]
    t6 = t5[0]
    t7 = t4 + t6
    return t7
    >>> [(s.targets[0].id, s.op.primitive, getattr(s, "element_copy", False))
    ...  for s in program.body if s.targets[0].id in ("ks", "e", "t5")]
    [('ks', <class 'list'>, False), ('e', dict copy, False), ('t5', <built-in function getitem>, True)]
"""

from __future__ import annotations

import copy
import heapq
import operator

import gast
import numpy as np

from .. import ir
from ..ir.syntax import helper_ref, source_of
from ..runtime import merged, private_copy, snapshot

#: What each kind of maker builds.
_LISTS = (ir.BUILD_LIST, list, sorted)
_TUPLES = (ir.BUILD_TUPLE, tuple)
_DICTS = (ir.BUILD_DICT, ir.DICT_COPY, dict, dict.fromkeys)
_ORS = (merged, operator.or_)  # a | b, typed as a merge where it may be one of dicts
_COPIES = (np.ndarray.copy, copy.copy)
_PRIVATE = (snapshot, private_copy)  # srcgrad's own copies: the same kind of container
_TOP = "any"  # not known yet (a greatest fixed point: loops copy their own results)
_UNSEEN = object()  # a binding whose kind is not computed yet


def type_container_copies(program: ir.Program) -> None:
    """Retype the shallow copies of lists, tuples and dicts; mark their slices."""
    defs: dict[str, list] = {}
    for stmt in ir.walk_statements(program.body):
        if ir.is_update(stmt):
            continue  # xs.append(v), d[k] = v: the kind stays
        for name in ir.assigned_by(stmt):
            defs.setdefault(name, []).append(stmt)
    passed = set(getattr(program, "sequence_params", ()))
    kinds = {n: _TOP for n in defs if n not in program.params}
    kinds.update({n: "sequence" for n in passed if n not in defs})
    # a worklist: a name is looked at again only when a name its bindings read
    # changed kind (rounds over every name took as many rounds as the longest
    # chain t2 = t1 + ..., t3 = t2 * ...: quadratic in the function's length);
    # taken in name order, as the rounds took them
    # and a name looked at again computes again only its bindings that read a name
    # which changed: each binding's kind is kept, and how many give each kind (all
    # of a name's bindings, s = s * 0.9 in 100 loops, were computed again for a
    # change of any one's operand: quadratic)
    readers: dict[str, set] = {}
    reading: dict[tuple, dict] = {}   # (name, operand) -> {id: binding of name reading it}
    for name, stmts in defs.items():
        for stmt in stmts:
            op = getattr(stmt, "op", None)
            for arg in (op.args if op is not None else ()):
                if isinstance(arg, gast.Name):
                    readers.setdefault(arg.id, set()).add(name)
                    reading.setdefault((name, arg.id), {})[id(stmt)] = stmt
    given: dict[tuple, object] = {}   # (name, id(binding)) -> its kind as last computed
    counts: dict[str, dict] = {}      # name -> {kind: how many of its bindings give it}
    stale: dict[str, dict] = {}       # name -> {id: binding} to compute again
    pending = sorted(n for n in kinds if n in defs)
    heapq.heapify(pending)
    waiting = set(pending)
    while pending:
        name = heapq.heappop(pending)
        waiting.discard(name)
        if name not in counts:
            counts[name] = tally = {}
            again = {id(s): s for s in defs[name]}.values()
        else:
            tally = counts[name]
            again = stale.pop(name, {}).values()
        for stmt in again:
            old, new = given.get((name, id(stmt)), _UNSEEN), _kind(stmt, kinds)
            if new != old:
                given[name, id(stmt)] = new
                tally[new] = tally.get(new, 0) + 1
                if old is not _UNSEEN:
                    tally[old] -= 1
        found = {k for k, c in tally.items() if c} - {_TOP}
        kind = found.pop() if len(found) == 1 else (_TOP if not found else None)
        if kind != kinds[name]:
            kinds[name] = kind
            for reader in readers.get(name, ()):
                stale.setdefault(reader, {}).update(reading[reader, name])
                if reader in kinds and reader in defs and reader not in waiting:
                    heapq.heappush(pending, reader)
                    waiting.add(reader)
    written = _items_changed(program)
    arrays = getattr(program, "not_dicts", set())
    guards = []
    for stmt in ir.walk_statements(program.body):
        op = getattr(stmt, "op", None)
        if not isinstance(stmt, gast.Assign) or ir.is_update(stmt) or op is None \
                or not op.args or not isinstance(op.args[0], gast.Name):
            continue
        kind = kinds.get(op.args[0].id)
        prim = op.primitive
        copied = (any(prim is c for c in _COPIES) and len(op.args) == 1) or (
            prim is operator.getitem and isinstance(op.args[1], gast.Slice))
        if copied and kind in (None, _TOP) and op.args[0].id not in arrays and (
                set(ir.target_names(stmt)) & written and _seen_after(program, stmt)):
            guards.append((stmt, _guard(program, stmt)))
        elif copied and kind in (None, _TOP) and op.args[0].id not in arrays \
                and op.args[0].id in written and _read_after(program, stmt):
            # snap = p.copy(); p['w'] *= 0.9; ... snap['w']: the other direction
            guards.append((stmt, _guard(program, stmt, original=True)))
        if prim is operator.getitem and kind in ("list", "tuple", "sequence") \
                and isinstance(op.args[1], gast.Slice):
            stmt.element_copy = True  # hs[::-1]: a new list of hs's items
        elif any(prim is c for c in _COPIES) and len(op.args) == 1 and not op.kwargs:
            if kind == "dict":
                op.primitive = ir.DICT_COPY
            elif kind == "list" or (kind == "sequence" and prim is np.ndarray.copy):
                op.primitive = list  # (a tuple has no .copy())
            elif kind == "tuple" and prim is copy.copy:
                op.primitive = tuple  # the tuple itself
        elif prim is dict and kind == "dict" and len(op.args) == 1 and not op.kwargs:
            op.primitive = ir.DICT_COPY
        elif prim is merged and any(kinds.get(a.id) == "dict" for a in op.args
                                    if isinstance(a, gast.Name)):
            # (q | p with q a dict: p is one too, or Python raises; q |= p of an argument)
            stmt.element_copy = True  # d | {'b': v}: a new dict of d's items
    for block in ir.statement_blocks(program.body):
        for stmt, guard in guards:
            if any(s is stmt for s in block):
                block.insert(next(i for i, s in enumerate(block) if s is stmt), guard)


def _seen_after(program, copy_stmt) -> bool:
    """Whether the operand of ``ks = hs.copy()`` may be seen after it: read by a
    later statement or the return, the copy in a loop, or ``hs`` no parameter
    (a name bound to what another holds).  A helper's parameter read no more
    (``def scaled(hs): ks = hs.copy(); ks[0] *= 3.0; return ks``) is the
    caller's to follow: the caller reads its own list afterwards or not."""
    name = copy_stmt.op.args[0].id
    if name not in program.params or any(
            isinstance(s, (gast.For, gast.While)) and any(t is copy_stmt for t in gast.walk(s))
            for s in gast.walk(gast.Module(body=program.body, type_ignores=[]))):
        return True
    statements = list(ir.walk_statements(program.body))
    at = next(i for i, s in enumerate(statements) if s is copy_stmt)
    later = [*statements[at + 1:], program.output]
    return any(isinstance(n, gast.Name) and n.id == name for s in later for n in gast.walk(s))


def _read_after(program, copy_stmt) -> bool:
    """Whether the copy ``ks = hs.copy()`` makes may be read after it: by a later
    statement or the return, or the copy made in a loop."""
    name = ir.target_names(copy_stmt)[0]
    if any(isinstance(s, (gast.For, gast.While)) and any(t is copy_stmt for t in gast.walk(s))
           for s in gast.walk(gast.Module(body=program.body, type_ignores=[]))):
        return True
    statements = list(ir.walk_statements(program.body))
    at = next(i for i, s in enumerate(statements) if s is copy_stmt)
    later = [*statements[at + 1:], program.output]
    return any(isinstance(n, gast.Name) and n.id == name for s in later for n in gast.walk(s))


def _items_changed(program) -> set[str]:
    """Names an item of which is changed in place: ``ks[0] *= 3.0``, ``t = ks[0];
    t[1] = v`` (``ks[0][1] = v``), ``t = ks[0]; t += v`` -- not ``ks[0] = v``,
    which puts a new item in ``ks`` alone."""
    statements = list(ir.walk_statements(program.body))
    changed = {s.augmented for s in statements if getattr(s, "augmented", None)}
    changed |= {n for s in statements if ir.is_update(s) for n in ir.target_names(s)}
    names = {s.item_update[0] for s in statements if getattr(s, "item_update", None)}
    for s in statements:
        op = getattr(s, "op", None)
        if isinstance(s, gast.Assign) and not ir.is_update(s) and op is not None \
                and op.primitive is operator.getitem and isinstance(op.args[0], gast.Name) \
                and set(ir.target_names(s)) & changed:
            names.add(op.args[0].id)
    return names


def _guard(program, stmt, original=False):
    """``not_a_container(hs, message, where)`` before ``ks = hs.copy()`` where
    ``hs`` may be a list or dict the compiler cannot see as one (a helper's
    result, a dict argument) and ``ks``'s items are set below (``original``:
    ``hs``'s, with ``ks`` read afterwards): refused as the code runs if it is
    one, where the update of an item would be lost."""
    target, source = ir.target_names(stmt)[0], stmt.op.args[0].id
    node = stmt.op.node
    shown = source_of(node)
    # the operand as the user wrote it (hs, not the hs_1 an entry copy made)
    operand = node.value if isinstance(node, gast.Subscript) else (
        node.func.value if isinstance(getattr(node, "func", None), gast.Attribute)
        and not node.args else (node.args[0] if getattr(node, "args", None) else None))
    if isinstance(operand, gast.expr):
        source = source_of(operand)
    if original:  # snap = p.copy(); p['w'] *= 0.9; ... snap['w']
        message = (f"'{target} = {shown}' copies '{source}', which is a list or dict here, "
                   f"and an item of '{source}' is updated in place below while '{target}' "
                   f"is read afterwards: the copy holds the same arrays, and srcgrad, which "
                   f"could not tell '{source}' was a list or dict when compiling, would not "
                   f"follow that change; set the item to a new value instead "
                   f"('{source}[k] = {source}[k] * ...')")
    else:
        message = (f"'{target} = {shown}' copies '{source}', which is a list or dict here, "
                   f"and an item of the copy is updated below: the copy holds the same "
                   f"arrays, and srcgrad, which could not tell '{source}' was a list or dict "
                   f"when compiling, would not follow that change; make it one srcgrad can "
                   f"see ('{source} = list(...)', 'dict(...)'), or set the item to a new "
                   f"value ('{target}[i] = {target}[i] * ...')")
    where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
        program.filename, getattr(node, "lineno", None), getattr(node, "col_offset", None))],
        ctx=gast.Load())
    call = gast.Call(func=helper_ref("not_a_container"),
                     args=[ir.name(stmt.op.args[0].id), gast.Constant(value=message, kind=None),
                           where],
                     keywords=[])
    guard = gast.copy_location(gast.Expr(value=call), node)
    guard.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
    return guard


def _kind(stmt, kinds):
    """The kind of container ``stmt`` binds: "list", "tuple", "dict", _TOP where
    it copies a name not known yet, or None (not certainly a container)."""
    op = getattr(stmt, "op", None)
    if not isinstance(stmt, gast.Assign) or op is None or len(stmt.targets) != 1 \
            or not isinstance(stmt.targets[0], gast.Name):
        return None
    prim = op.primitive
    if any(prim is m for m in _LISTS):
        return "list"
    if any(prim is m for m in _TUPLES):
        return "tuple"
    if any(prim is m for m in _DICTS):
        return "dict"
    operands = [kinds.get(a.id) for a in op.args if isinstance(a, gast.Name)]
    if any(prim is o for o in _ORS) and operands and all(k in ("dict", _TOP) for k in operands):
        return "dict" if "dict" in operands else _TOP
    if prim in (operator.add, operator.mul):
        # xs + ys, 2 * xs: a sequence of the operand's kind
        known = [k for k in operands if k in ("list", "tuple", _TOP)]
        return known[0] if known else None
    if not operands:
        return None
    if prim is operator.pos or (prim is operator.getitem and isinstance(op.args[1], gast.Slice)
                                and operands[0] != "dict"):
        return operands[0]
    if any(prim is c for c in _PRIVATE) and len(op.args) == 1:
        return operands[0]  # hs_1 = private_copy(hs): the argument copied on entry
    if any(prim is c for c in _COPIES) and len(op.args) == 1:
        if operands[0] == "sequence" and prim is np.ndarray.copy:
            return "list"
        return operands[0] if operands[0] != "sequence" else None
    return None
