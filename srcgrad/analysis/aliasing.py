"""Aliasing check for in-place updates.

``x[i] = v`` changes every name that shares ``x``'s memory: ``y = x``,
``r = x[1:]``, ``t = x.T``.  The dataflow srcgrad differentiates does not see
that change, so when such an alias is read after the update, the gradient (and
possibly the value) would silently differ from what Python computes.  Programs
whose aliases are not read afterwards are fine.  The others are followed where
srcgrad can make the change explicit (:mod:`.refresh`), and refused otherwise,
with an error at the update -- at compile time where the sharing is certain, at
run time where it depends on values the compiler cannot see:

- a view ``r = x[1:]`` read after ``x[i] = v`` (or ``x += v``) is taken again
  from the updated ``x`` (:mod:`.refresh`); where that cannot be done (the view
  was made in an earlier loop iteration), it sees the update only if their
  elements overlap (``x[0] = v`` leaves ``r`` as it was): ``untouched(r, x, i,
  ...)`` before the update checks that, and raises if they do;
- ``x += v`` updates in place only if ``x`` is an array; on a number or a NumPy
  scalar (``a = v[3]; a += 1.0``) it rebinds, and immutable values share
  nothing: names that hold a number on every path are never checked, and for
  the others ``untouched(other, x, None, ...)`` raises if ``x`` turns out to be
  an array that ``other`` sees;
- appending to a list or setting an item of a list or dict changes that
  container, never the arrays it holds.

Which names share memory is :mod:`.sharing`'s to say, whether a read may run
after an update without a fresh binding in between is :mod:`.paths`'s, and
taking a view again is :mod:`.refresh`'s; this module decides, update by
update, what to follow, guard or refuse.

    >>> import numpy as np
    >>> def f(y):  # (y made in f: r += 1.0 is written into it, see augmented_views)
    ...     r = y[1:]
    ...     r += 1.0
    ...     return np.sum(y)
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize, unparse_body
    >>> program = normalize(parse_function(f))
    >>> check_aliases(program)
    >>> print(unparse_body(program))  # doctest: +ELLIPSIS
    r = y[1:]
    untouched(y, r, None, "'r += ...' updates the array 'r' in place, and 'y' shares its memory and is read afterwards; ...", ...)
    r_1 = r + 1.0
    t1 = np.sum(y)
    return t1
    >>> from ..runtime import untouched
    >>> y = np.zeros(3)
    >>> untouched(y[1:], y, 0, "never raised")  # y[0] = v leaves y[1:] alone
    >>> untouched(y[1:], y, 2, "y[2] is in y[1:]")
    Traceback (most recent call last):
    ...
    srcgrad.errors.AliasedUpdateError: y[2] is in y[1:]
"""

from __future__ import annotations

import functools
import operator
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from .. import ir, runtime
from ..errors import AliasedUpdateError
from ..frontend.linker import is_user_function
from ..ir.syntax import SliceToCall, clone, helper_ref, source_of
from ..rules import registry
from . import paths, refresh
from .activity import scalar_names
from .sharing import (
    affected_groups,
    container_names,
    copies_elements,
    held_names,
    is_identity,
    is_view,
    may_return_an_argument,
    operand_names,
)


@dataclass
class _Refresh:
    """What follows one update: the views to take again (``views``, with the name
    a rebased chain starts from in ``roots``), the other names for the same array
    to bind to the updated one (``names``), the containers to store it back into
    (``holders``: (container, item) pairs), and the message of each run-time
    check (``messages``, by the name it is about)."""

    update: object
    array: str
    views: list = field(default_factory=list)
    names: list = field(default_factory=list)
    messages: dict = field(default_factory=dict)
    holders: list = field(default_factory=list)
    roots: dict = field(default_factory=dict)


def check_aliases(program: ir.Program) -> None:
    """Raise ``UnsupportedSyntaxError`` where an update would go unseen by an alias.

    The returned expression is read after every statement: it is checked as a
    last statement of the body (``return u`` after ``t += x`` with ``u = t``
    reads the updated array), and takes the names the checks bind again."""
    statements = list(ir.walk_statements(program.body))
    if not any(ir.is_update(s) or getattr(s, "augmented", None) for s in statements):
        return
    returned = gast.Expr(value=program.output)
    returned.op = ir.Op(ir.OPAQUE, [], {}, returned, "return")
    program.body.append(returned)
    try:
        _check_aliases(program)
    finally:
        program.body.remove(returned)
        program.output = returned.value


