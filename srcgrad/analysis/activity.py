"""Activity analysis: which values get adjoints.

A value is *varied* when it depends on a ``wrt`` argument through
differentiable operations, and *useful* when the output depends on it through
differentiable operations.  Only values that are both -- *active* -- get a
cotangent; everything else is computed by the forward sweep and never touched
by the adjoint sweep.  That keeps generated code free of adjoints of shapes,
indices, masks and constants.

    >>> import numpy as np
    >>> def f(x, y, n):
    ...     s = x.shape
    ...     z = np.sin(x) * n
    ...     w = np.cos(y)
    ...     return np.sum(z)
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> program = normalize(parse_function(f))
    >>> sorted(activity(program, ["x"]).active)
    ['t1', 't2', 'x', 'z']
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import gast
import numpy as np

from .. import ir
from ..rules import registry


@dataclass
class Activity:
    varied: set[str]
    useful: set[str]

    @property
    def active(self) -> set[str]:
        return self.varied & self.useful

    def is_active(self, name: str) -> bool:
        return name in self.varied and name in self.useful


def differentiable(op: ir.Op) -> bool:
    """Whether values can flow through ``op`` to its output."""
    prim = op.primitive
    return prim is not ir.OPAQUE and not registry.is_nondifferentiable(prim)


#: Conversions whose second argument (or ``dtype=``) is the dtype they make.
_CONVERSIONS = (np.ndarray.astype, np.astype, np.asarray, np.array, np.asanyarray, np.ascontiguousarray,
                np.require, np.fromiter)


#: Reductions whose ``dtype=`` is the dtype of their result (and of what they add up).
_DTYPE_REDUCTIONS = (np.sum, np.prod, np.mean, np.cumsum, np.cumprod, np.ndarray.sum,
                     np.ndarray.prod, np.ndarray.mean, np.ndarray.cumsum, np.ndarray.cumprod)


#: Joins whose keyword-only ``dtype=`` is the dtype of their result.
_DTYPE_JOINS = (np.concatenate, np.stack, np.hstack, np.vstack)


def integer_cast(op: ir.Op, free: dict) -> bool:
    """Whether ``op`` converts to an integer or bool dtype -- ``x.astype(T)``,
    ``np.astype(x, T)``,
    ``np.asarray(x, dtype=T)`` with ``T`` ``int``, ``"int32"``, ``np.uint8``,
    ``bool`` or a global naming one: piecewise constant, like ``int(x)``, so no
    derivative flows through it."""
    if any(op.primitive is r for r in _DTYPE_REDUCTIONS):  # np.sum(x, dtype=int)
        dtype = _static(op.kwargs.get("dtype"), free)
    elif any(op.primitive is j for j in _DTYPE_JOINS):  # np.concatenate(xs, dtype=int)
        dtype = _static(op.kwargs.get("dtype"), free)
    elif op.primitive is np.full or op.primitive is np.full_like:  # np.full(3, x, dtype=int)
        dtype = _static(op.kwargs.get("dtype", op.args[2] if len(op.args) > 2 else None), free)
    elif not any(op.primitive is c for c in _CONVERSIONS):
        return False
    else:
        dtype = _static(op.kwargs.get("dtype", op.args[1] if len(op.args) > 1 else None), free)
    if dtype is _UNKNOWN or dtype is None:  # None: the input's own dtype
        return False
    try:
        return np.dtype(dtype).kind in "biu"
    except TypeError:
        return False


_UNKNOWN = object()


def _static(node, free):
    """The value of a literal, a free name or an attribute chain on one
    (``np.int64``), or ``_UNKNOWN``."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Name):
        return free.get(node.id, _UNKNOWN)
    if isinstance(node, gast.Attribute):
        base = _static(node.value, free)
        return _UNKNOWN if base is _UNKNOWN else getattr(base, node.attr, _UNKNOWN)
    return _UNKNOWN


def has_effect(stmt) -> bool:
    """Whether a forward statement may act beyond the value it assigns (a call of
    an unknown function, ``print``): dead-code elimination keeps it."""
    op = getattr(stmt, "op", None)
    if op is None or op.primitive is ir.OPAQUE:
        return not isinstance(stmt, gast.Assign)
    prim = op.primitive
    known = registry.lookup(prim) is not None or registry.is_nondifferentiable(prim) \
        or isinstance(prim, ir.UnknownMember)
    return not known


