"""Sequence operators: ``+`` and ``*`` on tuples and lists are not arithmetic.

Normalisation maps ``a + b`` to :func:`operator.add`, whose adjoint is that of
array addition: each operand receives the whole cotangent.  For tuples and lists
``+`` concatenates, and the right adjoint hands each operand *its part* of the
cotangent (``np.hstack((p,) + (q,))``: ``p`` gets the first element's cotangent,
``q`` the second's -- not both).  This pass finds the operations whose operands
are sequences and gives them the primitives ``ir.CONCAT`` and ``ir.REPEAT``,
which carry the sequence rules; the statement's text (``args + (t,)``) does not
change.

A value is a sequence when it is built by a tuple or list display, ``tuple()``,
``list()``, ``sorted()``, a concatenation or repetition of a sequence, a slice
of a sequence, a copy of one, or is a function's ``*args``.  A name assigned in
a loop or branch keeps its name on every path, so it is a sequence only when
every one of its definitions is one.  A ``+`` whose operands the pass cannot
type (an
argument, an element of a container) keeps the array rule; the run-time helper
:func:`~srcgrad.runtime.unbroadcast` refuses a tuple or list operand there, so
such a program fails loudly instead of getting a wrong gradient.

Sound because the primitive changes only where an operand is a sequence on
every path to the operation, and Python's ``+`` of a sequence and a
non-sequence raises ``TypeError`` in the forward sweep before any adjoint runs
(``*`` of a sequence takes an int, whose cotangent is nothing).

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(p, q):
    ...     parts = (p,) + (q,)
    ...     return np.sum(np.hstack(parts))
    >>> program = normalize(parse_function(f))
    >>> type_sequence_operators(program)
    >>> print(unparse_body(program))
    t1 = (p,)
    t2 = (q,)
    parts = t1 + t2
    t3 = np.hstack(parts)
    t4 = np.sum(t3)
    return t4
    >>> program.body[2].op.label
    'sequence +'
"""

from __future__ import annotations

import operator

import gast

from .. import ir
from ..errors import UnsupportedSyntaxError
from ..ir.syntax import helper_ref
from ..runtime import sequence_tangent
from .container_copies import type_container_copies

#: Primitives whose result is a sequence (``sequence_tangent``: a sequence's
#: tangent in generated tangent code, which higher orders differentiate again).
_MAKERS = (ir.BUILD_TUPLE, ir.BUILD_LIST, ir.CONCAT, ir.REPEAT, tuple, list, sorted,
           sequence_tangent)


def type_sequence_operators(program: ir.Program) -> None:
    """Retarget ``+`` and ``*`` of sequences to their sequence primitives."""
    type_container_copies(program)  # hs.copy() of a list: list(hs), which a + b may read
    assigns = [s for s in ir.walk_statements(program.body)
               if isinstance(s, gast.Assign) and getattr(s, "op", None) is not None
               and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
               and not ir.is_update(s)]
    seqs = sequence_names(program, assigns)
    ints = _int_names(assigns)
    guards = []
    for stmt in assigns:
        op = stmt.op
        if op.primitive in (operator.add, operator.mul) and any(_operands_sequences(op, seqs)):
            if op.primitive is operator.add and any(
                    isinstance(a, gast.Constant) and not _is_sequence(a, seqs) for a in op.args):
                raise _error(program, op, "'+' of a tuple or list and a number")
            if op.primitive is operator.mul and not _is_sequence(op.args[0], seqs):
                op.args = op.args[::-1]  # 3 * [x]: the rule takes the sequence first
            op.primitive = ir.CONCAT if op.primitive is operator.add else ir.REPEAT
            op.label = op.primitive.label
            guards += [(stmt, guard) for guard in _guards(program, stmt, seqs, ints)]
    for block in ir.statement_blocks(program.body):
        for stmt, guard in guards:
            if any(s is stmt for s in block):
                block.insert(next(i for i, s in enumerate(block) if s is stmt), guard)
    # (the arguments among them are no containers this function made: sharing.py)
    program.sequences = seqs - set(getattr(program, "sequence_params", ()))


def _int_names(assigns) -> set[str]:
    """Names whose every definition is ``len(...)``: certainly ints."""
    defs: dict[str, list] = {}
    for stmt in assigns:
        defs.setdefault(stmt.targets[0].id, []).append(stmt.op.primitive is len)
    return {name for name, lens in defs.items() if all(lens)}