def _check_aliases(program: ir.Program) -> None:
    statements = list(ir.walk_statements(program.body))
    containers = container_names(program, statements)
    if augmented_views(program, statements, containers):
        statements = list(ir.walk_statements(program.body))
    if element_writes(program, statements, containers):
        statements = list(ir.walk_statements(program.body))
    if follow_slot_writes(program, statements, containers):
        statements = list(ir.walk_statements(program.body))
    scalars = scalar_names(program)
    (statements, views, elements, holders, parts, joins, loops, blocks, order,
     steady) = _structure(program, containers)
    # r = y[1:]; r[0] = v: y changes too -- written back (y[1:] = r) right after, so
    # that the dataflow sees it; the write-back is an update of y checked below
    # (not where the base is updated by y op= v in between: NumPy's r then views the
    # array srcgrad names y_1, and the write-back into y would go unseen -- the
    # update is checked as any other instead)
    loops = paths.enclosing_loops(program.body)
    order = {id(s): i for i, s in enumerate(statements)}

    def kept_base(view, update):
        base = view.op.args[0].id
        return steady(view, update) and not any(
            getattr(s, "augmented", None) == base and (
                order[id(view)] < order[id(s)] < order[id(update)]
                or loops.get(id(s), set()) & loops.get(id(update), set()))
            for s in statements)

    written = refresh.write_back(statements, views, kept_base, blocks, program.namer,
                                 lambda v, u: paths.dominates(v, u, blocks), containers)
    if written:
        (statements, views, elements, holders, parts, joins, loops, blocks, order,
         steady) = _structure(program, containers)
    guards, refreshes, unbound_refreshed = [], {}, []
    user = _user_names(program, statements)  # how the user wrote each name, for messages
    position = 0
    while position < len(statements):
        stmt = statements[position]
        position += 1
        if id(stmt) in refreshes:
            # views of what the last update changed were taken again: the sharing
            # after it is that of the program as it now is
            plan = refreshes[id(stmt)]
            stmt_, x_ = plan.update, plan.array
            plan.views.sort(key=lambda v: order[id(v)])
            new = x_ if ir.is_update(stmt_) else ir.target_names(stmt_)[0]
            check = functools.partial(_check_arguments, stmt_, plan.messages, program.filename)
            block = blocks[id(stmt_)][0]
            # (each inserts right after the update: the stores into containers come
            # last, after the views they store are taken again)
            refresh.insert_holders(stmt_, plan.holders, x_, new, block, program.namer, check)
            refresh.insert_identities(stmt_, plan.names, x_, new, block, program.namer, check)
            refresh.insert(stmt_, plan.views, plan.roots, x_, new, block, program.namer, check)
            unbound_refreshed.extend(n for n in plan.names + [c for c, _ in plan.holders]
                                     if n not in unbound_refreshed
                                     and paths.maybe_unbound(n, stmt_, program, blocks))
            refreshes[id(stmt)] = None
            (statements, views, elements, holders, parts, joins, loops, blocks, order,
             steady) = _structure(program, containers)
            position = next(i for i, s in enumerate(statements) if s is stmt) + 1
            continue
        if ir.is_update(stmt):
            x = ir.target_names(stmt)[0]
        elif getattr(stmt, "augmented", None) is not None:
            x = stmt.augmented  # x += v: NumPy changes the array x referred to
            if x in scalars:
                continue  # a number or NumPy scalar: += rebinds, nothing is shared
        elif getattr(stmt, "item_update", (None,))[0] in containers:
            x = stmt.item_update[1]  # d[k] += v: the array d[k] holds, in place
        else:
            continue
        here = order[id(stmt)]
        # Sharing that exists when the update runs: views made before it, or in a
        # loop around it (made in an earlier iteration).
        group, made = {}, {}

        def find(v):
            while group.get(v, v) != v:
                v = group[v]
            return v

        def in_effect(made_by):
            """Whether the sharing ``made_by`` creates exists when the update runs."""
            if made_by is stmt:
                return False  # x += v compiled as x = t: the new x is the fresh t
            shared = loops.get(id(made_by), set()) & loops.get(id(stmt), set())
            if order[id(made_by)] > here and shared and _broken(made_by, stmt, statements,
                                                                order, loops, blocks):
                return False  # made last iteration, one side reassigned before the update
            if order[id(made_by)] < here and _broken(made_by, stmt, statements, order,
                                                     loops, blocks, since=True):
                return False  # one side reassigned between the view and the update
            return order[id(made_by)] < here or bool(shared)

        # every plain copy z = y in effect (made keeps one view per name), and every
        # call that may return its operand itself (z = np.asarray(y), y.conj())
        copies = []
        for view in views:
            if in_effect(view) and not (x in containers and id(view) in elements):
                target = ir.target_names(view)[0]
                group[find(target)] = find(view.op.args[0].id)
                made[target] = view
                if is_identity(view):
                    copies.append((target, view.op.args[0].id))
        for join in joins:
            if in_effect(join):
                first, *rest = ir.target_names(join)
                for n in rest:
                    group[find(n)] = find(first)
                    made.setdefault(n, None)
        # sorted(d), list(xs): a new container holding d's elements, which an
        # update of the container d itself (d[k] = v) leaves as they were
        holds = [(ir.target_names(h)[0], names) for h, names in holders if in_effect(h)
                 and not (x in containers and copies_elements(h) and x in names)]
        holds += [(ir.target_names(j)[0], operand_names(j.op)) for j in joins if in_effect(j)]
        holds += [(p.op.args[0].id, ir.target_names(p)) for p in parts if in_effect(p)]
        # appending to a list, or setting an item of a list or dict, changes the
        # container: never the arrays it holds
        affected = affected_groups(find(x), [(find(c), {find(n) for n in names})
                                       for c, names in holds], down=x not in containers)
        candidates = set(made) | set(group) | set(group.values())
        candidates.update(c for c, _ in holds)
        candidates.update(n for _, names in holds for n in names)
        item = getattr(stmt, "item_update", None) is not None
        for other in sorted(candidates):
            if other == x or find(other) not in affected or _no_memory(program, other):
                continue
            if item and other in containers and other != stmt.item_update[0] and {
                    find(n) for h, names in holders if ir.target_names(h)[0] == other
                    for n in names} <= {find(stmt.item_update[0])}:
                continue  # a container holding d itself: sees d[k]'s array through d
            if id(stmt) in written and refresh.chain(
                    other, x, made, lambda v, u=stmt: steady(v, u, base=False),
                    lambda v, u=stmt: paths.dominates(v, u, blocks), elements) is None:
                continue  # the base and what shares it: the write-back's own check
            source = made.get(other)
            # (an update of other, other[0] = v, reads it too: its other elements
            # stay, and must be the changed ones -- z = y; z += 1.0; y[0] = v)
            stale = next((later for later in statements if (
                other in paths.reads(later)
                or (ir.is_update(later) and other in ir.target_names(later)))
                and paths.stale(later, stmt, other, order, loops, blocks)), None)
            if stale is None:
                continue
            message = _message(stmt, x, other, source, user)
            augmented = not ir.is_update(stmt)
            stmt.updated = x  # what a run-time check tests
            follow = augmented or _is_setitem(stmt)
            again = None
            if source is not None and follow:
                again = refresh.chain(other, x, made,
                                      lambda v, u=stmt: steady(v, u, base=False),
                                      lambda v, u=stmt: paths.dominates(v, u, blocks),
                                      elements, rebase=True)
            # another name for x's array (z = x), or an item of a list that may be it
            same = again is None and follow and (refresh.identical(other, x, copies) or (
                source is not None and id(source) in elements))
            # a list or dict that may hold x's array (for w in ws: w *= 0.5)
            # (only where x is rebound: after x[i] = v the container already holds the
            # changed array, and storing it again would break the adjoint's restores)
            holder = again is None and not same and augmented and other in containers \
                and x not in containers and not (item and other == stmt.item_update[0])
            if again is not None or same or holder:
                # a view of x (r = x[1:]) is taken again after the update, another
                # name for x's array bound to it again, the updated array stored
                # back into a list holding it (refresh), before the statements after
                # it are checked
                plan = refreshes.setdefault(id(stmt), _Refresh(stmt, x))
                plan.messages[other] = message
                if again is not None:
                    views_, root = again
                    plan.views.extend(v for v in views_ if v not in plan.views)
                    plan.roots[id(views_[0])] = root
                elif same and other not in plan.names:
                    plan.names.append(other)
                elif holder:
                    # the container holds x itself, or views of x that are taken
                    # again (hist = [z[2]]; z *= 0.5): each is stored back where held
                    items = [x]
                    for h, names in holders:
                        if ir.target_names(h)[0] != other or not in_effect(h):
                            continue
                        for v in names:
                            chained = None if v == x else refresh.chain(
                                v, x, made, lambda w, u=stmt: steady(w, u, base=False),
                                lambda w, u=stmt: paths.dominates(w, u, blocks), elements)
                            if chained is not None:
                                plan.views.extend(w for w in chained[0] if w not in plan.views)
                                items.append(v)
                    if len(items) > 1 and not any(x in names for h, names in holders
                                                  if ir.target_names(h)[0] == other):
                        items = items[1:]
                    plan.holders.extend((other, v) for v in items if (other, v) not in plan.holders)
                if statements[position - 1] is stmt:
                    position -= 1  # back to this update: apply, then go on
                continue
            if augmented or _is_setitem(stmt):
                # whether other sees x[i] = v (their elements overlap) or x += v (x
                # is an array, not a number) is decided when the code runs
                guards.append((stmt, other, message))
                continue
            lineno, col = _location(stmt)
            raise AliasedUpdateError(message, filename=program.filename, lineno=lineno,
                                     col=col)
    blocks, unbound = paths.blocks_of(program.body), list(unbound_refreshed)
    for stmt, other, message in guards:
        _guard(stmt, other, message, blocks, program, unbound)
    if unbound:
        none = gast.Assign(targets=[ir.name(n, store=True) for n in unbound],
                           value=gast.Constant(value=None, kind=None), type_comment=None)
        none.op = ir.Op(ir.OPAQUE, [], {}, program.node, "statement")
        none.comment = "bound at the start: a check of an update reads it"
        program.body.insert(0, gast.copy_location(none, program.body[0]))


