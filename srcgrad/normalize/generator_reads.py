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
from ..ir.syntax import assigned_names, walk
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