def describe(op: ir.Op) -> str:
    """How messages name an operation's primitive: ``'np.tanh'``, ``the method '.foo()'``."""
    prim = op.primitive
    if isinstance(prim, ir.UnknownMember) or op.label.startswith("."):
        return f"the {'method' if op.label.endswith('()') else 'attribute'} '{op.label}'"
    return f"'{registry.display_name(prim)}'"


def operand_names(op: ir.Op) -> list[str]:
    """Variables an operation reads through its operands."""
    names = []
    for arg in [*op.args, *op.kwargs.values()]:
        for n in ir.names_in(arg):
            if n not in names:
                names.append(n)
    return names


def output_names(program: ir.Program) -> list[str]:
    return ir.names_in(program.output)


def activity(program: ir.Program, wrt: list[str]) -> Activity:
    """Varied and useful sets of ``program`` for the arguments ``wrt``.

    The analysis is flow-insensitive: a variable is varied if any of its
    definitions is, which is exact for straight-line code (every name is
    assigned once) and a safe over-approximation in loops, iterated to a fixed
    point because a loop carries values from one iteration to the next.
    """
    # a shift-neutral extremum (see simplify.shift_neutral) carries no derivative
    neutral = getattr(program, "neutral", set())
    simple = [s for s in ir.walk_statements(program.body)
              if getattr(s, "op", None) is not None and differentiable(s.op)
              and not (neutral and set(ir.target_names(s)) & neutral)
              and not integer_cast(s.op, program.free)]
    # each statement's targets and operands, found once for every round
    flows = [(ir.target_names(stmt), operand_names(stmt.op)) for stmt in simple]
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for targets, reads in flows:
            if any(n in varied for n in reads) \
                    and not all(t in varied for t in targets):
                varied.update(targets)
                changed = True
    useful = set(output_names(program))
    changed = True
    while changed:
        changed = False
        for targets, reads in reversed(flows):
            if any(n in useful for n in targets) \
                    and not all(r in useful for r in reads):
                useful.update(reads)
                changed = True
    return Activity(varied, useful)


# -- shape classes ----------------------------------------------------------------
#
# The adjoint of a broadcasting operation must sum the cotangent back to each
# operand's shape (``unbroadcast``) unless the operand provably has the output's
# shape.  A light analysis suffices for the common cases: values are grouped in
# classes known to share a shape -- a value and ``np.tanh`` of it, ``x`` and
# ``x * 2``, all scalars -- and ``unbroadcast(g, x)`` is dropped when every
# operand of the operation is in ``x``'s class or is a scalar.

SCALAR = "<scalar>"

_ELEMENTWISE_UNARY = {operator.neg, operator.pos, abs}
_ELEMENTWISE_BINARY = {operator.add, operator.sub, operator.mul, operator.truediv,
                       operator.pow}
_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std,
               np.linalg.norm, np.ndarray.sum, np.ndarray.mean, np.ndarray.prod,
               np.ndarray.max, np.ndarray.min, np.ndarray.var, np.ndarray.std}
# (not np.linalg.det: a stack of matrices has a stack of determinants)
_SCALAR_VALUED = {np.vdot, float, len, np.ndarray.ndim, np.ndarray.size}


def _is_unary(prim) -> bool:
    if isinstance(prim, np.ufunc):
        return prim.nin == 1 and prim.nout == 1 and prim.signature is None
    return prim in _ELEMENTWISE_UNARY


def _is_binary(prim) -> bool:
    if isinstance(prim, np.ufunc):  # np.matmul is a ufunc too, but not elementwise
        return prim.nin == 2 and prim.nout == 1 and prim.signature is None
    return prim in _ELEMENTWISE_BINARY


