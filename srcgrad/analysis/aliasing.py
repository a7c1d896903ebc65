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
    >>> def f(y):  # (y made in f: r += 1.0 is written into it, see slot_writes.py)
    ...     r = y[1:]
    ...     r += 1.0
    ...     return np.sum(y)
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize, unparse_body
    >>> program = normalize(parse_function(f))
    >>> check_aliases(program)
    >>> print(unparse_body(program))  # doctest: +ELLIPSIS
    r = y[1:]
    item_once(y, 'y', r, 'r', ...)  # r may be part of the argument y: no other item of it may see it
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
from dataclasses import dataclass, field

import gast

from .. import ir, runtime
from ..errors import AliasedUpdateError
from ..frontend.linker import is_user_function
from ..ir.syntax import SliceToCall, clone, helper_ref
from . import paths, refresh
from .activity import scalar_names
from .alias_messages import refusal
from .attribute_updates import refuse_hidden_attribute_updates
from .sharing import (
    affected_groups,
    container_names,
    copies_elements,
    held_names,
    helper_results,
    is_identity,
    is_view,
    may_return_an_argument,
    operand_names,
)
from .augmented_views import augmented_views
from .global_writes import outside_names, refuse_attribute_writes, refuse_outside_writes
from .slot_writes import (
    appends_to_its_copy,
    array_names,
    bind_at_start,
    element_writes,
    follow_slot_writes,
    is_setitem,
    location,
    no_memory,
    user_names,
)
from .sorts_in_place import sorts_in_place


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
    sorts_in_place(program)  # a.sort(): a[...] = np.sort(a), an update like any other
    statements = list(ir.walk_statements(program.body))
    if not any(ir.is_update(s) or getattr(s, "augmented", None) for s in statements):
        return
    returned = gast.Expr(value=program.output)
    returned.op = ir.Op(ir.OPAQUE, [], {}, returned, "return")
    program.body.append(returned)
    refuse_attribute_writes(program, statements)
    outside = outside_names(program, statements)
    before = {id(s) for s in ir.walk_statements(program.body)}
    try:
        _check_aliases(program)
        refuse_outside_writes(program, before, outside)
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
                                 lambda v, u: paths.dominates(v, u, blocks), containers,
                                 (array_names(program, statements),
                                  user_names(program, statements), program.filename))
    if written:
        (statements, views, elements, holders, parts, joins, loops, blocks, order,
         steady) = _structure(program, containers)
    returned = helper_results(program, statements)  # q = pack(p): may hold p's arrays
    passed = _passed_and_held(program, statements, holders, views, containers)
    guards, refreshes, unbound_refreshed = [], {}, []
    user = user_names(program, statements)  # how the user wrote each name, for messages
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
        if appends_to_its_copy(stmt, blocks):
            continue  # appended to a copy just made (slot_writes.element_writes)
        if ir.is_update(stmt):
            x = ir.target_names(stmt)[0]
        elif getattr(stmt, "augmented", None) is not None:
            x = stmt.augmented  # x += v: NumPy changes the array x referred to
            if x in scalars:
                continue  # a number or NumPy scalar: += rebinds, nothing is shared
        elif getattr(stmt, "item_update", (None,))[0] in containers | returned | passed:
            x = stmt.item_update[1]  # d[k] += v: the array d[k] holds, in place
        elif getattr(stmt, "item_update", None) is not None and any(
                id(v) in elements and stmt.item_update[0] in ir.target_names(v) for v in views):
            # t = d['h']; t[1] *= 3.0 (d['h'][1] *= 3.0): t may be a list, whose
            # array t[1] changes in place -- checked as the code runs: d sees it
            # through t (written back), d's other items and other names must not
            x = stmt.item_update[1]
            source = next(v for v in views if id(v) in elements
                          and stmt.item_update[0] in ir.target_names(v))
            stmt.item_parent = (source.op.args[0].id, source.op.args[1])
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
        # (x.append(v): x is a list, whatever else is known of it -- no array has one)
        appended = getattr(getattr(stmt, "op", None), "primitive", None) is ir.APPEND
        affected = affected_groups(find(x), [(find(c), {find(n) for n in names})
                                       for c, names in holds],
                                   down=x not in containers and not appended)
        candidates = set(made) | set(group) | set(group.values())
        candidates.update(c for c, _ in holds)
        candidates.update(n for _, names in holds for n in names)
        item = getattr(stmt, "item_update", None) is not None
        for other in sorted(candidates):
            if other == x or find(other) not in affected or no_memory(program, other):
                continue
            if other in getattr(getattr(stmt, "slot_store", None), "slot_followed", ()) \
                    and other not in (stmt.item_update[0],
                                      getattr(stmt, "item_parent", (None,))[0]):
                # a[1:] *= 0.9 on an item a of d, written back as d's item (a copy,
                # written, stored): another name for that item is bound to the copy
                # there, or checked, and nothing reads it in between (u0 = d['u'], then
                # a helper's a[1:] *= 0.9 on d['u']); a and d keep their checks here
                continue
            if item and other in ir.target_names(stmt):
                continue  # d[k] += v's own result: read afterwards, it is the updated array
            if item and stmt.item_update[0] in returned - containers and other != \
                    stmt.item_update[0] and find(other) == find(stmt.item_update[0]):
                continue  # q = make(x), an array: its views see q[k] += v (q[k] = t follows)
            if item and other in containers and other != stmt.item_update[0] and _holds_whole(
                    other, stmt.item_update[0], holders, made, elements):
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
            maker = made.get(x) or next((h for h, _ in holders  # b = ident(buf)
                                         if x in ir.target_names(h)), None)
            message = refusal(stmt, x, other, source, user, other in containers,
                               getattr(made.get(x), "loop_item_of", None), maker)
            augmented = not ir.is_update(stmt)
            stmt.updated = x  # what a run-time check tests
            parent = getattr(stmt, "item_parent", None)
            if parent is not None and other in (stmt.item_update[0], parent[0]):
                guards.append((stmt, other, message))  # the list t itself, or d: apart from t
                continue
            follow = augmented or is_setitem(stmt)
            again = None
            if source is not None and follow:
                again = refresh.chain(other, x, made,
                                      lambda v, u=stmt: steady(v, u, base=False),
                                      lambda v, u=stmt: paths.dominates(v, u, blocks),
                                      elements, rebase=True)
            # another name for x's array (z = x), or an item of a list that may be it
            same = again is None and follow and (refresh.identical(other, x, copies) or (
                source is not None and id(source) in elements) or (
                item and other not in containers and source is not None
                and is_identity(source)) or (  # snap = d[k] refreshed by an earlier d[k] += v
                item and other not in containers | passed | returned and source is None
                and _held_itself(other, holders, in_effect)))
            # (the last: box = [h]; box[0] *= 3.0 changes h's array, h read after it --
            # found by review; bound to the update where it is that array, else checked)
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
            if augmented or is_setitem(stmt):
                # whether other sees x[i] = v (their elements overlap) or x += v (x
                # is an array, not a number) is decided when the code runs
                guards.append((stmt, other, message))
                continue
            lineno, col = location(stmt)
            raise AliasedUpdateError(message, filename=program.filename, lineno=lineno,
                                     col=col)
    blocks, unbound = paths.blocks_of(program.body), list(unbound_refreshed)
    for stmt, other, message in guards:
        _guard(stmt, other, message, blocks, program, unbound)
    bind_at_start(program, unbound)


