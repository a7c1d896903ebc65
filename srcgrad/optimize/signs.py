"""Minus signs carried to where they cost nothing.

Adjoint rules bring minus signs: ``cos``'s is ``d_x = -d_y * np.sin(x)``,
subtraction's ``d_b = -d_t``, ``exp(-n)``'s ``d_n = -(d_o * o)``.  On arrays
each one is a pass over the data and a new array: the benchmark's 30-op
elementwise chain spent five of its adjoint's sixty passes negating (none,
with this pass).  A careful
hand carries the sign instead, into a constant (``dg *= -0.5``) or a later sum
(``dm -= dnn``), and this pass does the same.  It keeps, for a name bound to a
negation, the value without its sign (named ``minus_...``: the cotangent is
minus it), writes the sign into the statements that read the name, and there
moves it out of products and quotients until a sum or a constant takes it::

    d_v = -d_w * np.sin(v)           minus_d_v = d_w * np.sin(v)
    d_u = d_v * 0.5             ->   d_u = minus_d_v * -0.5
    d_s = d_cc + d_u * (2 * s)       d_s = d_cc + d_u * (2 * s)
    d_a = d_x + d_v                  d_a = d_x - minus_d_v

A negation followed by a sum into the same name, ``d_a = -d_k`` then ``d_a =
d_a + d_c * b``, becomes one statement, ``d_a = d_c * b - d_k``.

Bit for bit the same numbers (NaN's sign bit aside), because each rewrite is
an IEEE identity, exact for every operand -- infinities and signed zeros
included -- in round-to-nearest, whose rounding is symmetric about zero:

* ``(-a) * b`` and ``(-a) / b`` are ``-(a * b)`` and ``-(a / b)``, and ``(-a) * c``
  is ``a * (-c)`` for a number ``c`` (the sign of a product or quotient is the
  exclusive or of its operands', its magnitude theirs; complex products and
  NumPy's complex division are sums of such terms, each negated);
* ``a + (-b)`` is ``a - b`` and ``(-b) + a`` is ``a - b`` (IEEE defines
  ``a - b`` as ``a + (-b)``; addition commutes); ``a - (-b)`` is ``a + b``;
  ``-(-a)`` is ``a``.  ``(-a) - b`` is not ``-(a + b)`` (``a = 0.0, b = -0.0``
  gives ``0.0`` against ``-0.0``), and is left alone.

The sign of a NaN is the one bit that may change: IEEE 754 leaves it
uninterpreted, and moving a minus changes the sign of a NaN an operation
makes (``inf * 0``) or passes on.  The rest of the pipeline keeps it, which
its tests check against the pipeline without this pass.

A name is carried only where that saves a negation: it is bound once in the
function, by a statement of the adjoint sweep, and read only by later
statements of the same block (not by a nested block, nor by a loop's next
step before the binding); the statements that read it are rewritten, and the
change is kept only where the negations of arrays (a minus before anything
but a number) in them and the binding are fewer than before.  The forward
sweep is never touched (its values are the function's own).  Runs after
:mod:`.fold`, which has put single-use temporaries into their readers, and
before :mod:`.inplace_adjoint`, which then writes the rewritten arithmetic
into owned arrays as it did the original (``minus_`` names are cotangents and
scalars where the names they replace were).  Tested by
tests/optimize/test_signs.py.

    >>> from ..ir.emit import show_statements
    >>> from ..ir.naming import Namer
    >>> body = gast.parse("d_v = -d_w * np.sin(v)\\nd_u = d_v * 0.5\\n"
    ...                   "d_s = d_cc + d_u * (2 * s)\\nd_a = d_x + d_v").body
    >>> renamed = {}
    >>> body = carry_signs(body, set(), Namer(), renamed)
    >>> print(show_statements(body))
    minus_d_v = d_w * np.sin(v)  # minus d_v: its sign is taken where it is read
    d_u = minus_d_v * -0.5
    d_s = d_cc + d_u * (2 * s)
    d_a = d_x - minus_d_v
    >>> renamed
    {'minus_d_v': 'd_v'}

A name whose readers could not take its sign keeps it:

    >>> body = gast.parse("d_b = -d_t\\nd_x = f(d_b)").body
    >>> print(show_statements(carry_signs(body, set(), Namer(), {})))
    d_b = -d_t
    d_x = f(d_b)
"""

from __future__ import annotations

import threading
from collections import Counter

import gast
import numpy as np

from ..ir.syntax import clone, walk, walk_nodes
from ..ir.transformer import Transformer

