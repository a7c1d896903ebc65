"""Checkpointed loops: the "sqrt" and ("revolve", s) policies.

Under these policies a top-level ``for`` loop (its trip count is known when it
starts) does not tape every iteration.  Its forward sweep runs the plain body
and keeps snapshots of the loop's state (the variables an iteration reads
before it assigns them); its adjoint sweep follows the schedule of
:mod:`..runtime.schedules`, rerunning iterations from a snapshot -- plainly, or while
taping -- and reversing the taped ones.  All of it is ordinary code in
``g.source``: a loop over the schedule's actions with one branch per action.

    >>> import numpy as np
    >>> from ..pipeline import Options, generate
    >>> from .. import _doctest_helpers as h
    >>> src = generate(h.recurrence, Options(policy="sqrt")).source
    >>> "checkpoint_schedule(len(t1), 'sqrt')" in src and "'unrecord'" in src
    True
"""

from __future__ import annotations

import operator

import gast

from .. import ir
from ..ad.in_place import only_reports
from ..analysis.sharing import held_names, is_view
from ..errors import UnsupportedSyntaxError
from ..ir.syntax import call_to, clone, constant, source_of
from ..optimize.dce import eliminate_dead
from .effects import (
    MUTATES,
    NEXT,
    RANDOM,
    UNKNOWN,
    call_effect,
    changed_in_place,
    expression_effect,
    passed_to_writers,
    value_effect,
)
from .helper_state import only_reporting_call, state_changing_call, state_read_elsewhere
from .record_reads import refuse_records_read_back


def loop_policy(policy):
    """``("sqrt",)`` or ``("revolve", s)`` for a loop-checkpointing policy, else None."""
    if policy == "sqrt":
        return ("sqrt",)
    if isinstance(policy, tuple) and len(policy) == 2 and policy[0] == "revolve":
        return ("revolve", int(policy[1]))
    return None


def _is_push(stmt) -> bool:
    """A tape push, as :func:`.tapes.insert_pushes` marks it (``stmt.push``)."""
    return getattr(stmt, "push", None) is not None


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


def _state(loop, carried=frozenset()) -> list[str]:
    """The loop's state: the variables it assigns that an iteration reads before
    assigning them, or that have a value before the loop (``carried``) -- the
    adjoint sweep binds the state to that value when it has reversed the loop
    (see :meth:`_Rewrite.release`), so rerunning the loop from a snapshot must
    start from it too."""
    exposed: set[str] = set()
    eliminate_dead(clone(loop.body), exposed, keep=lambda stmt: True)
    assigned = set()
    for stmt in ir.walk_statements(loop.body):
        assigned.update(ir.target_names(stmt))
        if isinstance(stmt, gast.For):
            assigned.update(ir.stored_names(stmt.target))
    return sorted((exposed | set(carried)) & assigned)


def _with_sharers(body, changed, free) -> set[str]:
    """``changed`` and every name of ``body`` that may share memory with one of
    them: a draw changed through a second name (``a = rng.normal(size=3); b = a;
    b[1] += 1.0``) or a view (``b = a[:2]``) is changed too, and must be kept for
    the reruns as a copy (review r1: kept as the array itself, each rerun added 1
    again, silently).  Views, plain copies of a name and containers holding it
    join their names, and what a call may write into (a user function's
    ``v[1] += 1.0``) is changed; too much only copies a draw that needed none."""
    group = {}

    def find(n):
        while group.get(n, n) != n:
            n = group[n]
        return n

    changed = set(changed)
    for stmt in ir.walk_statements(body):
        changed.update(passed_to_writers(stmt, free))
        op = getattr(stmt, "op", None)
        if isinstance(stmt, gast.Assign):
            targets = ir.target_names(stmt)[:1]
        elif op is not None and op.primitive is ir.APPEND and isinstance(op.args[0], gast.Name):
            targets = [op.args[0].id]  # xs.append(a): xs holds a
        else:
            continue
        joined = list(held_names(stmt))
        if is_view(stmt):
            joined.append(stmt.op.args[0].id)
        for target in targets:
            for n in joined:
                group.setdefault(target, target)
                group[find(n)] = find(target)
    roots = {find(n) for n in changed}
    return changed | {n for n in group if find(n) in roots}


