"""Rematerialisation: recompute in the adjoint sweep instead of saving.

Every forward value the adjoint sweep reads is either saved (kept alive,
returned as a residual, or pushed on a tape inside loops) or recomputed.  This
pass applies the policy's decision: for each value to recompute it copies the
value's defining statement into the adjoint sweep, just before the first
statement there that reads it, marked ``# recompute:``.  Dead-code elimination
then drops the saves nobody reads any more.

A value can be recomputed where its defining statement sits in the block the
adjoint statement mirrors and none of that statement's operands is assigned
between the definition and the read (the adjoint sweep sees, at each point,
the values of the mirrored forward point); its operands are saved or
recomputed in turn.  Only pure operations are recomputed: primitives with a
rule, operators, displays, attribute reads -- never a call with unknown effects.

A row or slice of an argument read in a loop or branch (``x = xs[t]``, and
``for x in xs``) is recomputed under every named policy: that costs what a
tape's push and pop cost, and the tape goes (issue 16); an argument updated
in place anywhere keeps its tape.

Sound when the copy computes, bit for bit, what the definition computed:

* the value is assigned once (textually: in a loop, once per iteration) and
  the read mirrors a forward statement at or after the definition in the same
  block, so the adjoint sweep is at that iteration's point (statements after
  the read in a loop body have been undone by their restores, which the copy's
  reads keep alive);
* no operand is assigned -- rebound, a loop target, updated in place
  (``x[i] = v``, ``xs.append(v)``) -- between the definition and the read,
  nested blocks included: a rebinding there would be undone only after the
  copy runs;
* no operand that may share memory with another name (a view ``v = y[1:]``,
  a plain copy ``z = y``: :func:`..analysis.aliasing.shared_names`) has any update
  between: ``y[1] = 0.0`` changes what ``v`` reads, and ``y``'s restore runs
  only after the copy;
* the operation is pure (no state, no effect, no randomness).

The recomputed value overwrites the variable in the adjoint sweep; a value the
adjoint sweep also restores from a tape gets the same value either way, and
the output, when restored, is returned from a copy taken before the adjoint
sweep.  Tested by tests/memory/test_memory_soundness.py (``view_updated_after``,
``copy_updated_after``, ``reshaped_updated_after``, ``output_assigned_in_loop``,
``recompute_across_swap``).

    >>> import numpy as np
    >>> from ..pipeline import Options, generate
    >>> from .. import _doctest_helpers as h
    >>> src = generate(h.chain, Options(policy="recompute")).source
    >>> print(src[src.index("# Adjoint"):].strip())
    # Adjoint sweep
        d_t3 = grad_seed(t3)
        d_t2 = unreduced(d_t3, x)  # t2 has the shape of x
        t1 = np.sin(x)  # recompute: t1
        t2 = into_operand(np.exp, t1)  # recompute: t2
        d_x = into_first(np.multiply, d_t2 * t2, np.cos(x))  # d_t2 * t2 * np.cos(x), written into the new array of d_t2 * t2
        return grad_like(d_x, x)
"""

from __future__ import annotations

import bisect
import operator
import types
from dataclasses import dataclass

import gast
import numpy as np

from .. import ir
from ..analysis.aliasing import shared_names
from ..analysis.sharing import is_view
from ..analysis.slot_writes import user_names
from ..errors import SrcGradError, UnsupportedSyntaxError
from ..frontend.linker import CalleePair, is_library_module
from ..ir.syntax import clone, walk
from ..rules import registry
from ..runtime import sequence
from .effects import RANDOM, changed_in_place, mutated_names, value_effect
from .helper_state import state_changing_call
from .stale_views import changed_by_calls, refuse_stale_views

SAVE, RECOMPUTE = "save", "recompute"

#: Operations whose outputs the "save_products" policy keeps: costly to redo.
PRODUCTS = {operator.matmul, np.matmul, np.dot, np.einsum, np.tensordot, np.inner, np.outer,
            np.linalg.solve, np.linalg.inv, np.linalg.det, np.linalg.slogdet,
            np.ndarray.dot}


@dataclass(frozen=True)
class Candidate:
    """A value the adjoint sweep reads, as a policy callable sees it."""

    name: str             # the variable in generated code
    primitive: str        # how the operation that computes it is named (np.tanh, @, ...)
    line: int | None      # its line in the user's file


