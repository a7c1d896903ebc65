"""The program representation the passes share.

After normalisation a function is a list of gast statements in A-normal form
(one operation per statement, operands are names or constants) plus this side
information: each operation's :class:`Op` (which primitive it applies, to which
operands, and where it came from in the user's file) hangs on its statement as
``stmt.op``.  Keeping the statements as gast means every pass can print them
with ``ast.unparse``; keeping the meaning in ``Op`` means no pass re-derives
what a call refers to.

The package is the representation every stage shares: :mod:`.syntax` (small
builders and walkers of gast trees), :mod:`.naming` (deterministic fresh
names) and :mod:`.emit` (statements back to source, with their comments).
It may import ``errors`` and :mod:`..runtime` only (a helper reference knows
the runtime function it names).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from .naming import Namer
from .syntax import loaded_names, walk, walk_nodes


class Opaque:
    """The primitive of an expression kept whole and never differentiated:
    comparisons, boolean operators, side-effect statements (``print``)."""

    def __repr__(self):
        return "OPAQUE"


OPAQUE = Opaque()


class Builder:
    """The primitive of a display that builds a container: ``(a, b)``, ``[a, b]``,
    ``{"w": w}``; and of reading an object's attribute (``self.W``)."""

    def __init__(self, label):
        self.label = label

    def __repr__(self):
        return self.label


BUILD_TUPLE = Builder("tuple display")
BUILD_LIST = Builder("list display")
BUILD_DICT = Builder("dict display")
BUILD_NAMEDTUPLE = Builder("named tuple")  # P(a, b) for a named tuple class P
BUILD_RECORD = Builder("dataclass")  # Lin(w, c) for a dataclass Lin that only stores its fields
GETATTR = Builder("attribute")
CONCAT = Builder("sequence +")      # a + b of tuples or lists (see srcgrad.sequences)
REPEAT = Builder("sequence *")      # a * n of a tuple or list
APPEND = Builder(".append()")
DICT_COPY = Builder("dict copy")  # d.copy(), dict(d) of a dict: its items (normalize/container_copies.py)


@dataclass(frozen=True)
class UnknownMember:
    """A method or attribute of a value that no rule knows (``x.foo()``)."""

    name: str
    is_call: bool

    def __str__(self):
        return f".{self.name}()" if self.is_call else f".{self.name}"


@dataclass
class Op:
    """One primitive operation: ``targets = primitive(*args, **kwargs)``.

    ``args``/``kwargs`` are gast expressions built only from names, constants
    and literal containers of them (lists, tuples, slices); ``node`` is the
    user's original expression (for error locations) and ``label`` how
    messages name the primitive.
    """

    primitive: object
    args: list
    kwargs: dict
    node: object
    label: str


@dataclass
class Program:
    """A function in A-normal form, ready for analysis and differentiation."""

    name: str
    params: list[str]
    body: list                       # gast statements; Assign statements carry .op
    output: object                   # gast Name/Constant, or Tuple of them
    filename: str
    node: gast.FunctionDef           # the user's definition (signature, defaults)
    free: dict[str, object] = field(default_factory=dict)   # free name -> object
    namer: Namer = field(default_factory=Namer)
    output_node: object = None       # the returned expression, for error locations


def names_in(node) -> list[str]:
    """Names loaded anywhere in ``node``, in order of first appearance."""
    kind = type(node)
    if kind is gast.Name:  # most operands in A-normal form: no walk
        return [] if isinstance(node.ctx, gast.Store) else [node.id]
    if kind is gast.Constant:
        return []
    return loaded_names(node)


def target_names(stmt) -> list[str]:
    """Names whose value an ANF statement sets: the assigned names, or the array
    an element assignment ``x[i] = v`` updates in place."""
    if not isinstance(stmt, gast.Assign):
        updated = getattr(stmt, "updates", None) or _appended(stmt)
        return [updated] if updated else []
    target = stmt.targets[0]
    if isinstance(target, gast.Tuple):
        return stored_names(target)
    if isinstance(target, gast.Subscript):
        return [target.value.id]
    return [target.id]


def is_update(stmt) -> bool:
    """``x[i] = v``, ``xs.append(v)``: a statement that changes an existing value."""
    if isinstance(stmt, gast.Assign):
        return isinstance(stmt.targets[0], gast.Subscript)
    return getattr(stmt, "updates", None) is not None or _appended(stmt) is not None


def _appended(stmt):
    op = getattr(stmt, "op", None)
    if op is not None and op.primitive is APPEND:
        return op.args[0].id
    return None


def name(id_: str, store: bool = False) -> gast.Name:
    """A gast Name node."""
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(),
                     annotation=None, type_comment=None)


def assign(target, value) -> gast.Assign:
    """``target = value``; ``target`` is a name or a gast target node."""
    if isinstance(target, str):
        target = name(target, store=True)
    return gast.Assign(targets=[target], value=value, type_comment=None)


def walk_statements(stmts):
    """Every statement in ``stmts``, depth first, compound statements before their bodies."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            yield from walk_statements(stmt.body)
            yield from walk_statements(stmt.orelse)


def statement_blocks(body):
    """``body`` and every statement list nested in it: where a pass inserts a
    statement next to another (a run-time check before the statement it guards)."""
    yield body
    for stmt in body:
        for part in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, part, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                yield from statement_blocks(inner)


def stored_names(node) -> list[str]:
    """Names a target expression assigns."""
    return [n.id for n in walk_nodes(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)]


def assigned_by(stmt) -> list[str]:
    """Names a statement itself (not its body) assigns: a for loop its target."""
    if isinstance(stmt, gast.For):
        return stored_names(stmt.target)
    return target_names(stmt)


def definitions(body) -> tuple[dict[str, int], dict[str, object]]:
    """How often each name is assigned in ``body``, and its last assigning statement."""
    counts: dict[str, int] = {}
    last: dict[str, object] = {}
    for stmt in walk_statements(body):
        for n in assigned_by(stmt):
            counts[n] = counts.get(n, 0) + 1
            last[n] = stmt
    return counts, last