def _dispatch(action_var, a, b, branches) -> gast.If:
    """``if action == "save": ... elif ...`` over ``branches`` [(action, statements)]."""
    node = None
    for action, stmts in reversed(branches):
        test = gast.Compare(left=ir.name(action_var), ops=[gast.Eq()],
                            comparators=[constant(action)])
        node = gast.If(test=test, body=stmts, orelse=[node] if node is not None else [])
    return node


def _replayed(stmts, free) -> bool:
    """Mark, in place, the statements of a loop body whose value a rerun must read
    back instead of computing again (``stmt.replay``, the reason): a random draw,
    ``next(it)``, a call with unknown effects.  A method that changes its object
    (``c = lst.pop()``) runs again: its object is part of the loop's state.
    Returns whether any was marked."""
    found = False
    for stmt in ir.walk_statements(stmts):
        if getattr(stmt, "push", None) is not None or not isinstance(stmt, gast.Assign) \
                or not all(isinstance(t, (gast.Name, gast.Tuple)) for t in stmt.targets):
            continue
        why = value_effect(stmt, free)
        if why is not None and why != MUTATES:
            stmt.replay = why
            found = True
    return found


def _changed_objects(stmts, free, filename) -> set[str]:
    """The names whose objects a loop body changes with a method (``lst.remove(c)``):
    a snapshot keeps them, so that a rerun starts from what the first run saw.
    A call that changes an argument at random (``rng.shuffle(a)``) cannot be
    rerun alike: refused, located."""
    out = set()
    for stmt in ir.walk_statements(stmts):
        value = getattr(stmt, "value", None)
        if value is None or isinstance(stmt, (gast.If, gast.For, gast.While)) \
                or getattr(stmt, "replay", None) or getattr(stmt, "records", False):
            continue  # (HISTORY.append(float(l)): a rerun leaves it out, as a print)
        for call in gast.walk(value):
            if not isinstance(call, gast.Call):
                continue
            why = call_effect(call, free)
            if why == MUTATES and isinstance(call.func, gast.Attribute) \
                    and isinstance(call.func.value, gast.Name):
                if call.func.value.id in free:  # S.add(i) on a module-level set
                    raise UnsupportedSyntaxError(
                        f"this loop is checkpointed (its iterations run again in the adjoint "
                        f"sweep), and '{source_of(call)}' changes '{call.func.value.id}', a "
                        f"module-level or closed-over value its snapshots do not keep, which a "
                        f"rerun would change again: keep it in a local variable, or use "
                        f"policy='save' or 'recompute'", filename=filename,
                        lineno=getattr(stmt, "lineno", None),
                        col=getattr(stmt, "col_offset", None))
                out.add(call.func.value.id)
            elif why == RANDOM and getattr(call.func, "attr", "") == "shuffle":
                raise UnsupportedSyntaxError(
                    "this loop is checkpointed (its iterations run again in the adjoint "
                    "sweep), and this call changes its argument at random, differently each "
                    "time: assign a new value instead (a = rng.permutation(a)), or use "
                    "policy='save'", filename=filename, lineno=getattr(stmt, "lineno", None),
                    col=getattr(stmt, "col_offset", None))
    return out


