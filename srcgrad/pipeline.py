"""The compiler: every pass, in order, in one function (:func:`passes`).

A function goes through the passes as a :class:`Compilation`, which holds
what they have made so far: the parsed definition, the program in A-normal
form, the two sweeps, the functions put together, their source, the module.
Each pass is a method of it, named as the list names it, that calls the
module doing the work (its docstring says which).  The list runs the
frontend and checks (the part :func:`prepare` runs, for the entry function
and for every user function it calls), then forward mode's tangent sweep or
reverse mode's sweeps, saves and assembly, then the link, which compiles
each function called with the same list, from ``tangent`` or ``activity`` to
``emit``.

``generate(fn, options, dump_after=NAME)`` stops after the pass ``NAME`` and
returns the code as it stands (``srcgrad show --after NAME`` prints it).
Before: the program once normalised; after: every pass.

    >>> from . import _doctest_helpers as h
    >>> print(generate(h.chain, Options(), dump_after="normalize"), end="")
    def chain(x):
        t1 = np.sin(x)
        t2 = np.exp(t1)
        t3 = np.sum(t2)
        return t3
    >>> source = generate(h.chain, Options()).source
    >>> print(source[source.index("    # Forward"):], end="")
        # Forward sweep
        # save: argument x (read by the adjoint sweep)
        t2 = into_operand(np.exp, np.sin(x))  # save: t2 (read by the adjoint of np.exp)
        t3 = np.sum(t2)
    <BLANKLINE>
        # Adjoint sweep
        d_t3 = grad_seed(t3)
        d_t2 = unreduced(d_t3, x)  # t2 has the shape of x
        d_x = into_first(np.multiply, d_t2 * t2, np.cos(x))  # d_t2 * t2 * np.cos(x), written into the new array of d_t2 * t2
        return grad_like(d_x, x)
    >>> generate(h.chain, Options(), dump_after="optimise")
    Traceback (most recent call last):
    srcgrad.errors.SrcGradError: unknown pass 'optimise'; the passes, in order: parse, fence, ...
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field, replace

import gast

from . import ir
from .ad.anomaly import check_cotangents
from .ad.calls import split_calls as split_user_calls
from .ad.forward import tangent_doc, tangent_sweep
from .ad.reverse import check_wrt
from .ad.reverse import reverse as reverse_sweep
from .analysis.activity import SCALAR, has_effect, shape_classes
from .analysis.activity import activity as find_activity
from .analysis.aliasing import check_aliases, copy_updated_attributes, shared_names
from .analysis.inplace import keep_in_place_types
from .analysis.list_extends import append_in_place
from .analysis.sparse_operands import check as check_sparse_operands
from .assemble import Assembler, Function
from .errors import NonDifferentiableError, SrcGradError
from .frontend.fence import check as check_supported
from .frontend.linker import Linker, TangentFunction
from .frontend.parse import parse_function
from .ir.emit import block_lines
from .ir.syntax import source_of, walk
from .memory.checkpointing import checkpoint_loops, loop_policy
from .memory.indexed_tapes import index_tapes
from .memory.release import release_unread
from .memory.release_read import release_read
from .memory.remat import annotate_saves, decider, rematerialize
from .memory.stale_views import refuse_rebound_globals
from .memory.tapes import insert_pushes
from .normalize.attribute_reads import type_attribute_reads
from .normalize.dict_merges import type_dict_merges
from .normalize.method_receivers import check_method_receivers
from .normalize.module_parameters import show_parameters
from .normalize.normalizer import normalize as a_normal_form
from .normalize.sequences import type_sequence_operators
from .optimize.accumulate import accumulate_in_place
from .optimize.batched_steps import batch_step_terms
from .optimize.bind_functions import bind_loop_functions
from .optimize.broadcast import retarget_shape_reads
from .optimize.dce import drop_zero_starts, eliminate_dead, propagate_copies
from .optimize.elementwise_seed import seed_without_elementwise
from .optimize.float_returns import return_floats
from .optimize.forward_dots import dot_forward_products
from .optimize.fold import fold_temporaries as fold_single_use
from .optimize.hoist_products import hoist_step_products
from .optimize.inplace_adjoint import forward_values, steady_classes, update_in_place
from .optimize.loop_products import products_after_loops
from .optimize.owned_lists import pop_in_place
from .optimize.signs import carry_signs
from .optimize.simplify import simplify as simplify_operations
from .optimize.steady_loops import steady_adjoint_loops
from .optimize.step_cotangents import write_step_cotangents
from .optimize.step_operands import stack_step_operands
from .optimize.steady_products import dot_products
from .optimize.summed_products import seed_without_product, sum_products
from .optimize.unit_seed import seed_products
from .options import FORWARD_MODES, JOINT_MODES, MODES, POLICIES, Options, validate_options

#: Whether the reverse sweep's steady loops run without their helpers' shape checks
#: (optimize/steady_loops.py); a switch to compare the pass against the loop as it was.
STEADY_LOOPS = True


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
    zero_gradients: tuple[str, ...] = ()      # wrt parameters no derivative reaches


#: Every pass name, in pipeline order, with what the pass does (its first doc line).
PASSES: dict[str, str] = {}


def compiler_pass(method):
    """Register a method of :class:`Compilation` as a pass (in definition order,
    which is the order of :func:`passes`)."""
    PASSES[method.__name__] = method.__doc__.split("\n")[0]
    return method


def passes(c: Compilation, run) -> None:
    """The compiler, every pass in order: ``run(pass_)`` applies one to ``c``."""
    o = c.options
    run(c.parse)                      # frontend/parse.py
    run(c.fence)                      # frontend/fence.py
    run(c.normalize)                  # normalize/normalizer.py
    run(c.sequences)                  # normalize/sequences.py
    run(c.simplify)                   # optimize/simplify.py
    run(c.in_place)                   # analysis/inplace.py
    run(c.aliases)                    # analysis/aliasing.py
    run(c.list_extends)               # analysis/list_extends.py
    run(c.attribute_copies)           # analysis/aliasing.py
    run(c.wrt)                        # ad/reverse.py
    run(c.adopt)                      # frontend/linker.py
    if o.mode in FORWARD_MODES:
        run(c.tangent)                # ad/forward.py
        run(c.tangent_dce)            # optimize/dce.py
        run(c.tangent_assemble)       # assemble.py
    else:
        run(c.activity)               # analysis/activity.py
        run(c.split_calls)            # ad/calls.py
        run(c.seed)                   # assemble.py
        run(c.reverse)                # ad/reverse.py
        if o.optimize:
            run(c.broadcast)          # optimize/broadcast.py
            run(c.summed_products)    # optimize/summed_products.py
        run(c.remat)                  # memory/remat.py
        if o.optimize:
            run(c.copies)             # optimize/dce.py
        if o.optimize and o.backend == "numpy" and not loop_policy(o.policy):
            run(c.loop_products)      # optimize/loop_products.py
        run(c.dce)                    # optimize/dce.py
        if o.optimize:
            run(c.accumulate)         # optimize/accumulate.py
        run(c.tapes)                  # memory/tapes.py
        if loop_policy(o.policy):
            run(c.checkpointing)      # memory/checkpointing.py
        if o.optimize and o.backend == "numpy":
            run(c.hoist_products)     # optimize/hoist_products.py
        run(c.forward_dce)            # optimize/dce.py
        if o.optimize and o.backend == "numpy" and not loop_policy(o.policy):
            run(c.indexed_tapes)      # memory/indexed_tapes.py
            run(c.steady_loops)       # optimize/steady_loops.py
            run(c.batched_steps)      # optimize/batched_steps.py
            run(c.step_operands)      # optimize/step_operands.py
            run(c.step_cotangents)    # optimize/step_cotangents.py
        if o.optimize and o.backend == "numpy":
            run(c.forward_dots)       # optimize/forward_dots.py
        run(c.assemble)               # assemble.py
        run(c.annotate)               # memory/remat.py
        if o.optimize:
            run(c.fold_temporaries)   # optimize/fold.py
            run(c.signs)              # optimize/signs.py
        if o.optimize and o.backend == "numpy":
            run(c.inplace_adjoint)    # optimize/inplace_adjoint.py
            run(c.seed_products)      # optimize/unit_seed.py
            run(c.steady_products)    # optimize/steady_products.py
        if o.optimize and o.mode in JOINT_MODES:
            run(c.release)            # memory/release.py
        if o.optimize and o.backend == "numpy":
            run(c.bind_functions)     # optimize/bind_functions.py
        if o.optimize and o.backend == "numpy" and o.mode in JOINT_MODES:
            run(c.float_returns)      # optimize/float_returns.py
        if o.optimize:
            run(c.owned_lists)        # optimize/owned_lists.py
        if o.check_finite:
            run(c.anomaly)            # ad/anomaly.py
    run(c.emit)                       # ir/emit.py
    run(c.link)                       # frontend/linker.py


def _check_constant_output(program, options) -> None:
    """grad of a function that returns None (its ``return`` forgotten) or a
    string: a located error, not an all-zero gradient."""
    output = program.output
    if options.mode not in ("grad", "value_and_grad") or type(output) is not gast.Constant \
            or not (output.value is None or isinstance(output.value, (str, bytes))):
        return
    where = program.output_node if getattr(program.output_node, "lineno", None) else program.node
    what = "None (is its return statement missing?)" if output.value is None \
        else f"the {type(output.value).__name__} {output.value!r}"
    raise NonDifferentiableError(
        f"grad needs a function with a scalar output, but {program.node.name} returns {what}; "
        f"return the number to differentiate", filename=program.filename,
        lineno=where.lineno, col=getattr(where, "col_offset", 0))


class Compilation:
    """One function on its way through the passes, and the passes themselves.

    The entry function starts from ``fn``; a user function it calls starts
    from its ``program``, prepared when the linker was asked for it, with the
    ``wrt`` parameter names and the function ``names`` the linker chose."""

    def __init__(self, options: Options, linker, *, fn=None, program=None, wrt=None,
                 names=None, callee=False, receiver=None, floats=()):
        self.options, self.linker, self.fn = options, linker, fn
        self.callee, self.receiver, self.floats = callee, receiver, floats
        self.program, self.wrt_names, self.names = program, wrt, names
        self.notes: list[str] = []   # what the last pass found, shown above its dump
        self.parsed = self.act = self.classes = self.assembler = self.sweep = self.made = None
        self.seeds, self.bound, self.split = [], {}, True
        self.backward = self.result = self.forward = None
        self.tape_setup: list = []   # the statements creating the tapes
        self.extra: list[str] = []
        self.minus: dict[str, str] = {}   # optimize/signs.py: minus_ name -> the name it replaced
        self.reads: set[str] = set()
        self.functions = self.sources = self.module = None
        self.used: set[str] = set()   # the names the sources write (emit)
        self.entries: tuple[str, ...] = ()

    # -- frontend/, normalize/, analysis/: the function as a program -------------------------
    @compiler_pass
    def parse(self):
        """Find the source, parse it, resolve the free names (frontend/parse.py)."""
        self.parsed = parse_function(self.fn)

    @compiler_pass
    def fence(self):
        """Reject unsupported syntax, with its location (frontend/fence.py)."""
        check_supported(self.parsed.node, self.parsed.filename, callee=self.callee)
        self.notes = ["every construct is supported"]

    @compiler_pass
    def normalize(self):
        """Desugar into A-normal form, one operation per statement (normalize/normalizer.py)."""
        self.parsed.called = self.callee  # its updates through a view of an argument are checked
        # the lists passed: xs + ys of them concatenates (normalize/scan_sequences.py)
        self.parsed.sequence_params = () if self.callee else tuple(
            a.id for i, a in enumerate(self.parsed.node.args.args) if i in self.options.sequences)
        # the arguments differentiated that are no Python float, list, tuple or
        # user object: arrays (an int is refused there), so x * [a, b] is
        # NumPy's product (normalize/array_operands.py)
        self.parsed.array_params = () if self.callee else tuple(
            a.id for i, a in enumerate(self.parsed.node.args.args)
            if i in self.options.wrt and i not in self.floats and i not in self.options.sequences
            and i not in self.options.objects and i not in self.options.ints)
        self.program = a_normal_form(self.parsed, self.receiver, self.options.callees,
                                     () if self.callee else self.options.object_classes)
        self.program.errstate = self.parsed.errstate
        params = self.program.params
        self.program.float_params = {params[i] for i in self.floats if i < len(params)}
        self.program.int_params = set() if self.callee else {
            params[i] for i in self.options.ints if i < len(params)}
        # p.T, p.shape of a user object are its fields (normalize/attribute_reads.py)
        objects = set() if self.callee else {params[i] for i in self.options.objects
                                             if i < len(params)}
        # lists and tuples passed (ws * 2 repeats them: normalize/sequences.py)
        self.program.sequence_params = set() if self.callee else {
            params[i] for i in self.options.sequences if i < len(params)}
        type_attribute_reads(self.program, objects | set(params[:self.receiver is not None]),
                             entry=not self.callee)
        # m.dot(x) of a helper's result: refused as it runs where m has its own dot
        check_method_receivers(self.program, objects | set(params[:self.receiver is not None]),
                               entry=not self.callee, module=getattr(self.fn, "__globals__", None))
        type_dict_merges(self.program)  # a | b of dicts (normalize/dict_merges.py)

    @compiler_pass
    def sequences(self):
        """Give + and * on tuples and lists the sequence rules (normalize/sequences.py)."""
        type_sequence_operators(self.program)

    @compiler_pass
    def simplify(self):
        """Differentiate operations in a cheaper form (x * x as x ** 2) (optimize/simplify.py)."""
        simplify_operations(self.program)

    @compiler_pass
    def in_place(self):
        """Keep an array's type and dtype where x += v updates it (analysis/inplace.py)."""
        keep_in_place_types(self.program)

    @compiler_pass
    def aliases(self):
        """Refuse or guard updates seen through an alias (analysis/aliasing.py)."""
        check_aliases(self.program)

    @compiler_pass
    def list_extends(self):
        """Append in place where ys += [v] extends a local list (analysis/list_extends.py)."""
        append_in_place(self.program)

    @compiler_pass
    def attribute_copies(self):
        """Copy an attribute the function updates in place (analysis/aliasing.py)."""
        copy_updated_attributes(self.program)

    @compiler_pass
    def wrt(self):
        """Name the parameters to differentiate (ad/reverse.py)."""
        self.wrt_names = check_wrt(self.program, self.options.wrt)
        self.notes = [f"with respect to {', '.join(self.wrt_names)}"]

    @compiler_pass
    def adopt(self):
        """Join the free names to the module's, renaming clashes (frontend/linker.py)."""
        self.linker.adopt(self.program)

    # -- forward mode ------------------------------------------------------------------------
    @compiler_pass
    def tangent(self):
        """Forward mode: a tangent statement after each statement (ad/forward.py)."""
        refuse_rebound_globals(self.program)  # tick() with global T: memory/stale_views.py
        check_sparse_operands(self.program, lambda: find_activity(self.program, self.wrt_names),
                              () if self.callee else self.options.sparse)
        self.made, self.result = tangent_sweep(self.program, self.wrt_names, self.linker,
                                               value=self.options.mode == "jvp")
        self.forward = self.made.body

    @compiler_pass
    def tangent_dce(self):
        """Remove what the value and its tangent do not read (optimize/dce.py)."""
        self.forward = eliminate_dead(self.forward, set(ir.names_in(self.result)),
                                      keep=has_effect)

    @compiler_pass
    def tangent_assemble(self):
        """Put the tangent function together: parameters, docstring, return (assemble.py)."""
        p, mode = self.program, self.options.mode
        name = self.names[0] if self.names else self.linker.global_name(f"{mode}_{p.name}")
        doc = tangent_doc(p, self.wrt_names, self.made.tangent_params, value=mode == "jvp")
        self.functions = [Function(name, [*p.params, *self.made.tangent_params], [],
                                   self.forward + [gast.Return(value=self.result)], doc)]
        self.entries = (name,)

    # -- reverse mode: the adjoint sweep -----------------------------------------------------
    @compiler_pass
    def activity(self):
        """Find the values that depend on wrt and reach the output (analysis/activity.py)."""
        self.act = find_activity(self.program, self.wrt_names)
        check_sparse_operands(self.program, self.act,  # x * L, L a scipy.sparse matrix
                              () if self.callee else self.options.sparse)
        self.classes = shape_classes(self.program)
        self.notes = [f"active: {', '.join(sorted(self.act.active)) or 'nothing'}"]

    @compiler_pass
    def split_calls(self):
        """Call user functions through their forward/backward pairs (ad/calls.py)."""
        self.split = split_user_calls(self.program, self.act, self.linker)

    @compiler_pass
    def seed(self):
        """Start the adjoint sweep from the output's cotangent (assemble.py)."""
        _check_constant_output(self.program, self.options)
        self.assembler = Assembler(self.program, self.options, self.wrt_names, self.linker,
                                   self.names)
        self.backward, self.seeds, self.bound = self.assembler.seed(self.act)
        if self.bound:
            self.notes = [f"cotangent of {v}: {d}" for v, d in sorted(self.bound.items())]

    @compiler_pass
    def reverse(self):
        """Inline the adjoint rules, last statement first (ad/reverse.py)."""
        # the shape classes activity found hold unless a call was split since
        self.sweep = reverse_sweep(self.program, self.wrt_names, self.act, seed=self.seeds,
                                   bound=self.bound, classes=None if self.split else self.classes)
        self.result = self.assembler.returned(self.sweep)
        self.backward = self.backward + self.sweep.statements

    @compiler_pass
    def broadcast(self):
        """Read shapes from arguments instead of saved values (optimize/broadcast.py)."""
        self.backward = retarget_shape_reads(self.backward, self.program, self.classes)

    @compiler_pass
    def summed_products(self):
        """Sum the operands of a product summed whole, not multiply (optimize/summed_products.py)."""
        self.backward = sum_products(self.backward, self.program)
        if self.options.mode == "grad":  # the value is read for the seed alone
            self.backward = seed_without_product(self.backward, self.program)
            self.backward = seed_without_elementwise(self.backward, self.program)

    @compiler_pass
    def remat(self):
        """Recompute, in the adjoint sweep, what the policy says not to save (memory/remat.py)."""
        self.backward = rematerialize(self.program, self.backward, decider(self.options.policy))

    @compiler_pass
    def copies(self):
        """Propagate copies and start sums from their first term (optimize/dce.py)."""
        self.backward = propagate_copies(drop_zero_starts(self.backward))

    @compiler_pass
    def loop_products(self):
        """Add a weight's per-step products after its loop, as one product (optimize/loop_products.py)."""
        p = self.program
        stored = {n for stmt in ir.walk_statements(p.body) for n in ir.assigned_by(stmt)}
        stored |= {n for stmt in ir.walk_statements(self.backward) for n in ir.assigned_by(stmt)}
        rows = [n for n in p.params if n not in stored]
        bound = set(p.params) | {n for stmt in p.body if not isinstance(stmt, (gast.If, gast.For,
                                 gast.While)) for n in ir.assigned_by(stmt)}
        self.backward = products_after_loops(self.backward, rows, p.namer, bound)

    @compiler_pass
    def dce(self):
        """Remove what nothing reads from the adjoint sweep (optimize/dce.py)."""
        shared = shared_names(self.program)
        # a checkpointed loop runs again in the adjoint sweep, reading what it read
        # then: a later overwrite of one of those names must be undone before it
        rerun = _read_in_loops(self.program.body) if loop_policy(self.options.policy) else set()

        def keep(stmt):
            targets = set(ir.target_names(stmt))
            if ir.is_update(stmt) and targets & shared:  # restoring an array a view reads
                return True
            return getattr(stmt, "restores", None) is not None and bool(targets & rerun)
        self.backward = eliminate_dead(self.backward, set(ir.names_in(self.result)), keep)

    @compiler_pass
    def accumulate(self):
        """Add indexing adjoints into one cotangent buffer, in place (optimize/accumulate.py)."""
        self.backward = accumulate_in_place(self.backward)

    # -- the saves and the forward sweep -----------------------------------------------------
    @compiler_pass
    def tapes(self):
        """Push, before each overwrite, what the adjoint sweep restores (memory/tapes.py)."""
        self.forward, self.tape_setup = insert_pushes(
            self.program.body, self.backward, self.sweep.tapes, defined=self.program.params,
            user_names=self.program.namer.user_names)

    @compiler_pass
    def checkpointing(self):
        """Rerun loops from a few saved states instead of taping (memory/checkpointing.py)."""
        self.extra = checkpoint_loops(self.forward, self.backward, self.options.policy,
                                      self.program.namer, defined=self.program.params,
                                      free=self.program.free, filename=self.program.filename,
                                      plain=(*getattr(self.parsed, "array_params", ()),
                                             *self.program.float_params,
                                             *getattr(self.program, "int_params", ())))

    @compiler_pass
    def hoist_products(self):
        """Make a loop's products of argument rows and a fixed matrix before it (optimize/hoist_products.py)."""
        self.forward = hoist_step_products(self.forward, self.program.params, self.program.namer)

    @compiler_pass
    def forward_dce(self):
        """Remove from the forward sweep what neither sweep reads (optimize/dce.py)."""
        self.reads = self.assembler.reads(self.backward, self.sweep, self.result, self.extra)
        # grad returns no value: its seed reads the output (all of it, unless
        # summed_products gave the seed another source)
        output = set() if self.options.mode == "grad" else set(ir.names_in(self.program.output))
        live = output | self.reads
        self.forward = self.tape_setup + eliminate_dead(self.forward, live, has_effect)
        self.tape_setup = []

    @compiler_pass
    def indexed_tapes(self):
        """Write and read the tapes of a loop over range(n) by its index (memory/indexed_tapes.py)."""
        self.forward, self.backward = index_tapes(self.forward, self.backward,
                                                  set(self.sweep.tapes.values()), self.program.free)

    @compiler_pass
    def steady_loops(self):
        """Run an adjoint loop without its shape checks where a guard shows every step's shapes alike (optimize/steady_loops.py)."""
        if not STEADY_LOOPS:
            return
        self.backward = steady_adjoint_loops(self.backward, set(self.sweep.tapes.values()),
                                             set(ir.names_in(self.result)))

    @compiler_pass
    def batched_steps(self):
        """Compute a steady loop's elementwise terms of its restored values for every step at once (optimize/batched_steps.py)."""
        self.backward = batch_step_terms(self.backward, set(self.sweep.tapes.values()),
                                         self.program.namer)

    @compiler_pass
    def step_operands(self):
        """Read a steady loop's per-step operands of a weight's product from its stacked tape (optimize/step_operands.py)."""
        self.backward = stack_step_operands(self.backward, set(self.sweep.tapes.values()),
                                            self.program.namer)

    @compiler_pass
    def step_cotangents(self):
        """Write a steady loop's per-step cotangents into its terms array's rows, which the products after it read (optimize/step_cotangents.py)."""
        self.backward = write_step_cotangents(self.backward, self.program.namer)

    @compiler_pass
    def forward_dots(self):
        """Multiply a forward loop's value by a fixed matrix with np.dot where that is @ bit for bit (optimize/forward_dots.py)."""
        self.forward = dot_forward_products(self.forward, self.program.params, self.program.namer)

    # -- the functions -----------------------------------------------------------------------
    @compiler_pass
    def assemble(self):
        """Put the sweeps together as one function or a forward/backward pair (assemble.py)."""
        self.forward, self.functions = self.assembler.put_together(
            self.forward, self.backward, self.result, self.reads, self.sweep, self.extra)
        self.entries = tuple(f.name for f in self.functions)

    @compiler_pass
    def annotate(self):
        """Comment each saved value with the adjoints that read it (memory/remat.py)."""
        annotate_saves(self.forward, self.backward, self.reads, self.program.params)

    @compiler_pass
    def fold_temporaries(self):
        """Put single-use temporaries back into the statement that reads them (optimize/fold.py)."""
        # not the output and its seed: grad_seed(t9) reads better than grad_seed(t8 + b)
        output = set(ir.names_in(self.program.output))
        seeds = {self.sweep.adjoints.get(name) for name in output}
        namer = self.program.namer
        for f in self.functions:
            f.body = fold_single_use(f.body, namer.temps - output, namer.temp_cotangents - seeds)

    @compiler_pass
    def signs(self):
        """Carry minus signs into the sums and constants that take them for free (optimize/signs.py)."""
        for f in self.functions:
            f.body = carry_signs(f.body, {id(s) for s in f.forward}, self.program.namer,
                                 self.minus)

    def _and_minus(self, names) -> set:
        """``names`` and the ``minus_`` names optimize/signs.py bound in place of any of them."""
        return set(names) | {new for new, old in self.minus.items() if old in names}

    @compiler_pass
    def inplace_adjoint(self):
        """Write adjoint arithmetic into arrays the sweep owns (optimize/inplace_adjoint.py)."""
        adjoints, classes = self.sweep.adjoints, self.classes or {}
        scalars = {d for v, d in adjoints.items() if classes.get(v) == SCALAR}
        scalars |= {v for v, c in classes.items() if c == SCALAR}
        scalars = self._and_minus(scalars)
        steady = steady_classes(self.program, classes)
        for f in self.functions:
            update_in_place(f.body, self._and_minus(adjoints.values()),
                            {id(s) for s in f.forward}, scalars, steady,
                            forward_values(f.forward, f.params))

    @compiler_pass
    def seed_products(self):
        """Multiply by the seed 1 without a pass over the array (optimize/unit_seed.py)."""
        classes = self.classes or {}
        scalars = {v for v, c in classes.items() if c == SCALAR}
        scalars |= {d for v, d in self.sweep.adjoints.items() if v in scalars}
        for f in self.functions:
            f.body = seed_products(f.body, self._and_minus(scalars))

    @compiler_pass
    def steady_products(self):
        """Multiply a steady loop's cotangent by a fixed matrix with np.dot where that is @ bit for bit (optimize/steady_products.py)."""
        for f in self.functions:   # (the loops steady_loops made, marked)
            f.body = dot_products(f.body, self.program.namer)

    @compiler_pass
    def release(self):
        """Delete, where the adjoint sweep starts, what it never reads (memory/release.py)."""
        f = self.functions[0]
        kept = {id(stmt) for stmt in f.forward}
        start = next(i for i, stmt in enumerate(f.body) if id(stmt) not in kept)
        scalars = {n for n, c in self.classes.items() if c == SCALAR}
        f.body = release_unread(f.body, start, self.program.params, scalars)
        if self.options.backend == "numpy" and not self.options.check_finite:  # each array after its last read
            scalars |= {d for v, d in self.sweep.adjoints.items() if v in scalars}
            f.body = release_read(f.body, start, self.program.params, self._and_minus(scalars),
                                  ir.names_in(self.program.output))

    @compiler_pass
    def bind_functions(self):
        """Bind the math functions that loops call to local names once (optimize/bind_functions.py)."""
        for f in self.functions:
            def names(f=f):
                return set(f.params) | {n.id for stmt in f.body for n in walk(stmt)
                                        if isinstance(n, gast.Name)}
            f.body = bind_loop_functions(f.body, names)

    @compiler_pass
    def float_returns(self):
        """Return the gradients of Python floats as they are, without grad_like (optimize/float_returns.py)."""
        floats = getattr(self.program, "float_params", set())
        ints = getattr(self.program, "int_params", set())
        for f in self.functions:
            f.body = return_floats(f.body, floats, f.params, ints)

    @compiler_pass
    def owned_lists(self):
        """Pop a list's cotangent in place where no other name can hold it (optimize/owned_lists.py)."""
        for f in self.functions:
            pop_in_place(f.body)

    @compiler_pass
    def anomaly(self):
        """Anomaly mode: check each cotangent for NaN and Inf where it is made (ad/anomaly.py)."""
        for f in self.functions:
            f.body = check_cotangents(f.body, self.program, skip=map(id, f.forward))

    @compiler_pass
    def emit(self):
        """Write the functions as Python source, comments included (ir/emit.py)."""
        for f in self.functions:  # (with np.errstate(...) blocks: frontend/errstate.py)
            f.errstate = getattr(self.program, "errstate", None) or {}
            if getattr(self.program, "shown_params", None):  # def f(x, np=4)
                avoid = f.names() | set(f.params)  # (def f(x, np=3.0, numpy=None))
                show_parameters(f, self.program.shown_params,
                                lambda name: self.linker.alias(name, avoid))
        self.sources = [f.source() for f in self.functions]
        # (for the link; a parameter shown as psi, copied to psi_1, imports no psi)
        shown = set((getattr(self.program, "shown_params", None) or {}).values())
        self.used = set().union(*(f.names() - (shown & set(f.params))
                                  for f in self.functions))

    # -- one module --------------------------------------------------------------------------
    @compiler_pass
    def link(self):
        """Compile every user function called and write the module (frontend/linker.py)."""
        linker = self.linker
        linker.add(self.sources, self.used)
        split = replace(self.options, mode="vjp", single=False, receiver=None)

        def build(program, requested, wrt):
            if isinstance(requested, TangentFunction):
                callee = Compilation(replace(split, mode="jvp"), linker, program=program,
                                     wrt=wrt, names=(requested.name,))
            else:
                callee = Compilation(split, linker, program=program, wrt=wrt,
                                     names=(requested.forward, requested.backward))
            run_passes(callee, first="tangent", last="emit")
            return callee.sources, callee.used

        linker.finish(build)
        self.module = linker.module(self.program)

    # -- what dump_after shows ---------------------------------------------------------------
    def render(self) -> str:
        """The code as the passes have left it, after the notes of the last one."""
        return "".join(f"# {note}\n" for note in self.notes) + self._code()

    def _code(self) -> str:
        if self.module is not None:
            return self.module[0]
        if self.sources is not None:
            return "\n\n".join(self.sources)
        if self.functions is not None:
            return "\n\n".join(f.source() for f in self.functions)
        if self.program is None:
            return source_of(self.parsed.node) + "\n"
        p = self.program
        if self.backward is None:  # the program, or forward mode's tangent sweep
            stmts, result = (p.body, p.output) if self.forward is None else \
                (self.forward, self.result)
            body = block_lines([*stmts, gast.Return(value=result)], 1)
        else:  # the sweeps as one listing, until they are put together as functions
            forward = self.tape_setup + (self.forward if self.forward is not None else p.body)
            body = block_lines(forward, 1) + ["", "    # adjoint sweep"] + \
                block_lines(self.backward, 1)
            if self.result is not None:
                body += block_lines([gast.Return(value=self.result)], 1)
        return "\n".join([f"def {p.name}({', '.join(p.params)}):", *body]) + "\n"


