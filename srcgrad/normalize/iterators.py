"""Loops over iterators: when does the iterator compute its items?

Part of :mod:`.sugar` (a mixin of its desugarer), kept apart because every
rewrite here answers that one question, and the answer decides the values:

- a generator expression, ``map`` or ``filter`` (a generator expression by
  now) computes an item when the loop asks for it, so its condition and its
  element see what the body did at the earlier steps.  Wherever it sits in
  the loop's iterator -- alone, in ``enumerate``, ``zip`` or ``iter``, or as the
  source of another generator -- the loop is rewritten to run over the
  generator's source, the condition and element inside the body
  (:meth:`IteratorLoops.lazy`); counters stand in for the positions of
  ``enumerate`` and ``zip`` once a condition skips items.  What cannot be
  taken apart so (two filtering generators in one ``zip``, a generator in
  ``itertools.islice``) is listed before the loop only where that gives the
  same values -- nothing it computes reads what the body changes, nothing it
  calls has effects -- and is refused, located, otherwise;
- ``itertools.pairwise(xs)`` and ``itertools.product(xs, ys)`` inside ``zip`` or
  ``enumerate`` -> ``zip(xs, xs[1:])`` and the list of the tuples (``product``
  lists its inputs first too), which the loop takes apart like any other;
- (how a loop ends -- ``for ... else``, ``zip(..., strict=True)`` -- is
  :mod:`.loop_exits`'s, which runs first and hands the loop on here).

Before, loops whose generators read what their bodies update; after, the
first runs over its filter's source and counts for ``enumerate``, the second
over ``zip``'s sources, computing the ``map``'s item in its body:

    >>> from ..frontend.parse import parse_function
    >>> from ..ir.emit import unparse
    >>> from .normalizer import _Normalizer
    >>> def f(x, c):
    ...     s = 0.0
    ...     for i, w in enumerate(v * v for v in x if v > s):
    ...         s = s + w * i
    ...     for a, b in zip(c, map(lambda v: v * s, x)):
    ...         s = s + a * b
    ...     return s
    >>> normalizer = _Normalizer(parse_function(f))
    >>> normalizer.desugar()
    >>> print(unparse(normalizer.func))
    def f(x, c):
        s = 0.0
        count = 0
        for v_1 in x:
            if v_1 > s:
                item = v_1 * v_1
                i_1 = count
                count = count + 1
                i, w = (i_1, item)
                s = s + w * i
        for a, item_2 in zip(c, x):
            b = (lambda v: v * s)(item_2)
            s = s + a * b
        return s
"""

from __future__ import annotations

import builtins
import itertools
import math

import gast
import numpy as np

from ..frontend.parse import MISSING
from ..ir.syntax import (
    Renamer,
    assigned_names,
    clone,
    helper_ref,
    load_name,
    located,
    walk,
)
from ..rules import registry

#: Methods that change their object in place (a generator reading it would see).
_MUTATING = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                       "add", "discard", "setdefault", "popitem", "sort", "reverse", "fill",
                       "put", "resize", "itemset", "setflags", "partition"})

#: Builtins a generator may call without effects on what the loop body sees.
_PURE_BUILTINS = frozenset({abs, len, min, max, sum, float, int, bool, round, pow, range,
                            tuple, list, sorted, reversed, zip, enumerate, any, all, divmod,
                            isinstance, complex, str, map, filter, iter})


def builtin_ref(name):
    """A reference to the builtin ``name`` (no variable of the user's can take its
    place in what the passes read)."""
    node = load_name(name)
    node.helper = getattr(builtins, name)
    return node


def builtin_call(name, *args):
    return gast.Call(func=builtin_ref(name), args=list(args), keywords=[])


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def assign_to(target, value):
    if isinstance(target, str):
        target = _store(target)
    return gast.Assign(targets=[target], value=value, type_comment=None)


def constant(value):
    return gast.Constant(value=value, kind=None)