def _refuse_object_changes(stmts, free, filename) -> None:
    """Refuse, located, an attribute assignment (``c.t += 1``) or a call of an
    object's method for what it does (``c.tick()``, its effect unknown), or a
    user helper writing module-level or closed-over state that the function
    or another helper reads (``record(1)`` with ``LOG.append(v)``, then
    ``len(LOG)``; :mod:`.helper_state`) in a checkpointed loop's body: a rerun
    from a snapshot would change the object
    again (the snapshots keep arrays, lists and dicts, not a user's objects),
    and the values read from it afterwards would differ from the first run's
    -- a silently wrong gradient.  A method whose value the loop uses
    (``w = opt.step(w, g)``) is not rerun: its values are read back."""
    for stmt in ir.walk_statements(stmts):
        call = getattr(stmt, "value", None)
        if getattr(stmt, "attribute_store", None) is not None:
            shown = f"'{source_of(stmt.op.node).strip()}' changes the object " \
                f"'{source_of(stmt.attribute_target.value)}'"
        elif isinstance(stmt, gast.Expr) and isinstance(call, gast.Call) \
                and isinstance(call.func, gast.Attribute) \
                and isinstance(call.func.value, gast.Name) \
                and getattr(call.func, "helper", None) is None \
                and not _not_rerun(stmt, free) and call_effect(call, free) == UNKNOWN:
            shown = f"'{source_of(call)}' may change the object '{call.func.value.id}' " \
                f"(a method called for what it does)"
        elif (helper := state_changing_call(stmt, free))[0] is not None and (
                isinstance(stmt, gast.Assign) or stmt.value is not helper[0]
                or state_read_elsewhere(helper[0], ir.walk_statements(stmts), free)):
            shown = f"'{source_of(helper[0])}' changes " + ", ".join(
                f"'{n}'" for n in helper[1]) + " outside the function (a helper run as " \
                "written that writes a module-level or closed-over value)"
        else:
            continue
        node = getattr(getattr(stmt, "op", None), "node", None) or stmt
        raise UnsupportedSyntaxError(
            f"this loop is checkpointed (its iterations run again in the adjoint sweep), "
            f"and {shown}, which a rerun would change again: srcgrad's snapshots keep "
            f"arrays, lists and dicts, not the state of your objects.  Use policy='save' "
            f"or 'recompute', or keep that state in a local variable of the loop",
            filename=filename, lineno=getattr(node, "lineno", None),
            col=getattr(node, "col_offset", None))


def _tested(stmts, free, filename) -> bool:
    """Mark, in place, the nested ``while`` loops of a checkpointed loop's body whose
    test has an effect (``while rng.random() < 0.6``: ``stmt.test_replay``, the
    reason): every rerun would evaluate the test again, from a generator that
    has moved on, and follow another path.  The forward sweep keeps each value
    of such a test with the draws and a rerun reads it back.  A test that
    changes an object (``while lst.pop() > 0``), and an ``if`` test or ``for``
    header with an effect that earlier passes did not bind to a name, cannot be
    replayed: refused, located.  Returns whether any test was marked."""
    found = False
    for stmt in ir.walk_statements(stmts):
        if isinstance(stmt, (gast.If, gast.While)):
            head = stmt.test
        elif isinstance(stmt, gast.For):
            head = stmt.iter
        else:
            continue
        why = expression_effect(head, free)
        if why is None:
            continue
        if isinstance(stmt, gast.While) and why != MUTATES:
            stmt.test_replay = why
            found = True
            continue
        raise UnsupportedSyntaxError(
            f"this loop is checkpointed (its iterations run again in the adjoint sweep), "
            f"and this test or loop header calls something with effects ({why}) that a "
            f"rerun would call again, differently: bind the value to a name first, "
            f"or use policy='save' or 'recompute'", filename=filename,
            lineno=getattr(head, "lineno", getattr(stmt, "lineno", None)),
            col=getattr(head, "col_offset", getattr(stmt, "col_offset", None)))
    return found