def _read_in_loops(body) -> set[str]:
    """The names the loops of ``body`` read (those checkpointing reruns)."""
    return {n.id for loop in ir.walk_statements(body) if isinstance(loop, (gast.For, gast.While))
            for n in walk(loop) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def run_passes(c: Compilation, first: str | None = None, last: str | None = None) -> list[str]:
    """Run the passes of :func:`passes` from ``first`` to ``last`` (names; all by
    default) on ``c``; return the names of those that ran."""
    order = list(PASSES)
    low = order.index(first) if first else 0
    high = order.index(last) if last else len(order) - 1
    ran = []

    def run(pass_):
        name = pass_.__name__
        if low <= order.index(name) <= high:
            c.notes = []
            pass_()
            ran.append(name)

    passes(c, run)
    return ran


#: The last pass of :func:`prepare`: a called function stops there until the link.
PREPARED = "attribute_copies"


def prepare(fn, receiver=None, callee=False, floats=(), callees=()) -> ir.Program:
    """Frontend, fence, normalisation and checks: ``fn`` as a program.

    ``receiver`` is the class of the first parameter of a method (``self``);
    ``callee`` marks a function called from differentiated code; ``floats`` are
    the positions of parameters known to be Python floats (code specialised for
    them: ``s += 1.0`` on a float rebinds, it updates nothing in place)."""
    c = Compilation(Options(callees=callees), None, fn=fn, callee=callee, receiver=receiver,
                    floats=floats)  # callees: functions the call passes it (linker.Callee)
    run_passes(c, last=PREPARED)
    return c.program


def generate(fn, options: Options, dump_after: str | None = None):
    """Differentiate ``fn`` (and the functions it calls) into one module: a
    :class:`Generated`.  With ``dump_after``, a pass name (:data:`PASSES`), stop
    after that pass and return the code as it stands then (a string).

    The cyclic garbage collector is paused meanwhile: compiling makes some
    hundred thousand small tree nodes, none of them in reference cycles, and
    the collections they would trigger (each walking every object the process
    holds) took a third of the time of a 100-line function's compilation."""
    if dump_after is not None and dump_after not in PASSES:
        raise SrcGradError(f"unknown pass {dump_after!r}; the passes, in order: "
                           f"{', '.join(PASSES)}")
    paused = gc.isenabled()
    gc.disable()
    try:
        return _generate(fn, options, dump_after)
    finally:
        if paused:
            gc.enable()


def _generate(fn, options: Options, dump_after):
    validate_options(options)
    c = _entry(fn, options)
    ran = run_passes(c, last=dump_after)
    if dump_after is not None:
        if dump_after not in ran:
            every = run_passes(_entry(fn, options))
            raise SrcGradError(
                f"pass {dump_after!r} does not run in mode {options.mode!r} with policy "
                f"{options.policy!r} and optimize={options.optimize}; the passes that "
                f"run: {', '.join(every)}")
        return c.render()
    residuals = tuple(c.assembler.residual_names) if c.assembler else ()
    source, bindings = c.module
    zero = tuple(w for w in c.wrt_names if c.act is not None and w not in c.act.useful)
    return Generated(source, c.entries, bindings, c.program, c.wrt_names, c.linker.free, residuals,
                     zero)


def _entry(fn, options: Options) -> Compilation:
    # code specialised for Python-float arguments: scalars, whatever else they meet
    return Compilation(options, Linker(options, prepare), fn=fn, receiver=options.receiver,
                       floats=options.floats)


__all__ = ["MODES", "PASSES", "POLICIES", "Compilation", "Generated", "Options", "generate",
           "passes", "prepare", "run_passes"]
