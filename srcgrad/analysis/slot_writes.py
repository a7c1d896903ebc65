"""Writes into an item of a list, tuple or dict, and through a view's other names.

``lst[i][j] = v`` runs as ``t = lst[i]; t1 = snapshot(t); t1[j] = v; lst[i] =
t1`` (normalize/statements.py): the item is copied, so the other names for it
-- ``pos`` in ``state = [pos, vel]``, another item holding the same array, a
list copied from ``lst`` -- are followed (bound to the written copy where, as
the code runs, they are that very object) or checked (a run-time
AliasedUpdateError where they share its memory otherwise): see
:func:`follow_slot_writes`.  ``a = d['h']; a[0] = v`` is written that way too
(:func:`element_writes`); ``row = Y[k]; row *= 2`` as the element write
``row[...] = row * 2`` that NumPy makes of it is :mod:`.augmented_views`'s
(``a.sort()`` as ``a[...] = np.sort(a)`` is :mod:`.sorts_in_place`'s).  Also the small helpers
these modules use (places, the user's names for messages).
"""

from __future__ import annotations

import operator
import re
import types

import gast
import numpy as np

from .. import ir, runtime
from ..frontend.linker import is_user_function
from ..ir.syntax import SliceToCall, clone, helper_ref, source_of, walk_nodes
from ..rules import registry
from . import paths
from .sharing import held_names, is_identity, is_view, operand_names

__all__ = ["appends_to_its_copy", "array_names", "bindings", "element_writes",
           "follow_slot_writes", "is_setitem", "location", "no_memory", "user_names"]


def appends_to_its_copy(stmt, blocks) -> bool:
    """Whether ``stmt`` appends to the list copy a statement before it in its
    block made, which no other name holds yet: :func:`element_writes`'s
    ``part_1 = snapshot(part); part_1.append(v)`` (marked ``private_copy``),
    or the same lines read again from source -- the tangent code of
    ``acc[k].append(v)`` differentiated once more for hvp, where the mark was
    lost and the append was refused, naming ``part_1`` (review s36 R4-17b).
    Between the copy and the append the copy may be read only by
    ``fresh_tangent`` (its tangent's copy, shaped like it: it keeps none of
    it).  Only ``snapshot`` and ``private_copy``, which srcgrad writes: a
    list's copy is a new list."""
    if getattr(stmt, "private_copy", False):
        return True
    op = getattr(stmt, "op", None)
    if not isinstance(stmt, gast.Expr) or op is None or op.primitive is not ir.APPEND \
            or not isinstance(op.args[0], gast.Name) or id(stmt) not in blocks:
        return False
    copy_, block = op.args[0].id, blocks[id(stmt)][0]
    at = next((i for i, s in enumerate(block) if s is stmt), 0)
    for before in reversed(block[:at]):
        made = getattr(before, "op", None)
        if copy_ in ir.target_names(before):
            return isinstance(before, gast.Assign) and not ir.is_update(before) \
                and len(before.targets) == 1 and made is not None \
                and made.primitive in (runtime.snapshot, runtime.private_copy)
        if copy_ in {n.id for n in walk_nodes(before) if isinstance(n, gast.Name)} and not (
                made is not None and made.primitive is runtime.fresh_tangent):
            return False
    return False