def _loaded(pattern):
    """The value a target pattern holds, as an expression."""
    if isinstance(pattern, gast.Name):
        return load_name(pattern.id)
    return gast.Tuple(elts=[_loaded(e) for e in pattern.elts], ctx=gast.Load())


def _is_pattern(node) -> bool:
    """A loop target srcgrad can hand on as it is: names, in tuples."""
    if isinstance(node, gast.Name):
        return True
    return isinstance(node, (gast.Tuple, gast.List)) and all(_is_pattern(e) for e in node.elts)


def _exhausted(counter, seq):
    """``if counter >= len(seq): break``."""
    return gast.If(test=gast.Compare(left=load_name(counter), ops=[gast.GtE()],
                                     comparators=[builtin_call("len", clone(seq))]),
                   body=[gast.Break()], orelse=[])


def _plus_one(counter):
    return assign_to(counter, gast.BinOp(left=load_name(counter), op=gast.Add(), right=constant(1)))


class _Stream:
    """A loop's iterator taken apart: ``leaf`` (anything else, pulled in order),
    ``gen`` (a one-clause generator expression over ``parts[0]``), ``zip`` and
    ``enumerate`` (over ``parts``)."""

    def __init__(self, kind, node, parts=(), start=None):
        self.kind, self.node, self.parts, self.start = kind, node, list(parts), start

    def has_gen(self) -> bool:
        return self.kind == "gen" or any(p.has_gen() for p in self.parts)

    def regular(self) -> bool:
        """Whether its k-th item comes from the k-th item of each leaf (no item skipped)."""
        if self.kind == "gen" and self.node.generators[0].ifs:
            return False
        return all(p.regular() for p in self.parts)

    def chained(self) -> bool:
        """Whether one loop over one leaf can drive it: at most one part that
        skips items in each ``zip``."""
        irregular = [p for p in self.parts if not p.regular()]
        return len(irregular) <= 1 and all(p.chained() for p in irregular)

    def leaves(self) -> list:
        if self.kind == "leaf":
            return [self]
        return [leaf for p in self.parts for leaf in p.leaves()]

    def gens(self) -> list:
        own = [self] if self.kind == "gen" else []
        return own + [g for p in self.parts for g in p.gens()]


