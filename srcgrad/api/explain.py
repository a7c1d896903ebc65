"""``srcgrad.explain``: where the gradient flows, where it is cut, what is saved.

It runs the compiler's own passes up to its activity analysis
(:mod:`..analysis.activity`) on the normalised program and asks, for each
argument differentiated, whether a differentiable path leads from it to the
returned value.  Where none does, it names the statements that cut the flow:
those that read a value depending on the argument (*varied*) through an
operation no derivative passes -- a comparison, an int or bool cast
(``int(x)``, ``x.astype(int)``), a piecewise-constant function (``np.round``,
``np.floor``, ``np.sign``), ``srcgrad.stop_gradient`` -- and whose result
still reaches the output (or decides a branch).  An argument no such
statement reads is reported as never used, or read only after a ``return``.

It also lists what the forward sweep saves for the adjoint sweep (the
residuals of the split-mode forward function), each with the line that
computes it; given example arguments (``explain(f, x, y)``), each with its
size, largest first.

    >>> from .. import _doctest_helpers as h
    >>> report = explain(h.chain)
    >>> report.arguments[0].flows
    True
"""

from __future__ import annotations

import inspect
import linecache
import math
import operator
from dataclasses import dataclass

import gast

from .. import ir
from .. import pipeline as compiler
from ..analysis.activity import activity as find_activity
from ..analysis.activity import differentiable, integer_cast, operand_names
from ..errors import SrcGradError
from ..frontend.linker import Linker
from ..frontend.parse import parse_function
from ..ir.syntax import source_of
from ..memory.effects import hashable
from ..pipeline import Compilation, Options, prepare, run_passes
from ..rules import registry
from ..runtime import stop_gradient
from .arguments import function_of, normalize_wrt
from .report import saved as measure_saved
from .report import specialised


@dataclass(frozen=True)
class Cut:
    """A statement of the user's file where a value depending on the argument
    stops carrying a derivative."""

    filename: str
    lineno: int
    col: int
    expression: str     # the user's expression, as written
    kind: str           # "comparison", "int cast", "zero derivative", "stop_gradient", ...
    why: str            # one sentence: why no derivative passes

    def __str__(self):
        return f"line {self.lineno}: `{self.expression}` -- {self.why}"


@dataclass(frozen=True)
class ArgumentFlow:
    """One argument differentiated: ``flows`` when its gradient can be nonzero;
    otherwise ``status`` says why it is always zero and ``cuts`` where."""

    name: str
    position: int
    flows: bool
    status: str         # "flows", "cut", "dead" (used, but never reaches the output),
    #                     "unreachable" (read only after a return), "unused"
    cuts: tuple = ()    # the Cut statements, in source order
    uses: tuple = ()    # (lineno, expression): where it is read, for "dead" / "unreachable"
    message: str = ""

    def __str__(self):
        return self.message


@dataclass(frozen=True)
class Saved:
    """A value the forward sweep keeps for the adjoint sweep."""

    name: str
    kind: str           # "argument", "value", "tape", "other"
    lineno: int | None  # the line computing it (None: an argument, a tape)
    expression: str
    nbytes: int | None = None   # with example arguments only

    def __str__(self):
        where = f"line {self.lineno}: {self.expression}" if self.lineno else self.expression
        size = f" ({self.nbytes:,} bytes)" if self.nbytes is not None else ""
        return f"{self.name}{size} -- {where}"


class Explanation:
    """What :func:`explain` found; ``print`` it for a readable report.

    ``arguments``: one :class:`ArgumentFlow` per argument differentiated;
    ``zero``: the names of those whose gradient is structurally zero;
    ``saved``: the :class:`Saved` values of the forward sweep (largest first
    when example arguments gave their sizes)."""

    def __init__(self, function: str, filename: str, lineno: int, arguments, saved):
        self.function = function
        self.filename = filename
        self.lineno = lineno
        self.arguments = tuple(arguments)
        self.saved = tuple(saved)

    @property
    def zero(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arguments if not a.flows)

    def __getitem__(self, name: str) -> ArgumentFlow:
        for a in self.arguments:
            if a.name == name:
                return a
        raise KeyError(name)

    def __str__(self):
        lines = [f"gradient flow of {self.function} ({self.filename}, line {self.lineno}):"]
        for a in self.arguments:
            lines.append(f"  {a.name}: {a.message}")
            for cut in a.cuts:
                lines.append(f"      {self.filename}:{cut.lineno}: {cut.expression}")
                lines.append(f"        {cut.why}")
        if self.saved:
            sized = any(s.nbytes is not None for s in self.saved)
            lines.append(f"saved for the adjoint sweep{' (largest first)' if sized else ''}:")
            lines.extend(f"  {s}" for s in self.saved)
        else:
            lines.append("saved for the adjoint sweep: nothing")
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn, *args, wrt=0, policy="save") -> Explanation:
    """Explain the gradient flow of ``fn`` with respect to argument(s) ``wrt``
    (positions, as for :func:`grad`): which arguments' gradients are
    structurally zero and the statement (file, line, expression) that cuts
    each, and what the forward sweep saves under ``policy``.  With example
    arguments ``args``, the saved values come with their sizes."""
    fn = function_of(fn, "grad")
    positions, _ = normalize_wrt(wrt)
    func, receiver = fn, None
    if inspect.ismethod(fn):  # the instance is the first argument, wrt counts the others
        func, receiver = fn.__func__, type(fn.__self__)
        positions = tuple(p + 1 if p >= 0 else p for p in positions)
        args = (fn.__self__, *args) if args else args
    options = Options(mode="vjp", wrt=positions, single=False, policy=policy,
                      receiver=receiver)
    if args:  # specialised on them as grad's call is (review s37 R5-6)
        options = specialised(func, options, args)
    c = Compilation(options, Linker(options, prepare), fn=func, receiver=options.receiver,
                    floats=options.floats)  # (as pipeline.generate's)
    try:
        run_passes(c, last="activity")
    except SrcGradError as error:
        if args or not _specialising(func):
            raise
        raise _with_hint(error) from None
    program = c.program
    flows = [_flow(c, name, program.params.index(name)) for name in c.wrt_names]
    saved = _saved(func, options, program, args, positions)
    node = c.parsed.node
    return Explanation(program.name, program.filename, getattr(node, "lineno", 0), flows,
                       saved)