_PRODUCTS = (gast.Mult, gast.Div)
_COMPOUND = (gast.For, gast.While, gast.If, gast.With, gast.Try, gast.FunctionDef,
             gast.AsyncFor, gast.AsyncWith, gast.AsyncFunctionDef, gast.ClassDef)
_COMMENT = "its sign is taken where it is read"
_FRESH = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.FloorDiv, gast.Mod)
_DEPTH = 8   # how many readers in a row may carry a sign on before one takes it
_MEMO = threading.local()   # facts of the statements of the run in progress (see _facts)


def carry_signs(body, skip, namer, renamed) -> list:
    """``body`` (a function's statements) with the minus signs of its adjoint
    statements carried to where they cost nothing (see the module docstring);
    ``renamed`` gains ``{new name: the name it replaces}``.  ``skip``: the ids
    of the forward sweep's statements, left alone.  ``body`` is changed in
    place."""
    if not any(_negation(node) for stmt in body if id(stmt) not in skip for node in walk_nodes(stmt)):
        return body
    stores, loads = Counter(), Counter()
    memo = {}   # the facts of the simple statements, from the walk made here anyway
    for stmt in body:
        nodes = walk_nodes(stmt)
        for node in nodes:
            if type(node) is gast.Name:
                (loads if type(node.ctx) is gast.Load else stores)[node.id] += 1
        if not isinstance(stmt, _COMPOUND):  # (a loop's body may change before it is asked)
            memo[stmt] = _facts_of(nodes)
    _MEMO.facts = memo
    try:
        _blocks(body, skip, stores, loads, namer, renamed)
    finally:
        del _MEMO.facts
    return body


def _facts(node) -> tuple:
    """``(negations of arrays, names mentioned, Counter of names read)`` of
    ``node``, kept for the run: the pass weighs each candidate against the
    whole block, so walking every statement each time made it quadratic (13 s
    for a 1,000-line function).  Sound because no node is changed once its
    facts are taken: every rewrite is of a clone, put in the list as a new
    statement; the run's statements stay alive in the memo, so no key is reused."""
    memo = getattr(_MEMO, "facts", None)
    known = memo.get(node) if memo is not None else None
    if known is None:
        known = _facts_of(walk_nodes(node))
        if memo is not None:
            memo[node] = known
    return known


def _facts_of(nodes) -> tuple:
    """:func:`_facts` of the nodes of a statement."""
    names = [sub for sub in nodes if type(sub) is gast.Name]
    return (sum(1 for sub in nodes if _negation(sub)), frozenset(n.id for n in names),
            Counter(n.id for n in names if type(n.ctx) is gast.Load))


def _blocks(stmts, skip, stores, loads, namer, renamed) -> None:
    """Carry the signs of each block of ``stmts``, nested blocks first."""
    for stmt in stmts:
        if isinstance(stmt, _COMPOUND) and id(stmt) not in skip:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if inner:
                    _blocks(inner, skip, stores, loads, namer, renamed)
            for handler in getattr(stmt, "handlers", ()):
                _blocks(handler.body, skip, stores, loads, namer, renamed)
    for k, stmt in enumerate(stmts):   # a + -b * c -> a - b * c, within a statement
        if id(stmt) not in skip and not isinstance(stmt, _COMPOUND) and _cost(stmt):
            signed = _signed(clone(stmt))
            if _cost(signed) < _cost(stmt):
                stmts[k] = signed
    while _step(stmts, skip, stores, loads, namer, renamed):
        pass   # a carried sign may leave a reader bound to a negation in turn


def _step(stmts, skip, stores, loads, namer, renamed) -> bool:
    """One change to the block that saves negations, if there is one."""
    present = None   # {id: statement} of the block, made at the first candidate
    for k, stmt in enumerate(stmts):
        if id(stmt) in skip:
            continue
        if _negated_name(stmt, stores, loads) and _substitute(stmts, k, skip, loads):
            return True
        if _merged(stmts, k, skip, stores):
            return True
        if _candidate(stmt, stores):
            work, trial, names, counts = _Edited(stmts), _Trial(namer), dict(renamed), Counter(loads)
            _carry(work, k, skip, stores, counts, trial, names)
            present = present or {id(s): s for s in stmts}
            if _fewer_negations(work, present, len(stmts)):
                stmts[:] = work
                loads.clear(), loads.update(counts)
                renamed.clear(), renamed.update(names)
                return True
            namer.taken.difference_update(trial.made)   # no negation saved: as it was
    return False