def element_writes(program, statements, containers) -> bool:
    """``a = d['h']; a[0] = v``, ``a`` an item of a list, tuple or dict ``d`` that
    still holds it (nothing between the two binds ``a``, ``d`` or the key, nor
    reads ``d`` but to index it): written as ``d['h'][0] = v`` is (a copy of the
    item, written, stored back: see :func:`follow_slot_writes`), so that ``d``
    and the other names for the item see the write (it was refused, valid
    code, found by review).  Returns whether it changed the program."""
    blocks = paths.blocks_of(program.body)
    defs = bindings(statements)
    changed = False
    for update in statements:
        op = getattr(update, "op", None)
        # (a = d['trace']; a.append(v), log['trace'].append(v) written so: a list
        # the item is, appended to the same way -- a copy, appended to, stored back)
        appended = isinstance(update, gast.Expr) and op is not None and op.primitive is ir.APPEND
        if not (ir.is_update(update) and (is_setitem(update) or appended)
                and isinstance(op.args[0], gast.Name)) or op.args[0].id in containers:
            continue
        a = op.args[0].id
        made = [d for d in defs.get(a, []) if not ir.is_update(d)]
        scaled = _scaled_item(made, defs)
        if scaled is not None:
            made = [scaled[1]]  # a = d['h']; a *= 2 (a_1 = a * 2); a_1[0] = v
        if len(made) != 1 or not (isinstance(made[0], gast.Assign) and is_view(made[0])
                                  and made[0].op.primitive is operator.getitem):
            continue
        view = made[0]
        box, key = view.op.args[0].id, view.op.args[1]
        if box not in containers or not isinstance(key, (gast.Constant, gast.Name)) \
                or not all(_built_here(d) for d in defs.get(box, [])):
            continue
        block = blocks[id(view)][0]
        if blocks[id(update)][0] is not block or block.index(view) > block.index(update) \
                or scaled is not None and scaled[0] not in block:
            continue
        kept = {a, box, *ir.names_in(key), *ir.target_names(view)}
        between = list(ir.walk_statements(block[block.index(view) + 1:block.index(update)]))
        # (an earlier write through a written so, a[0] = s; a[1:] *= 0.9: the item is
        # stored back, and a bound to it again (follow_slot_writes), so a still is
        # the item d holds -- a helper's argument updated twice, found by review;
        # a *= 2 before it is NumPy's update of that item, stored back into d by the
        # alias check where d holds it -- runtime.held_at -- or refused there)
        chain = (a, box, source_of(key))
        if any(getattr(s, "element_write", None) != chain
               and (scaled is None or s is not scaled[0]) and (
                kept & set(ir.assigned_by(s)) or (box in ir.names_in(s) and not (
                    isinstance(s, gast.Assign) and not ir.is_update(s) and is_view(s)
                    and s.op.primitive is operator.getitem))) for s in between):
            continue
        node = op.node
        copy_ = program.namer.fresh(a)
        snap = ir.assign(copy_, gast.Call(func=helper_ref("snapshot"), args=[ir.name(a)],
                                          keywords=[]))
        snap.op = ir.Op(runtime.snapshot, [ir.name(a)], {}, node, "snapshot")
        if appended:
            write = gast.Expr(value=gast.Call(func=gast.Attribute(
                value=ir.name(copy_), attr="append", ctx=gast.Load()),
                args=[clone(op.args[1])], keywords=[]))
            write.op = ir.Op(ir.APPEND, [ir.name(copy_), clone(op.args[1])], {}, node,
                             op.label)
            # appended to the copy the statement before made, which no other name
            # holds yet (the item stored last iteration is the old list): aliasing.py
            write.private_copy = True
        else:
            write = ir.assign(gast.Subscript(value=ir.name(copy_), slice=clone(op.args[1]),
                                             ctx=gast.Store()), clone(op.args[2]))
            write.op = ir.Op(operator.setitem, [ir.name(copy_), clone(op.args[1]),
                                                clone(op.args[2])], {}, node, op.label)
        store = ir.assign(gast.Subscript(value=ir.name(box), slice=clone(key),
                                         ctx=gast.Store()), ir.name(copy_))
        store.op = ir.Op(operator.setitem, [ir.name(box), clone(key), ir.name(copy_)], {},
                         node, op.label)
        shown = source_of(view.op.node) if isinstance(view.op.node, gast.expr) else a
        store.slot_write = (a, gast.Constant(value=None, kind=None) if appended
                            else clone(op.args[1]), shown, update)
        store.slot_append = appended  # (what the messages say changes it)
        at = block.index(update)
        augmented = block[at - 1] if at else None
        if not appended and getattr(augmented, "item_update", (None,))[0] == a \
                and _sliced(op.args[1]) and isinstance(op.args[2], gast.Name) \
                and ir.target_names(augmented) == [op.args[2].id]:
            # a[1:] *= 0.9 (t2 = a[1:]; t3 = t2 * 0.9; a[1:] = t3): t2 is a view of
            # the array a, or a new list (a list's slice), so what sees its memory
            # sees a's, and is followed or checked at the store, right after
            # (follow_slot_writes) -- not a[1] *= 0.9, where a may be a list whose
            # item t2 another name holds (d = {'h': [y, h]}; d['h'][1] *= 3.0)
            augmented.slot_store = store
        for s in (snap, write, store):
            s.element_write = chain
        block[at:at + 1] = [gast.copy_location(s, update) for s in (snap, write, store)]
        changed = True
    return changed


