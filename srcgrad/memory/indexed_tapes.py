"""Tapes of a counted loop, written and read by the loop's index.

A loop ``for i in range(n)`` runs a known number of steps, and step ``i``
pushes each tape once: the tape can be a list of ``n`` slots made before the
loop, written by index in the forward sweep and read by index in the adjoint
sweep, which runs the same ``i`` backwards -- as a careful person writes it
(``cb[i] = cos(b)`` in the scalar-loop benchmark's hand gradient).  A list
store and a list read by an int index are single bytecodes; ``append`` and
``pop`` are method calls: the scalar loop's two tapes cost 5 us of its 48 us
gradient by push and pop, 2.5 us by index (200 steps, CPython 3.11).

Before (the tapes pass's pushes and pops)::

    >>> import builtins, gast
    >>> from ..ir.emit import show_statements
    >>> forward = gast.parse(
    ...     "a_tape = []\\n"
    ...     "t1 = range(200)\\n"
    ...     "for i in t1:\\n"
    ...     "    a_tape.append(a)\\n"
    ...     "    a = a + 0.1 * sin(b)").body
    >>> backward = gast.parse(
    ...     "for i in reversed(t1):\\n"
    ...     "    a = a_tape.pop()\\n"
    ...     "    d_b = d_b + d_a * 0.1 * cos(b)").body
    >>> forward, backward = index_tapes(forward, backward, {"a_tape"}, {"range": builtins.range})

After::

    >>> print(show_statements(forward + backward))
    t1 = range(200)
    a_tape = [None] * len(t1)  # a slot for each step of the loop below
    for i in t1:
        a_tape[i] = a
        a = a + 0.1 * sin(b)
    for i in reversed(t1):
        a = a_tape[i]
        d_b = d_b + d_a * 0.1 * cos(b)

Sound when step ``i`` of the forward loop writes slot ``i`` at most once and
the adjoint sweep reads slot ``i`` only in its own step ``i``, after that
write.  So a tape qualifies only where (checked by :func:`_qualifies`):

* it is pushed by exactly one statement and popped by exactly one
  expression, and used nowhere else (the tapes pass makes one tape per
  variable, for every overwrite of it in the function);
* the push sits in the body of one ``for`` loop -- directly, or in its
  branches, never in a loop nested in it -- that is itself in no loop (in a
  loop, a tape holds the steps of every run of the inner loop); likewise the
  pop, in the body of the adjoint sweep's loop over ``reversed(t1)`` -- the
  indices the forward loop ran, last first.  Not a loop left early by
  ``break`` or ``return`` (``reversed(t1[:iterations])``): its range may be
  endless (``enumerate(itertools.count())``), and ``len(t1)`` slots would
  not fit in memory;
* ``t1`` is bound once, to ``range(n)`` (one argument: the indices are the
  positions ``0 .. n-1``), ``range`` the builtin;
* neither loop's body assigns the index ``i``.

A branch that pushes on some steps only (a ``continue``) writes the slots of
those steps; the adjoint's mirrored branch reads them on the same steps.  A slot
keeps its value after it is read (a pop let it go): the peak of what the
tapes hold, at the start of the adjoint sweep, is the same.  The NumPy
backend only (numba types a list of ``None`` as such), when optimising, and
not under a checkpointing policy, whose reruns push and pop tapes of their
own.  Tested by tests/memory/test_indexed_tapes.py.
"""

from __future__ import annotations

import builtins

import gast

from .. import ir
from ..ir.syntax import walk


def index_tapes(forward, backward, tapes, free) -> tuple[list, list]:
    """``(forward, backward)`` with the tapes of counted loops written and
    read by index (see the module docstring).  ``tapes``: the tape names;
    ``free``: the program's free names (``range`` must be the builtin)."""
    if not tapes or free.get("range", builtins.range) is not builtins.range \
            or free.get("len", builtins.len) is not builtins.len:
        return forward, backward  # (no tape: straight-line code, no walk of the sweep)
    pushes = _pushes(forward, set(tapes))
    pops = _pops(backward, set(tapes))
    counts, last = ir.definitions(forward)
    chosen: dict[int, list[str]] = {}   # id(forward loop) -> its tapes
    for tape in sorted(pushes.keys() & pops.keys()):
        if _qualifies(tape, pushes[tape], pops[tape], forward, backward, counts, last):
            chosen.setdefault(id(pushes[tape][0][1]), []).append(tape)
    if not chosen:
        return forward, backward
    made = {t for tapes_ in chosen.values() for t in tapes_}
    for tape in made:
        (block, loop, stmt), = pushes[tape]
        index = loop.target.id
        write = ir.assign(gast.Subscript(value=ir.name(tape), slice=ir.name(index),
                                         ctx=gast.Store()), stmt.value.args[0])
        write.comment = getattr(stmt, "comment", None)
        write.push = tape
        block[block.index(stmt)] = write
        (node, back) = pops[tape][0]
        _replace(node, gast.Subscript(value=ir.name(tape), slice=ir.name(back.target.id),
                                      ctx=gast.Load()))
    forward = [s for s in forward if not _creates(s, made)]
    return _preallocate(forward, chosen), backward


