"""What a generator computes when it is pulled, and what a loop body changes.

Used by :mod:`.iterators`, kept apart because it is one question asked of
plain syntax: may srcgrad list a generator's items before the loop, where
Python computes each one when the loop gets to it?  Only where that gives the
same items -- nothing the generator evaluates per item (its element, its
conditions, the sources of its later clauses) reads a name the loop's body
assigns or changes in place, and nothing it calls has effects.

    >>> import gast
    >>> loop = gast.parse('''
    ... for w in itertools.islice((v for v in x if v > s), 2):
    ...     s = s + w
    ... ''').body[0]
    >>> sorted(changed_names(loop))
    ['s', 'w']
    >>> sorted(reads_when_pulled(loop.iter.args[0]))
    ['s']
"""

from __future__ import annotations

import itertools
import math

import gast
import numpy as np

from ..frontend.parse import MISSING
from ..ir.syntax import assigned_names, source_of, unchanged, walk
from ..rules import registry

#: Methods that change their object in place (a generator reading it would see).
MUTATING = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                      "add", "discard", "setdefault", "popitem", "sort", "reverse", "fill",
                      "put", "resize", "itemset", "setflags", "partition"})

#: Builtins a generator may call without effects on what the loop body sees.
_PURE_BUILTINS = (abs, len, min, max, sum, float, int, bool, round, pow, range, tuple, list,
                  sorted, reversed, zip, enumerate, any, all, divmod, isinstance, complex, str,
                  map, filter, iter)

#: Calls that consume what they are given when they are made: a generator there
#: is run out at once, as srcgrad does.
_EAGER = (list, tuple, sorted, sum, min, max, any, all, set, frozenset, dict, len,
          itertools.product, np.array, np.asarray, np.stack, np.concatenate, np.fromiter,
          np.sum, np.prod, np.mean, np.max, np.min, math.fsum, math.prod)


def changed_names(loop) -> set:
    """The names a loop's body (and target) assigns, or changes in place."""
    module = gast.Module(body=[*loop.body, gast.Assign(
        targets=[loop.target], value=gast.Constant(value=0, kind=None), type_comment=None)],
        type_ignores=[])
    names = assigned_names(module)
    for node in walk(module):
        if isinstance(node, (gast.Subscript, gast.Attribute)) \
                and isinstance(node.ctx, gast.Store):
            names |= {n.id for n in walk(node.value) if isinstance(n, gast.Name)}
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in MUTATING:
            names |= {n.id for n in walk(node.func.value) if isinstance(n, gast.Name)}
    return names


def pulled_parts(gen) -> list:
    """What a generator evaluates when each item is pulled (not its first
    source, evaluated where it is made)."""
    parts = [gen.elt]
    for i, clause in enumerate(gen.generators):
        parts.extend(clause.ifs)
        if i:
            parts.append(clause.iter)
    return parts


def reads_when_pulled(gen) -> set:
    """The names a generator reads when each item is pulled, its own variables
    (and those of the lambdas and generators inside it) left out."""
    reads, bound = set(), {n.id for c in gen.generators for n in walk(c.target)
                           if isinstance(n, gast.Name)}
    for part in pulled_parts(gen):
        for n in walk(part):
            if isinstance(n, gast.Name):
                (reads if isinstance(n.ctx, gast.Load) else bound).add(n.id)
    return reads - bound


def pulled_generators(expr, callee) -> list:
    """The generator expressions in ``expr`` that a loop over it would pull one
    item at a time (not those an eager call like ``sorted`` runs out first,
    nor those inside a lambda)."""
    found = []

    def visit(node):
        if isinstance(node, gast.GeneratorExp):
            found.append(node)
            visit(node.generators[0].iter)  # made with it: a generator there too
            return
        if isinstance(node, gast.Lambda):
            return
        if isinstance(node, gast.Call) and isinstance(node.func, (gast.Name, gast.Attribute)):
            prim = callee(node)
            if any(prim is f for f in _EAGER):
                return
        for child in gast.iter_child_nodes(node):
            visit(child)

    visit(expr)
    return found