def shape_classes(program: ir.Program) -> dict[str, str]:
    """Map each variable to a class of variables known to share its shape.

    A name bound more than once -- a loop's carried value, a branch's merged
    one, an argument assigned in a loop -- gets a class only where every
    binding provably has it, all along (a greatest fixed point, see
    :func:`_rebound_classes`): ``h = x`` then ``h = np.tanh(h * 0.5)`` in a
    loop keeps ``x``'s shape, and ``unbroadcast`` of ``h`` goes; ``h = 0.0``
    then ``h = np.tanh(x @ W + h)`` changes shape after the first step, and
    ``h`` gets no class.

        >>> from ..frontend.parse import parse_function
        >>> from ..normalize.normalizer import normalize
        >>> def f(x, W):
        ...     h = x
        ...     g = 0.0
        ...     for i in range(3):
        ...         h = np.tanh(h * 0.5)
        ...         g = np.tanh(x @ W + g)
        ...     return np.sum(h * g)
        >>> classes = shape_classes(normalize(parse_function(f)))
        >>> classes["h"], classes["g"]
        ('x', 'g')
    """
    floats = _scalar_params(program)
    definitions, _ = ir.definitions(program.body)
    always_scalar = _always_scalar(program, floats)
    params = set(program.params)
    rebound = {n for n, count in definitions.items()
               if (count > 1 or n in params) and n not in always_scalar}
    bindings: dict[str, list] = {}
    classes = _classes_once(program, floats, definitions, always_scalar, {}, bindings)
    if rebound:
        carried = _rebound_classes(program, rebound, definitions, bindings, floats)
        while carried:  # drop a class a binding contradicts, until none does
            bindings = {}
            classes = _classes_once(program, floats, definitions, always_scalar, carried,
                                    bindings)
            wrong = {n for n, cls in carried.items()
                     if any(found != cls for found in bindings.get(n, ()))}
            if not wrong:
                break
            carried = {n: cls for n, cls in carried.items() if n not in wrong}
            if not carried:  # the first pass's classes, which assumed none
                classes = _classes_once(program, floats, definitions, always_scalar, {}, {})
    return classes


def _classes_once(program, floats, definitions, always_scalar, carried, bindings) -> dict:
    """One pass over the statements: the class of each name bound once, with
    ``carried`` (a name bound several times -> its assumed class) for those;
    ``bindings`` receives, for each name bound several times, the class of
    each of its bindings (None where it has none: a tuple target, an update)."""
    classes = {p: SCALAR if p in floats else carried.get(p, p) for p in program.params}

    def cls(node):
        if isinstance(node, gast.Constant) and isinstance(node.value, (int, float)):
            return SCALAR
        if isinstance(node, gast.Name) and node.id in always_scalar:
            return SCALAR
        if isinstance(node, gast.Name) and node.id in carried:
            return carried[node.id]
        if isinstance(node, gast.Name) and definitions.get(node.id, 0) <= 1 \
                and not (node.id in program.params and definitions.get(node.id)):
            return classes.get(node.id, node.id)
        return None  # reassigned somewhere: its shape may change, so claim nothing

    for stmt in ir.walk_statements(program.body):
        targets = ir.assigned_by(stmt)
        op = getattr(stmt, "op", None)
        if len(targets) != 1 or op is None or ir.is_update(stmt):
            for target in targets:
                bindings.setdefault(target, []).append(None)
            continue
        target = targets[0]
        if target in always_scalar:
            classes[target] = SCALAR   # every definition is a scalar
            continue
        result = _defined_class(target, op, cls)
        if definitions.get(target, 0) > 1 or target in program.params:
            bindings.setdefault(target, []).append(result)
            classes[target] = carried.get(target, target)  # no claim unless every binding has it
            continue
        classes[target] = result
    return classes


def _defined_class(target, op, cls):
    """The class of ``target = op(...)``: its own (``target``) where nothing is known."""
    prim, args = op.primitive, op.args
    try:
        if getattr(prim, "__module__", None) == "math" and not op.kwargs:
            return SCALAR
        if prim in _REDUCTIONS and len(args) == 1 and not op.kwargs:
            return SCALAR
        if prim in _SCALAR_VALUED:
            return SCALAR
        if (_is_unary(prim) and len(args) == 1) or prim is operator.pos:
            return cls(args[0]) or target
        if _is_binary(prim) and len(args) == 2 and not op.kwargs:
            a, b = cls(args[0]), cls(args[1])
            if a is not None and (a == b or b == SCALAR):
                return a
            if b is not None and a == SCALAR:
                return b
    except TypeError:  # an unhashable primitive: no shape knowledge
        pass
    return target


