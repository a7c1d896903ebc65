"""Paths through structured code: which statement can run before which.

The alias check (:mod:`.aliasing`) asks questions about two statements of a
program in A-normal form: does the first run on every path to the second
(:func:`dominates`), can a name be bound again between them
(:func:`undisturbed`, :func:`rebound`), may a read see a value from before an
update (:func:`stale`)?  The code has no ``goto``: after
:func:`..normalize.jumps.structure` every block runs to its end, so the answer
follows from where statements sit -- the block holding each one
(:func:`blocks_of`), the loops around it (:func:`enclosing_loops`) and its
position in program order -- with a loop's back edge the one way to reach an
earlier statement.  These queries change nothing.

    >>> import gast
    >>> body = gast.parse("h = x\\nfor i in n:\\n    y = h * 2\\n    h = y + 1\\nz = h").body
    >>> blocks, loops = blocks_of(body), enclosing_loops(body)
    >>> start, loop, end = body
    >>> dominates(start, loop.body[1], blocks), dominates(loop.body[1], end, blocks)
    (True, False)
    >>> len(loops[id(loop.body[0])]), len(loops[id(end)])
    (1, 0)
"""

from __future__ import annotations

import gast

from .. import ir


def blocks_of(body, parent=None, out=None) -> dict[int, tuple]:
    """For each statement: the block (statement list) holding it, its index there,
    and the compound statement that block belongs to (None at the top)."""
    out = {} if out is None else out
    for i, stmt in enumerate(body):
        out[id(stmt)] = (body, i, parent)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            blocks_of(stmt.body, stmt, out)
            blocks_of(stmt.orelse, stmt, out)
    return out


def enclosing_loops(body, loops=frozenset(), out=None) -> dict[int, set[int]]:
    out = {} if out is None else out
    for stmt in body:
        out[id(stmt)] = set(loops)
        if isinstance(stmt, (gast.For, gast.While)):
            enclosing_loops(stmt.body, loops | {id(stmt)}, out)
        elif isinstance(stmt, gast.If):
            enclosing_loops(stmt.body, loops, out)
            enclosing_loops(stmt.orelse, loops, out)
    return out


def dominates(first, stmt, blocks) -> bool:
    """Whether ``first`` runs on every path to ``stmt``: it is earlier in ``stmt``'s
    block, or in a block around it, before the statement holding it."""
    node = stmt
    while True:
        block, index, parent = blocks[id(node)]
        if any(s is first for s in block[:index]):
            return True
        if parent is None:
            return False
        node = parent


def undisturbed(names, first, stmt, statements, order, loops) -> bool:
    """Whether no statement can bind one of ``names`` on a path from ``first`` to
    ``stmt`` (which ``first`` dominates): none lies between them in program order,
    and none in a loop around ``stmt`` that is not around ``first`` (the loop's back
    edge brings it round before ``stmt`` runs again).  A binding in a branch the
    path cannot take -- code that an early return copied into both branches of an
    ``if`` -- lies before ``first`` or after ``stmt`` and does not count, which a
    count of bindings got wrong.  ``x[i] = v`` and ``xs.append(v)`` bind nothing,
    nor does a view taken again after an update of its base (see refresh.py)."""
    low, high = order[id(first)], order[id(stmt)]
    around = loops.get(id(stmt), set()) - loops.get(id(first), set())
    for other in statements:
        at = order[id(other)]
        if other is first or at <= low or ir.is_update(other) \
                or getattr(other, "refresh_of", None) is not None:
            continue
        if (at < high or around & loops.get(id(other), set())) \
                and names & set(ir.assigned_by(other)):
            return False
    return True


def reads(stmt) -> list[str]:
    """Names a statement itself reads (for a compound statement: its header)."""
    if isinstance(stmt, gast.Assign):
        return ir.names_in(stmt.value) + (ir.names_in(stmt.targets[0].slice)
                                          if ir.is_update(stmt) else [])
    if isinstance(stmt, gast.For):
        return ir.names_in(stmt.iter)
    if isinstance(stmt, (gast.If, gast.While)):
        return ir.names_in(stmt.test)
    return ir.names_in(stmt)


def stale(read, update, name, order, loops, blocks) -> bool:
    """Whether the statement ``read`` may see ``name`` (an alias of the updated
    array) as it was before ``update`` changed the memory: it runs after the
    update (later in the program, or in a later iteration of a loop around both)
    and ``name`` is not certainly rebound in between."""
    if order[id(read)] <= order[id(update)] \
            and not loops.get(id(read), set()) & loops.get(id(update), set()):
        return False  # runs before the update, and no loop brings it round again
    return not rebound(name, read, update, order, loops, blocks)


def rebound(name, read, update, order, loops, blocks) -> bool:
    """Whether every path from ``update`` to ``read`` assigns ``name`` afresh: a
    plain assignment that runs before ``read`` whenever ``read`` runs (earlier in
    its block or in an enclosing one) and after ``update`` (later in the program
    when ``read`` is; when ``read`` comes round again in a loop around both, any
    such assignment in that loop's body, or the loop's own target)."""
    changed = order[id(update)]
    after = order[id(read)] > changed
    node = read
    while True:
        block, index, parent = blocks[id(node)]
        for stmt in block[:index]:
            if rebinds(stmt, name) and (not after or order[id(stmt)] > changed):
                return True
        if parent is None:
            return False
        if isinstance(parent, (gast.For, gast.While)) and block is parent.body \
                and id(parent) in loops.get(id(update), set()):
            # the loop that brings ``read`` round after ``update``: each iteration
            # starts by assigning a for loop's target
            return not after and isinstance(parent, gast.For) \
                and name in ir.stored_names(parent.target)
        node = parent


def rebinds(stmt, name) -> bool:
    """``name = ...``: a new binding (not ``x[i] = v``, nor ``x += v`` which, for an
    array, changes the array ``x`` already refers to)."""
    return isinstance(stmt, gast.Assign) and not ir.is_update(stmt) \
        and getattr(stmt, "augmented", None) is None and name in ir.target_names(stmt)


def maybe_unbound(name, stmt, program, blocks) -> bool:
    """Whether ``name`` may have no value when ``stmt`` runs: it is not a parameter
    nor assigned by a plain top-level statement before the one holding ``stmt``,
    nor a name the module binds (a global, or one an inlined helper's global
    was renamed to: binding it to None hid it)."""
    if name in program.free:
        return False
    node = stmt
    while blocks[id(node)][2] is not None:
        node = blocks[id(node)][2]
    before = set(program.params)
    for top in program.body[:program.body.index(node)]:
        if not isinstance(top, (gast.If, gast.For, gast.While)):
            before.update(ir.target_names(top))
    return name not in before