def listing_hazard(gen, changed, callee):
    """Why listing ``gen`` before a loop that changes ``changed`` could give
    other items (words for a message), or None."""
    reads = reads_when_pulled(gen) & changed
    if reads:
        return f"reads '{min(reads)}', which the loop's body changes"
    if any(isinstance(c, gast.Call) and not _pure(c, callee)
           for part in pulled_parts(gen) for c in walk(part)):
        return "calls a function that may change what the loop reads"
    return None


def _pure(call, callee) -> bool:
    """Whether a call computes a value without effects (a rule, NumPy, math,
    a builtin, a lambda, an array's method)."""
    if isinstance(call.func, gast.Lambda):
        return True
    prim = callee(call) if isinstance(call.func, (gast.Name, gast.Attribute)) else MISSING
    if prim is MISSING:
        return isinstance(call.func, gast.Attribute) and call.func.attr not in MUTATING \
            and hasattr(np.ndarray, call.func.attr)
    if isinstance(prim, np.ufunc) or registry.lookup(prim) is not None:
        return True
    module = getattr(prim, "__module__", None) or ""
    return any(prim is f for f in _PURE_BUILTINS) or module in ("math", "cmath") \
        or module.split(".")[0] == "numpy"


__all__ = ["MUTATING", "changed_names", "listing_hazard", "pulled_generators",
           "reads_when_pulled"]


#: Dict methods whose result is a live view of the dict.
_VIEWS = frozenset({"values", "keys", "items"})


def _in_place_writes(stmts, augmented: bool = False) -> dict:
    """Name -> first node changing it in place (``n[k] = ...``, ``n[k] += ...``,
    ``del n[k]``, ``n.append(...)``, and with ``augmented`` ``n *= 3.0`` and a
    ufunc's ``out=n``, which change an array or list in place) in ``stmts``;
    rebinding ``n`` does not count."""
    found = {}
    for node in (n for s in stmts for n in walk(s)):
        root = None
        out = next((k.value for k in node.keywords if k.arg == "out"), None) \
            if augmented and isinstance(node, gast.Call) else None
        if augmented and isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            root = node.target
        elif isinstance(out, (gast.Name, gast.Subscript, gast.Attribute)):
            root = out  # np.multiply(y, 3.0, out=y): y changes in place
        elif isinstance(node, (gast.Subscript, gast.Attribute)) \
                and isinstance(node.ctx, (gast.Store, gast.Del)):
            root = node.value
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in MUTATING:
            root = node.func.value
        while isinstance(root, (gast.Subscript, gast.Attribute)):
            root = root.value
        if isinstance(root, gast.Name):
            found.setdefault(root.id, node)
    return found