def _rebound_classes(program, rebound, definitions, bindings, floats) -> dict:
    """The class to assume for each name bound several times: an argument's own
    (the shape it came with), else the class of its first binding -- only a
    class that names one shape all along: an argument never assigned, or a
    name assigned once, by an assignment outside every loop (a name assigned
    in a loop, or a loop's target, has a new value, maybe of a new shape,
    each step).  The caller then checks
    every binding against it and drops the names one contradicts.

    Sound when every binding of a name kept has its class, given that every
    name read has its own: then, by induction over the run, each value has
    its class's shape whenever it is bound."""
    in_loops = set()
    for stmt in ir.walk_statements(program.body):
        if isinstance(stmt, (gast.For, gast.While)):
            in_loops.update(id(s) for s in ir.walk_statements(stmt.body + stmt.orelse))
    _, last = ir.definitions(program.body)
    params = set(program.params)
    fixed = {p for p in params if not definitions.get(p)}
    fixed |= {n for n, count in definitions.items() if count == 1 and n not in params
              and isinstance(last[n], gast.Assign) and not ir.is_update(last[n])
              and id(last[n]) not in in_loops}
    carried = {}
    for name in sorted(rebound):
        if name in params:
            cls = None if name in floats else name
        else:
            first = bindings.get(name, [None])[0]
            cls = first if first in fixed else None
        if cls is not None and (cls == name and name in params or cls in fixed):
            carried[name] = cls
    return carried


def _scalar_valued(op, is_scalar, shapes=frozenset()) -> bool:
    """Whether ``op`` yields a scalar when the operands ``is_scalar`` says are scalars
    (``shapes``: variables holding an array's ``.shape``, whose items are ints)."""
    prim, args = op.primitive, op.args
    if op.kwargs:
        return False
    if prim is operator.getitem and isinstance(args[0], gast.Name) and args[0].id in shapes \
            and isinstance(args[1], gast.Constant) and isinstance(args[1].value, int):
        return True
    try:
        if getattr(prim, "__module__", None) == "math" or prim in _SCALAR_VALUED:
            return True
        if prim in _REDUCTIONS and len(args) == 1:
            return True
        if (_is_unary(prim) and len(args) == 1) or (_is_binary(prim) and len(args) == 2):
            return all(is_scalar(a) for a in args)
    except TypeError:  # an unhashable primitive
        return False
    return False


def scalar_names(program: ir.Program) -> set[str]:
    """Variables that hold a number or NumPy scalar on every path (immutable:
    nothing else can share their memory)."""
    return _always_scalar(program, _scalar_params(program))


def _scalar_params(program) -> set[str]:
    """The parameters the code is specialised for as Python floats or ints:
    numbers, whatever the function does with them."""
    return set(getattr(program, "float_params", ())) | set(getattr(program, "int_params", ()))


def _always_scalar(program: ir.Program, floats) -> set[str]:
    """Variables every definition of which is a scalar (a Python float argument
    updated in a loop: ``a = a + 0.1 * math.sin(b)``), by a greatest fixed point:
    assume all reassigned variables are, drop those with a definition that is not."""
    defs: dict[str, list] = {}
    for stmt in ir.walk_statements(program.body):
        for target in ir.assigned_by(stmt):
            defs.setdefault(target, []).append(stmt)
    candidates = {n for n in defs if n not in program.params or n in floats}
    candidates |= set(floats)
    shapes = {name for name, stmts in defs.items() if name not in program.params
              and len(stmts) == 1 and getattr(getattr(stmts[0], "op", None), "primitive",
                                                None) is np.ndarray.shape}

    def is_scalar(node):
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        return isinstance(node, gast.Name) and node.id in candidates

    def scalar_definition(stmt) -> bool:
        op = getattr(stmt, "op", None)
        return isinstance(stmt, gast.Assign) and not ir.is_update(stmt) \
            and isinstance(stmt.targets[0], gast.Name) and op is not None \
            and _scalar_valued(op, is_scalar, shapes)

    # a worklist, not rounds over every name: dropping a name revisits only the
    # names defined from it (rounds took one per link of a chain: quadratic)
    readers: dict[str, set[str]] = {}
    for name in candidates:
        for stmt in defs.get(name, []):
            for arg in getattr(getattr(stmt, "op", None), "args", ()):
                if isinstance(arg, gast.Name):
                    readers.setdefault(arg.id, set()).add(name)
    todo = sorted(candidates, reverse=True)
    queued = set(todo)
    while todo:
        name = todo.pop()
        queued.discard(name)
        if name in candidates and not all(scalar_definition(s) for s in defs.get(name, [])):
            candidates.discard(name)
            for reader in readers.get(name, ()):
                if reader in candidates and reader not in queued:
                    todo.append(reader)
                    queued.add(reader)
    return candidates