def _passed_and_held(program, statements, holders, views, containers) -> set[str]:
    """Parameters, and srcgrad's entry copies of them (``hs_1 = snapshot(hs)``),
    whose items another container here holds -- a copy of them (``t =
    list(hs)``, ``q |= p``) or one read from them (``ks = [hs[0]]``): a list
    or dict passed in, whose ``hs[0] *= 3.0`` changes the
    array that container holds too, so the update is checked as one of a
    container built here (outside tester T2 #4, a list argument; a helper's
    parameter).  Where the parameter is an array after all, the run-time
    checks find nothing held and nothing else seeing it."""
    params = set(program.params)
    names = params | {ir.target_names(s)[0] for s in statements
                      if isinstance(s, gast.Assign) and not ir.is_update(s)
                      and getattr(s, "op", None) is not None
                      and s.op.primitive in (runtime.snapshot, runtime.private_copy)
                      and s.op.args and isinstance(s.op.args[0], gast.Name)
                      and s.op.args[0].id in params}
    items = {ir.target_names(v)[0]: v.op.args[0].id for v in views
             if v.op.primitive is operator.getitem and v.op.args[0].id in names}
    held = set()
    for h, held_ in holders:
        prim = getattr(getattr(h, "op", None), "primitive", None)
        copies = copies_elements(h) or prim in (ir.CONCAT, ir.REPEAT)
        held.update(items[n] if n in items else n for n in held_ if copies or n in items)
    return (names & held) - containers