def _guards(program, stmt, seqs, ints) -> list:
    """Run-time checks of the operands whose type the pass could not see: the
    other operand of ``seq + x`` must be a sequence, the count of ``seq * n``
    an int (an array there is NumPy arithmetic, not concatenation or repetition)."""
    op = stmt.op
    repeat = op.primitive is ir.REPEAT
    known = ints if repeat else seqs
    unknown = [a for a in (op.args[1:] if repeat else op.args)
               if isinstance(a, gast.Name) and a.id not in known]
    guards = []
    for operand in unknown:
        what = "an int" if repeat else "a tuple or list"
        message = (f"'{'*' if repeat else '+'}' of a tuple or list and "
                   f"'{operand.id}', which srcgrad could not tell is {what}: here it is "
                   f"not (an array makes NumPy arithmetic of the sequence); convert the "
                   f"sequence with np.asarray, or make '{operand.id}' {what}")
        node = op.node
        where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
            program.filename, getattr(node, "lineno", None), getattr(node, "col_offset", None))],
            ctx=gast.Load())
        call = gast.Call(func=helper_ref("sequence_operand"),
                         args=[ir.name(operand.id), gast.Constant(value=repeat, kind=None),
                               gast.Constant(value=message, kind=None), where], keywords=[])
        guard = gast.copy_location(gast.Expr(value=call), node)
        guard.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
        guards.append(guard)
    return guards


def sequence_names(program: ir.Program, assigns) -> set[str]:
    """Names that hold a tuple or list on every path: a greatest fixed point
    (assume every assigned name does, drop those with a definition that is not
    certainly a sequence: an element of a container, a call, arithmetic)."""
    defs: dict[str, list] = {}
    for stmt in ir.walk_statements(program.body):
        if ir.is_update(stmt):
            continue  # xs.append(v), xs[i] = v: a list stays a list
        for name in ir.assigned_by(stmt):
            defs.setdefault(name, []).append(stmt)
    varargs = set(getattr(program, "vararg_params", ()))
    # a list or tuple passed, never rebound (the code is specialised on it)
    varargs |= {p for p in getattr(program, "sequence_params", ()) if p not in defs}
    seqs = {n for n in defs if n not in program.params} | varargs
    listed = {id(s) for s in assigns}  # `s in assigns` scanned the list: quadratic
    # one round over every name, then a worklist: a name is looked at again only
    # when an operand of its definitions is dropped (rounds until nothing changed
    # took one per link of a chain whose names sort against its order, v1 = v2 + x,
    # v2 = v3 + x, ...: quadratic); only the names the first round keeps are readers
    dropped = []
    for name in sorted(seqs - varargs):
        if not all(id(s) in listed and _makes_sequence(s.op, seqs) for s in defs[name]):
            seqs.discard(name)
            dropped.append(name)
    readers: dict[str, set] = {}
    for name in seqs - varargs if dropped else ():
        for stmt in defs[name]:
            for arg in getattr(getattr(stmt, "op", None), "args", ()):
                if isinstance(arg, gast.Name):
                    readers.setdefault(arg.id, set()).add(name)
    todo = sorted({r for d in dropped for r in readers.get(d, ())}, reverse=True)
    queued = set(todo)
    while todo:
        name = todo.pop()
        queued.discard(name)
        if name in seqs and not all(id(s) in listed and _makes_sequence(s.op, seqs)
                                    for s in defs[name]):
            seqs.discard(name)
            for reader in readers.get(name, ()):
                if reader in seqs and reader not in varargs and reader not in queued:
                    todo.append(reader)
                    queued.add(reader)
    return seqs


def _makes_sequence(op: ir.Op, seqs) -> bool:
    prim = op.primitive
    if any(prim is maker for maker in _MAKERS):
        return True
    if prim in (operator.add, operator.mul):
        return any(_operands_sequences(op, seqs))
    if prim is operator.pos:
        return _is_sequence(op.args[0], seqs)
    if prim is operator.getitem:
        return _is_sequence(op.args[0], seqs) and isinstance(op.args[1], gast.Slice)
    return False


def _operands_sequences(op, seqs) -> list[bool]:
    return [_is_sequence(a, seqs) for a in op.args]


def _is_sequence(node, seqs) -> bool:
    if isinstance(node, gast.Name):
        return node.id in seqs
    return isinstance(node, gast.Constant) and isinstance(node.value, (tuple, list))


def _error(program, op, message):
    node = op.node
    return UnsupportedSyntaxError(message, filename=program.filename,
                                  lineno=getattr(node, "lineno", None),
                                  col=getattr(node, "col_offset", None))