def decider(policy):
    """``decide(candidate, op) -> SAVE | RECOMPUTE`` for a policy.

    A call of a function marked with :func:`srcgrad.checkpoint` is recomputed
    under every policy: its residuals are never saved.
    """
    def decide(candidate, op):
        if isinstance(op.primitive, CalleePair):
            marked = getattr(op.primitive.fn, "__srcgrad_checkpoint__", False)
            return RECOMPUTE if marked else SAVE
        if callable(policy):
            choice = policy(candidate)
            if choice not in (SAVE, RECOMPUTE):
                raise SrcGradError(
                    f"a policy callable must return 'save' or 'recompute', not {choice!r} "
                    f"(asked about {getattr(candidate, 'name', candidate)!r}, the result of "
                    f"'{getattr(candidate, 'primitive', '?')}' at line "
                    f"{getattr(candidate, 'line', '?')})")
            return choice
        if policy == "recompute":
            return RECOMPUTE
        if policy == "save_products":
            return SAVE if op.primitive in PRODUCTS else RECOMPUTE
        return SAVE
    decide.policy = policy
    return decide


#: Calls that run through an iterable they are given: of an iterator (a generator
#: argument, zip, iter(xs)), a second call finds it spent.
_CONSUMING = (sequence, list, tuple, sum, sorted, min, max, dict, set, frozenset)


def _read_from(program, names) -> set[str]:
    """``names`` and the names bound to a part of one, at any depth (``t3 =
    STEP.__closure__[0]``, ``t4 = t3.cell_contents``): what a helper changing
    the state they hold changes too."""
    out, grew = set(names), True
    while grew:
        grew = False
        for stmt in ir.walk_statements(program.body):
            op = getattr(stmt, "op", None)
            if isinstance(stmt, gast.Assign) and op is not None and op.args \
                    and getattr(op, "primitive", None) in (ir.GETATTR, operator.getitem) \
                    and set(ir.names_in(op.args[0])) & out:
                new = set(ir.target_names(stmt)) - out
                out |= new
                grew = grew or bool(new)
    return out


def _library_value(value) -> bool:
    """A module, a ufunc, or a function of a library: what a user helper changing
    module state cannot change (see :mod:`.helper_state`)."""
    if isinstance(value, (types.ModuleType, np.ufunc)):
        return True
    module = getattr(value, "__module__", None)
    return callable(value) and isinstance(module, str) and is_library_module(module)


def _pure(op) -> bool:
    prim = op.primitive
    if isinstance(prim, CalleePair) or prim is ir.OPAQUE or isinstance(prim, ir.Builder):
        return prim is not ir.APPEND
    try:
        return registry.lookup(prim) is not None or registry.is_nondifferentiable(prim)
    except TypeError:
        return False


def rematerialize(program: ir.Program, backward: list, decide) -> list:
    """``backward`` with recompute statements for the values ``decide`` picks."""
    counts, definitions = ir.definitions(program.body)
    blocks = {}

    def index_blocks(stmts):
        for i, stmt in enumerate(stmts):
            blocks[id(stmt)] = (stmts, i)
            for inner in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
                if isinstance(inner, list) and isinstance(stmt, (gast.If, gast.For, gast.While)):
                    index_blocks(inner)
    index_blocks(program.body)
    state = _State(program, definitions, counts, blocks, decide, shared_names(program))
    out = state.block(backward, program.body)
    _refuse_stale_reads(program, out)
    refuse_stale_views(program, out)  # x[0] taped, then x.sort(): stale_views.py
    return out