def _specialising(func) -> bool:
    """Whether ``func`` takes arguments a gradient's call would specialise on,
    which ``explain`` without example arguments cannot know."""
    try:
        return bool(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return False


def _with_hint(error: SrcGradError) -> SrcGradError:
    """``error`` (explain called without example arguments) saying that
    explain compiles as a gradient's call does when given them."""
    try:
        return type(error)(
            f"{error.message} (explain without example arguments compiles the function "
            f"alone; explain(f, *args) compiles it for what those arguments are -- their "
            f"classes, the functions and modules passed -- as grad(f)(*args) does)",
            filename=error.filename, lineno=error.lineno, col=error.col)
    except TypeError:
        return error


# -- the flow of one argument -------------------------------------------------------------

def _flow(c: Compilation, name: str, position: int) -> ArgumentFlow:
    program = c.program
    if name in c.act.useful:
        return ArgumentFlow(name, position, True, "flows",
                            message="flows: a differentiable path leads to the returned value")
    varied = find_activity(program, [name]).varied
    needed = _needed(program)
    cuts, dead = [], []
    for stmt in ir.walk_statements(program.body):
        op = getattr(stmt, "op", None)
        if op is None or not _reads(stmt) & varied:
            continue
        if differentiable(op) and not integer_cast(op, program.free) \
                and not set(ir.target_names(stmt)) & getattr(program, "neutral", set()):
            dead.append(op)
            continue
        if set(ir.target_names(stmt)) & needed:
            cut = _cut(op, program)
            if cut not in cuts:
                cuts.append(cut)
        else:
            dead.append(op)
    if cuts:
        cuts.sort(key=lambda k: (k.lineno, k.col))
        where = "; ".join(f"line {k.lineno} (`{k.expression}`, {k.kind})" for k in cuts)
        return ArgumentFlow(name, position, False, "cut", tuple(cuts),
                            message=f"gradient always zero: the flow is cut at {where}")
    uses = tuple(sorted({(_line(op.node), _expression(op.node)) for op in dead}))
    if uses:
        listed = ", ".join(f"line {n} (`{e}`)" for n, e in uses)
        return ArgumentFlow(name, position, False, "dead", uses=uses,
                            message=f"gradient always zero: used at {listed}, but nothing "
                                    f"computed from it reaches the returned value")
    after = _after_return(parse_function(c.fn).node, name)  # normalize rewrote c.parsed
    if after:
        listed = ", ".join(f"line {n}" for n, _ in after)
        return ArgumentFlow(name, position, False, "unreachable", uses=tuple(after),
                            message=f"gradient always zero: read only at {listed}, after a "
                                    f"return (line {after[0][1]}) that always happens first")
    return ArgumentFlow(name, position, False, "unused",
                        message="gradient always zero: the function never uses it")


def _needed(program) -> set[str]:
    """Names the returned value depends on by any operation, derivative or not,
    and the conditions of branches and loops (which decide what is returned)."""
    needed = set(ir.names_in(program.output))
    for stmt in ir.walk_statements(program.body):
        if isinstance(stmt, (gast.If, gast.While)):
            needed.update(ir.names_in(stmt.test))
        elif isinstance(stmt, gast.For):
            needed.update(ir.names_in(stmt.iter))
    statements = [s for s in ir.walk_statements(program.body) if getattr(s, "op", None)]
    changed = True
    while changed:
        changed = False
        for stmt in reversed(statements):
            if set(ir.target_names(stmt)) & needed:
                reads = _reads(stmt) - needed
                if reads:
                    needed |= reads
                    changed = True
    return needed


def _reads(stmt) -> set[str]:
    """What a statement reads: an operation's operands, or, for an expression kept
    whole (a comparison, ``and``/``or``), every name in it."""
    if stmt.op.primitive is ir.OPAQUE:
        value = getattr(stmt, "value", None)
        return set(ir.names_in(value)) if value is not None else set()
    return set(operand_names(stmt.op))


_INT_CASTS = {int: "int cast", bool: "bool cast", round: "int cast", math.floor: "int cast",
              math.ceil: "int cast", math.trunc: "int cast", operator.floordiv: "floor division"}


def _cut(op, program) -> Cut:
    node = op.node
    prim = op.primitive
    expression = _expression(node)
    if prim is ir.OPAQUE or isinstance(node, (gast.Compare, gast.BoolOp)):
        if isinstance(node, gast.Compare):
            kind, why = "comparison", "a comparison is True or False: no derivative passes"
        elif isinstance(node, gast.BoolOp):
            kind, why = "boolean operator", "and/or select a value by truth: no derivative"
        else:
            kind, why = "not differentiated", "srcgrad keeps this expression whole and " \
                                              "never differentiates it"
    elif prim is stop_gradient:
        kind, why = "stop_gradient", "srcgrad.stop_gradient passes the value, not the gradient"
    elif integer_cast(op, program.free):
        kind, why = "int cast", "a cast to an integer or bool dtype is piecewise constant: " \
                                "its derivative is zero"
    elif hashable(prim) and prim in _INT_CASTS:
        kind = _INT_CASTS[prim]
        why = f"{registry.display_name(prim)}(...) is piecewise constant: its derivative is zero"
    elif registry.is_nondifferentiable(prim):
        kind = "zero derivative"
        why = f"{registry.display_name(prim)} is piecewise constant or integer-valued: " \
              f"its derivative is zero wherever it is defined"
    else:
        kind, why = "not differentiated", "no derivative passes this operation"
    return Cut(program.filename, _line(node), getattr(node, "col_offset", 0) or 0,
               expression, kind, why)


def _line(node) -> int:
    return getattr(node, "lineno", 0) or 0


def _expression(node) -> str:
    try:
        return source_of(node).strip()
    except Exception:  # noqa: BLE001 - a node source_of cannot print: its line instead
        return type(node).__name__


def _after_return(node, name) -> list[tuple[int, int]]:
    """``(line of a read of name, line of the return before it)`` for every read
    of ``name`` in the user's definition that follows a return always taken."""
    found = []

    def block(stmts, returned):
        for stmt in stmts:
            if returned is not None:
                found.extend((_line(n), returned) for n in gast.walk(stmt)
                             if isinstance(n, gast.Name) and n.id == name
                             and isinstance(n.ctx, gast.Load))
                continue
            if isinstance(stmt, gast.Return):
                returned = _line(stmt) or _line(stmt.value)
            elif isinstance(stmt, gast.If):
                a, b = block(stmt.body, None), block(stmt.orelse, None)
                if a is not None and b is not None:
                    returned = _line(stmt) or _line(stmt.value)
            elif isinstance(stmt, (gast.For, gast.While)):
                block(stmt.body, None)
                block(stmt.orelse, None)
        return returned

    block(node.body, None)
    return sorted(set(found))


# -- what the forward sweep saves -----------------------------------------------------------

def _saved(fn, options, program, args, positions) -> list[Saved]:
    try:
        generated = compiler.generate(fn, options)
    except Exception:  # noqa: BLE001 - the flow report stands without the saves
        return []
    params = set(program.params)
    defining = {}
    for stmt in ir.walk_statements(generated.program.body):
        op = getattr(stmt, "op", None)
        for target in ir.target_names(stmt):
            if op is not None and target not in defining:
                defining[target] = op.node
    found = []
    for name in generated.residuals:
        if name in params:
            found.append(Saved(name, "argument", None, f"argument {name}"))
        elif name in defining:
            node = defining[name]
            line = _line(node)
            text = linecache.getline(program.filename, line).strip() if line else ""
            found.append(Saved(name, "value", line or None, text or _expression(node)))
        elif name.endswith("_tape"):
            found.append(Saved(name, "tape", None, f"tape of {name[:-5]} (one entry per "
                                                   f"loop iteration)"))
        else:
            found.append(Saved(name, "other", None, name))
    if args:
        sizes = {v.name: v.nbytes for v in measure_saved(fn, *args, wrt=positions,
                                                         policy=options.policy)}
        found = [Saved(s.name, s.kind, s.lineno, s.expression, sizes.get(s.name))
                 for s in found]
        found.sort(key=lambda s: -(s.nbytes or 0))
    return found


__all__ = ["ArgumentFlow", "Cut", "Explanation", "Saved", "explain"]