def augmented_views(program, statements, containers) -> bool:
    """``row = Y[k]; row *= 2`` (``for row in Y: row *= 2``): NumPy writes into the
    view, and so into ``Y``.  Where ``row`` is bound once, by basic indexing of
    a name that is no list, tuple or dict, just before (nothing between rebinds
    ``row``, ``Y`` or the index), the update is written as the element write it
    is, ``row[...] = row * 2``, which the alias check writes back into ``Y``
    (:func:`.refresh.write_back`) -- where ``row`` is an array as the code runs
    (``is_window``); a NumPy scalar (``Y`` 1-D) is rebound, as Python does.  It
    was refused, valid code (found by review).  Returns whether it changed the
    program."""
    blocks = paths.blocks_of(program.body)
    arrays = _array_names(program, statements)
    defs: dict[str, list] = {}
    for s in statements:
        for n in ir.assigned_by(s):
            defs.setdefault(n, []).append(s)
    changed = False
    for update in statements:
        x = getattr(update, "augmented", None)
        if x is None or not isinstance(update, gast.Assign) or ir.is_update(update) \
                or not isinstance(update.targets[0], gast.Name):
            continue
        made = [d for d in defs.get(x, []) if not ir.is_update(d) and d is not update]
        if len(made) != 1 or not (isinstance(made[0], gast.Assign) and is_view(made[0])
                                  and made[0].op.primitive is operator.getitem):
            continue
        view = made[0]
        base, index = view.op.args[0].id, view.op.args[1]
        if base not in arrays or any(isinstance(n, (gast.List, gast.Compare))
                                     for n in gast.walk(index)):
            continue  # (an argument's view stays refused: the caller's array would change)
        block = blocks[id(view)][0]
        if blocks[id(update)][0] is not block or block.index(view) > block.index(update):
            continue
        kept = {x, base, *ir.names_in(index)}
        between = ir.walk_statements(block[block.index(view) + 1:block.index(update)])
        if any(kept & set(ir.assigned_by(s)) for s in between):
            continue
        target, node = update.targets[0].id, update.op.node
        value = program.namer.fresh(x)
        update.targets = [ir.name(value, store=True)]
        update.augmented = None
        flag = program.namer.fresh("window")
        test = ir.assign(flag, gast.Call(func=helper_ref("is_window"), args=[ir.name(x)],
                                         keywords=[]))
        test.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
        every = gast.Constant(value=Ellipsis, kind=None)
        write = ir.assign(gast.Subscript(value=ir.name(x), slice=every, ctx=gast.Store()),
                          ir.name(value))
        write.op = ir.Op(operator.setitem, [ir.name(x), clone(every), ir.name(value)], {},
                         node, "element assignment")
        write.user_target = getattr(update, "user_target", None)
        inside, outside = [write], []
        for stmt_, source in ((inside, x), (outside, value)):
            if source != target:
                # (the number rebound, +row_1: a value of its own, no view for the
                # write-back to take row for)
                bind = ir.assign(target, ir.name(source) if stmt_ is inside else gast.UnaryOp(
                    op=gast.UAdd(), operand=ir.name(source)))
                bind.op = ir.Op(operator.pos, [ir.name(source)], {}, node, "assignment")
                stmt_.append(bind)
        branch = gast.If(test=ir.name(flag), body=inside, orelse=outside)
        for made_ in (test, write, branch, *inside[1:], *outside):
            gast.copy_location(made_, update)
        at = block.index(update)
        block[at + 1:at + 1] = [test, branch]
        changed = True
    return changed