class IteratorLoops:
    """Loops over iterators (mixed into the desugarer of :mod:`.sugar`, which
    gives ``n`` (the normaliser), ``fresh``, ``callee``, ``iterated`` and
    ``prelude`` (statements put before the current one))."""

    def bound(self, expr, keep=False):
        """A fresh name holding ``expr`` (``sequence(expr)`` unless ``keep``), set
        before the loop."""
        self.check_listed(expr)
        name = self.fresh("items")
        value = expr if keep else gast.Call(func=helper_ref("sequence"), args=[expr], keywords=[])
        self.prelude.append(located(assign_to(name, value), expr))
        return gast.copy_location(load_name(name), expr)

    # -- the iterator, taken apart -------------------------------------------------------------
    def is_call(self, node, function) -> bool:
        return isinstance(node, gast.Call) and self.callee(node) is function \
            and not any(isinstance(a, gast.Starred) for a in node.args)

    def stream(self, expr):
        """``expr`` as a :class:`_Stream` (``iter(xs)`` is ``xs``)."""
        while self.is_call(expr, iter) and len(expr.args) == 1 and not expr.keywords:
            expr = expr.args[0]
        if isinstance(expr, gast.GeneratorExp) and len(expr.generators) == 1 \
                and not expr.generators[0].is_async:
            return _Stream("gen", expr, [self.stream(expr.generators[0].iter)])
        if self.is_call(expr, zip) and expr.args and not expr.keywords:
            return _Stream("zip", expr, [self.stream(a) for a in expr.args])
        if self.is_call(expr, enumerate) and 1 <= len(expr.args) <= 2 and not expr.keywords:
            return _Stream("enumerate", expr, [self.stream(expr.args[0])],
                           expr.args[1] if len(expr.args) == 2 else None)
        return _Stream("leaf", expr)

    def taken_apart(self, it, inline=False):
        """``itertools.pairwise(xs)`` inside ``zip``/``enumerate`` -> ``zip(xs,
        xs[1:])``; ``itertools.product(xs, ys)`` there -> ``[(a, b) for a in xs
        for b in ys]`` (its inputs listed first, as ``product`` does).  At the
        top of a loop the normaliser runs over them by index already.  With
        ``inline`` (a comprehension's, evaluated where it stands) only names are
        taken apart, read through ``sequence`` where they may not be lists."""
        tree = self.stream(it)
        if tree.kind == "leaf":
            return it
        changed = False
        for s in stream_parts(tree):
            expr = s.node
            made = None
            if s.kind != "leaf":
                continue
            if self.is_call(expr, itertools.pairwise) and len(expr.args) == 1 \
                    and not expr.keywords:
                made = self.pairs(expr, inline)
            elif self.is_call(expr, itertools.product) and expr.args and (
                    not expr.keywords or [k.arg for k in expr.keywords] == ["repeat"]
                    and isinstance(expr.keywords[0].value, gast.Constant)
                    and type(expr.keywords[0].value.value) is int):
                made = self.products(expr, inline)
            if made is not None:
                s.node, changed = made, True
        return rebuilt(tree) if changed else it

    def indexable(self, expr, inline=False):
        """``expr`` as an expression a loop can index and slice, evaluated once
        (None where ``inline`` and it is not a name)."""
        n = self.n
        if isinstance(expr, gast.Name) and expr.id in n.locals and expr.id not in n.params \
                and expr.id not in n.dict_names and not n.bound_to_iterator(expr.id) \
                and (inline or expr.id not in self.changed):  # (rebound in the body: bound)
            return expr
        if inline:
            return gast.Call(func=helper_ref("sequence"), args=[expr], keywords=[]) \
                if isinstance(expr, gast.Name) else None
        return self.bound(expr, keep=isinstance(expr, (gast.List, gast.Tuple))
                          or self.is_call(expr, range))

    def pairs(self, call, inline):
        items = self.indexable(call.args[0], inline)
        if items is None:
            return None
        rest = gast.Subscript(value=clone(items), slice=gast.Slice(
            lower=constant(1), upper=None, step=None), ctx=gast.Load())
        return located(builtin_call("zip", items, rest), call)

    def products(self, call, inline):
        repeat = call.keywords[0].value.value if call.keywords else 1
        seqs = [self.indexable(a, inline) for a in call.args] * repeat
        if any(seq is None for seq in seqs):
            return None
        names = [self.fresh("item") for _ in seqs]
        generators = [gast.comprehension(target=_store(name), iter=clone(seq), ifs=[],
                                         is_async=0) for name, seq in zip(names, seqs)]
        made = gast.ListComp(elt=gast.Tuple(elts=[load_name(m) for m in names], ctx=gast.Load()),
                             generators=generators)
        made.uncopied = True  # a new list, read once
        return located(made, call)

    # -- generators, pulled as the loop runs -----------------------------------------------------
    def lazy(self, node):
        """``for w in <an iterator with generators>``: the loop runs over the
        source of a generator and computes the items in its body.

        Where no condition skips items, the k-th item comes from the k-th item of
        each source: ``for i, w in enumerate(f(a) for a in xs)`` -> ``for i, a in
        enumerate(xs): w = f(a)``.  Where one does, a loop over that generator's
        source drives the rest: counters for ``enumerate`` and for the positions
        of the other arguments of a ``zip``, which end the loop where they run
        out, in the order Python pulls them."""
        tree = self.stream(node.iter)
        for leaf in tree.leaves():
            self.check_listed(leaf.node)
        if not tree.has_gen():
            return node
        if not tree.chained():
            for g in tree.gens():
                self.check_listed(g.node)
            return node
        target = node.target
        if tree.regular():
            reads = set().union(*(_lazy_reads(g.node) for g in tree.gens()))
            want = target if not (_names(target) & reads) else None
            it, pattern, stmts, value = self.flat(tree, want)
            if value is not None:
                stmts.append(assign_to(target, value))
            stmts.extend(node.body)
        else:
            it, pattern, stmts = self.driven(tree, lambda v: [assign_to(target, v), *node.body],
                                             None)
        loop = gast.For(target=pattern, iter=it, body=[located(s, node) for s in stmts],
                        orelse=[], type_comment=None)
        return located(gast.copy_location(loop, node), node)

    def renamed(self, gen):
        """A generator's target, element and conditions, its variables renamed
        (they are its own in Python)."""
        clause = gen.generators[0]
        own = sorted({n.id for n in walk(clause.target) if isinstance(n, gast.Name)})
        rename = Renamer({name: self.fresh(name) for name in own})
        return (rename.visit(clause.target), rename.visit(gen.elt),
                [rename.visit(t) for t in clause.ifs])

    def flat(self, s, want):
        """A stream that skips no item as ``(iterable, target, statements,
        value)``: ``for target in iterable``, the body starting with the
        statements, gives ``value`` at each step -- or, ``value`` None, binds the
        pattern ``want``."""
        if s.kind == "leaf":
            if want is not None and _is_pattern(want):
                return s.node, want, [], None
            name = self.fresh("item")
            return s.node, _store(name), [], load_name(name)
        if s.kind == "gen":
            target, elt, _ = self.renamed(s.node)
            it, pattern, stmts, value = self.flat(s.parts[0], target)
            if value is not None:
                stmts.append(assign_to(target, value))
            if want is not None:
                stmts.append(assign_to(want, elt))
                return it, pattern, stmts, None
            name = self.fresh("item")
            stmts.append(assign_to(name, elt))
            return it, pattern, stmts, load_name(name)
        width = len(s.parts) + (s.kind == "enumerate")
        split = isinstance(want, (gast.Tuple, gast.List)) and len(want.elts) == width \
            and not any(isinstance(e, gast.Starred) for e in want.elts)
        wants = list(want.elts) if split else [None] * width
        iterables, patterns, stmts, values = [], [], [], []
        if s.kind == "enumerate":
            if wants[0] is not None and _is_pattern(wants[0]):
                patterns.append(wants[0])
                values.append(None)
            else:
                patterns.append(_store(self.fresh("i")))
                values.append(load_name(patterns[0].id))
        for part, wanted in zip(s.parts, wants[width - len(s.parts):]):
            it, pattern, more, value = self.flat(part, wanted)
            iterables.append(it)
            patterns.append(pattern)
            stmts.extend(more)
            values.append(value)
        if s.kind == "enumerate":
            it = builtin_call("enumerate", *iterables, *([s.start] if s.start is not None else []))
        else:
            it = builtin_call("zip", *iterables)
        pattern = gast.Tuple(elts=patterns, ctx=gast.Store())
        if split:
            stmts.extend(assign_to(w, v) for w, v in zip(wants, values) if v is not None)
            return it, pattern, stmts, None
        if want is not None:  # a pattern of another shape: bound whole
            whole = gast.Tuple(elts=[_loaded(p) if v is None else v
                                     for p, v in zip(patterns, values)], ctx=gast.Load())
            return it, pattern, [*stmts, assign_to(want, whole)], None
        return it, pattern, stmts, gast.Tuple(
            elts=[_loaded(p) if v is None else v for p, v in zip(patterns, values)],
            ctx=gast.Load())

    def driven(self, s, on_item, want):
        """``(iterable, target, statements)`` of a loop over the source that drives
        the stream ``s``; ``on_item(value)`` gives the statements run where ``s``
        gives ``value`` (None: it has bound ``want``)."""
        if s.regular():
            it, pattern, stmts, value = self.flat(s, want)
            return it, pattern, stmts + on_item(value)
        if s.kind == "gen":
            target, elt, tests = self.renamed(s.node)

            def source_item(value):
                if isinstance(elt, gast.Name):  # (v for v in xs if c(v)): v itself
                    inner = on_item(load_name(elt.id))
                else:
                    name = self.fresh("item")
                    inner = [assign_to(name, elt), *on_item(load_name(name))]
                if tests:
                    test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(),
                                                                      values=tests)
                    inner = [gast.If(test=test, body=inner, orelse=[])]
                return ([] if value is None else [assign_to(target, value)]) + inner
            return self.driven(s.parts[0], source_item, target)
        if s.kind == "enumerate":
            count = self.fresh("count")
            self.prelude.append(located(assign_to(count, s.start or constant(0)), s.node))

            def part_item(value):
                index = self.fresh("i")
                return [assign_to(index, load_name(count)), _plus_one(count),
                        *on_item(gast.Tuple(elts=[load_name(index), value], ctx=gast.Load()))]
            return self.driven(s.parts[0], part_item, None)
        # a zip: one argument skips items; the others are read by position
        j = next(i for i, p in enumerate(s.parts) if not p.regular())
        position = self.fresh("position")
        self.prelude.append(located(assign_to(position, constant(0)), s.node))
        others = {i: self.at(p, position) for i, p in enumerate(s.parts) if i != j}

        def driver_item(value):
            out = [c for i, (checks, _, _) in others.items() if i > j for c in checks]
            out += [stmt for _, stmts, _ in others.values() for stmt in stmts]
            out.append(_plus_one(position))
            values = [value if i == j else others[i][2] for i in range(len(s.parts))]
            return out + on_item(gast.Tuple(elts=values, ctx=gast.Load()))
        it, pattern, stmts = self.driven(s.parts[j], driver_item, None)
        top = [c for i, (checks, _, _) in others.items() if i < j for c in checks]
        return it, pattern, top + stmts

    def at(self, s, position):
        """The item at ``position`` of a stream that skips none, for a ``zip`` that
        a generator drives: ``(checks, statements, value)`` -- the checks end the
        loop where it has run out."""
        if s.kind == "leaf":
            name = self.fresh("item")
            if self.is_call(s.node, itertools.count):
                start, step = self.n.count_arguments(s.node)
                value = gast.BinOp(left=start, op=gast.Add(), right=gast.BinOp(
                    left=load_name(position), op=gast.Mult(), right=constant(step)))
                return [], [assign_to(name, value)], load_name(name)
            seq = self.indexable(s.node)
            item = gast.Subscript(value=clone(seq), slice=load_name(position), ctx=gast.Load())
            return [_exhausted(position, seq)], [assign_to(name, item)], load_name(name)
        if s.kind == "gen":
            target, elt, _ = self.renamed(s.node)
            checks, stmts, value = self.at(s.parts[0], position)
            name = self.fresh("item")
            return checks, [*stmts, assign_to(target, value), assign_to(name, elt)], load_name(name)
        parts = [self.at(p, position) for p in s.parts]
        checks = [c for p in parts for c in p[0]]
        stmts = [stmt for p in parts for stmt in p[1]]
        values = [p[2] for p in parts]
        if s.kind == "enumerate":
            index = self.fresh("i")
            offset = load_name(position) if s.start is None else gast.BinOp(
                left=load_name(position), op=gast.Add(), right=clone(s.start))
            stmts.insert(0, assign_to(index, offset))
            values.insert(0, load_name(index))
        return checks, stmts, gast.Tuple(elts=values, ctx=gast.Load())

    # -- what is listed before the loop ------------------------------------------------------------
    def check_listed(self, expr) -> None:
        """A generator in ``expr`` that the loop lists first (in ``islice``, two
        filtering ones in a ``zip``): refuse it where it reads a name the
        loop's body changes or calls what may have effects -- Python computes
        each item when the loop gets there."""
        changed = getattr(self, "changed", set())
        for gen in _lazy_generators(expr, self.callee):
            reads = _lazy_reads(gen) & changed
            effect = next((c for part in _lazy_parts(gen) for c in walk(part)
                           if isinstance(c, gast.Call) and not self.pure(c)), None)
            if reads or effect is not None:
                what = f"reads '{min(reads)}', which the loop's body changes" if reads \
                    else "calls a function that may change what the loop reads"
                raise self.n.error(
                    f"srcgrad lists the items of this generator before the loop, but it "
                    f"{what}, and Python computes each item only when the loop gets to it: "
                    f"loop over the generator's source and test or compute the item in the "
                    f"loop's body", gen)

    def pure(self, call) -> bool:
        """Whether a call computes a value without effects (a rule, NumPy, math,
        a builtin, a lambda, an array's method)."""
        if isinstance(call.func, gast.Lambda):
            return True
        prim = self.callee(call)
        if prim is MISSING:
            return isinstance(call.func, gast.Attribute) and call.func.attr not in _MUTATING \
                and hasattr(np.ndarray, call.func.attr)
        if isinstance(prim, np.ufunc) or registry.lookup(prim) is not None:
            return True
        module = getattr(prim, "__module__", None) or ""
        try:
            known = prim in _PURE_BUILTINS
        except TypeError:
            known = False
        return known or module == "math" or module.split(".")[0] == "numpy" \
            or prim is math.fsum