def _scaled_item(made, defs):
    """``(aug, view)`` where ``made`` (the bindings of a name ``a_1``) is one
    augmented update ``a_1 = a * 2`` (``a *= 2``) of a name ``a`` bound once,
    by ``view`` -- or, in a loop, where names are not renamed, ``made`` is
    ``view`` then the update of ``a`` itself; None otherwise."""
    if len(made) == 2 and getattr(made[1], "augmented", None) in ir.target_names(made[0]):
        return made[1], made[0]  # in a loop: a = d['h']; t = a * 2; a = t (a *= 2)
    if len(made) != 1 or getattr(made[0], "augmented", None) is None \
            or not isinstance(made[0], gast.Assign):
        return None
    first = [d for d in defs.get(made[0].augmented, []) if not ir.is_update(d)]
    return (made[0], first[0]) if len(first) == 1 else None


def _sliced(index) -> bool:
    """Whether ``a[index]`` is a view of ``a`` if it is an array and a new list if
    it is a list: a slice or ``...``, alone or in a tuple (``a[1:]``, ``a[0, :]``)."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return any(isinstance(p, gast.Slice) or isinstance(p, gast.Constant)
               and p.value is Ellipsis for p in parts)


def _built_here(stmt) -> bool:
    """Whether ``stmt`` builds a list, tuple or dict of its own items (a display,
    a concatenation, ``list(xs)``), or changes one (``xs.append(v)``) -- not the
    pieces of a call (``np.split(y, 2)``, views of ``y``; ``dict(a=y)``)."""
    op = getattr(stmt, "op", None)
    if op is None or ir.is_update(stmt) or op.primitive is ir.APPEND:
        return True
    return any(op.primitive is p for p in (ir.BUILD_LIST, ir.BUILD_TUPLE, ir.BUILD_DICT,
                                           ir.CONCAT, ir.REPEAT, list, tuple, sorted,
                                           ir.DICT_COPY))


def follow_slot_writes(program, statements, containers) -> bool:
    """``lst[i][j] = v`` on a list, tuple or dict ``lst`` runs as ``t = lst[i];
    t1 = snapshot(t); t1[j] = v; lst[i] = t1`` (normalize/statements.py): the
    item is copied, so every other name for it must be followed too, as Python's
    write into the one array shows through each (found by review: ``state =
    [pos, vel]; state[0][i] = ...; return np.sum(pos)`` gave 0.0, as did ``[z,
    z]``, ``[np.zeros(2)] * 3`` and ``b = list(a)``).  Each name that may refer to
    ``t`` -- through views, copies, containers holding it, flow-insensitively --
    and is read afterwards is bound to ``t1`` where, as the code runs, it is that
    very object (``slot_same``); one that sees its elements otherwise (a view
    of it, another list holding it) raises AliasedUpdateError, located, as does
    another item of ``lst`` that is or sees it (``slot_alone``).  Returns whether
    it changed the program.

        >>> import numpy as np
        >>> from ..frontend.parse import parse_function
        >>> from ..normalize.normalizer import normalize, unparse_body
        >>> def f(x):
        ...     pos = np.zeros(2)
        ...     state = [pos, x * 2.0]
        ...     state[0][0] = x[0]
        ...     return np.sum(pos)
        >>> from ..normalize.sequences import type_sequence_operators
        >>> program = normalize(parse_function(f))
        >>> type_sequence_operators(program)
        >>> from .aliasing import check_aliases
        >>> check_aliases(program)
        >>> print(unparse_body(program))  # doctest: +ELLIPSIS
        pos = np.zeros(2)
        t1 = x * 2.0
        state = [pos, t1]
        t3 = state[0]
        t2 = snapshot(t3)
        t4 = x[0]
        t2[0] = t4
        slot_alone(state, 0, t3, 0, "'state[0][...] = ...' changes ... or store copies", ...)
        same = slot_same(pos, state, t3, 0, "'state[0][...] = ...' changes ...", ...)
        state[0] = t2
        if same:
            pos = t2
        t5 = np.sum(pos)
        return t5
    """
    arrays = array_names(program, statements)
    stores = [s for s in statements if getattr(s, "slot_write", None) is not None
              and ir.is_update(s) and isinstance(s.op.args[0], gast.Name)
              and (s.op.args[0].id in containers or s.op.args[0].id not in arrays)
              and isinstance(s.op.args[2], gast.Name)]
    if not stores:
        return False
    parent, same = {}, {}
    # the written copies (t1 in t1[j] = v): arrays, which copy what is written in
    written_copies = {s.op.args[2].id for s in stores}

    def find(v, table):
        while table.get(v, v) != v:
            v = table[v]
        return v

    def join(a, b, table):
        table.setdefault(a, a)
        table.setdefault(b, b)
        table[find(a, table)] = find(b, table)

    for s in statements:
        op = getattr(s, "op", None)
        if op is None or not isinstance(s, (gast.Assign, gast.Expr)):
            continue
        plain = isinstance(s, gast.Assign) and not ir.is_update(s)
        if plain and is_view(s):
            join(ir.target_names(s)[0], s.op.args[0].id, parent)
            if is_identity(s):
                join(ir.target_names(s)[0], s.op.args[0].id, same)
        if plain and getattr(s, "augmented", None) is not None:
            for n in ir.target_names(s):  # x += v: an array changed in place
                join(n, s.augmented, parent)
        if plain and isinstance(s.targets[0], gast.Tuple):
            for n in ir.target_names(s) + operand_names(op):
                join(n, ir.target_names(s)[0], parent)
        held = held_names(s)
        if held and ir.is_update(s) and (op.args[0].id in written_copies
                                         or op.args[0].id in arrays):
            held = []  # y[i] = v on an array copies v's values
        if held:
            owner = op.args[0].id if (op.primitive is ir.APPEND or ir.is_update(s)) \
                and isinstance(op.args[0], gast.Name) else ir.target_names(s)[0]
            for n in held:
                join(owner, n, parent)
    order = {id(s): i for i, s in enumerate(statements)}
    loops = paths.enclosing_loops(program.body)
    user = user_names(program, statements)
    # the arrays views are taken of, no view themselves (u in t = u[1:]): for messages
    made_views = [s for s in statements if isinstance(s, gast.Assign) and not ir.is_update(s)
                  and getattr(s, "op", None) is not None and is_view(s) and not is_identity(s)]
    bases = {s.op.args[0].id for s in made_views} - {
        n for s in made_views for n in ir.target_names(s)}
    tuples = _tuple_lengths(statements, stores)
    unbound = []
    for store in stores:
        # (taken afresh for each store: the checks put before an earlier one moved
        # the statements after it, whose places paths.stale looks up)
        blocks = paths.blocks_of(program.body)
        box, key, new = store.op.args[0].id, store.op.args[1], store.op.args[2].id
        old, index, shown, written_at = store.slot_write
        where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
            program.filename, *location(written_at))], ctx=gast.Load())

        def call(helper, args, text, index=index, where=where):
            return gast.Call(func=helper_ref(helper), args=[
                *args, SliceToCall().visit(clone(index)), gast.Constant(value=text, kind=None),
                clone(where)], keywords=[])

        written = f"'{shown}.append(...)' changes the list '{shown}'" \
            if getattr(store, "slot_append", False) else \
            f"'{shown}[...] = ...' changes the array '{shown}'"
        alone = gast.Expr(value=call("slot_alone", [
            ir.name(box), SliceToCall().visit(clone(key)), ir.name(old)],
            f"{written}, which another item of '{user(box)}' also is or shares (a list "
            f"built by repetition, [a] * n, or holding one array twice); srcgrad cannot "
            f"follow that change: build the items apart ([np.zeros(n) for _ in "
            f"range(k)]) or store copies"))
        tests, again = [alone], []
        store.slot_followed = set()  # the names bound to the copy or checked (aliasing.py)
        root = find(old, parent)
        # a tuple built here is built again with the written item (t[0][1] = v; it
        # was a raw TypeError): another name for the old tuple then holds the old
        # item, and is checked like any other
        rebuilt = _tuple_rebuild(store, tuples.get(box), program.namer)
        box_root = None if rebuilt else find(box, same)
        for name in sorted(n for n in parent if find(n, parent) == root):
            if name in (new, box) or find(name, same) == box_root \
                    or no_memory(program, name):
                continue
            if not any((name in paths.reads(later) or (
                    ir.is_update(later) and name in ir.target_names(later)))
                    and paths.stale(later, store, name, order, loops, blocks)
                    for later in statements if later is not store):
                continue
            # (the advice keeps the program's meaning: the name taken after the write
            # sees it, as in Python; the array the item is a view of, written itself,
            # too; a copy made first is the user's choice to make)
            if name in containers:  # L = [S['a'][:]]: a list holding a view of it
                how = f"put it into '{user(name)}' after the write"
            elif name in bases:  # u in L = [u[1:]]
                how = (f"write into '{user(name)}' itself ({user(name)}[...] = ...) and "
                       f"store into '{user(box)}' after that write")
            else:
                how = f"take '{user(name)}' from '{shown}' after the write"
            text = (f"{written}, and '{user(name)}' shares its memory (a view of it, or a "
                    f"list holding it) and is read afterwards; srcgrad cannot follow that "
                    f"change into '{user(name)}': {how}, or, for '{user(name)}' to keep the "
                    f"values it had, make a copy ({shown} = {shown}.copy()) before it")
            if name in containers and not getattr(store, "slot_append", False):
                # b = list(a); b[0][j] = v: store the written copy where a holds the item
                # (for an append, a list name is rather the item itself: hs = [];
                # log = {'t': hs}; log['t'].append(v) -- slot_same binds it, below)
                flag = program.namer.fresh("key")
                tests.append(ir.assign(flag, call("held_at", [
                    ir.name(name), ir.name(old), ir.name(old)], text)))
                rebind = ir.assign(gast.Subscript(value=ir.name(name), slice=ir.name(flag),
                                                  ctx=gast.Store()), ir.name(new))
                rebind.op = ir.Op(operator.setitem, [ir.name(name), ir.name(flag),
                                                     ir.name(new)], {}, store.op.node,
                                  "element assignment")
                held = gast.Compare(left=ir.name(flag), ops=[gast.IsNot()],
                                    comparators=[gast.Constant(value=None, kind=None)])
            else:
                flag = program.namer.fresh("same")
                tests.append(ir.assign(flag, call("slot_same", [
                    ir.name(name), ir.name(box), ir.name(old)], text)))
                rebind = ir.assign(name, ir.name(new))
                rebind.op = ir.Op(operator.pos, [ir.name(new)], {}, store, "assignment")
                rebind.refresh_of = rebind  # not a new definition of the name
                held = ir.name(flag)
            gast.copy_location(rebind, store)
            store.slot_followed.add(name)
            again.append(gast.copy_location(gast.If(test=held, body=[rebind], orelse=[]),
                                            store))
            if name not in unbound and paths.maybe_unbound(name, store, program, blocks):
                unbound.append(name)
        for test in tests:
            test.op = ir.Op(ir.OPAQUE, [], {}, store, "statement")
            gast.copy_location(test, store)
        block = blocks[id(store)][0]
        at = block.index(store)
        block[at + 1:at + 1] = again
        if rebuilt:
            # built = slot_alone(..., rebuilt=True) (True, or it raises); if built:
            # state = (t1, state_item1): the tuple rebound in a block of its own, as
            # the adjoint sweep expects of a name bound twice
            alone.value.keywords.append(gast.keyword(
                arg="rebuilt", value=gast.Constant(value=True, kind=None)))
            flag = program.namer.fresh("built")
            tests[0] = ir.assign(flag, alone.value)
            tests[0].op = alone.op
            gast.copy_location(tests[0], store)
            block[at:at + 1] = [gast.copy_location(
                gast.If(test=ir.name(flag), body=rebuilt, orelse=[]), store)]
        block[at:at] = tests
    bind_at_start(program, unbound)
    return True


def bind_at_start(program, unbound) -> None:
    """Binds each name of ``unbound`` to None at the start of the function, one
    statement (``a = b = None``), where a check written before an update reads a
    name not yet bound on every path to it (made later in a loop's body, or in
    one branch only), so that the check runs instead of raising NameError.  One
    definition for the checks of ``follow_slot_writes`` here and those of
    ``check_aliases`` (aliasing.py), so both write the same statement."""
    if not unbound:
        return
    none = gast.Assign(targets=[ir.name(n, store=True) for n in unbound],
                       value=gast.Constant(value=None, kind=None), type_comment=None)
    none.op = ir.Op(ir.OPAQUE, [], {}, program.node, "statement")
    none.comment = "bound at the start: a check of an update reads it"
    program.body.insert(0, gast.copy_location(none, program.body[0]))


def _tuple_lengths(statements, stores) -> dict[str, int]:
    """Names bound to a tuple display of one length on every path (their slot
    writes aside): ``state = (np.zeros(3), np.zeros(3))`` -> ``{'state': 2}``."""
    lengths: dict[str, set] = {}
    for s in statements:
        for n in ir.assigned_by(s):
            op = getattr(s, "op", None)
            if s in stores:
                continue
            if isinstance(s, gast.Assign) and not ir.is_update(s) and op is not None \
                    and op.primitive is ir.BUILD_TUPLE and isinstance(s.targets[0], gast.Name):
                lengths.setdefault(n, set()).add(len(op.args))
            else:
                lengths.setdefault(n, set()).add(None)
    return {n: ls.pop() for n, ls in lengths.items() if len(ls) == 1 and None not in ls}


def _tuple_rebuild(store, length, namer):
    """For ``t[k] = t1`` (a slot write's store) into a tuple of ``length`` items
    and a constant ``k``: the statements that build it again instead, ``e_0 =
    t[0]; ...; t = (e_0, t1, ...)``; None otherwise."""
    box, key, new = store.op.args
    if length is None or not isinstance(key, gast.Constant) or type(key.value) is not int \
            or not -length <= key.value < length:
        return None
    at, node, made, items = key.value % length, store.op.node, [], []
    for k in range(length):
        if k == at:
            items.append(ir.name(new.id))
            continue
        part = ir.assign(namer.fresh(f"{box.id}_item"), gast.Subscript(
            value=ir.name(box.id), slice=gast.Constant(value=k, kind=None), ctx=gast.Load()))
        part.op = ir.Op(operator.getitem, [ir.name(box.id), gast.Constant(value=k, kind=None)],
                        {}, node, "indexing")
        made.append(gast.copy_location(part, store))
        items.append(ir.name(part.targets[0].id))
    whole = ir.assign(box.id, gast.Tuple(elts=items, ctx=gast.Load()))
    whole.op = ir.Op(ir.BUILD_TUPLE, [clone(i) for i in items], {}, node, ir.BUILD_TUPLE.label)
    made.append(gast.copy_location(whole, store))
    return made


#: Primitives whose result may be a list, tuple or dict (or anything at all).
_MAYBE_CONTAINERS = (operator.getitem, operator.pos, ir.BUILD_LIST, ir.BUILD_TUPLE,
                     ir.BUILD_DICT, ir.BUILD_NAMEDTUPLE, ir.BUILD_RECORD, ir.CONCAT, ir.REPEAT,
                     ir.GETATTR, ir.DICT_COPY,
                     ir.OPAQUE, runtime.sequence, runtime.private_copy, runtime.snapshot)


#: Constructors of new arrays (without derivative rules: nothing flows through).
_FRESH_ARRAYS = (np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
                 np.eye, np.identity)


def array_names(program, statements) -> set[str]:
    """Names every binding of which is a NumPy operation's or an arithmetic result
    (``M = np.zeros((2, 2))``): never a list, tuple or dict, so ``M[i][j] = v``
    writes into ``M`` itself, which the alias check of ``M[i] = t`` follows."""
    defs = bindings(statements)

    def array_valued(s) -> bool:
        op = getattr(s, "op", None)
        if not isinstance(s, gast.Assign) or op is None:
            return False
        if ir.is_update(s):
            return True  # M[i] = t keeps what M is
        prim = op.primitive
        try:
            if any(prim is m for m in _MAYBE_CONTAINERS) or is_user_function(prim) \
                    or any(prim is c for c in (list, tuple, dict, sorted)):
                return False
        except TypeError:
            return False
        return registry.lookup(prim) is not None or any(prim is c for c in _FRESH_ARRAYS)

    return {n for n, stmts in defs.items() if n not in program.params
            and all(array_valued(s) for s in stmts)}


def bindings(statements) -> dict[str, list]:
    """Each name bound in ``statements``, with the statements that bind it, in
    order: how ``augmented_views``, ``element_writes`` and ``array_names`` tell
    a name bound once from one bound again.  One definition, so the three agree
    on what counts as a binding (``ir.assigned_by``)."""
    defs: dict[str, list] = {}
    for s in statements:
        for n in ir.assigned_by(s):
            defs.setdefault(n, []).append(s)
    return defs


def no_memory(program, name) -> bool:
    """Whether ``name`` is a global module, class or function (``np`` in
    ``y.view(np.float64)``): an operand with no array memory to share, never
    checked (nor bound to None before the update)."""
    value = program.free.get(name, None)
    return isinstance(value, (types.ModuleType, type, types.FunctionType,
                              types.BuiltinFunctionType))


def location(stmt) -> tuple:
    """``(line, column)`` of an update for its error: its own, or, for a statement
    the normaliser made (the append of a list comprehension), the user's
    expression it came from."""
    for node in (stmt, getattr(getattr(stmt, "op", None), "node", None)):
        if getattr(node, "lineno", None) is not None:
            return node.lineno, getattr(node, "col_offset", None)
    return None, None


#: The names srcgrad gives its temporaries (t2, t2_1), and the files of the code
#: it generates (compiled in memory, or through the cache: tangent_f_<hash>.py).
_GENERATED_TEMP = re.compile(r"t\d+(_\d+)?$")
_GENERATED_FILE = re.compile(r"^<srcgrad:|(^|/)tangent_\w+_[0-9a-f]{16}\.py$")


def user_names(program, statements):
    """``name -> how the user wrote it``: the user's variable for a renamed one,
    the expression a temporary holds, else the name itself."""
    renamed = program.namer.user_names
    temps, made = {}, {}
    # srcgrad's own tangent code, differentiated again (hvp): its t2 = y[1:] are
    # srcgrad's temporaries too, shown as the expression (outside tester T2 #9)
    generated = bool(_GENERATED_FILE.search(program.filename or ""))
    for s in statements:
        node = getattr(getattr(s, "op", None), "node", None)
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                and s.targets[0].id in program.namer.temps and isinstance(node, gast.expr):
            temps.setdefault(s.targets[0].id, node)
        if generated and isinstance(s, gast.Assign) and not ir.is_update(s):
            for n in ir.assigned_by(s):
                made.setdefault(n, []).append(s.value)

    def user(name):
        if generated and _GENERATED_TEMP.match(name) and made.get(name):
            value = made[name][0]  # (its first binding: t2 = y[1:])
            if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
                    and value.func.id == "sequence" and len(value.args) == 1 \
                    and isinstance(value.args[0], gast.Name) and value.args[0].id != name:
                return user(value.args[0].id)  # what a loop runs over: t2 = sequence(t3)
            return source_of(value)
        if name in renamed:
            return renamed[name]
        if name in temps:
            return source_of(temps[name])
        return name
    return user


def is_setitem(stmt) -> bool:
    op = getattr(stmt, "op", None)
    return isinstance(stmt, gast.Assign) and op is not None and op.primitive is operator.setitem