def element_writes(program, statements, containers) -> bool:
    """``a = d['h']; a[0] = v``, ``a`` an item of a list, tuple or dict ``d`` that
    still holds it (nothing between the two binds ``a``, ``d`` or the key, nor
    reads ``d`` but to index it): written as ``d['h'][0] = v`` is (a copy of the
    item, written, stored back: see :func:`follow_slot_writes`), so that ``d``
    and the other names for the item see the write (it was refused, valid
    code, found by review).  Returns whether it changed the program."""
    blocks = paths.blocks_of(program.body)
    defs: dict[str, list] = {}
    for s in statements:
        for n in ir.assigned_by(s):
            defs.setdefault(n, []).append(s)
    changed = False
    for update in statements:
        op = getattr(update, "op", None)
        if not (ir.is_update(update) and _is_setitem(update)
                and isinstance(op.args[0], gast.Name)) or op.args[0].id in containers:
            continue
        a = op.args[0].id
        made = [d for d in defs.get(a, []) if not ir.is_update(d)]
        if len(made) != 1 or not (isinstance(made[0], gast.Assign) and is_view(made[0])
                                  and made[0].op.primitive is operator.getitem):
            continue
        view = made[0]
        box, key = view.op.args[0].id, view.op.args[1]
        if box not in containers or not isinstance(key, (gast.Constant, gast.Name)) \
                or not all(_built_here(d) for d in defs.get(box, [])):
            continue
        block = blocks[id(view)][0]
        if blocks[id(update)][0] is not block or block.index(view) > block.index(update):
            continue
        kept = {a, box, *ir.names_in(key)}
        between = list(ir.walk_statements(block[block.index(view) + 1:block.index(update)]))
        if any(kept & set(ir.assigned_by(s)) or (box in ir.names_in(s) and not (
                isinstance(s, gast.Assign) and not ir.is_update(s) and is_view(s)
                and s.op.primitive is operator.getitem)) for s in between):
            continue
        node = op.node
        copy_ = program.namer.fresh(a)
        snap = ir.assign(copy_, gast.Call(func=helper_ref("snapshot"), args=[ir.name(a)],
                                          keywords=[]))
        snap.op = ir.Op(runtime.snapshot, [ir.name(a)], {}, node, "snapshot")
        write = ir.assign(gast.Subscript(value=ir.name(copy_), slice=clone(op.args[1]),
                                         ctx=gast.Store()), clone(op.args[2]))
        write.op = ir.Op(operator.setitem, [ir.name(copy_), clone(op.args[1]),
                                            clone(op.args[2])], {}, node, op.label)
        store = ir.assign(gast.Subscript(value=ir.name(box), slice=clone(key),
                                         ctx=gast.Store()), ir.name(copy_))
        store.op = ir.Op(operator.setitem, [ir.name(box), clone(key), ir.name(copy_)], {},
                         node, op.label)
        shown = source_of(view.op.node) if isinstance(view.op.node, gast.expr) else a
        store.slot_write = (a, clone(op.args[1]), shown, update)
        at = block.index(update)
        block[at:at + 1] = [gast.copy_location(s, update) for s in (snap, write, store)]
        changed = True
    return changed