def _fewer_negations(work, present, size) -> bool:
    """Whether the block ``work`` negates fewer arrays than the block whose
    statements are ``present`` (``{id: statement}``, ``size`` of them), of
    which it replaces or leaves out some: only the statements that differ are
    counted, those ``work``'s edits note (each candidate's; a scan of the whole
    block per candidate was a third of the pass on a 1,000-line function)."""
    if len(present) == size:   # no statement twice in the block: the edits tell
        added = sum(_cost(s) for s, net in work.net.values() if net > 0 and id(s) not in present)
        return added < sum(_cost(s) for s, net in work.net.values() if net < 0 and id(s) in present)
    kept = {id(s) for s in work}
    added = sum(_cost(s) for s in work if id(s) not in present)
    return added < sum(_cost(s) for key, s in present.items() if key not in kept)


class _Trial:
    """The namer as a candidate uses it, noting the names it hands out: those
    are all a rejected candidate took (a copy of every name taken, per
    candidate, was quadratic in the function)."""

    def __init__(self, namer):
        self.namer, self.made = namer, []

    def fresh(self, base: str) -> str:
        name = self.namer.fresh(base)
        self.made.append(name)
        return name


class _Edited(list):
    """A copy of a block that notes the statements its edits put in and take
    out: ``net[id] = (statement, +1 put in / -1 taken out / 0 both)``."""

    def __init__(self, stmts):
        super().__init__(stmts)
        self.net = {}

    def _note(self, stmt, change) -> None:
        held = self.net.get(id(stmt))
        self.net[id(stmt)] = (stmt, (held[1] if held else 0) + change)

    def __setitem__(self, k, stmt):
        self._note(self[k], -1)
        self._note(stmt, 1)
        super().__setitem__(k, stmt)

    def __delitem__(self, k):
        self._note(self[k], -1)
        super().__delitem__(k)


def _candidate(stmt, stores) -> bool:
    """Whether ``stmt`` binds a name, bound nowhere else, to an expression
    with a minus sign (``-a``, ``-a * b``) that may be a negation (its
    target a name, the statement's negations are its value's)."""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and type(stmt.targets[0]) is gast.Name and stores[stmt.targets[0].id] == 1 \
        and _cost(stmt) > 0


def _carry(stmts, k, skip, stores, loads, namer, renamed, depth=0) -> None:
    """Bind ``stmts[k]``'s name without its sign and rewrite its readers (new
    statements in the list; none is changed), where that can be done.  A
    reader left bound to a negation is merged into the sum that follows it,
    or carried in turn (``d_n = -(d_o * o)``, read by ``d_h = d_n * n / h``,
    read by ``d_m = d_m + d_h``); the caller keeps the result where it has
    fewer negations."""
    binding = stmts[k]
    name = binding.targets[0].id
    value = _Signs().visit(clone(binding.value))
    if not (_negation(value) and _fresh(value.operand)):
        return
    readers = _readers(stmts, k, name, loads[name])
    if not readers or sum(_count(stmts[j], name) for j in readers) != loads[name] \
            or any(isinstance(stmts[j], _COMPOUND) or id(stmts[j]) in skip for j in readers):
        return
    minus = namer.fresh(f"minus_{name}")
    bound = clone(binding)
    bound.targets = [gast.Name(id=minus, ctx=gast.Store(), annotation=None, type_comment=None)]
    bound.value = value.operand
    earlier = getattr(binding, "comment", None)
    bound.comment = f"minus {name}: {_COMMENT}" + (f"; {earlier}" if earlier else "")
    stmts[k] = bound
    for j in readers:
        stmts[j] = _signed(_renamed(clone(stmts[j]), name, minus))
    loads[minus] = loads.pop(name)
    renamed[minus] = renamed.pop(name, name)
    if depth < _DEPTH:
        for reader in [stmts[j] for j in readers]:
            if reader in stmts and _cost(reader):
                j = stmts.index(reader)
                if not _merged(stmts, j, skip, stores) and _candidate(reader, stores):
                    _carry(stmts, j, skip, stores, loads, namer, renamed, depth + 1)


