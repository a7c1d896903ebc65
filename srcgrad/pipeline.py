"""The compiler driver: runs the passes and assembles the generated module.

``generate(fn, options)`` goes frontend -> fence -> normalize -> analyze ->
reverse -> optimize -> emit for ``fn`` and, through the :class:`~.linker.Linker`,
for every user function its differentiated code calls, and returns one module
with all of them, together with what it needs at run time (the names it binds
from the user's globals).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field, replace

from . import ir
from .ad.forward import tangent_source
from .ad.reverse import check_wrt
from .analysis.aliasing import check_aliases, copy_updated_attributes
from .assemble import Assembler
from .errors import SrcGradError
from .frontend import fence
from .frontend.linker import Linker, TangentFunction
from .frontend.parse import parse_function
from .normalize.normalizer import normalize
from .normalize.sequences import type_sequence_operators
from .optimize.simplify import simplify

MODES = ("grad", "value_and_grad", "vjp", "jvp", "tangent")
POLICIES = ("save", "recompute", "save_products", "sqrt", "revolve")


@dataclass(frozen=True)
class Options:
    """Everything besides the function that determines the generated code."""

    mode: str = "grad"
    wrt: tuple = (0,)
    single: bool = True          # wrt was an int: return one gradient, not a tuple
    policy: str = "save"
    optimize: bool = True
    receiver: type | None = None  # the class of the first argument, for methods
    floats: tuple = ()           # positions of arguments known to be Python floats


@dataclass
class Generated:
    """A generated module: its source, entry points and run-time bindings."""

    source: str
    entries: tuple[str, ...]
    bindings: dict[str, object]               # free names injected before exec
    program: ir.Program
    wrt_names: list[str]
    free: dict[str, object] = field(default_factory=dict)   # what the code depends on
    residuals: tuple[str, ...] = ()           # split mode: what the forward function saves


def validate_options(options: Options) -> None:
    if options.mode not in MODES:
        raise SrcGradError(f"unknown mode {options.mode!r}; expected one of {MODES}")
    policy = options.policy
    if callable(policy):
        return
    if isinstance(policy, tuple) and len(policy) == 2 and policy[0] == "revolve" \
            and isinstance(policy[1], int) and policy[1] >= 1:
        return
    if policy not in POLICIES or policy == "revolve":
        raise SrcGradError(
            f"unknown policy {policy!r}: use one of 'save', 'recompute', 'save_products', "
            f"'sqrt', ('revolve', snapshots) or a callable deciding per value")


def prepare(fn, receiver=None, callee=False, floats=()) -> ir.Program:
    """Frontend, fence, normalisation and checks: ``fn`` as a program.

    ``receiver`` is the class of the first parameter of a method (``self``);
    ``callee`` marks a function called from differentiated code; ``floats`` are
    the positions of parameters known to be Python floats (code specialised for
    them: ``s += 1.0`` on a float rebinds, it updates nothing in place)."""
    parsed = parse_function(fn)
    fence.check(parsed.node, parsed.filename, callee=callee)
    program = normalize(parsed, receiver)
    program.float_params = {program.params[i] for i in floats if i < len(program.params)}
    type_sequence_operators(program)
    simplify(program)
    check_aliases(program)
    copy_updated_attributes(program)
    return program


def generate(fn, options: Options) -> Generated:
    """Differentiate ``fn`` (and the functions it calls) into one module.

    The cyclic garbage collector is paused meanwhile: compiling makes some
    hundred thousand small tree nodes, none of them in reference cycles, and
    the collections they would trigger (each walking every object the process
    holds) took a third of the time of a 100-line function's compilation."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _generate(fn, options)
    finally:
        if paused:
            gc.enable()


def _generate(fn, options: Options) -> Generated:
    validate_options(options)
    # code specialised for Python-float arguments: scalars, whatever else they meet
    program = prepare(fn, options.receiver, floats=options.floats)
    wrt_names = check_wrt(program, options.wrt)
    linker = Linker(options, prepare)
    linker.adopt(program)
    residuals = ()
    if options.mode in ("jvp", "tangent"):  # "tangent": the tangent alone, no value
        name = linker.global_name(f"{options.mode}_{program.name}")
        functions = [tangent_source(program, wrt_names, linker, name,
                                    value=options.mode == "jvp")]
        entries = (name,)
    else:
        main = Assembler(program, options, wrt_names, linker)
        functions, entries = main.run()
        residuals = tuple(getattr(main, "residual_names", ()))
    linker.add(functions)
    split = replace(options, mode="vjp", single=False, receiver=None)

    def build(callee, requested, wrt):
        if isinstance(requested, TangentFunction):
            return [tangent_source(callee, wrt, linker, requested.name)], (requested.name,)
        names = (requested.forward, requested.backward)
        return Assembler(callee, split, wrt, linker).split(names)

    linker.finish(build)
    source, bindings = linker.module(program)
    return Generated(source, entries, bindings, program, wrt_names, linker.free, residuals)


__all__ = ["Generated", "MODES", "Options", "POLICIES", "generate", "prepare"]
