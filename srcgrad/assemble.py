"""Assembling generated functions from the sweeps of one program.

The joint form (``grad``, ``value_and_grad``) is one function: the forward sweep
with its saves, then the adjoint sweep.  The split form (``vjp``, and every user
function called from differentiated code) is a pair: ``f_forward`` returns the
output and an explicit tuple of residuals, ``f_backward(residuals, d_out)``
returns the cotangents.  Nothing is kept anywhere else -- no hidden tape.
"""

from __future__ import annotations

import gast

from . import ir
from .ad.calls import split_calls
from .ad.reverse import reverse
from .analysis.activity import SCALAR, activity, has_effect, shape_classes
from .analysis.aliasing import shared_names
from .errors import NonDifferentiableError
from .ir.syntax import call_to
from .ir.emit import function_source
from .memory.checkpointing import checkpoint_loops, loop_policy
from .memory.release import release_unread
from .memory.remat import decider, rematerialize
from .memory.tapes import insert_pushes
from .optimize.broadcast import retarget_shape_reads
from .optimize.dce import eliminate_dead, fold_zero_starts, live_before, propagate_copies
from .optimize.fold import fold_temporaries
from .version import __version__


class Assembler:
    """Turns one normalised program into generated function source."""

    def __init__(self, program, options, wrt_names, linker):
        self.program = program
        self.options = options
        self.wrt = wrt_names
        self.namer = program.namer
        self.linker = linker
        self.act = activity(program, wrt_names)
        self.classes = shape_classes(program)
        split_calls(program, self.act, linker)

    # -- the sweeps -----------------------------------------------------------
    def run(self):
        """``(function sources, entry names)`` in the form ``options.mode`` asks for."""
        program, options = self.program, self.options
        output = program.output
        if options.mode != "vjp" and not isinstance(output, (gast.Name, gast.Constant)):
            raise NonDifferentiableError(
                f"grad needs a function with a scalar output, but {program.name} returns "
                f"a tuple; use srcgrad.vjp or srcgrad.jacobian for several outputs",
                filename=program.filename, lineno=program.output_node.lineno,
                col=program.output_node.col_offset)
        if options.mode == "vjp":
            return self.split()
        return self.joint()

    def _backward(self, seed=(), bound=None, raw=False, single=False):
        """The sweep and the expression it returns: the gradients shaped like their
        arguments (one, or a tuple), or (``raw``, for a callee's caller) the tuple of
        the cotangents themselves."""
        sweep = reverse(self.program, self.wrt, self.act, seed=seed, bound=bound)
        # cotangents as they are, 0.0 for none: what a caller's adjoint receives
        cotangents = [ir.name(sweep.adjoints[name]) if name in sweep.adjoints
                      else gast.Constant(value=0.0, kind=None) for name in self.wrt]
        if raw:
            return sweep, _tuple(cotangents)
        if len(self.wrt) > 1:
            # one grad_like for all: cotangents passed along unchanged (d_x = d_t for
            # x + y) may be one array, and each gradient must be an array of its own
            return sweep, call_to("grad_like", _tuple(cotangents),
                                  _tuple([ir.name(name) for name in self.wrt]))
        name = self.wrt[0]
        if name in sweep.adjoints:
            grad = call_to("grad_like", cotangents[0], ir.name(name))
        else:
            grad = call_to("zeros_grad", ir.name(name))
        return sweep, grad if single else _tuple([grad])

    def joint(self):
        program, options = self.program, self.options
        output = program.output
        seed_stmts, seed, bound = [], [], {}
        if isinstance(output, gast.Name):
            # grad_seed reads the output: it checks that it is a scalar, gives the
            # seed its dtype, and keeps the whole forward computation live, so that
            # grad(f)(x) raises whatever f(x) raises
            if self.act.is_active(output.id):
                d_out = self.namer.adjoint(output.id)
                bound[output.id] = d_out
                seed_stmts.append(ir.assign(d_out, call_to("grad_seed", ir.name(output.id))))
            else:
                seed_stmts.append(gast.Expr(value=call_to("grad_seed", ir.name(output.id))))
        sweep, result = self._backward(seed, bound, single=options.single)
        value_copy = []
        if options.mode == "value_and_grad":
            if isinstance(output, gast.Name) and output.id in sweep.tapes:
                # the adjoint sweep restores the output variable: keep its final value
                value = self.namer.fresh("value")
                value_copy = [ir.assign(value, ir.name(output.id))]
                output = ir.name(value)
            result = _tuple([output, result])
        backward = self._clean(seed_stmts + sweep.statements, result)
        body, tapes, extra = self._saves(backward, sweep)
        reads = _forward_reads(backward, program, sweep, result, extra)
        forward = self._forward(body, tapes, set(ir.names_in(output)) | reads) + value_copy
        self._annotate(forward, backward, reads)
        ret = gast.Return(value=result)
        if backward:
            backward[0].comment_before = ["", "Adjoint sweep"]
        body = self._fold(forward + backward + [ret], sweep)
        if options.optimize:
            kept = {id(stmt) for stmt in forward}
            start = next(i for i, stmt in enumerate(body) if id(stmt) not in kept)
            scalars = {n for n, c in self.classes.items() if c == SCALAR}
            body = release_unread(body, start, program.params, scalars)
        fname = program.name
        name = self.linker.global_name(
            f"{'grad' if options.mode == 'grad' else 'value_and_grad'}_{fname}")
        what = "Gradient" if options.mode == "grad" else "Value and gradient"
        doc = (f"{what} of {fname} with respect to {_listing(self.wrt)}.\n\n"
               f"{self._provenance()}")
        defaults = program.node.args.defaults
        src = function_source(name, program.params, defaults, body, doc)
        return [src], (name,)

    def split(self, names=None):
        """The forward/backward pair; ``names`` chosen by the linker for callees."""
        program = self.program
        output = program.output
        fname = program.name
        fwd_name, bwd_name = names or (self.linker.global_name(f"{fname}_forward"),
                                       self.linker.global_name(f"{fname}_backward"))
        res_name = self.namer.fresh("residuals")
        seed, bound, cot_param = [], {}, None
        if isinstance(output, gast.Name):
            cot_param = self.namer.adjoint(output.id)
            bound[output.id] = cot_param
        else:
            cot_param = self.namer.fresh("d_out")
            if isinstance(output, gast.Tuple):
                for i, elt in enumerate(output.elts):
                    if isinstance(elt, gast.Name):
                        seed.append((elt.id, gast.Subscript(
                            value=ir.name(cot_param), slice=gast.Constant(value=i, kind=None),
                            ctx=gast.Load())))
        sweep, result = self._backward(seed, bound, raw=names is not None)
        backward = self._clean(sweep.statements, result)
        body, tapes, extra = self._saves(backward, sweep)
        reads = _forward_reads(backward, program, sweep, result, extra) | (
            set(ir.names_in(result)) & _forward_names(program))
        saved = _ordered(reads, program, sweep, extra)
        self.residual_names = saved
        forward = self._forward(body, tapes, set(ir.names_in(output)) | reads)
        unbound = [n for n in saved if n in _branch_defined(program)]
        if unbound:  # defined on some paths only: the residual tuple still needs a value
            init = gast.Assign(targets=[ir.name(n, store=True) for n in unbound],
                               value=gast.Constant(value=None, kind=None), type_comment=None)
            init.comment = "residuals defined on some paths only"
            forward.insert(0, init)
        self._annotate(forward, backward, reads)
        res_tuple = _tuple([ir.name(n) for n in saved])
        fwd_body = forward + [gast.Return(value=_tuple([output, res_tuple]))]
        unpack = ir.assign(gast.Tuple(elts=[ir.name(n, store=True) for n in saved],
                                      ctx=gast.Store()), ir.name(res_name))
        unpack.comment_before = ["Residuals saved by the forward function"]
        bwd_body = ([unpack] if saved else []) + backward + [gast.Return(value=result)]
        if backward and saved:
            backward[0].comment_before = ["", "Adjoint sweep"]
        prov = self._provenance()
        fwd_doc = (f"Forward sweep of {fname}: returns (value, residuals).\n\n"
                   f"The residuals are what {bwd_name} reads: "
                   f"{', '.join(saved) if saved else 'nothing'}.\n{prov}")
        bwd_doc = (f"Adjoint sweep of {fname}: cotangents of {_listing(self.wrt)}.\n\n"
                   f"{cot_param} is the cotangent of the output.\n{prov}")
        fwd_src = function_source(fwd_name, program.params, program.node.args.defaults,
                                  self._fold(fwd_body, sweep), fwd_doc)
        bwd_src = function_source(bwd_name, [res_name, cot_param], [],
                                  self._fold(bwd_body, sweep), bwd_doc)
        return [fwd_src, bwd_src], (fwd_name, bwd_name)

    def _fold(self, body, sweep) -> list:
        """Single-use temporaries, and their cotangents, back inside the statement
        that reads them -- not the output and its seed: ``grad_seed(t9)`` reads
        better than ``grad_seed(t8 + b)``."""
        if not self.options.optimize:
            return body
        output = set(ir.names_in(self.program.output))
        seeds = {sweep.adjoints.get(name) for name in output}
        return fold_temporaries(body, self.namer.temps - output,
                                self.namer.temp_cotangents - seeds)

    def _clean(self, statements, result) -> list:
        """Recompute what the policy says, then dead code out of the adjoint sweep
        (and copies, when optimising)."""
        if self.options.optimize:
            statements = retarget_shape_reads(statements, self.program, self.classes)
        statements = rematerialize(self.program, statements, decider(self.options.policy))
        if self.options.optimize:
            statements = fold_zero_starts(propagate_copies(statements))
        shared = shared_names(self.program)

        def keep(stmt):  # restoring an array that a view reads through
            return ir.is_update(stmt) and bool(set(ir.target_names(stmt)) & shared)
        return eliminate_dead(statements, set(ir.names_in(result)), keep)

    def _saves(self, backward, sweep):
        """The forward statements with their tape pushes (and, under a loop
        checkpointing policy, checkpointed loops), the tapes to create, and the
        other names the adjoint sweep now reads from the forward sweep."""
        body, tapes = insert_pushes(self.program.body, backward, sweep.tapes,
                                    defined=self.program.params)
        extra = []
        if loop_policy(self.options.policy):
            extra = checkpoint_loops(body, backward, self.options.policy, self.namer,
                                     defined=self.program.params)
        return body, tapes, extra

    def _forward(self, body, tapes, live) -> list:
        """The forward sweep: the program with its saves, minus what nothing reads."""
        return tapes + eliminate_dead(body, set(live), has_effect)

    def _annotate(self, forward, backward, reads) -> None:
        readers: dict[str, list[str]] = {}
        for stmt in ir.walk_statements(backward):
            origin = getattr(stmt, "origin", None)
            for name in ir.names_in(stmt):
                if name in reads and origin and origin not in readers.setdefault(name, []):
                    readers.setdefault(name, []).append(origin)
        for stmt in ir.walk_statements(forward):
            if getattr(stmt, "comment", None) or ir.is_update(stmt) \
                    or getattr(stmt, "unsaved", False):
                continue
            saved = [n for n in ir.target_names(stmt) if n in readers]
            if saved:
                stmt.comment = "save: " + "; ".join(
                    f"{n} (read by the adjoint of {', '.join(readers[n])})" for n in saved)
        args = [p for p in self.program.params if p in readers]
        if args and forward:
            forward[0].comment_before = [f"save: argument{'s' if len(args) > 1 else ''} "
                                         f"{', '.join(args)} (read by the adjoint sweep)"]
        if forward:
            forward[0].comment_before = ["Forward sweep", *getattr(forward[0], "comment_before", [])]

    def _provenance(self) -> str:
        p = self.program
        return (f"Generated by srcgrad {__version__} from {p.name} "
                f"({p.filename}, line {p.node.lineno}); policy {self.options.policy!r}.")