def _merged(stmts, k, skip, stores) -> bool:
    """``n = -F`` then, next, ``n = n + X`` (or ``X + n``), which only reads it:
    the two made one ``n = X - F`` (exactly the sum: ``(-F) + X`` is ``X - F``),
    where nothing in between mentions ``n`` or may change what ``F`` reads."""
    stmt = stmts[k]
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and type(stmt.targets[0]) is gast.Name and _negation(stmt.value)
            and _pure(stmt.value)):
        return False
    name = stmt.targets[0].id
    read = {node.id for node in walk_nodes(stmt.value) if type(node) is gast.Name}
    for j in range(k + 1, len(stmts)):
        later = stmts[j]
        if id(later) in skip or isinstance(later, _COMPOUND):
            return False
        mentioned = _facts(later)[1]
        if name in mentioned:
            break
        if read & mentioned and not (all(_only_arithmetic(later, r) for r in read & mentioned)
                                     and not read & set(_targets(later))):
            return False
    else:
        return False
    total = later.value if isinstance(later, gast.Assign) else None
    if not (isinstance(later, gast.Assign) and len(later.targets) == 1
            and type(later.targets[0]) is gast.Name and later.targets[0].id == name
            and type(total) is gast.BinOp and type(total.op) is gast.Add
            and _count(later, name) == 1):
        return False
    if type(total.left) is gast.Name and total.left.id == name:
        other = total.right
    elif type(total.right) is gast.Name and total.right.id == name:
        other = total.left
    else:
        return False
    merged = clone(later)
    merged.value = gast.BinOp(left=clone(other), op=gast.Sub(), right=stmt.value.operand)
    stmts[j] = merged
    del stmts[k]
    return True


def _pure(node) -> bool:
    """Whether ``node`` is arithmetic of names, numbers and NumPy ufuncs: the
    same value read later where the names hold the same arrays."""
    for sub in walk(node):
        if type(sub) is gast.Call:
            if not (type(sub.func) is gast.Attribute and type(sub.func.value) is gast.Name
                    and sub.func.value.id == "np"
                    and isinstance(getattr(np, sub.func.attr, None), np.ufunc)
                    and not sub.keywords):
                return False
        elif not isinstance(sub, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp,
                                  gast.Attribute, gast.Load, gast.operator, gast.unaryop)):
            return False
    return True


def _targets(stmt) -> list:
    return [node.id for target in getattr(stmt, "targets", ()) for node in walk_nodes(target)
            if type(node) is gast.Name]


def _negated_name(stmt, stores, loads) -> bool:
    """Whether ``stmt`` is ``n = -m`` of a name ``m`` (``d_t3 = -d_s``), ``n``
    bound nowhere else and read somewhere."""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and type(stmt.targets[0]) is gast.Name and stores[stmt.targets[0].id] == 1 \
        and _negation(stmt.value) and type(stmt.value.operand) is gast.Name \
        and loads[stmt.targets[0].id] > 0


def _substitute(stmts, k, skip, loads) -> bool:
    """``n = -m`` (``m`` a name) left out, each read of ``n`` made ``-m`` and the
    readers' signs moved, where that saves a negation and ``m`` keeps its
    value up to the last reader: nothing between mentions it but readers
    that only read it (no binding, no update, no call that may change it)."""
    binding = stmts[k]
    name, operand = binding.targets[0].id, binding.value.operand.id
    readers = _readers(stmts, k, name, loads[name])
    if not readers or sum(_count(stmts[j], name) for j in readers) != loads[name] \
            or any(isinstance(stmts[j], _COMPOUND) or id(stmts[j]) in skip for j in readers):
        return False
    for j in range(k + 1, readers[-1] + 1):
        mentions = [node for node in walk_nodes(stmts[j]) if type(node) is gast.Name
                    and node.id == operand]
        if mentions and (j < readers[-1] and any(type(n.ctx) is not gast.Load for n in mentions)
                         or not _only_arithmetic(stmts[j], operand)):
            return False
    if any(not isinstance(stmts[j], (gast.Assign, gast.AugAssign)) for j in readers):
        return False   # (a del of the name, say: not one of the name it stood for)
    rewritten = {j: _signed(_renamed(clone(stmts[j]), name, operand)) for j in readers}
    if 1 + sum(_cost(stmts[j]) for j in readers) <= sum(map(_cost, rewritten.values())):
        return False
    for j, stmt in rewritten.items():
        stmts[j] = stmt
    del stmts[k]
    loads[operand] += loads.pop(name) - 1
    return True


def _readers(stmts, k, name, reads) -> list:
    """The positions after ``k`` of the statements that mention ``name``, bound
    by ``stmts[k]`` alone, the search stopped where they have read it ``reads``
    times (the count of its reads in the function, never less): no statement
    after them mentions it, and a search to the end of the block per candidate
    was most of the pass's time on a long function."""
    found, seen = [], 0
    for j in range(k + 1, len(stmts)):
        if seen >= reads > 0:
            break
        if _reads(stmts[j], name):
            found.append(j)
            seen += _count(stmts[j], name)
    return found