def _built_here(stmt) -> bool:
    """Whether ``stmt`` builds a list, tuple or dict of its own items (a display,
    a concatenation, ``list(xs)``), or changes one (``xs.append(v)``) -- not the
    pieces of a call (``np.split(y, 2)``, views of ``y``; ``dict(a=y)``)."""
    op = getattr(stmt, "op", None)
    if op is None or ir.is_update(stmt) or op.primitive is ir.APPEND:
        return True
    return any(op.primitive is p for p in (ir.BUILD_LIST, ir.BUILD_TUPLE, ir.BUILD_DICT,
                                           ir.CONCAT, ir.REPEAT, list, tuple, sorted))


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
    arrays = _array_names(program, statements)
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
    blocks = paths.blocks_of(program.body)
    user = _user_names(program, statements)
    tuples = _tuple_lengths(statements, stores)
    unbound = []
    for store in stores:
        box, key, new = store.op.args[0].id, store.op.args[1], store.op.args[2].id
        old, index, shown, written_at = store.slot_write
        where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
            program.filename, *_location(written_at))], ctx=gast.Load())

        def call(helper, args, text):
            return gast.Call(func=helper_ref(helper), args=[
                *args, SliceToCall().visit(clone(index)), gast.Constant(value=text, kind=None),
                clone(where)], keywords=[])

        written = f"'{shown}[...] = ...' changes the array '{shown}'"
        alone = gast.Expr(value=call("slot_alone", [
            ir.name(box), SliceToCall().visit(clone(key)), ir.name(old)],
            f"{written}, which another item of '{user(box)}' also is or shares (a list "
            f"built by repetition, [a] * n, or holding one array twice); srcgrad cannot "
            f"follow that change: build the items apart ([np.zeros(n) for _ in "
            f"range(k)]) or store copies"))
        tests, again = [alone], []
        root = find(old, parent)
        # a tuple built here is built again with the written item (t[0][1] = v; it
        # was a raw TypeError): another name for the old tuple then holds the old
        # item, and is checked like any other
        rebuilt = _tuple_rebuild(store, tuples.get(box), program.namer)
        box_root = None if rebuilt else find(box, same)
        for name in sorted(n for n in parent if find(n, parent) == root):
            if name in (new, box) or find(name, same) == box_root \
                    or _no_memory(program, name):
                continue
            if not any((name in paths.reads(later) or (
                    ir.is_update(later) and name in ir.target_names(later)))
                    and paths.stale(later, store, name, order, loops, blocks)
                    for later in statements if later is not store):
                continue
            text = (f"{written}, and '{user(name)}' shares its memory (a view of it, or a "
                    f"list holding it) and is read afterwards; srcgrad cannot follow that "
                    f"change: make a copy ({shown} = {shown}.copy()) first")
            if name in containers:
                # b = list(a); b[0][j] = v: store the written copy where a holds the item
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
    if unbound:
        none = gast.Assign(targets=[ir.name(n, store=True) for n in unbound],
                           value=gast.Constant(value=None, kind=None), type_comment=None)
        none.op = ir.Op(ir.OPAQUE, [], {}, program.node, "statement")
        none.comment = "bound at the start: a check of an update reads it"
        program.body.insert(0, gast.copy_location(none, program.body[0]))
    return True


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
                     ir.BUILD_DICT, ir.BUILD_NAMEDTUPLE, ir.CONCAT, ir.REPEAT, ir.GETATTR,
                     ir.OPAQUE, runtime.sequence, runtime.private_copy, runtime.snapshot)