def _pushes(forward, tapes) -> dict[str, list]:
    """Tape -> ``[(block, innermost loop or None, push statement), ...]``; a
    tape met in a loop nested in a loop is recorded with loop ``False``."""
    found: dict[str, list] = {}
    for block, loops, stmt in _in_loops(forward):
        tape = _pushed(stmt, tapes)
        if tape is not None:
            found.setdefault(tape, []).append(
                (block, loops[0] if len(loops) == 1 else False, stmt))
    return found


def _in_loops(block, loops=()):
    """``(block, enclosing loops, statement)`` for every statement of ``block``
    and of the blocks nested in it, outermost loop first."""
    for stmt in block:
        yield block, loops, stmt
        if isinstance(stmt, gast.If):
            yield from _in_loops(stmt.body, loops)
            yield from _in_loops(stmt.orelse, loops)
        elif isinstance(stmt, (gast.For, gast.While)):
            yield from _in_loops(stmt.body, (*loops, stmt))
            yield from _in_loops(stmt.orelse, loops)


def _pushed(stmt, tapes):
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        call = stmt.value
        if isinstance(call.func, gast.Attribute) and call.func.attr == "append" \
                and isinstance(call.func.value, gast.Name) and call.func.value.id in tapes \
                and len(call.args) == 1 and not call.keywords:
            return call.func.value.id
    return None


def _pops(backward, tapes) -> dict[str, list]:
    """Tape -> ``[(the pop call, its innermost loop or False), ...]``."""
    found: dict[str, list] = {}
    for _, loops, stmt in _in_loops(backward):
        node = stmt.test if isinstance(stmt, (gast.If, gast.While)) else \
            stmt.iter if isinstance(stmt, gast.For) else stmt
        for sub in walk(node):
            if isinstance(sub, gast.Call) and isinstance(sub.func, gast.Attribute) \
                    and sub.func.attr == "pop" and isinstance(sub.func.value, gast.Name) \
                    and sub.func.value.id in tapes and not sub.args and not sub.keywords:
                found.setdefault(sub.func.value.id, []).append(
                    (sub, loops[0] if len(loops) == 1 else False))
    return found


def _qualifies(tape, pushes, pops, forward, backward, counts, last) -> bool:
    if len(pushes) != 1 or len(pops) != 1:
        return False
    (_, loop, _), (_, back) = pushes[0], pops[0]
    if not isinstance(loop, gast.For) or not isinstance(back, gast.For):
        return False
    if not (isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Name)
            and isinstance(back.target, gast.Name) and back.target.id == loop.target.id):
        return False
    steps = loop.iter.id
    made = last.get(steps)
    if counts.get(steps) != 1 or not _is_range(made, steps):
        return False
    if not _backwards_over(back.iter, steps) or not isinstance(back.iter.args[0], gast.Name):
        # (a loop left early runs over a range that may be endless -- enumerate of
        # itertools.count() -- whose len(t1) slots no memory holds: it keeps its list)
        return False
    index = loop.target.id
    if any(index in ir.assigned_by(s) for s in ir.walk_statements(loop.body + back.body)):
        return False
    # the tape is used by its creation, its push and its pop alone
    uses = sum(isinstance(n, gast.Name) and n.id == tape
               for s in (*forward, *backward) for n in walk(s))
    return uses == 3


def _is_range(stmt, steps) -> bool:
    """``steps = range(n)``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == steps):
        return False
    call = stmt.value
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Name) \
        and call.func.id == "range" and len(call.args) == 1 and not call.keywords \
        and not isinstance(call.args[0], gast.Starred)


def _backwards_over(header, steps) -> bool:
    """``reversed(steps)`` or ``reversed(steps[:count])``."""
    if not (isinstance(header, gast.Call) and isinstance(header.func, gast.Name)
            and header.func.id == "reversed" and len(header.args) == 1 and not header.keywords):
        return False
    arg = header.args[0]
    if isinstance(arg, gast.Name):
        return arg.id == steps
    return isinstance(arg, gast.Subscript) and isinstance(arg.value, gast.Name) \
        and arg.value.id == steps and isinstance(arg.slice, gast.Slice) \
        and arg.slice.lower is None and arg.slice.step is None \
        and isinstance(arg.slice.upper, gast.Name)


def _replace(node, new) -> None:
    """Turn the call ``node`` into ``new`` where it stands (its parent is not known)."""
    node.__class__ = new.__class__
    node.__dict__.clear()
    node.__dict__.update(new.__dict__)


def _creates(stmt, tapes) -> bool:
    """``tape = []`` for one of ``tapes``."""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in tapes \
        and isinstance(stmt.value, gast.List) and not stmt.value.elts


def _preallocate(block, chosen) -> list:
    """``tape = [None] * len(t1)`` right before each loop of ``chosen``."""
    out = []
    for stmt in block:
        if isinstance(stmt, gast.If):
            stmt.body = _preallocate(stmt.body, chosen)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.orelse = _preallocate(stmt.orelse, chosen)
        for tape in chosen.get(id(stmt), ()):
            slots = gast.BinOp(left=gast.List(elts=[gast.Constant(value=None, kind=None)],
                                              ctx=gast.Load()),
                               op=gast.Mult(),
                               right=gast.Call(func=ir.name("len"), args=[ir.name(stmt.iter.id)],
                                               keywords=[]))
            made = ir.assign(tape, slots)
            made.comment = "a slot for each step of the loop below"
            out.append(made)
        out.append(stmt)
    return out