def _refuse_stale_reads(program, backward) -> None:
    """Raise, located, where a call changes in place (``rng.shuffle(a)``,
    ``lst.sort()``) what the adjoint sweep reads as it was before the call: no
    tape keeps the old contents, so the adjoint would read the new ones.  (In a
    loop every iteration but the last reads an older value.)  Not where the name
    was bound, earlier in the same block, to a new object that nothing read
    before the call (``a = rng.normal(size=3); rng.shuffle(a)`` in a loop's
    body): no value was computed from the old contents, and what the adjoint
    reads is that object as the call left it.  (``a.sort()`` of a local array
    is the element write ``a[...] = np.sort(a)`` by then, see
    :func:`..analysis.slot_writes.sorts_in_place`.)"""
    free = program.free
    # a call that changes something in place is rare: without one there is
    # nothing to refuse (and no need for the walks below, a tenth of the pass)
    if not any(changed_in_place(stmt, free) for stmt in ir.walk_statements(program.body)
               if not isinstance(stmt, (gast.If, gast.For, gast.While))):
        return
    read = {n for stmt in ir.walk_statements(backward) for n in ir.names_in(stmt)}
    seen: set[str] = set()

    def visit(stmts, in_loop):
        fresh: set[str] = set()  # bound here to a new object nothing has read yet
        for stmt in stmts:
            # what the statement changes in place and was fresh before it; fresh
            # is updated in place (a new set per statement made this quadratic)
            compound = isinstance(stmt, (gast.If, gast.For, gast.While))
            changed = [] if compound else changed_in_place(stmt, free)
            unread = {name for name in changed if name in fresh}
            fresh.difference_update(_names_read(stmt))
            fresh |= _fresh_names(stmt, free)
            if isinstance(stmt, (gast.For, gast.While)):
                seen.update(ir.names_in(stmt.iter if isinstance(stmt, gast.For) else stmt.test))
                visit(stmt.body, True)
                visit(stmt.orelse, in_loop)
                continue
            if isinstance(stmt, gast.If):
                seen.update(ir.names_in(stmt.test))
                visit(stmt.body, in_loop)
                visit(stmt.orelse, in_loop)
                continue
            for name in changed:
                if name in read and (in_loop or name in seen) and name not in unread:
                    # (as the user wrote it: x, not the copy x_1 of an argument)
                    name = user_names(program, ir.walk_statements(program.body))(name)
                    raise UnsupportedSyntaxError(
                        f"this call changes {name} in place after a value was computed from "
                        f"it, and the adjoint sweep reads {name} as it was then: srcgrad keeps "
                        f"no copy of the old contents.  Make a new value instead "
                        f"({name} = np.sort({name}), {name} = sorted({name}), "
                        f"{name} = rng.permutation({name})...)", filename=program.filename,
                        lineno=getattr(stmt, "lineno", None),
                        col=getattr(stmt, "col_offset", None))
            seen.update(ir.names_in(getattr(stmt, "value", stmt)))

    visit(program.body, False)


def _names_read(stmt) -> list[str]:
    """Every name ``stmt`` reads (a compound statement: its whole body too)."""
    return [n.id for n in walk(stmt) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)]


#: Operations whose result is always a new array (or number), never an operand.
_MAKES_NEW = frozenset({
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.neg, operator.matmul, np.sort, np.copy,
    np.ndarray.copy, np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
    np.empty_like, np.full_like, np.arange, np.linspace, np.concatenate, np.stack,
    np.outer, np.dot, np.matmul, np.cumsum, np.where, np.clip, np.argsort, np.array})


def _fresh_names(stmt, free) -> set[str]:
    """The name ``stmt`` binds to a new object that no other name holds: a ufunc's
    or an arithmetic result (``a = x * w``), a new array (``np.sort(x)``), a
    random draw (``a = rng.normal(size=3)``; not ``rng.choice(X)``, which may be
    a row of ``X``)."""
    op = getattr(stmt, "op", None)
    if not isinstance(stmt, gast.Assign) or ir.is_update(stmt) or op is None \
            or not isinstance(stmt.targets[0], gast.Name) or "out" in op.kwargs:
        return set()
    prim = op.primitive
    try:
        new = (isinstance(prim, np.ufunc) or prim in _MAKES_NEW) and not is_view(stmt)
    except TypeError:
        new = False
    call = stmt.value
    if not new and isinstance(call, gast.Call) and value_effect(stmt, free) == RANDOM:
        new = getattr(call.func, "attr", None) not in ("choice", "shuffle", "permuted")
    return {stmt.targets[0].id} if new else set()