#: Constructors of new arrays (without derivative rules: nothing flows through).
_FRESH_ARRAYS = (np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
                 np.eye, np.identity)


def _array_names(program, statements) -> set[str]:
    """Names every binding of which is a NumPy operation's or an arithmetic result
    (``M = np.zeros((2, 2))``): never a list, tuple or dict, so ``M[i][j] = v``
    writes into ``M`` itself, which the alias check of ``M[i] = t`` follows."""
    defs: dict[str, list] = {}
    for s in statements:
        for n in ir.assigned_by(s):
            defs.setdefault(n, []).append(s)

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


def _no_memory(program, name) -> bool:
    """Whether ``name`` is a global module, class or function (``np`` in
    ``y.view(np.float64)``): an operand with no array memory to share, never
    checked (nor bound to None before the update)."""
    value = program.free.get(name, None)
    return isinstance(value, (types.ModuleType, type, types.FunctionType,
                              types.BuiltinFunctionType))


def _location(stmt) -> tuple:
    """``(line, column)`` of an update for its error: its own, or, for a statement
    the normaliser made (the append of a list comprehension), the user's
    expression it came from."""
    for node in (stmt, getattr(getattr(stmt, "op", None), "node", None)):
        if getattr(node, "lineno", None) is not None:
            return node.lineno, getattr(node, "col_offset", None)
    return None, None


def _message(stmt, x, other, source, user) -> str:
    """What an update ``stmt`` of ``x`` that ``other`` sees is refused with, in the
    user's names: ``x`` for the ``x_1`` the compiler renamed it to, the user's
    expression (``d['h']``, ``W[1:]``) for a temporary."""
    shown_x = getattr(stmt, "user_target", None) or user(x)
    shown_other = user(other)
    node = getattr(getattr(source, "op", None), "node", None)
    if source is not None and source.op.primitive is not operator.pos \
            and isinstance(node, gast.expr) and not isinstance(node, (gast.Tuple, gast.List)):
        hint = f"{shown_other} = {source_of(node)}.copy()"  # the view, as the user wrote it
    else:
        hint = f"{shown_x} = {shown_x}.copy()"
    if ir.is_update(stmt):
        return (f"'{shown_x}' is updated in place while '{shown_other}' shares its memory "
                f"and is read afterwards; srcgrad cannot follow that change: make a copy "
                f"({hint})")
    symbol = getattr(stmt, "augmented_symbol", "+")
    return (f"'{shown_x} {symbol}= ...' updates the array '{shown_x}' in place, and "
            f"'{shown_other}' shares its memory and is read afterwards; srcgrad cannot "
            f"follow that change: write '{shown_x} = {shown_x} {symbol} ...' or make a copy "
            f"({hint})")


def _user_names(program, statements):
    """``name -> how the user wrote it``: the user's variable for a renamed one,
    the expression a temporary holds, else the name itself."""
    renamed = program.namer.user_names
    temps = {}
    for s in statements:
        node = getattr(getattr(s, "op", None), "node", None)
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                and s.targets[0].id in program.namer.temps and isinstance(node, gast.expr):
            temps.setdefault(s.targets[0].id, node)

    def user(name):
        if name in renamed:
            return renamed[name]
        if name in temps:
            return source_of(temps[name])
        return name
    return user


