"""Reverse mode: the adjoint sweep of a program in A-normal form.

Statements are visited last to first.  Each active statement's rule is inlined
(:mod:`.inline`) and its contributions are accumulated into the cotangents of
its operands: the first contribution to ``x`` is assigned (``d_x = ...``), later
ones are added (``d_x = d_x + ...``), so there are no zero-initialised
accumulators.  Every generated statement remembers which primitive's rule it
came from (``stmt.origin``), which is how the emitter can say, at each saved
value, who reads it.

    >>> import numpy as np
    >>> def f(x, y):
    ...     z = np.sin(x) * y
    ...     return np.sum(z)
    >>> from .frontend import parse_function
    >>> from .normalize import normalize
    >>> from .analyze import activity
    >>> program = normalize(parse_function(f))
    >>> sweep = reverse(program, ["x"], activity(program, ["x"]), bound={"t2": "d_t2"})
    >>> print(show_statements(sweep.statements))
    d_z = unreduce(d_t2, z)
    d_t1 = unbroadcast(d_z * y, t1)
    d_x = d_t1 * np.cos(x)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from . import ir
from .analyze import Activity, shape_classes
from .errors import MissingRuleError, NonDifferentiableError
from .inline import inline, show
from .rules import registry


@dataclass
class Sweep:
    """The adjoint sweep: statements, and the cotangent variable of each primal."""

    statements: list = field(default_factory=list)
    adjoints: dict[str, str] = field(default_factory=dict)


def show_statements(stmts) -> str:
    return "\n".join(show(s) for s in stmts)


def reverse(program: ir.Program, wrt: list[str], act: Activity, seed=(), bound=None) -> Sweep:
    """Build the adjoint sweep of ``program``.

    ``bound`` maps output variables to names that already hold their cotangents
    (a parameter of a backward function); ``seed`` lists further output
    cotangents as ``(variable, expression)`` pairs.
    """
    sweep = Sweep(adjoints=dict(bound or {}))
    namer = program.namer
    classes = shape_classes(program)
    for stmt in program.body:  # report the first missing rule in program order
        op = getattr(stmt, "op", None)
        if op is not None and any(act.is_active(t) for t in ir.target_names(stmt)) \
                and registry.lookup(op.primitive) is None:
            raise _missing_rule(program, op)
    for var, expr in seed:
        if act.is_active(var):
            _accumulate(sweep, namer, var, expr, "output")
    for stmt in reversed(program.body):
        op = getattr(stmt, "op", None)
        targets = ir.target_names(stmt)
        if op is None or not any(act.is_active(t) for t in targets):
            continue
        rule = registry.lookup(op.primitive)
        if rule is None:
            raise _missing_rule(program, op)
        target = stmt.targets[0]
        if isinstance(target, gast.Tuple):
            out = gast.Tuple(elts=[ir.name(t) for t in targets], ctx=gast.Load())
            d_out = gast.Tuple(elts=[_cotangent(sweep, t) for t in targets], ctx=gast.Load())
        else:
            out, d_out = ir.name(targets[0]), _cotangent(sweep, targets[0])
        done = inline(rule, op, out, d_out, namer, wanted=act.is_active,
                      shape_class=lambda n: classes.get(n, n), filename=program.filename)
        for s in done.statements:
            s.origin = op.label
            sweep.statements.append(s)
        for var, expr in done.contributions:
            _accumulate(sweep, namer, var, expr, op.label)
    return sweep


def _cotangent(sweep: Sweep, var: str):
    if var in sweep.adjoints:
        return ir.name(sweep.adjoints[var])
    return gast.Constant(value=0.0, kind=None)


def _accumulate(sweep: Sweep, namer, var: str, expr, origin: str) -> None:
    if var in sweep.adjoints:
        name = sweep.adjoints[var]
        value = gast.BinOp(left=ir.name(name), op=gast.Add(), right=expr)
    else:
        name = namer.adjoint(var)
        sweep.adjoints[var] = name
        value = expr
    stmt = ir.assign(name, value)
    stmt.origin = origin
    sweep.statements.append(stmt)


def _missing_rule(program, op) -> MissingRuleError:
    prim = op.primitive
    if isinstance(prim, ir.UnknownMember) or op.label.startswith("."):
        what = f"the {'method' if op.label.endswith('()') else 'attribute'} '{op.label}'"
    else:
        what = f"'{registry.display_name(prim)}'"
    return MissingRuleError(
        f"no adjoint rule for {what}, and a value being differentiated flows into it "
        f"(wrap the value in srcgrad.stop_gradient if no gradient should flow there)",
        filename=program.filename, lineno=getattr(op.node, "lineno", None),
        col=getattr(op.node, "col_offset", None))


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