class _State:
    def __init__(self, program, definitions, counts, blocks, decide, shared=frozenset()):
        self.program = program
        self.shared = shared      # names that may share memory with another name
        self.definitions = definitions
        self.counts = counts
        self.blocks = blocks
        self.decide = decide
        self._positions = {}      # id(forward block) -> positions(block)
        free = program.free
        # names a call changes in place (lst.remove(c), next(it)): a value read
        # from them is not computed again
        self.mutated = {n for stmt in ir.walk_statements(program.body)
                        for n in mutated_names(stmt, free)} | changed_by_calls(program)
        if any(state_changing_call(stmt, free)[0] is not None
               for stmt in ir.walk_statements(program.body)):
            # bump() changes module state: a value read from a global or computed
            # by a helper (cur() reading CNT) may differ when computed again
            self.mutated |= _read_from(program, {n for n, v in free.items()
                                                 if not _library_value(v)})
        if any(getattr(stmt, "records", False) for stmt in ir.walk_statements(program.body)):
            # H.append(float(l)) (normalize/records_outside.py): a list, dict or
            # object read from outside, a global or a parameter, may hold H, and
            # computed again after the records it would see them (review s37 D-22)
            self.mutated |= _read_from(program, {n for n, v in free.items()
                                                 if not _library_value(v)} | set(program.params))

    def block(self, backward: list, forward_block: list) -> list:
        out = list(backward)
        for stmt in out:
            mirror = getattr(stmt, "mirror_of", None)
            if isinstance(stmt, gast.If) and isinstance(mirror, gast.If):
                stmt.body = self.block(stmt.body, mirror.body)
                stmt.orelse = self.block(stmt.orelse, mirror.orelse)
            elif isinstance(stmt, gast.For) and isinstance(mirror, (gast.For, gast.While)):
                stmt.body = self.block(stmt.body, mirror.body)
        # Each statement's reads, in order; a recompute goes right before its
        # reader and has its own reads looked at next (its operands may be
        # recomputed too), then the reader's reads again.  (The statements
        # before it stay as they were: what they read was decided already.)
        done: set[str] = set()
        position = 0
        while position < len(out):
            stmt = out[position]
            for var in _reads(stmt):
                if var in done:
                    continue
                recompute = self.recompute(var, stmt, forward_block)
                if recompute is not None:
                    done.add(var)
                    out.insert(position, recompute)
                    break
            else:
                done.update(_defines(stmt))
                position += 1
        return out

    def recompute(self, var, reader, forward_block):
        """The statement recomputing ``var`` before ``reader``, or None to save it."""
        definition = self.definitions.get(var)
        if definition is None or self.counts.get(var) != 1 or ir.is_update(definition) \
                or not isinstance(definition, gast.Assign):
            return None
        op = getattr(definition, "op", None)
        if op is None:
            return None
        # a random draw, next(it), lst.pop(): computed again it gives another value
        effect = None if not _pure(op) and not isinstance(getattr(self.decide, "policy", None), str) \
            else value_effect(definition, self.program.free)
        if effect is None and not _pure(op):
            return None
        if any(op.primitive is f for f in _CONSUMING) and op.args \
                and not isinstance(op.args[0], (gast.List, gast.Tuple)) \
                and not (isinstance(op.args[0], gast.Name)
                         and op.args[0].id in getattr(self.program, "sequences", ())):
            return None  # list(items) of what may be an iterator: saved, never listed again
        where = self.blocks.get(id(definition))
        source = getattr(reader, "source_stmt", None)
        if where is None or where[0] is not forward_block or source is None:
            return None
        at = self.blocks.get(id(source))
        if at is None or at[0] is not forward_block or at[1] < where[1]:
            return None
        operands = set(ir.names_in(definition.value))
        # an operand assigned between the definition and the reader's statement,
        # or an update there (it changes the memory every alias -- view, plain
        # copy -- reads too): the value cannot be computed again
        assigned, updates = self.positions(forward_block)
        if any(_any_within(assigned.get(n, ()), where[1], at[1]) for n in operands):
            return None
        if operands & self.shared and _any_within(updates, where[1], at[1]):
            return None
        if (operands | {var}) & self.mutated:  # lst.remove(c) anywhere: no restore undoes it
            return None
        candidate = Candidate(var, getattr(op, "label", "?"), getattr(definition, "lineno", None))
        if not (self.free(op) and forward_block is not self.program.body) \
                and self.decide(candidate, op) != RECOMPUTE:
            return None
        if effect is not None:
            definition.not_recomputed = effect  # annotate_saves says why it is saved
            return None
        again = ir.assign(clone(definition.targets[0]), clone(definition.value))
        gast.copy_location(again, definition)
        again.op = op
        again.comment = f"recompute: {', '.join(ir.target_names(definition))}"
        again.source_stmt = source
        return again


    def positions(self, block) -> tuple[dict, list]:
        """For a forward ``block``: each name's assignment positions (the index in
        ``block`` of the statement assigning it, or of the loop or branch holding
        that statement), and the positions of updates (``x[i] = v``), both
        sorted -- computed once per block, so that asking whether anything
        between two statements assigns an operand costs a bisection, not a scan
        (a long function asks once per value its adjoint reads)."""
        found = self._positions.get(id(block))
        if found is None:
            assigned, updates = {}, []
            for i, top in enumerate(block):
                for stmt in ir.walk_statements([top]):
                    for name in ir.assigned_by(stmt):
                        places = assigned.setdefault(name, [])
                        if not places or places[-1] != i:
                            places.append(i)
                    if ir.is_update(stmt) and (not updates or updates[-1] != i):
                        updates.append(i)
            found = self._positions[id(block)] = (assigned, updates)
        return found

    def free(self, op) -> bool:
        """Whether ``op`` indexes or slices an argument (``xs[t]``): inside a loop or
        branch it is recomputed under every named policy instead of taped, since
        it costs what a tape's push and pop cost (a view) or the gather the
        function did anyway.  At the top level a save is a reference, no tape:
        kept.  A policy callable still decides."""
        if op.primitive is not operator.getitem or not isinstance(op.args[0], gast.Name) \
                or callable(getattr(self.decide, "policy", None)):
            return False
        array, params = op.args[0].id, self.program.params
        if array not in params:  # for x in xs: t1 = sequence(xs) (xs itself, or a list)
            made = getattr(self.definitions.get(array), "op", None)
            if made is None or made.primitive is not sequence or self.counts.get(array) != 1 \
                    or not isinstance(made.args[0], gast.Name) or made.args[0].id not in params:
                return False
            array = made.args[0].id
        # an argument never updated in place (the sequence of one may be it, unseen)
        return not any(ir.is_update(stmt) and array in ir.target_names(stmt)
                       for stmt in ir.walk_statements(self.program.body))