def _structure(program, containers):
    """The statements of ``program`` and the sharing they make: views, elements
    of containers, holders, attribute reads, joins; loops, blocks, order and how
    often each name is bound."""
    statements = list(ir.walk_statements(program.body))
    views = [s for s in statements
             if isinstance(s, gast.Assign) and not ir.is_update(s) and is_view(s)]
    # t = xs[0] is the element xs holds: an update of t changes what xs holds, but
    # setting an item of xs or appending to it leaves t as it was
    elements = {id(s) for s in views
                if s.op.primitive is operator.getitem and s.op.args[0].id in containers}
    holders = [(s, names) for s in statements for names in [held_names(s)] if names]
    # w = obj.W: w is the array obj holds, so updating w changes what obj.W reads
    parts = [s for s in statements if isinstance(s, gast.Assign) and not ir.is_update(s)
             and getattr(s, "op", None) is not None and s.op.primitive is ir.GETATTR
             and s.op.args and isinstance(s.op.args[0], gast.Name)]
    # a, b = f(x), where f may return x or the same array twice: a, b (and x) share
    joins = [s for s in statements if isinstance(s, gast.Assign) and not ir.is_update(s)
             and isinstance(s.targets[0], gast.Tuple) and getattr(s, "op", None) is not None
             and is_user_function(s.op.primitive) and may_return_an_argument(s.op.primitive)]
    order = {id(s): i for i, s in enumerate(statements)}
    loops = paths.enclosing_loops(program.body)

    def steady(view, update, base=True) -> bool:
        """Whether, when ``update`` runs, the view's name and its operands (its base
        too, unless ``base`` is False) still hold what they held when the view
        statement ran (see :func:`.paths.undisturbed`)."""
        names = {*ir.target_names(view), *operand_names(view.op)[0 if base else 1:]}
        return paths.undisturbed(names, view, update, statements, order, loops)

    return (statements, views, elements, holders, parts, joins, loops,
            paths.blocks_of(program.body), order, steady)


def _check_arguments(stmt, messages, filename, name) -> list:
    """The index, message and place that a run-time check of the update ``stmt``
    (``runtime.untouched``) takes, for the name ``name``."""
    where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
        filename, getattr(stmt, "lineno", None), getattr(stmt, "col_offset", None))],
        ctx=gast.Load())
    if ir.is_update(stmt):
        index = SliceToCall().visit(clone(stmt.op.args[1]))
    else:
        index = gast.Constant(value=None, kind=None)
    text = messages.get(name) or next(iter(messages.values()))
    return [index, gast.Constant(value=text, kind=None), where]


def _is_setitem(stmt) -> bool:
    op = getattr(stmt, "op", None)
    return isinstance(stmt, gast.Assign) and op is not None and op.primitive is operator.setitem


def _guard(stmt, other, message, blocks, program, unbound) -> None:
    """Put ``untouched(other, x, i, message, where)`` before the update ``x[i] = v``
    (``i`` None for ``x += v``): a run-time check, for what the analysis cannot
    settle alone, that ``other`` -- read after the update, and possibly sharing
    ``x``'s memory -- does not see it.  It raises AliasedUpdateError naming the
    update's file, line and column if it does (see runtime.untouched).

    ``other`` may still be unbound when the update runs (made later in a loop's
    body, read on the next iteration); it is then bound to None at the start of
    the function (``unbound`` collects such names)."""
    block, _, _ = blocks[id(stmt)]
    where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
        program.filename, *_location(stmt))],
        ctx=gast.Load())
    text = gast.Constant(value=message, kind=None)
    item = getattr(stmt, "item_update", None)
    if item is not None and other == item[0]:
        # d[k] += v: the array d[k] holds changes; do d's other items see it?
        key = SliceToCall().visit(clone(item[2]))
        call = gast.Call(func=helper_ref("untouched_except"),
                         args=[ir.name(other), key, ir.name(stmt.updated), text, where],
                         keywords=[])
    else:
        if ir.is_update(stmt):
            x, index, _ = stmt.op.args
            x, index = x.id, SliceToCall().visit(clone(index))
        else:  # x += v: all of x, if x is an array
            x, index = stmt.updated, gast.Constant(value=None, kind=None)
        call = gast.Call(func=helper_ref("untouched"),
                         args=[ir.name(other), ir.name(x), index, text, where], keywords=[])
    guard = gast.copy_location(gast.Expr(value=call), stmt)
    guard.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
    block.insert(block.index(stmt), guard)
    if other not in unbound and paths.maybe_unbound(other, stmt, program, blocks):
        unbound.append(other)