def _live_reads(value, callee) -> tuple[set, set] | None:
    """What a named lazy iterator or dict view reads when consumed: the
    containers it runs over (written in place matters) and the names its
    generators and lambdas read per item (rebinding matters too); None where
    ``value`` makes neither."""
    lazy = isinstance(value, gast.GeneratorExp) or isinstance(value, gast.Call) and (
        isinstance(value.func, gast.Attribute) and value.func.attr in _VIEWS
        and not value.args or _lazy_callee(callee(value)))
    if not lazy:
        return None
    names = {n.id for n in walk(value) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Load)}
    per_item = {n.id for part in walk(value) if isinstance(part, (gast.GeneratorExp,
                                                                  gast.Lambda))
                for n in walk(part) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    return names, per_item


def _lazy_callee(called) -> bool:
    """Whether a call of ``called`` makes a lazy iterator (asked once per call:
    resolving the callee is what a long function's assignments cost here)."""
    return any(called is f for f in (reversed, zip, map, filter, enumerate)) \
        or getattr(called, "__module__", None) == "itertools"


def stale_named_iterator(func, callee):
    """``(node, name)`` of the first write that Python's live iterator or dict
    view bound to ``name`` would see and srcgrad's listed copy would not: ``vals
    = d.values(); d['b'] = ...; sum(vals)``, ``it = reversed(xs)`` consumed by a
    loop that writes ``xs[0]``.  The write comes after the binding in the same
    block, and the name is read after the write or by a loop containing it."""
    for block in (getattr(n, field) for n in walk(func)
                  for field in ("body", "orelse", "finalbody")
                  if isinstance(getattr(n, field, None), list)):
        for i, stmt in enumerate(block):
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name)):
                continue
            reads = _live_reads(stmt.value, callee)
            if reads is None:
                continue
            name, (containers, per_item) = stmt.targets[0].id, reads
            aliases = set(containers)
            for later in block[i + 1:]:
                for n in walk(later):
                    if isinstance(n, gast.Assign) and isinstance(n.value, gast.Name) \
                            and n.value.id in aliases:
                        aliases |= {t.id for t in n.targets if isinstance(t, gast.Name)}
            for j, later in enumerate(block[i + 1:], i + 1):
                if name in assigned_names(gast.Module(body=[later], type_ignores=[])):
                    break
                # y *= 3.0 on what map(np.sin, y) runs over: the array changes in place
                writes = _in_place_writes([later], augmented=True)
                hit = next((w for k, w in writes.items() if k in aliases), None)
                if hit is None and per_item:
                    rebound = assigned_names(gast.Module(body=[later], type_ignores=[]))
                    hit = later if rebound & per_item else None
                if hit is None:
                    continue
                uses = [n for s in block[j:] for n in walk(s)
                        if isinstance(n, gast.Name) and n.id == name
                        and isinstance(n.ctx, gast.Load)]
                if uses and (any(n in set(walk(later)) for n in uses) and isinstance(
                        later, (gast.For, gast.While)) or any(
                        n not in set(walk(later)) for n in uses)):
                    return hit, name
    return None


def stale_wrapped_view(func, callee):
    """The first ``reversed(xs)`` that a loop's header wraps in
    ``itertools.pairwise``, ``map``, ``filter`` or a generator expression, or
    dict view it wraps in one of the three calls, while its body changes
    something in place: Python reads it live there, and srcgrad would list it
    (a view in a generator expression is read live already)."""
    for loop in walk(func):
        if not isinstance(loop, gast.For) or not _in_place_writes(loop.body):
            continue
        for wrapper in walk(loop.iter):
            if isinstance(wrapper, gast.GeneratorExp):
                sources, views = [g.iter for g in wrapper.generators], False
            elif isinstance(wrapper, gast.Call) and any(
                    callee(wrapper) is w for w in (itertools.pairwise, map, filter)):
                sources, views = wrapper.args, True
            else:
                continue
            for inner in (n for a in sources for n in walk(a)):
                if isinstance(inner, gast.Call) and (
                        views and isinstance(inner.func, gast.Attribute)
                        and inner.func.attr in _VIEWS and not inner.args
                        or callee(inner) is reversed):
                    return inner
    return None


class StaleIterators:
    """The refusals of :func:`stale_named_iterator` and :func:`stale_wrapped_view`
    (mixed into the normaliser through ``Sugar``, kept next to their analysis)."""

    def refuse_stale_iterators(self) -> None:
        """Refuse a lazy iterator or dict view that Python reads after a write
        into what it runs over, where srcgrad would read a copy made earlier."""
        with unchanged(self.func):  # (two walks of the function: one)
            found = stale_named_iterator(self.func, self.callee)
            view = stale_wrapped_view(self.func, self.callee) if found is None else None
        if found is not None:
            write, name = found
            raise self.error(
                f"'{name}' is a lazy iterator or dict view, which Python reads when it is "
                f"used, after this change to what it runs over; srcgrad reads it where it is "
                f"made: use it right away, or make it after the change (sum(d.values()) "
                f"where the sum is needed)", write)
        if view is not None:
            raise self.error(
                f"'{source_of(view)}' inside itertools.pairwise, map, filter or a generator "
                f"is read by Python as the loop runs, and this loop's body changes a list or dict in "
                f"place; srcgrad would read it before the loop: loop over indices, or make "
                f"a list of it first (list(...)) if the copy is meant", view)