def _only_arithmetic(stmt, name) -> bool:
    """Whether ``stmt`` is an assignment to a name whose value reads ``name``
    only as an operand of arithmetic (nothing that could change its array)."""
    if not (isinstance(stmt, gast.Assign) and all(type(t) is gast.Name for t in stmt.targets)):
        return False
    parents = {}
    for node in walk(stmt.value):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in walk(stmt.value):
        if type(node) is gast.Name and node.id == name:
            parent = parents.get(id(node))
            if parent is not None and type(parent) not in (gast.BinOp, gast.UnaryOp):
                return False
    return True


def _fresh(node) -> bool:
    """Whether ``node`` makes a new value (arithmetic, a function's result):
    bound without its sign, the name must not share an array that something
    may still change (``-d_X[1:]`` is a copy, ``d_X[1:]`` a view)."""
    return type(node) is gast.BinOp and type(node.op) in _FRESH \
        or type(node) is gast.Call and type(node.func) is gast.Attribute \
        and type(node.func.value) is gast.Name and node.func.value.id == "np" \
        and isinstance(getattr(np, node.func.attr, None), np.ufunc)


def _negation(node) -> bool:
    """Whether ``node`` is a minus before anything but a number (a pass over an array)."""
    return type(node) is gast.UnaryOp and type(node.op) is gast.USub and not _number(node.operand)


def _number(node) -> bool:
    if type(node) is gast.UnaryOp and type(node.op) in (gast.USub, gast.UAdd):
        return _number(node.operand)
    return type(node) is gast.Constant and type(node.value) in (int, float, complex)


def _negated_number(node):
    """``-c`` of a number ``c``, as a constant where it is one."""
    if type(node) is gast.Constant:
        return gast.Constant(value=-node.value, kind=None)
    if type(node) is gast.UnaryOp and type(node.op) is gast.USub:
        return node.operand
    return gast.UnaryOp(op=gast.USub(), operand=node)


def _reads(stmt, name) -> bool:
    return name in _facts(stmt)[1]


def _count(stmt, name) -> int:
    return _facts(stmt)[2][name]


def _cost(node) -> int:
    return _facts(node)[0]


def _renamed(stmt, name, minus):
    """``stmt`` with each read of ``name`` made ``-minus`` (``del name``: ``del minus``)."""
    for node in list(walk(stmt)):
        for field, value in gast.iter_fields(node):
            if type(value) is list:
                for i, item in enumerate(value):
                    if type(item) is gast.Name and item.id == name:
                        value[i] = _replacement(item, minus)
            elif type(value) is gast.Name and value.id == name:
                setattr(node, field, _replacement(value, minus))
    return stmt


def _replacement(node, minus):
    named = gast.Name(id=minus, ctx=node.ctx, annotation=None, type_comment=None)
    if type(node.ctx) is gast.Load:
        return gast.UnaryOp(op=gast.USub(), operand=named)
    return named


def _signed(stmt):
    """``stmt`` with its signs moved out of products into sums and constants
    (the module docstring's identities), children first."""
    _Signs().visit(stmt)
    if type(stmt) is gast.AugAssign and type(stmt.op) in (gast.Add, gast.Sub) \
            and _negation(stmt.value):   # x += -v  ->  x -= v
        stmt.value = stmt.value.operand
        stmt.op = gast.Sub() if type(stmt.op) is gast.Add else gast.Add()
    return stmt


class _Signs(Transformer):
    """The identities of the module docstring, applied bottom-up."""

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if type(node.op) is gast.USub and _negation(node.operand):
            return node.operand.operand   # -(-a) -> a
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right, op = node.left, node.right, type(node.op)
        if op in _PRODUCTS:
            minus_left, minus_right = _negation(left), _negation(right)
            if minus_left and minus_right:
                node.left, node.right = left.operand, right.operand
            elif minus_left and _number(right):
                node.left, node.right = left.operand, _negated_number(right)
            elif minus_right and _number(left):
                node.left, node.right = _negated_number(left), right.operand
            elif minus_left or minus_right:
                if minus_left:
                    node.left = left.operand
                else:
                    node.right = right.operand
                return gast.UnaryOp(op=gast.USub(), operand=node)
            return node
        if op is gast.Add and _negation(right):
            return gast.BinOp(left=left, op=gast.Sub(), right=right.operand)
        if op is gast.Add and _negation(left):
            return gast.BinOp(left=right, op=gast.Sub(), right=left.operand)
        if op is gast.Sub and _negation(right):
            return gast.BinOp(left=left, op=gast.Add(), right=right.operand)
        return node


__all__ = ["carry_signs"]