def copy_updated_attributes(program: ir.Program) -> None:
    """``w = p.W`` followed by ``w[0] = v``: read a copy, ``w = snapshot(p.W)``, so
    that generated code never changes an array the caller's object holds.

    Run after :func:`check_aliases`, which refuses programs that would read the
    attribute again after the update: for the others the copy changes nothing
    but the caller's object.  The copy has the attribute read's derivatives, so
    the operation stays the attribute read."""
    updated = {n for stmt in ir.walk_statements(program.body) if ir.is_update(stmt)
               for n in ir.target_names(stmt)}
    for stmt in ir.walk_statements(program.body):
        op = getattr(stmt, "op", None)
        if isinstance(stmt, gast.Assign) and not ir.is_update(stmt) and op is not None \
                and op.primitive is ir.GETATTR and isinstance(stmt.targets[0], gast.Name) \
                and stmt.targets[0].id in updated:
            stmt.value = gast.Call(func=ir.name("snapshot"), args=[stmt.value], keywords=[])
            stmt.comment = f"{stmt.targets[0].id} is updated in place below: work on a copy"


def shared_names(program: ir.Program) -> set[str]:
    """Names that may share memory with another name (a view, a plain copy).

    The adjoint sweep must restore the elements an update overwrote in such an
    array even where it reads only the other name: ``t1 = v[:, ::2]`` is read by
    an adjoint after ``v[:, ::2] = ...`` and sees ``v``'s elements.  So must it
    where ``y_1 = in_place(t4, y)`` (``y /= z``) returned ``t4`` itself, which the
    adjoint of ``/`` reads after ``y_1[0] = v``; and where a user function's
    residuals hold the arrays it was called with (found by review: ``s = f(a,
    c); c[0] = 5.0`` gave ``f``'s backward the changed ``c``)."""
    names = set()
    for stmt in ir.walk_statements(program.body):
        op = getattr(stmt, "op", None)
        residuals = getattr(stmt, "residuals", None)
        if residuals is not None and op is not None:
            # y, f_res = f_forward(a, c): the residuals hold f's arguments by reference,
            # which f_backward reads after a later c[0] = v unless it is undone
            arrays = {a.id for a in op.args if isinstance(a, gast.Name)}
            if arrays:
                names |= arrays | {residuals}
        if isinstance(stmt, gast.Assign) and not ir.is_update(stmt) and (is_view(stmt) or (
                op is not None and op.primitive is runtime.in_place
                and isinstance(op.args[0], gast.Name))):
            names.update(ir.target_names(stmt))
            names.add(stmt.op.args[0].id)
    return names


def _broken(view, update, statements, order, loops, blocks, since=False) -> bool:
    """Whether a view made in the previous iteration (after ``update`` in the loop
    body) certainly loses a side to a reassignment before ``update`` runs again:
    one in the innermost loop around both, on every path to ``update`` (a
    reassignment before that loop, or in a branch, does not count) -- and that
    side passes its memory to no other name in the loop first (``y, w = w, y``
    hands the view ``y`` to ``w`` before ``y`` is reassigned) -- the view itself
    aside: ``hist = t`` after ``t = []; t.append(v)`` in a loop body (a list
    comprehension) shares last iteration's list, which ``t = []`` left behind.
    ``since``: the view was made before ``update`` (``hist = t; t = [];
    t.append(v)``), and only a reassignment after it counts."""
    if not (isinstance(view, gast.Assign) and is_view(view)):
        return False  # a join or a holder relates several names: assume it holds
    names = {ir.target_names(view)[0], view.op.args[0].id}
    loop = loops.get(id(update), set()) & loops.get(id(view), set())
    in_loop = [s for s in statements if loop <= loops.get(id(s), set())]
    # (since: a reassignment before the view does not count; a statement handing
    # a side's memory to another name does, wherever it is in the loop: `t3 = t`
    # before `hist = t; t = u` keeps hist and t3 sharing the old list)
    for other in in_loop:
        if since and order[id(other)] < order[id(view)]:
            continue
        lost = names & set(ir.assigned_by(other))
        if order[id(other)] < order[id(update)] and lost and other is not view \
                and paths.dominates(other, update, blocks) \
                and not any(_passes_on(s, n) for s in in_loop if s is not view
                            for n in lost):
            return True
    return False


def _passes_on(stmt, name) -> bool:
    """Whether ``stmt`` may give another name ``name``'s memory: a view or copy of
    it, a container or call result that may hold it."""
    if not isinstance(stmt, (gast.Assign, gast.Expr)) or getattr(stmt, "op", None) is None:
        return False
    if isinstance(stmt, gast.Assign) and not ir.is_update(stmt) and is_view(stmt):
        return stmt.op.args[0].id == name
    if name in held_names(stmt):
        return True
    return isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Tuple) \
        and name in operand_names(stmt.op)
