"""Tapes: the forward sweep saves what an overwrite would destroy.

The reverse pass follows every overwrite inside a branch or loop with a restore
(``h = h_tape.pop()``); dead-code elimination keeps only the restores whose
value the adjoint sweep reads.  This pass puts the matching push right before
each surviving overwrite in the forward sweep (``h_tape.append(h)``), creates
the tapes, and gives a variable that may still be unbound at its first push a
``None`` to push.  Tapes are plain lists named after the variable they hold, so
a reader can follow each value from its push to its pop.  Each push carries
``stmt.push`` (the tape's name), which :mod:`.checkpointing` reads to find
the pushes of a loop it reruns without taping.

    >>> import gast
    >>> from ..ir.emit import block_lines
    >>> loop = gast.parse("for i in t1:\\n    h = np.tanh(h)").body[0]
    >>> restore = gast.parse("h = h_tape.pop()").body[0]
    >>> restore.restores = loop.body[0]
    >>> body, tapes = insert_pushes([loop], [restore], {"h": "h_tape"}, defined={"h"})
    >>> print("\\n".join(block_lines(tapes + body, 0)))
    h_tape = []
    for i in t1:
        h_tape.append(h)  # save: h before it is overwritten
        h = np.tanh(h)

A push goes above the temporaries computing the new value, where the variable
still names the same object, so that folding joins them into one statement
(``h = np.tanh(h @ W)``, as a person writes it, one move fewer a step):

    >>> loop = gast.parse("for i in t1:\\n    t2 = h @ W\\n    h = np.tanh(t2)").body[0]
    >>> restore.restores = loop.body[1]
    >>> body, tapes = insert_pushes([loop], [restore], {"h": "h_tape"}, defined={"h"})
    >>> print("\\n".join(block_lines(body, 0)))
    for i in t1:
        h_tape.append(h)  # save: h before it is overwritten
        t2 = h @ W
        h = np.tanh(t2)
"""

from __future__ import annotations

import gast

from .. import ir
from .unbound_reads import checked_reads


def _surviving(backward) -> dict[int, list]:
    """Forward statement id -> ``(variable, saved expression)`` for each kept restore."""
    sites: dict[int, list] = {}
    for stmt in ir.walk_statements(backward):
        forward = getattr(stmt, "restores", None)
        if forward is not None and getattr(stmt, "saves", True) is not None:
            for var in ir.target_names(stmt):
                saved = getattr(stmt, "saves", None) or ir.name(var)
                sites.setdefault(id(forward), []).append((var, saved))
    return sites


def _push(tape: str, var: str, saved):
    call = gast.Call(func=gast.Attribute(value=ir.name(tape), attr="append", ctx=gast.Load()),
                     args=[saved], keywords=[])
    stmt = gast.Expr(value=call)
    stmt.push = tape  # the marker checkpointing looks for: a push, onto this tape
    whole = isinstance(saved, gast.Name)
    stmt.comment = (f"save: {var} before it is overwritten" if whole
                    else f"save: the elements of {var} about to be overwritten")
    return stmt


def insert_pushes(forward, backward, tapes: dict[str, str], defined=(), user_names=None):
    """``(forward statements with pushes, tape-creating statements)``.

    ``defined`` names the variables bound before the forward sweep starts (the
    parameters); a pushed variable not bound before its top-level statement
    gets ``var = None`` there; ``user_names`` the user's name of a renamed
    variable, for the message of :mod:`.unbound_reads`.

    Sound when every pop in the adjoint sweep meets its own push: the push sits
    right before its overwrite, in the same block (a branch's push runs exactly
    when its overwrite does; a loop's once per iteration), and the adjoint
    sweep runs the mirrored restores in reverse order along the same path.  A
    push appends only (it reads the variable, never changes it) and is kept by
    dead-code elimination even where its overwrite is dead.  ``None`` is bound
    only where the variable is unbound on every path (before the top-level
    statement), or -- when an earlier branch or loop may have bound it -- at the
    start of the function, so it never clobbers a value.  A push of a whole
    variable may sit above its overwrite, by assignments to names that are
    neither it nor pushed (:func:`_earliest`): the variable names one object
    all the way, so the same reference is appended, on the same path.  Where the
    function would raise UnboundLocalError reading such a variable (a loop that
    ran zero times), the variable is bound to ``Unbound`` instead and the read
    checked (:mod:`.unbound_reads`).  Tested by tests/memory/test_memory_soundness.py
    (``push_in_branch``, ``bound_on_some_iterations``, ``bound_in_earlier_branch``,
    ``nested_loops``, ``list_grown_in_loop``).
    """
    sites = _surviving(backward)
    taped = {var for pushes in sites.values() for var, _ in pushes}
    used: dict[str, str] = {}

    def rewrite(stmts, pushed: set) -> list:
        out = []
        for stmt in stmts:
            for var, saved in sites.get(id(stmt), []):
                used[var] = tapes[var]
                if isinstance(saved, gast.Name):
                    pushed.add(var)
                    out.insert(_earliest(out, var, taped), _push(tapes[var], var, saved))
                else:
                    out.append(_push(tapes[var], var, saved))
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                stmt.body = rewrite(stmt.body, pushed)
                stmt.orelse = rewrite(stmt.orelse, pushed)
            out.append(stmt)
        return out

    bound = set(defined)   # bound on every path
    seen = set(defined)    # bound on some path: a None there would clobber a value
    body, first = [], []
    for stmt in forward:
        pushed: set[str] = set()
        rewritten = rewrite([stmt], pushed)
        unbound = sorted(pushed - bound)
        here = [v for v in unbound if v not in seen]
        if here:
            body.append(_none(here, "bound before the loop so that the first save has a value"))
        if len(here) < len(unbound):   # set in some branch before: bind it at the start
            first.append(_none([v for v in unbound if v in seen],
                               "bound at the start so that the first save has a value"))
        bound.update(unbound)
        body.extend(rewritten)
        bound |= set(ir.target_names(stmt))
        seen |= {n for s in ir.walk_statements([stmt]) for n in ir.assigned_by(s)}
    body = checked_reads(first + body, defined, user_names or {})
    creations = [ir.assign(tape, gast.List(elts=[], ctx=gast.Load()))
                 for tape in sorted(used.values())]
    return body, creations


def _earliest(out, var, taped) -> int:
    """Where in the block so far (``out``) the push of the whole variable ``var``
    may go: above the temporaries computing its new value (``t4 = a + t3``
    before ``a = t4``), so that folding makes one ``a = a + t3`` of them.  The
    push moves up past assignments to plain names that are neither ``var`` nor
    taped (a taped name's overwrite keeps its own push next to it): ``var``
    names the same object there as right before the overwrite, so the push
    appends the same reference.  (A push of elements copies values: it stays.)"""
    at = len(out)
    while at and _moves_past(out[at - 1], var, taped):
        at -= 1
    return at


def _moves_past(stmt, var, taped) -> bool:
    return isinstance(stmt, gast.Assign) and not hasattr(stmt, "push") \
        and all(isinstance(t, gast.Name) and t.id != var and t.id not in taped
                for t in stmt.targets)


def _none(names, comment):
    init = gast.Assign(targets=[ir.name(v, store=True) for v in names],
                       value=gast.Constant(value=None, kind=None), type_comment=None)
    init.comment = comment
    init.placeholder = True  # no value of the program's: a checkpoint need not carry it
    return init