def _any_within(places, low, high) -> bool:
    """Whether the sorted ``places`` hold a position in ``(low, high]``."""
    i = bisect.bisect_right(places, low)
    return i < len(places) and places[i] <= high


def _reads(stmt) -> list[str]:
    if isinstance(stmt, gast.Assign):
        return ir.names_in(stmt.value) + (ir.names_in(stmt.targets[0])
                                          if ir.is_update(stmt) else [])
    if isinstance(stmt, gast.For):
        return ir.names_in(stmt.iter) + [n for s in ir.walk_statements(stmt.body)
                                         for n in _reads(s)]
    if isinstance(stmt, gast.If):
        return ir.names_in(stmt.test) + [n for s in ir.walk_statements(stmt.body + stmt.orelse)
                                         for n in _reads(s)]
    return ir.names_in(stmt)


def _defines(stmt) -> set[str]:
    if isinstance(stmt, gast.Assign) and not ir.is_update(stmt):
        return set(ir.target_names(stmt))
    return set()


def annotate_saves(forward, backward, reads, params) -> None:
    """Comment, in place, every forward statement whose value the adjoint sweep
    reads from the forward sweep (``reads``) with the adjoints that read it, and
    note above the first statement the arguments it reads (``params`` are the
    function's parameters).  The save decisions become as visible as the
    ``# recompute:`` lines this module writes into the adjoint sweep.

        >>> import gast
        >>> from ..ir.emit import show_statements
        >>> forward = gast.parse("h = np.tanh(x)\\nn = len(x)").body
        >>> backward = gast.parse("d_x = d_h * (1 - h ** 2) * x").body
        >>> backward[0].origin = "np.tanh"
        >>> annotate_saves(forward, backward, {"h", "x"}, ["x"])
        >>> print(show_statements(forward))
        # save: argument x (read by the adjoint sweep)
        h = np.tanh(x)  # save: h (read by the adjoint of np.tanh)
        n = len(x)

    A statement that already has a comment (a tape push, a recompute), an
    update in place, or a statement of a checkpointed loop's plain rerun
    (``stmt.unsaved``) keeps what it has: it saves nothing of its own."""
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
        why = getattr(stmt, "not_recomputed", None)
        why = f"; {why} is not recomputed" if why else ""
        if saved:
            stmt.comment = "save: " + "; ".join(
                f"{n} (read by the adjoint of {', '.join(readers[n])}{why})" for n in saved)
    args = [p for p in params if p in readers]
    if args and forward:
        note = (f"save: argument{'s' if len(args) > 1 else ''} {', '.join(args)} "
                f"(read by the adjoint sweep)")
        forward[0].comment_before = [*getattr(forward[0], "comment_before", []), note]
