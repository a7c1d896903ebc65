"""Reverse mode: the adjoint sweep of a program in A-normal form.

Statements are visited last to first.  Each active statement's rule is inlined
(:mod:`.inline`) and its contributions are accumulated into the cotangents of
its operands: the first contribution to ``x`` is assigned (``d_x = ...``), later
ones are added (``d_x = d_x + ...``), so straight-line code has no
zero-initialised accumulators.

Control flow is reversed structurally, under one invariant: *at each point of
the adjoint sweep, every variable the sweep reads holds the value it had at the
mirrored point of the forward sweep*.  So an ``if`` is reversed by testing its
own (restored) condition variable, a loop runs backwards over its range, and a
statement that overwrites a variable inside a branch or loop is followed, in the
adjoint sweep, by a restore of the old value (``h = h_tape.pop()``).  Which
restores survive dead-code elimination decides which values the forward sweep
pushes onto tapes (:mod:`..memory.tapes`).  Inside compound statements, cotangents of
variables that live across iterations or branches are accumulated from an
explicit ``0.0`` and reset after their definition's adjoint, because a loop
cannot know statically which contribution comes first.

    >>> import numpy as np
    >>> def f(x, y):
    ...     z = np.sin(x) * y
    ...     return np.sum(z)
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> from ..analysis.activity import activity
    >>> program = normalize(parse_function(f))
    >>> sweep = reverse(program, ["x"], activity(program, ["x"]), bound={"t2": "d_t2"})
    >>> print(show_statements(sweep.statements))
    d_z = unreduce(d_t2, z)
    d_t1 = unbroadcast(d_z * y, t1)
    d_x = d_t1 * np.cos(x)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import gast

from .. import ir
from ..analysis.activity import Activity, differentiable, operand_names, shape_classes
from ..errors import NonDifferentiableError
from ..frontend.linker import CalleePair
from ..ir.emit import (
    show_statements,  # noqa: F401 - used by the docstring examples
    unparse,
)
from ..ir.syntax import SliceToCall, call_to
from ..normalize.dict_merges import may_hold_dict
from ..rules import registry
from .constants import check_constant_arguments
from .in_place import check_in_place_calls
from .inline import inline, missing_rule
from .placed import place_op

ZERO = 0.0


@dataclass
class Sweep:
    """The adjoint sweep: statements, and the cotangent variable of each primal."""

    statements: list = field(default_factory=list)
    adjoints: dict[str, str] = field(default_factory=dict)
    tapes: dict[str, str] = field(default_factory=dict)       # variable -> tape name


def reverse(program: ir.Program, wrt: list[str], act: Activity, seed=(), bound=None,
            classes=None) -> Sweep:
    """Build the adjoint sweep of ``program``.

    ``bound`` maps output variables to names that already hold their cotangents
    (a parameter of a backward function); ``seed`` lists further output
    cotangents as ``(variable, expression)`` pairs; ``classes``, the program's
    :func:`..analysis.activity.shape_classes` where the caller has them for the
    program as it is now (computed here otherwise: a sixth of this pass).
    """
    for stmt in ir.walk_statements(program.body):  # the first missing rule, in program order
        op = getattr(stmt, "op", None)
        if op is not None and differentiable(op) \
                and any(act.is_active(t) for t in ir.target_names(stmt)) \
                and any(n in act.varied for n in operand_names(op)) \
                and not ir.is_update(stmt) and not isinstance(op.primitive, CalleePair):
            rule = registry.lookup(op.primitive)
            if rule is None:
                raise missing_rule(program, op)
            check_constant_arguments(program, op, rule, act.varied)  # no silent zero
    check_in_place_calls(program, act.varied)  # the same refusal as forward mode's
    return _Reverser(program, act, classes).run(seed, bound or {})


class _Block:
    """What the reverser knows inside one block of the adjoint sweep."""

    def __init__(self, assigned, local, parent=None, compound=False):
        self.assigned = set(assigned)   # primals whose cotangent variable holds a value
        self.local = local              # primals defined and used only in this block
        self.parent = parent
        self.compound = compound        # inside a branch or loop body
        self.needs_zero: set[str] = set()


class _Reverser:
    def __init__(self, program: ir.Program, act: Activity, classes=None):
        self.program = program
        self.act = act
        self.namer = program.namer
        self.classes = shape_classes(program) if classes is None else classes
        self.sweep = Sweep()
        self.uses = _occurrences(program)

    def run(self, seed, bound) -> Sweep:
        sweep = self.sweep
        sweep.adjoints.update(bound)
        top = _Block(set(bound), local=set())
        out = []
        for var, expr in seed:
            if self.act.is_active(var):
                out.extend(self.contribute(top, var, expr, "output"))
        out.extend(self.block(self.program.body, top))
        sweep.statements = out
        return sweep

    # -- cotangent bookkeeping --------------------------------------------------
    def adjoint_name(self, var: str) -> str:
        if var not in self.sweep.adjoints:
            self.sweep.adjoints[var] = self.namer.adjoint(var)
        return self.sweep.adjoints[var]

    def contribute(self, ctx: _Block, var: str, expr, origin) -> list:
        name = self.adjoint_name(var)
        if var in ctx.assigned:
            value = gast.BinOp(left=ir.name(name), op=gast.Add(), right=expr)
        elif not ctx.compound or var in ctx.local:
            value = expr
            ctx.assigned.add(var)
        else:  # first seen inside a branch or loop: accumulate from an explicit zero
            ctx.needs_zero.add(var)
            ctx.assigned.add(var)
            value = gast.BinOp(left=ir.name(name), op=gast.Add(), right=expr)
        stmt = ir.assign(name, value)
        stmt.origin = origin
        return [stmt]

    def zero(self, var: str):
        stmt = ir.assign(self.adjoint_name(var), gast.Constant(value=ZERO, kind=None))
        stmt.origin = "zero"
        return stmt

    def cotangent(self, ctx: _Block, var: str):
        if var in ctx.assigned:
            return ir.name(self.adjoint_name(var))
        return gast.Constant(value=ZERO, kind=None)

    # -- statements -----------------------------------------------------------
    def block(self, stmts, ctx: _Block) -> list:
        out = []
        for stmt in reversed(stmts):
            if isinstance(stmt, gast.If):
                made = self.if_(stmt, ctx)
            elif isinstance(stmt, (gast.For, gast.While)):
                made = self.loop(stmt, ctx)
            elif isinstance(stmt, gast.Assign):
                made = self.assignment(stmt, ctx)
            elif ir.is_update(stmt):
                made = self.append(stmt, ctx)
            else:
                made = []
            for s in made:  # which forward statement each adjoint statement mirrors
                if isinstance(s, (gast.If, gast.For)) and s.__dict__.get("mirror_of") is None:
                    s.mirror_of = stmt
                s.source_stmt = stmt
            out.extend(made)
        return out

    def append(self, stmt, ctx: _Block) -> list:
        """The adjoint of ``xs.append(v)``: ``v`` gets the last element's cotangent,
        which then leaves ``xs``'s; ``xs.pop()`` undoes the append."""
        xs, item = stmt.op.args
        out = []
        if self.act.is_active(xs.id) and xs.id in ctx.assigned:
            d_xs = self.adjoint_name(xs.id)
            if isinstance(item, gast.Name) and self.act.is_active(item.id):
                last = call_to("cotangent_at", ir.name(d_xs), gast.Constant(value=-1, kind=None))
                out.extend(self.contribute(ctx, item.id, last, ".append()"))
            rest = ir.assign(d_xs, call_to("drop_last", ir.name(d_xs)))
            rest.origin = ".append()"
            out.append(rest)
        undo = gast.Expr(value=gast.Call(func=gast.Attribute(value=ir.name(xs.id), attr="pop",
                                                             ctx=gast.Load()),
                                         args=[], keywords=[]))
        undo.updates = xs.id
        undo.comment = f"restore: {xs.id} before the append"
        out.append(undo)
        return out

    def assignment(self, stmt, ctx: _Block) -> list:
        if ir.is_update(stmt):
            return self.update(stmt, ctx)
        out = []
        targets = ir.target_names(stmt)
        op = getattr(stmt, "op", None)
        if op is not None and differentiable(op) and any(self.act.is_active(t) for t in targets):
            out.extend(self.adjoint_of(stmt, op, targets, ctx))
        if ctx.compound:
            for var in targets:
                if self.act.is_active(var) and var in ctx.assigned and var not in ctx.local:
                    out.append(self.zero(var))  # the cotangent of the overwritten value
                out.append(self.restore(var, stmt))
        return out

    def adjoint_of(self, stmt, op, targets, ctx) -> list:
        if isinstance(op.primitive, CalleePair):
            return self.call_adjoint(stmt, op, ctx)
        rule = registry.lookup(op.primitive)
        target = stmt.targets[0]
        if isinstance(target, gast.Tuple):
            out_expr = gast.Tuple(elts=[ir.name(t) for t in targets], ctx=gast.Load())
            d_out = gast.Tuple(elts=[self.cotangent(ctx, t) for t in targets], ctx=gast.Load())
        else:
            out_expr, d_out = ir.name(targets[0]), self.cotangent(ctx, targets[0])
        if isinstance(d_out, gast.Constant):
            return []  # no cotangent reached this value (a path not taken)
        done = inline(rule, op, out_expr, d_out, self.namer, wanted=self.act.is_active,
                      shape_class=lambda n: self.classes.get(n, n),
                      filename=self.program.filename)
        place_op(done.statements + [e for _, e in done.contributions], self.program, op)
        out = []
        for s in done.statements:
            s.origin = op.label
            out.append(s)
        for var, expr in done.contributions:
            out.extend(self.contribute(ctx, var, expr, op.label))
        return out

    def call_adjoint(self, stmt, op, ctx) -> list:
        """``d_a, d_b = f_backward(f_res, d_y)`` for ``y, f_res = f_forward(a, b)``."""
        pair, output = op.primitive, stmt.call_output
        if isinstance(output, gast.Tuple):
            parts = [self.cotangent(ctx, n) for n in ir.stored_names(output)]
            reached = any(not isinstance(e, gast.Constant) for e in parts)
            # an output nothing differentiates gets zeros of its own shape: the
            # callee's rules (a matrix product, say) need a cotangent of that shape
            parts = [call_to("zeros_grad", ir.name(n)) if isinstance(e, gast.Constant) else e
                     for n, e in zip(ir.stored_names(output), parts)]
            d_out = gast.Tuple(elts=parts, ctx=gast.Load())
        else:
            d_out = self.cotangent(ctx, output.id)
            reached = not isinstance(d_out, gast.Constant)
        if not reached:
            return []
        args = [op.args[p] for p in pair.wrt]
        names = [a.id for a in args if isinstance(a, gast.Name)]
        grads, pending = [], []
        for arg in args:
            var = arg.id if isinstance(arg, gast.Name) and self.act.is_active(arg.id) else None
            if var and names.count(var) == 1 and var not in ctx.assigned \
                    and (not ctx.compound or var in ctx.local):
                grads.append(self.adjoint_name(var))  # the first contribution: unpack into it
                ctx.assigned.add(var)
            else:
                grads.append(self.namer.fresh("g") if var else "_")
                if var:
                    pending.append((var, grads[-1]))
        call = call_to(pair.backward, ir.name(stmt.residuals), d_out)
        unpack = ir.assign(gast.Tuple(elts=[ir.name(g, store=True) for g in grads],
                                      ctx=gast.Store()), call)
        unpack.origin = str(pair)
        out = [unpack]
        for var, g in pending:
            out.extend(self.contribute(ctx, var, ir.name(g), str(pair)))
        return out

    def update(self, stmt, ctx: _Block) -> list:
        """The adjoint of ``x[index] = value``: ``value`` gets the cotangent of the
        elements it wrote, ``x`` keeps the rest; then the old elements come back."""
        x, index, value = stmt.op.args
        if isinstance(index, gast.Slice) and not (isinstance(value, gast.Name)
                                                  and value.id == x.id):
            return self.slice_update(stmt, ctx)
        out = []
        if self.act.is_active(x.id) and x.id in ctx.assigned:
            d_x = ir.name(self.adjoint_name(x.id))
            index_value = SliceToCall().visit(copy.deepcopy(index))
            rest = ir.assign(d_x.id, call_to("without_item", d_x, ir.name(x.id),
                                             copy.deepcopy(index_value)))
            rest.origin = "element assignment"
            if isinstance(value, gast.Name) and self.act.is_active(value.id):
                part = call_to("written_cotangent", d_x, ir.name(x.id), index_value,
                               ir.name(value.id))
                if isinstance(index, gast.Name):  # it may hold a slice of a list
                    place_op([part], self.program, stmt.op, helper="written_cotangent")
                if value.id == x.id:  # x[::-1] = x: the old x gets both parts, after the rest
                    g = self.namer.fresh("g")
                    out += [ir.assign(g, part), rest]
                    rest, part = None, ir.name(g)
                out.extend(self.contribute(ctx, value.id, call_to("unbroadcast", part, value),
                                           "element assignment"))
            if rest is not None:
                out.append(rest)
        if getattr(stmt, "stores_itself", False):
            # d['log'] = part where part is d['log'], appended to in place
            # (analysis/item_appends.py): nothing overwritten, nothing to restore
            return out
        tape = self.tape_for(x.id)
        if isinstance(index, gast.Constant) and isinstance(index.value, str) \
                or may_hold_dict(self.program, x.id, index):
            # d['a'] = v, d[k] = v on a dict: the key may be new (params = {}; params['W'] = ...)
            restore = gast.Expr(value=call_to("restore_item", ir.name(x.id),
                                              copy.deepcopy(index), _pop(tape)))
            restore.updates = x.id
            restore.restores = stmt
            restore.saves = call_to("item_or_missing", ir.name(x.id), copy.deepcopy(index))
            restore.comment = f"restore: {x.id}[{unparse(index)}] as it was"
            out.append(restore)
            return out
        restore = ir.assign(gast.Subscript(value=ir.name(x.id), slice=copy.deepcopy(index),
                                           ctx=gast.Store()), _pop(tape))
        restore.restores = stmt
        restore.saves = call_to("snapshot", gast.Subscript(value=ir.name(x.id),
                                                           slice=copy.deepcopy(index),
                                                           ctx=gast.Load()))
        restore.comment = f"restore: the elements of {x.id} it overwrote"
        out.append(restore)
        return out

    def slice_update(self, stmt, ctx: _Block) -> list:
        """The adjoint of ``x[a:b] = value``: the old elements come back first
        (``restore_part``), then ``value`` and ``x`` get their cotangents from
        ``x`` as it was -- a list's slice assignment may change its length
        (``L[1:3] = [v]``), and only the length before tells where ``value``'s
        elements went and where the others moved."""
        x, index, value = stmt.op.args
        index_value = SliceToCall().visit(copy.deepcopy(index))
        restore = gast.Expr(value=call_to("restore_part", ir.name(x.id),
                                          copy.deepcopy(index_value), copy.deepcopy(value),
                                          _pop(self.tape_for(x.id))))
        restore.updates = x.id
        restore.restores = stmt
        restore.saves = call_to("snapshot", gast.Subscript(value=ir.name(x.id),
                                                           slice=copy.deepcopy(index),
                                                           ctx=gast.Load()))
        restore.comment = f"restore: the elements of {x.id} it overwrote"
        out = [restore]
        if self.act.is_active(x.id) and x.id in ctx.assigned:
            d_x = ir.name(self.adjoint_name(x.id))
            if isinstance(value, gast.Name) and self.act.is_active(value.id):
                part = call_to("slice_written_cotangent", d_x, ir.name(x.id),
                               copy.deepcopy(index_value), ir.name(value.id))
                out.extend(self.contribute(ctx, value.id, call_to("unbroadcast", part, value),
                                           "element assignment"))
            rest = ir.assign(d_x.id, call_to("slice_kept_cotangent", d_x, ir.name(x.id),
                                             index_value, copy.deepcopy(value)))
            rest.origin = "element assignment"
            out.append(rest)
        return out

    def tape_for(self, var: str) -> str:
        tape = self.sweep.tapes.get(var)
        if tape is None:
            tape = self.sweep.tapes[var] = self.namer.fresh(f"{var}_tape")
        return tape

    def restore(self, var: str, stmt):
        """``var = var_tape.pop()``: undo the overwrite (kept only if read later)."""
        restore = ir.assign(var, _pop(self.tape_for(var)))
        restore.restores = stmt          # the forward statement whose overwrite it undoes
        restore.comment = f"restore: {var}"
        return restore

    def nested(self, stmts, ctx: _Block, local) -> tuple[list, _Block]:
        inner = _Block(ctx.assigned, local, parent=ctx, compound=True)
        return self.block(stmts, inner), inner

    def settle(self, ctx: _Block, inner_blocks, out: list) -> list:
        """Zero the cotangents a compound statement accumulates into, before it."""
        needs = set()
        for inner in inner_blocks:
            needs |= inner.needs_zero
        needs -= ctx.assigned
        zeros = []
        for var in sorted(needs):
            if ctx.compound and var not in ctx.local:
                ctx.needs_zero.add(var)
            else:
                zeros.append(self.zero(var))
            ctx.assigned.add(var)
        return zeros + out

    def if_(self, stmt, ctx: _Block) -> list:
        body, b = self.nested(stmt.body, ctx, self.local_to(stmt.body))
        orelse, o = self.nested(stmt.orelse, ctx, self.local_to(stmt.orelse))
        if not body and not orelse:
            return []
        node = gast.If(test=stmt.test, body=body or [gast.Pass()], orelse=orelse)
        return self.settle(ctx, [b, o], [node])

    def loop(self, stmt, ctx: _Block) -> list:
        local = self.local_to(stmt.body)
        inner = _Block(ctx.assigned, local, parent=ctx, compound=True)
        # A cotangent that any iteration adds to is carried into the iterations
        # that the adjoint sweep runs after it: it holds a value from the start.
        carried = self.contributed(stmt.body) - self.local_within(stmt.body) - ctx.assigned
        inner.assigned |= carried
        inner.needs_zero |= carried
        body = self.block(stmt.body, inner)
        if not body:
            return []
        counter = getattr(stmt, "counter", None)
        if isinstance(stmt, gast.For):
            iterable = stmt.iter
            if counter:
                iterable = gast.Subscript(value=iterable, slice=gast.Slice(
                    lower=None, upper=ir.name(counter), step=None), ctx=gast.Load())
            header = gast.Call(func=ir.name("reversed"), args=[iterable], keywords=[])
            target = stmt.target
        else:
            header = gast.Call(func=ir.name("range"), args=[ir.name(counter)], keywords=[])
            target = ir.name(self.namer.fresh("_"), store=True)
        node = gast.For(target=target, iter=header, body=body, orelse=[], type_comment=None)
        node.comment_before = [f"{'for' if isinstance(stmt, gast.For) else 'while'} loop "
                               f"of line {getattr(stmt, 'lineno', '?')}, backwards"]
        # The backward loop rebinds the forward loop's target: restore the value
        # it had before the forward loop, which the adjoint of earlier statements
        # (or of earlier iterations of an enclosing loop) may read.
        undo = [self.restore(var, stmt) for var in ir.stored_names(target)] \
            if isinstance(stmt, gast.For) else []
        return self.settle(ctx, [inner], [node] + undo)

    def contributed(self, stmts) -> set[str]:
        """Primals whose cotangents the adjoints of ``stmts`` add to."""
        names = set()
        for stmt in ir.walk_statements(stmts):
            op = getattr(stmt, "op", None)
            if op is not None and any(self.act.is_active(t) for t in ir.target_names(stmt)):
                names.update(n for n in operand_names(op) if self.act.is_active(n))
        return names

    def local_within(self, stmts) -> set[str]:
        """Primals local to ``stmts`` or to any block nested in them."""
        local = self.local_to(stmts)
        for stmt in stmts:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                local |= self.local_within(stmt.body) | self.local_within(stmt.orelse)
        return local

    def local_to(self, stmts) -> set[str]:
        """Primals defined once at the top of ``stmts`` before any read there, and
        mentioned nowhere else: their cotangents need no zeroing or resetting."""
        inside = {id(stmt) for stmt in ir.walk_statements(stmts)}
        local, seen = set(), set()
        for stmt in stmts:
            if isinstance(stmt, gast.Assign):
                seen |= set(ir.names_in(stmt.value))
                for var in ir.target_names(stmt):
                    where = self.uses.get(var, [])
                    defs = [i for i, kind in where if kind == "def"]
                    # (a parameter has a value from the start: its cotangent after
                    # the block is not what the block's definition leaves)
                    if var not in seen and len(defs) == 1 and var not in self.program.params \
                            and all(i in inside for i, _ in where):
                        local.add(var)
                    seen.add(var)
            else:
                for sub in ir.walk_statements([stmt]):
                    seen |= {n for n, _ in _mentions(sub)}
        return local