def _before_continues(stmts, make) -> list:
    """``stmts`` with ``make()`` put before each ``continue`` of their own loop
    (not of loops nested in them): a ``continue`` skips the end of the body,
    where a kept while test is evaluated again."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.Continue):
            out += make()
        elif isinstance(stmt, (gast.If, gast.With, gast.Try)):
            stmt.body = _before_continues(stmt.body, make)
            for field in ("orelse", "finalbody"):
                if getattr(stmt, field, None):
                    setattr(stmt, field, _before_continues(getattr(stmt, field), make))
            for handler in getattr(stmt, "handlers", ()):
                handler.body = _before_continues(handler.body, make)
        out.append(stmt)
    return out


def _not_rerun(stmt, free) -> bool:
    """A call statement a rerun leaves out: ``print(...)``, logging and
    ``warnings.warn`` (it would report again),
    a draw or ``next(it)`` whose value is dropped, ``np.random.seed(i)`` -- the
    rerun reads its draws back, and its generators stay as the forward sweep
    left them."""
    if not isinstance(stmt, gast.Expr) or not isinstance(stmt.value, gast.Call):
        return False
    call = stmt.value
    if getattr(stmt, "records", False):  # HISTORY.append((i, float(l))): records_outside.py
        return True
    if only_reports(call, free) or only_reporting_call(stmt, free):
        return True  # (log(i) with print inside: helper_state.py)
    return call_effect(call, free) in (RANDOM, NEXT)


def checkpoint_loops(forward: list, backward: list, policy, namer, defined=(), free=None,
                     filename=None, plain=()) -> list[str]:
    """Rewrite, in place, each top-level loop of ``forward`` (already with its tape
    pushes) and its adjoint in ``backward``.  Returns the new names the adjoint
    sweep reads from the forward sweep.

    A state variable that may have no value when the loop starts (assigned only
    inside it, or in a branch before it; ``defined`` are the parameters) is bound
    to ``None`` at the start of the function, so that the first snapshot can
    save it.

    A ``for`` loop follows the policy's schedule; a ``while`` loop, whose length
    is unknown until it ends, keeps :class:`~..runtime.schedules.OnlineSnapshots` (the
    revolve budget, or 16 under "sqrt") and reverses between them binomially.

    A rerun sees what the first run saw.  The values of calls with effects
    (``free`` maps the function's free names to their objects) -- a random
    draw, ``next(it)`` -- are kept in a list as the forward sweep computes
    them, and a rerun reads them back (``c = draws[drawn]``): memory for one
    value per draw, none for the other values of an iteration.  An object a
    method changes (``lst.remove(c)``) is part of the snapshots.  A rerun
    does not print again, nor reseed a generator.
    """
    free = {} if free is None else free
    schedule_args = loop_policy(policy)
    budget = schedule_args[1] if schedule_args[0] == "revolve" else 16
    new_names, unbound = [], []
    for loop in list(forward):
        mirror = next((i for i, s in enumerate(backward)
                       if isinstance(s, gast.For) and getattr(s, "mirror_of", None) is loop), None)
        if mirror is None or not isinstance(loop, (gast.For, gast.While)) \
                or (isinstance(loop, gast.For) and getattr(loop, "counter", None)):
            continue
        at = forward.index(loop)
        carried = set(defined)  # bound on some path to the loop
        for stmt in ir.walk_statements(forward[:at]):
            if not getattr(stmt, "placeholder", False):
                carried.update(ir.assigned_by(stmt))
        _refuse_object_changes(loop.body, free, filename)
        refuse_records_read_back(loop.body, free, set(defined) - set(plain), filename)
        tested = _tested(loop.body, free, filename)
        draws = _replayed(loop.body, free) or tested
        changed = _changed_objects(loop.body, free, filename) & carried
        rewrite = _Rewrite(loop, backward[mirror], namer, carried, draws, changed, free,
                           _restored_later(backward[mirror + 1:]))
        new_names += [rewrite.snapshots] + ([rewrite.schedule] if rewrite.schedule else []) \
            + ([rewrite.originals] if rewrite.originals else []) \
            + ([rewrite.draws] if rewrite.draws else [])
        before = set(defined)
        for stmt in forward[:at]:  # bound on every path to the loop
            before.update(ir.target_names(stmt) if not isinstance(
                stmt, (gast.If, gast.For, gast.While)) else ())
        unbound += [v for v in rewrite.state if v not in before and v not in unbound]
        if isinstance(loop, gast.For):
            forward[at:at + 1] = rewrite.keep_draws() + rewrite.for_forward(schedule_args)
        else:
            forward[at:at + 1] = rewrite.keep_draws() + rewrite.while_forward(budget)
        backward[mirror] = rewrite.adjoint()
    if unbound:
        none = gast.Assign(targets=[ir.name(v, store=True) for v in unbound],
                           value=constant(None), type_comment=None)
        none.comment = "bound at the start: a loop's first snapshot saves it"
        forward.insert(0, none)
    return new_names


def _restored_later(adjoint: list) -> set[str]:
    """The names whose elements the adjoint sweep puts back after it has reversed
    a loop (``a[1] = a_tape.pop()`` for a write before the loop): the restore must
    reach the object the write changed, which a helper's residuals or a view may
    hold, not a copy a rerun from a snapshot rebound the name to."""
    return {s.updates if getattr(s, "updates", None) else ir.target_names(s)[0]
            for s in ir.walk_statements(adjoint)
            if getattr(s, "restores", None) is not None
            and (getattr(s, "updates", None) or ir.target_names(s))}


class _Rewrite:
    """The pieces of one checkpointed loop."""

    def __init__(self, loop, reverse, namer, carried=frozenset(), draws=False,
                 changed=frozenset(), free=None, restored=frozenset()):
        self.loop, self.reverse = loop, reverse
        self.free = free
        self.draws = namer.fresh("draws") if draws else None
        self.drawn = namer.fresh("drawn") if draws else None
        # names the body changes in place (a = rng.normal(size=3); a[0] = 2 * a[0]):
        # a draw kept for them is a copy, and so is each read back, since the
        # iteration changes the object it is given (it kept the changed values,
        # which a rerun changed again: a silently wrong gradient, review 5)
        self.mutated = _with_sharers(loop.body, {n for s in ir.walk_statements(loop.body) for n in (
            ir.target_names(s)[:1] if ir.is_update(s) else changed_in_place(s, free or {}))},
            free or {})
        for stmt in ir.walk_statements(loop.body):
            if getattr(stmt, "test_replay", None):
                stmt.test_name = namer.fresh("go_on")
        self.taped = self.replaying(clone(loop.body))
        loop.body = self.keeping(_without_pushes(loop.body))
        self.plain = loop.body
        self.rerun = self.replaying(clone(self.plain))
        for stmt in ir.walk_statements(self.plain):
            stmt.unsaved = True  # plain iterations save nothing: no "save:" comments
        carried = set(carried) | ({self.drawn} if draws else set())
        self.state = sorted(set(_state(loop, carried)) | set(changed))
        # state arrays the loop changes in place (y[i] = v): views taken of them
        # before the loop see that memory, which reruns from snapshots never restore
        self.in_place = [v for v in self.state if any(
            ir.is_update(s) and getattr(getattr(s, "op", None), "primitive", None)
            is operator.setitem and ir.target_names(s)[0] == v
            for s in ir.walk_statements(loop.body)) or v in restored]
        self.originals = namer.fresh("originals") if self.in_place else None
        self.snapshots = namer.fresh("snapshots")
        self.schedule = namer.fresh("schedule") if isinstance(loop, gast.For) else None
        self.action, self.a, self.b = namer.fresh("action"), namer.fresh("a"), namer.fresh("b")
        self.step = namer.fresh("step") if isinstance(loop, gast.While) else None

    def _step(self):
        return ir.assign(self.drawn, gast.BinOp(left=ir.name(self.drawn), op=gast.Add(),
                                                right=constant(1)))

    def keeping(self, stmts) -> list:
        """The forward iterations: each value a rerun reads back is appended to the
        draws as it is computed."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                stmt.body = self.keeping(stmt.body)
                stmt.orelse = self.keeping(stmt.orelse)
            if getattr(stmt, "test_replay", None) and self.draws:
                out += self._test_kept(stmt)
                continue
            out.append(stmt)
            why = getattr(stmt, "replay", None)
            if why and self.draws:
                stmt.comment = f"kept for the reruns: {why}"
                value = clone(stmt.targets[0])
                for node in gast.walk(value):
                    if hasattr(node, "ctx"):
                        node.ctx = gast.Load()
                if isinstance(value, gast.Name) and value.id in self.mutated:
                    value = call_to("snapshot", value)
                added = [gast.Expr(value=gast.Call(func=gast.Attribute(
                    value=ir.name(self.draws), attr="append", ctx=gast.Load()),
                    args=[value], keywords=[])), self._step()]
                for new in added:
                    new.keeps = True  # a rerun reads back instead
                out += added
        return out

    def replaying(self, stmts) -> list:
        """A rerun's iterations: the kept values read back in order, no printing."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                stmt.body = self.replaying(stmt.body) or [gast.Pass()]
                stmt.orelse = self.replaying(stmt.orelse)
            if _not_rerun(stmt, self.free) or getattr(stmt, "keeps", False):
                continue
            if getattr(stmt, "test_replay", None) and self.draws:
                out += self._test_read_back(stmt)
                continue
            why = getattr(stmt, "replay", None)
            if why and self.draws:
                kept = gast.Subscript(value=ir.name(self.draws), slice=ir.name(self.drawn),
                                      ctx=gast.Load())
                target = stmt.targets[0]
                if isinstance(target, gast.Name) and target.id in self.mutated:
                    kept = call_to("snapshot", kept)
                again = ir.assign(clone(target), kept)
                gast.copy_location(again, stmt)
                again.comment = f"read back: {why}"
                out += [again, self._step()]
                continue
            out.append(stmt)
        return out

    def _test_kept(self, loop) -> list:
        """``go_on = test`` kept with the draws before a nested ``while`` whose test
        has an effect, and again at the end of each of its iterations; the loop
        tests ``go_on``."""
        why, name, test = loop.test_replay, loop.test_name, loop.test

        def evaluate():
            at = ir.assign(name, clone(test))
            gast.copy_location(at, loop)
            at.replay = f"the loop's test, {why}"  # a rerun reads it back
            at.comment = f"kept for the reruns: {at.replay}"
            added = [gast.Expr(value=gast.Call(func=gast.Attribute(
                value=ir.name(self.draws), attr="append", ctx=gast.Load()),
                args=[ir.name(name)], keywords=[])), self._step()]
            for new in added:
                new.keeps = True
            return [at, *added]

        loop.test_replay = None
        loop.test = ir.name(name)
        loop.body = _before_continues(loop.body, evaluate) + evaluate()
        return [*evaluate(), loop]

    def _test_read_back(self, loop) -> list:
        """A rerun of a nested ``while`` whose test has an effect: each value of
        the test read back in order, as :meth:`_test_kept` kept them."""
        def read():
            again = ir.assign(loop.test_name, gast.Subscript(
                value=ir.name(self.draws), slice=ir.name(self.drawn), ctx=gast.Load()))
            gast.copy_location(again, loop)
            again.comment = f"read back: the loop's test, {loop.test_replay}"
            return [again, self._step()]

        first = read()
        loop.test = ir.name(loop.test_name)
        body = [s for s in loop.body if not isinstance(s, gast.Pass)] if all(
            isinstance(s, gast.Pass) for s in loop.body) else loop.body
        loop.body = _before_continues(body, read) + read()
        loop.test_replay = None
        return [*first, loop]

    def keep_draws(self) -> list:
        """``draws = []`` and ``drawn = 0`` before the loop."""
        if not self.draws:
            return []
        keep = ir.assign(self.draws, gast.List(elts=[], ctx=gast.Load()))
        keep.comment = "the values of this loop's calls with effects, which reruns read back"
        return [keep, ir.assign(self.drawn, constant(0))]

    def save(self, where):
        saved = call_to("snapshot_state", *[ir.name(v) for v in self.state])
        return [ir.assign(gast.Subscript(value=ir.name(self.snapshots), slice=where,
                                         ctx=gast.Store()), saved)]

    def restore(self):
        if not self.state:
            return [gast.Pass()]
        return [ir.assign(gast.Tuple(elts=[ir.name(v, store=True) for v in self.state],
                                     ctx=gast.Store()),
                          call_to("snapshot_state", gast.Starred(value=gast.Subscript(
                              value=ir.name(self.snapshots), slice=ir.name(self.a),
                              ctx=gast.Load()), ctx=gast.Load())))]

    def release(self):
        """The snapshot of the state before iteration ``a``, no longer needed, becomes
        the state: every iteration from ``a`` on has been reversed, so the state is
        what it was before ``a`` -- after the last release, what it was before the
        loop, which code before the loop may read again (an earlier checkpointed
        loop reruns from it).  Values the tapes restore need this too; the others
        (``h = sum(ps)`` when no adjoint reads the old ``h``) would keep the last
        rerun's."""
        taken = gast.Call(func=gast.Attribute(value=ir.name(self.snapshots), attr="pop",
                                              ctx=gast.Load()),
                          args=[ir.name(self.a)], keywords=[])
        if not self.state:
            return [gast.Expr(value=taken)]
        out = [ir.assign(gast.Tuple(elts=[ir.name(v, store=True) for v in self.state],
                                    ctx=gast.Store()), taken)]
        if self.in_place:
            # the last release: the values before the loop go back into the arrays the
            # loop changed in place, which views taken before the loop still show
            names = gast.Tuple(elts=[ir.name(v) for v in self.in_place], ctx=gast.Load())
            back = ir.assign(gast.Tuple(elts=[ir.name(v, store=True) for v in self.in_place],
                                        ctx=gast.Store()),
                             call_to("restored_into", ir.name(self.originals), names))
            first = gast.Compare(left=ir.name(self.a), ops=[gast.Eq()],
                                 comparators=[constant(0)])
            out.append(gast.If(test=first, body=[back], orelse=[]))
        return out

    def keep_originals(self) -> list:
        """``originals = (y,)`` before the loop: the arrays it changes in place."""
        if not self.in_place:
            return []
        keep = ir.assign(self.originals, gast.Tuple(
            elts=[ir.name(v) for v in self.in_place], ctx=gast.Load()))
        keep.comment = ("the arrays this loop changes in place, which its adjoint "
                        "restores (views taken before the loop read them)")
        return [keep]

    def runs(self, body, backwards=False, target=None):
        """``body`` over iterations a..b-1 (last first when ``backwards``)."""
        loop = self.loop
        if isinstance(loop, gast.For):
            segment = gast.Subscript(value=clone(loop.iter), slice=gast.Slice(
                lower=ir.name(self.a), upper=ir.name(self.b), step=None), ctx=gast.Load())
            iterable = call_to("reversed", segment) if backwards else segment
            target = clone(target if target is not None else loop.target)
        else:
            iterable = call_to("range", gast.BinOp(left=ir.name(self.b), op=gast.Sub(),
                                                   right=ir.name(self.a)))
            target = ir.name(self.step, store=True)
        return [gast.For(target=target, iter=iterable, body=body, orelse=[], type_comment=None)]

    def header(self):
        return gast.Tuple(elts=[ir.name(self.action, store=True), ir.name(self.a, store=True),
                                ir.name(self.b, store=True)], ctx=gast.Store())

    def for_forward(self, schedule_args) -> list:
        args = [call_to("len", clone(self.loop.iter)), *[constant(x) for x in schedule_args]]
        make = ir.assign(self.schedule, call_to("checkpoint_schedule", *args))
        make.comment = f"the {schedule_args[0]} checkpointing schedule of this loop"
        start = ir.assign(self.snapshots, gast.Dict(keys=[], values=[]))
        start.comment = "the loop's state before some iterations: " + (", ".join(self.state)
                                                                        or "none")
        first = gast.For(
            target=self.header(),
            iter=gast.Subscript(value=ir.name(self.schedule), slice=constant(0), ctx=gast.Load()),
            body=[_dispatch(self.action, self.a, self.b, [
                ("save", self.save(ir.name(self.a))),
                ("advance", self.runs(self.plain))])],
            orelse=[], type_comment=None)
        first.comment_before = ["checkpointed loop: plain iterations, a few saved states"]
        return [make, start, *self.keep_originals(), first]

    def while_forward(self, budget) -> list:
        counter = self.loop.counter
        start = ir.assign(self.snapshots, call_to("OnlineSnapshots", constant(budget)))
        start.comment = (f"at most {budget} saved states of this loop: "
                         + (", ".join(self.state) or "none"))
        keep = gast.If(test=gast.Call(func=gast.Attribute(
            value=ir.name(self.snapshots), attr="wants", ctx=gast.Load()),
            args=[ir.name(counter)], keywords=[]), body=self.save(ir.name(counter)), orelse=[])
        self.loop.body = [keep] + self.plain
        self.loop.comment_before = ["checkpointed loop: plain iterations, a few saved states"]
        return [start, *self.keep_originals(), self.loop]

    def adjoint(self):
        if self.schedule:
            actions = gast.Subscript(value=ir.name(self.schedule), slice=constant(1),
                                     ctx=gast.Load())
        else:
            actions = call_to("online_schedule", ir.name(self.snapshots),
                              ir.name(self.loop.counter))
        node = gast.For(target=self.header(), iter=actions, body=[_dispatch(
            self.action, self.a, self.b, [
                ("restore", self.restore()), ("save", self.save(ir.name(self.a))),
                ("free", self.release()),
                ("advance", self.runs(clone(self.rerun))),
                ("record", self.runs(self.taped)),
                ("unrecord", self.runs(self.reverse.body, backwards=True,
                                       target=self.reverse.target))])],
            orelse=[], type_comment=None)
        node.comment_before = list(getattr(self.reverse, "comment_before", [])) + [
            "rerun iterations from saved states, then reverse them, as the schedule says"]
        return node
