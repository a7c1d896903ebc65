"""The compiler driver: runs the passes and assembles the generated module.

``generate(fn, options)`` goes frontend -> fence -> normalize -> analyze ->
reverse -> optimize -> emit and returns the module's source together with what
it needs at run time (the names it binds from the user's globals).  Three
shapes of output share all of it:

* ``grad`` and ``value_and_grad``: one function holding the forward sweep and
  then the adjoint sweep;
* ``vjp`` (split mode): ``f_forward`` returns the output and its residuals as an
  explicit tuple, ``f_backward(residuals, d_out)`` takes them back.  Nothing is
  kept anywhere else -- no hidden tape.
"""

from __future__ import annotations

import builtins
import math
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from . import __version__, fence, ir, runtime
from .aliasing import check_aliases
from .analyze import activity
from .emit import function_source, unparse
from .errors import NonDifferentiableError, SrcGradError
from .frontend import parse_function
from .normalize import normalize
from .optimize import eliminate_dead, fold_zero_starts, propagate_copies
from .tapes import insert_pushes
from .reverse import check_wrt, reverse
from .rules import registry

MODES = ("grad", "value_and_grad", "vjp")
POLICIES = ("save",)


@dataclass(frozen=True)
class Options:
    """Everything besides the function that determines the generated code."""

    mode: str = "grad"
    wrt: tuple = (0,)
    single: bool = True          # wrt was an int: return one gradient, not a tuple
    policy: str = "save"
    optimize: bool = True


@dataclass
class Generated:
    """A generated module: its source, entry points and run-time bindings."""

    source: str
    entries: tuple[str, ...]
    bindings: dict[str, object]               # free names injected before exec
    program: ir.Program
    wrt_names: list[str]
    free: dict[str, object] = field(default_factory=dict)


def validate_options(options: Options) -> None:
    if options.mode not in MODES:
        raise SrcGradError(f"unknown mode {options.mode!r}; expected one of {MODES}")
    if options.policy not in POLICIES:
        raise SrcGradError(
            f"policy {options.policy!r} is not supported in this version; "
            f"supported: {', '.join(repr(p) for p in POLICIES)}")


def generate(fn, options: Options) -> Generated:
    """Differentiate ``fn`` and return the generated module."""
    validate_options(options)
    parsed = parse_function(fn)
    fence.check(parsed.node, parsed.filename)
    program = normalize(parsed)
    check_aliases(program)
    wrt_names = check_wrt(program, options.wrt)
    return _Assembler(program, parsed, options, wrt_names).run()