def _tuple(elts):
    return gast.Tuple(elts=list(elts), ctx=gast.Load())


def _listing(names) -> str:
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _forward_names(program, sweep=None) -> set[str]:
    names = set(program.params)
    for stmt in ir.walk_statements(program.body):
        names.update(ir.target_names(stmt))
        if isinstance(stmt, gast.For):
            names.update(ir.stored_names(stmt.target))
    if sweep is not None:
        names.update(sweep.tapes.values())
    return names


def _branch_defined(program) -> set[str]:
    """Variables assigned only inside branches or loops (maybe unbound at the end)."""
    top, nested = set(program.params), set()
    for stmt in program.body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            for sub in ir.walk_statements([stmt]):
                nested.update(ir.target_names(sub))
                if isinstance(sub, gast.For):
                    nested.update(ir.stored_names(sub.target))
        else:
            top.update(ir.target_names(stmt))
    return nested - top


def _forward_reads(backward, program, sweep, result=None, extra=()) -> set[str]:
    """Forward values (and tapes) the adjoint sweep reads before it assigns them
    itself: what it needs from the forward sweep (a recomputed value is not)."""
    forward = _forward_names(program, sweep) | set(extra)
    live = live_before(backward, ir.names_in(result) if result is not None else ())
    return {n for n in live if n in forward}


def _ordered(names, program, sweep, extra=()) -> list[str]:
    order = list(program.params)
    for stmt in ir.walk_statements(program.body):
        order.extend(ir.assigned_by(stmt))  # a for loop's target too
    order.extend(sorted(sweep.tapes.values()))
    order.extend(extra)
    seen, result = set(), []
    for n in order:
        if n in names and n not in seen:
            seen.add(n)
            result.append(n)
    return result