def _held_itself(name, holders, in_effect) -> bool:
    """Whether a container built here holds ``name`` itself (``box = [h]``,
    ``hist.append(h)``), not the items of a container ``name`` (``list(hs)``,
    ``q |= p``): an array, then, that ``box[0] *= 3.0`` may change in place."""
    for h, names in holders:
        prim = getattr(getattr(h, "op", None), "primitive", None)
        if name in names and in_effect(h) and not copies_elements(h) \
                and prim not in (ir.CONCAT, ir.REPEAT):
            return True
    return False


def _holds_whole(other, d, holders, made, elements) -> bool:
    """Whether the container ``other`` holds the container ``d`` itself (``outer =
    [d]``), and so sees ``d[k] op= v`` through ``d`` -- not ``d``'s items: a copy
    of its items (``list(d)``, ``tuple(d)``, ``d * 2``, ``d[::-1]``) or a display
    of one (``[d[0]]``, ``(d[0], 1)``, a comprehension ``[h for h in d]``) holds
    the very array the update changes in place, which it must see too (outside
    testers T2 #4, T1 #14)."""
    def root(n):
        while n != d and made.get(n) is not None and id(made[n]) not in elements \
                and is_identity(made[n]):
            n = made[n].op.args[0].id  # e = d; outer = [e]
        return n

    other = root(other)  # (t = t2 after t2 = []; t2.append(h): t2's holders)
    held = [(h, names) for h, names in holders if ir.target_names(h)[0] == other]
    if not held:
        return other == d  # another name for d itself
    for h, names in held:
        prim = getattr(getattr(h, "op", None), "primitive", None)
        if copies_elements(h) or prim in (ir.CONCAT, ir.REPEAT):
            return False
        if any(root(n) != d for n in names):
            return False
    return True


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
        program.filename, *location(stmt))],
        ctx=gast.Load())
    text = gast.Constant(value=message, kind=None)
    item = getattr(stmt, "item_update", None)
    parent = getattr(stmt, "item_parent", None)
    if parent is not None and other == parent[0]:
        # t = d['h']; t[1] *= v: d sees it through t; may d's other items?
        key = SliceToCall().visit(clone(parent[1]))
        call = gast.Call(func=helper_ref("untouched_except"),
                         args=[ir.name(other), key, ir.name(stmt.updated), text, where],
                         keywords=[])
    elif item is not None and other == item[0]:
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
    calls = [call]
    written = getattr(stmt, "written_from", None)
    if written is not None:
        # y[k] = r writing back r[i] = v, y perhaps a list: r is then its item, which
        # other sees if it is that array or a view of it (refresh.write_back)
        calls.append(gast.Call(func=helper_ref("untouched"), args=[
            ir.name(other), ir.name(written[0]), SliceToCall().visit(clone(written[1])),
            text, where], keywords=[]))
    for call in calls:
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
    the operation stays the attribute read.  One read again through its
    holder afterwards (``p.W`` after ``a = p.W; a[1] = v``) is refused first
    (:mod:`.attribute_updates`): the copy would hide the change from it."""
    refuse_hidden_attribute_updates(program)
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
    target, base = ir.target_names(view)[0], view.op.args[0].id
    # w = z; z = u: the name z is rebound, but w keeps z's old array, and what else
    # shares it (b = z[:, 1] made earlier: w, z = z, w in a loop) -- the names are
    # joined by this view alone, so the view holds where the base shares its
    # memory with any other name (fuzz 9900032: b *= 0.5 went unseen by w)
    base_shared = any(s is not view and _passes_on(s, base) or (
        isinstance(s, gast.Assign) and not ir.is_update(s) and is_view(s)
        and base in ir.target_names(s)) for s in statements)
    for other in in_loop:
        if since and order[id(other)] < order[id(view)]:
            continue
        lost = names & set(ir.assigned_by(other))
        if base_shared and target not in lost:
            lost = set()
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