def stream_parts(s):
    yield s
    for p in s.parts:
        yield from stream_parts(p)


def rebuilt(s):
    """The iterator expression of a stream whose leaves may have changed."""
    if s.kind == "leaf":
        return s.node
    if s.kind == "gen":
        s.node.generators[0].iter = rebuilt(s.parts[0])
    elif s.kind == "zip":
        s.node.args = [rebuilt(p) for p in s.parts]
    else:
        s.node.args = [rebuilt(s.parts[0]), *([s.start] if s.start is not None else [])]
    return s.node


def _names(target) -> set:
    return {n.id for n in walk(target) if isinstance(n, gast.Name)}


def changed_names(loop) -> set:
    """The names a loop's body (and target) assigns, or changes in place."""
    module = gast.Module(body=[*loop.body, gast.Assign(targets=[loop.target], value=constant(0),
                                                       type_comment=None)], type_ignores=[])
    names = assigned_names(module)
    for node in walk(module):
        if isinstance(node, (gast.Subscript, gast.Attribute)) \
                and isinstance(node.ctx, gast.Store):
            names |= {n.id for n in walk(node.value) if isinstance(n, gast.Name)}
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in _MUTATING:
            names |= {n.id for n in walk(node.func.value) if isinstance(n, gast.Name)}
    return names


