"""Checkpointed loops: the "sqrt" and ("revolve", s) policies.

Under these policies a top-level ``for`` loop (its trip count is known when it
starts) does not tape every iteration.  Its forward sweep runs the plain body
and keeps snapshots of the loop's state (the variables an iteration reads
before it assigns them); its adjoint sweep follows the schedule of
:mod:`.schedules`, rerunning iterations from a snapshot -- plainly, or while
taping -- and reversing the taped ones.  All of it is ordinary code in
``g.source``: a loop over the schedule's actions with one branch per action.

    >>> import numpy as np
    >>> from .compiler import Options, generate
    >>> from . import _doctest_helpers as h
    >>> src = generate(h.recurrence, Options(policy="sqrt")).source
    >>> "checkpoint_schedule(len(t1), 'sqrt')" in src and "'unrecord'" in src
    True
"""

from __future__ import annotations

import gast

from . import ir
from .optimize import eliminate_dead
from .syntax import clone


def loop_policy(policy):
    """``("sqrt",)`` or ``("revolve", s)`` for a loop-checkpointing policy, else None."""
    if policy == "sqrt":
        return ("sqrt",)
    if isinstance(policy, tuple) and len(policy) == 2 and policy[0] == "revolve":
        return ("revolve", int(policy[1]))
    return None


def _call(name, *args):
    return gast.Call(func=ir.name(name), args=list(args), keywords=[])


def _const(value):
    return gast.Constant(value=value, kind=None)


def _is_push(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and str(getattr(stmt, "comment", "")).startswith("save:")


def _without_pushes(stmts) -> list:
    out = []
    for stmt in stmts:
        if _is_push(stmt):
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.body = _without_pushes(stmt.body)
            stmt.orelse = _without_pushes(stmt.orelse)
        out.append(stmt)
    return out


def _state(loop) -> list[str]:
    """Variables an iteration reads before assigning them, and assigns: the loop's state."""
    exposed: set[str] = set()
    eliminate_dead(clone(loop.body), exposed, keep=lambda stmt: True)
    assigned = set()
    for stmt in ir.walk_statements(loop.body):
        assigned.update(ir.target_names(stmt))
        if isinstance(stmt, gast.For):
            assigned.update(ir.stored_names(stmt.target))
    return sorted(exposed & assigned)


def _dispatch(action_var, a, b, branches) -> gast.If:
    """``if action == "save": ... elif ...`` over ``branches`` [(action, statements)]."""
    node = None
    for action, stmts in reversed(branches):
        test = gast.Compare(left=ir.name(action_var), ops=[gast.Eq()],
                            comparators=[_const(action)])
        node = gast.If(test=test, body=stmts, orelse=[node] if node is not None else [])
    return node


def checkpoint_loops(forward: list, backward: list, policy, namer) -> list[str]:
    """Rewrite, in place, each top-level ``for`` loop of ``forward`` (already with
    its tape pushes) and its adjoint in ``backward``.  Returns the new names the
    adjoint sweep reads from the forward sweep."""
    schedule_args = loop_policy(policy)
    mirrors = {id(getattr(s, "mirror_of", None)): i for i, s in enumerate(backward)
               if isinstance(s, gast.For)}
    new_names = []
    for position, loop in enumerate(list(forward)):
        if not isinstance(loop, gast.For) or getattr(loop, "counter", None) \
                or id(loop) not in mirrors:
            continue
        taped = clone(loop.body)
        loop.body = _without_pushes(loop.body)
        state = _state(loop)
        schedule, snapshots = namer.fresh("schedule"), namer.fresh("snapshots")
        action, a, b = namer.fresh("action"), namer.fresh("a"), namer.fresh("b")
        new_names += [schedule, snapshots]
        plain = loop.body
        segment = gast.Subscript(value=clone(loop.iter), slice=gast.Slice(
            lower=ir.name(a), upper=ir.name(b), step=None), ctx=gast.Load())
        saved = gast.Tuple(elts=[_call("snapshot", ir.name(v)) for v in state], ctx=gast.Load())
        save = [ir.assign(gast.Subscript(value=ir.name(snapshots), slice=ir.name(a),
                                         ctx=gast.Store()), saved)]
        restore = [ir.assign(gast.Tuple(elts=[ir.name(v, store=True) for v in state],
                                        ctx=gast.Store()),
                             _call("restore_state", gast.Subscript(
                                 value=ir.name(snapshots), slice=ir.name(a), ctx=gast.Load())))]
        if not state:
            restore = [gast.Pass()]

        def run(body, iterable):
            return [gast.For(target=clone(loop.target), iter=iterable, body=body, orelse=[],
                             type_comment=None)]

        target = gast.Tuple(elts=[ir.name(action, store=True), ir.name(a, store=True),
                                  ir.name(b, store=True)], ctx=gast.Store())
        args = [_call("len", clone(loop.iter)), *[_const(x) for x in schedule_args]]
        make = ir.assign(schedule, _call("checkpoint_schedule", *args))
        make.comment = f"the {schedule_args[0]} checkpointing schedule of this loop"
        start = ir.assign(snapshots, gast.Dict(keys=[], values=[]))
        start.comment = "the loop's state before some iterations: " + (", ".join(state) or "none")
        first = gast.For(
            target=target, iter=gast.Subscript(value=ir.name(schedule), slice=_const(0),
                                               ctx=gast.Load()),
            body=[_dispatch(action, a, b, [("save", save), ("advance", run(plain, segment))])],
            orelse=[], type_comment=None)
        first.comment_before = ["checkpointed loop: plain iterations, a few saved states"]
        forward[position:position + 1] = [make, start, first]
        reverse = backward[mirrors[id(loop)]]
        reversed_segment = _call("reversed", clone(segment))
        second = gast.For(
            target=clone(target), iter=gast.Subscript(value=ir.name(schedule), slice=_const(1),
                                                      ctx=gast.Load()),
            body=[_dispatch(action, a, b, [
                ("restore", restore), ("save", clone(save)),
                ("free", [gast.Delete(targets=[gast.Subscript(
                    value=ir.name(snapshots), slice=ir.name(a), ctx=gast.Del())])]),
                ("advance", run(clone(plain), clone(segment))),
                ("record", run(taped, clone(segment))),
                ("unrecord", [gast.For(target=clone(reverse.target), iter=reversed_segment,
                                       body=reverse.body, orelse=[], type_comment=None)])])],
            orelse=[], type_comment=None)
        second.comment_before = list(getattr(reverse, "comment_before", [])) + [
            "rerun iterations from saved states, then reverse them, as the schedule says"]
        backward[mirrors[id(loop)]] = second
    return new_names