class _Assembler:
    def __init__(self, program, parsed, options, wrt_names):
        self.program = program
        self.parsed = parsed
        self.options = options
        self.wrt = wrt_names
        self.namer = program.namer
        self.act = activity(program, wrt_names)

    # -- the sweeps -----------------------------------------------------------
    def run(self) -> Generated:
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

    def _backward(self, seed=(), bound=None):
        sweep = reverse(self.program, self.wrt, self.act, seed=seed, bound=bound)
        grads = []
        for name in self.wrt:
            if name in sweep.adjoints:
                grads.append(_call("grad_like", ir.name(sweep.adjoints[name]), ir.name(name)))
            else:
                grads.append(_call("zeros_grad", ir.name(name)))
        return sweep, grads

    def joint(self) -> Generated:
        program, options = self.program, self.options
        output = program.output
        seed_stmts, seed, bound = [], [], {}
        if isinstance(output, gast.Name):
            if self.act.is_active(output.id):
                d_out = self.namer.adjoint(output.id)
                bound[output.id] = d_out
                seed_stmts.append(ir.assign(d_out, _call("grad_seed", ir.name(output.id))))
            else:
                seed_stmts.append(gast.Expr(value=_call("grad_seed", ir.name(output.id))))
        sweep, grads = self._backward(seed, bound)
        result = grads[0] if options.single else _tuple(grads)
        value_copy = []
        if options.mode == "value_and_grad":
            if isinstance(output, gast.Name) and output.id in sweep.tapes:
                # the adjoint sweep restores the output variable: keep its final value
                value = self.namer.fresh("value")
                value_copy = [ir.assign(value, ir.name(output.id))]
                output = ir.name(value)
            result = _tuple([output, result])
        backward = self._clean(seed_stmts + sweep.statements, result)
        reads = _forward_reads(backward, program, sweep)
        forward = self._forward(set(ir.names_in(output)) | reads, backward, sweep) + value_copy
        self._annotate(forward, backward, reads)
        ret = gast.Return(value=result)
        if backward:
            backward[0].comment_before = ["", "Adjoint sweep"]
        body = forward + backward + [ret]
        fname = program.name
        name = self.namer.fresh(f"{'grad' if options.mode == 'grad' else 'value_and_grad'}_{fname}")
        what = "Gradient" if options.mode == "grad" else "Value and gradient"
        doc = (f"{what} of {fname} with respect to {_listing(self.wrt)}.\n\n"
               f"{self._provenance()}")
        defaults = program.node.args.defaults
        src = function_source(name, program.params, defaults, body, doc)
        return self._module([src], (name,))

    def split(self) -> Generated:
        program = self.program
        output = program.output
        fname = program.name
        fwd_name = self.namer.fresh(f"{fname}_forward")
        bwd_name = self.namer.fresh(f"{fname}_backward")
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
        sweep, grads = self._backward(seed, bound)
        result = _tuple(grads)
        backward = self._clean(sweep.statements, result)
        reads = _forward_reads(backward, program, sweep) | (
            set(ir.names_in(result)) & _forward_names(program))
        saved = _ordered(reads, program, sweep)
        forward = self._forward(set(ir.names_in(output)) | reads, backward, sweep)
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
                                  fwd_body, fwd_doc)
        bwd_src = function_source(bwd_name, [res_name, cot_param], [], bwd_body, bwd_doc)
        return self._module([fwd_src, bwd_src], (fwd_name, bwd_name))

    def _clean(self, statements, result) -> list:
        """Dead code out of the adjoint sweep (and copies, when optimising)."""
        if self.options.optimize:
            statements = fold_zero_starts(propagate_copies(statements))
        return eliminate_dead(statements, set(ir.names_in(result)))

    def _forward(self, live, backward, sweep) -> list:
        """The forward sweep: the program with its saves, minus what nothing reads."""
        body, tapes = insert_pushes(self.program.body, backward, sweep.tapes,
                                    defined=self.program.params)

        def keep(stmt):
            op = getattr(stmt, "op", None)
            if op is None or op.primitive is ir.OPAQUE:
                return not isinstance(stmt, gast.Assign)
            prim = op.primitive
            known = registry.lookup(prim) is not None or registry.is_nondifferentiable(prim) \
                or isinstance(prim, ir.UnknownMember)
            return not known
        return tapes + eliminate_dead(body, set(live), keep)

    def _annotate(self, forward, backward, reads) -> None:
        readers: dict[str, list[str]] = {}
        for stmt in ir.walk_statements(backward):
            origin = getattr(stmt, "origin", None)
            for name in ir.names_in(stmt):
                if name in reads and origin and origin not in readers.setdefault(name, []):
                    readers.setdefault(name, []).append(origin)
        for stmt in ir.walk_statements(forward):
            if getattr(stmt, "comment", None) or ir.is_update(stmt):
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

    # -- the module -----------------------------------------------------------
    def _module(self, functions, entries) -> Generated:
        body = "\n\n".join(functions)
        used = _names_used(body)
        imports, bindings = [], {}
        reserved = {"np": np, "math": math}
        reserved.update({n: getattr(runtime, n) for n in runtime.__all__})
        for name, obj in sorted(self.program.free.items()):
            if name in reserved:
                if reserved[name] is not obj:
                    raise SrcGradError(
                        f"{self.program.name} uses the name '{name}' for {obj!r}; srcgrad's "
                        f"generated code needs '{name}' for {reserved[name]!r}: rename it",
                        filename=self.program.filename, lineno=self.program.node.lineno)
                continue
            if getattr(builtins, name, None) is obj:
                continue  # a builtin: available everywhere
            if isinstance(obj, types.ModuleType):
                imports.append(f"import {obj.__name__}" if obj.__name__ == name
                               else f"import {obj.__name__} as {name}")
            else:
                bindings[name] = obj
        header = [f"# Generated by srcgrad {__version__} from {self.program.name} in "
                  f"{self.program.filename}, line {self.program.node.lineno}.",
                  "# srcgrad regenerates this file from the source; edits here are not read back."]
        if "math" in used:
            imports.insert(0, "import math")
        if "np" in used:
            imports.insert(0, "import numpy as np")
        helpers = sorted(n for n in runtime.__all__ if n in used)
        if helpers:
            imports.append(f"from srcgrad.runtime import {', '.join(helpers)}")
        if bindings:
            header.append(f"# Bound from {self.program.name}'s globals and closure when this was "
                          f"compiled: {', '.join(sorted(bindings))}.")
        source = "\n".join(header + imports) + "\n\n\n" + body
        return Generated(source, entries, bindings, self.program, self.wrt, self.program.free)


def _call(helper: str, *args):
    return gast.Call(func=ir.name(helper), args=list(args), keywords=[])


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


def _forward_reads(backward, program, sweep) -> set[str]:
    """Forward values (and tapes) the adjoint sweep reads."""
    forward = _forward_names(program, sweep)
    reads = set()
    for stmt in ir.walk_statements(backward):
        if isinstance(stmt, (gast.If, gast.While)):
            names = ir.names_in(stmt.test)
        elif isinstance(stmt, gast.For):
            names = ir.names_in(stmt.iter)
        else:
            names = ir.names_in(stmt.value if isinstance(stmt, gast.Assign) else stmt)
        reads.update(n for n in names if n in forward)
    return reads


def _ordered(names, program, sweep) -> list[str]:
    order = list(program.params)
    for stmt in ir.walk_statements(program.body):
        order.extend(ir.target_names(stmt))
    order.extend(sorted(sweep.tapes.values()))
    seen, result = set(), []
    for n in order:
        if n in names and n not in seen:
            seen.add(n)
            result.append(n)
    return result


def _names_used(source: str) -> set[str]:
    tree = gast.parse(source)
    return {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}


__all__ = ["Generated", "MODES", "Options", "POLICIES", "generate", "unparse"]