def _pop(tape: str):
    return gast.Call(func=gast.Attribute(value=ir.name(tape), attr="pop", ctx=gast.Load()),
                     args=[], keywords=[])


def _mentions(stmt):
    """``(name, "def" | "use")`` for each name a statement (not its body) mentions."""
    if isinstance(stmt, gast.Assign):
        yield from ((n, "def") for n in ir.target_names(stmt))
        yield from ((n, "use") for n in ir.names_in(stmt.value))
    elif isinstance(stmt, (gast.If, gast.While)):
        yield from ((n, "use") for n in ir.names_in(stmt.test))
    elif isinstance(stmt, gast.For):
        yield from ((n, "use") for n in ir.names_in(stmt.iter))
        yield from ((n, "def") for n in ir.stored_names(stmt.target))
    else:
        yield from ((n, "use") for n in ir.names_in(stmt))


def _occurrences(program) -> dict[str, list]:
    """For each name, ``(statement id, "def" | "use")`` for every mention."""
    where: dict[str, list] = {}
    for stmt in ir.walk_statements(program.body):
        for n, kind in _mentions(stmt):
            where.setdefault(n, []).append((id(stmt), kind))
    for n in ir.names_in(program.output):
        where.setdefault(n, []).append((-1, "use"))
    return where


def check_wrt(program: ir.Program, wrt: tuple[int, ...]) -> list[str]:
    """The parameter names for positional indices ``wrt`` (raising on bad ones)."""
    names = []
    for index in wrt:
        if not isinstance(index, int) or isinstance(index, bool):
            raise NonDifferentiableError(f"wrt must hold argument positions (ints), got {index!r}")
        if not -len(program.params) <= index < len(program.params):
            raise NonDifferentiableError(
                f"wrt={index} is out of range: {program.name} takes "
                f"{len(program.params)} positional arguments {tuple(program.params)}")
        names.append(program.params[index])
    return names