def _lazy_parts(gen) -> list:
    """What a generator evaluates when each item is pulled (not its first
    source, evaluated where it is made)."""
    parts = [gen.elt]
    for i, clause in enumerate(gen.generators):
        parts.extend(clause.ifs)
        if i:
            parts.append(clause.iter)
    return parts


def _lazy_reads(gen) -> set:
    """The names a generator reads when each item is pulled, its own variables
    left out."""
    parts = _lazy_parts(gen)
    own = {n.id for c in gen.generators for n in walk(c.target) if isinstance(n, gast.Name)}
    reads, bound = set(), set(own)
    for part in parts:
        for n in walk(part):
            if isinstance(n, gast.Name):
                (reads if isinstance(n.ctx, gast.Load) else bound).add(n.id)
    return reads - bound


#: Calls that consume what they are given when they are made: a generator there
#: is run out at once, as srcgrad does.
_EAGER = (list, tuple, sorted, sum, min, max, any, all, set, frozenset, dict, len,
          itertools.product, np.array, np.asarray, np.stack, np.concatenate, np.fromiter,
          np.sum, np.prod, np.mean, np.max, np.min, math.fsum, math.prod)


def _lazy_generators(expr, callee) -> list:
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


__all__ = ["IteratorLoops", "assign_to", "builtin_call", "builtin_ref", "changed_names", "constant",
           "rebuilt", "stream_parts"]
