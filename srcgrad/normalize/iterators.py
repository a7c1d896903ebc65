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
  ``enumerate`` and ``zip`` once a condition skips items, and a second
  argument of a ``zip`` that skips items is pulled by a loop of its own.
  ``itertools.islice``, ``takewhile`` and ``dropwhile`` are taken apart too.
  What is not (a generator with two ``for`` clauses, one inside another
  call) is listed before the loop only where that gives the same values --
  nothing it computes reads what the body changes, nothing it calls has
  effects (:mod:`.generator_reads`) -- and is refused, located, otherwise;
- ``itertools.pairwise(xs)`` and ``itertools.product(xs, ys)`` inside ``zip`` or
  ``enumerate`` -> ``zip(xs, xs[1:])`` and the list of the tuples (``product``
  lists its inputs first too, also at the top of a loop whose body changes
  them), which the loop takes apart like any other; ``pairwise`` of a list the
  body changes is pulled as the loop runs, keeping the item it gave last, as
  Python's does (:meth:`.itertools_pulls.ItertoolsPulls.paired`); dict views in
  ``zip`` or ``enumerate``, and ``reversed`` of a list the body changes, are
  generators reading each item when the loop gets to it (:mod:`.sugar`);
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
import copy
import itertools

import gast

from ..ir.syntax import (
    Renamer,
    clone,
    helper_ref,
    load_name,
    located,
    walk,
)
from .generator_reads import listing_hazard, pulled_generators, reads_when_pulled


def builtin_ref(name):
    """A reference to the builtin ``name`` (no variable of the user's can take its
    place in what the passes read)."""
    node = load_name(name)
    node.helper = getattr(builtins, name)
    return node


def builtin_call(name, *args):
    return gast.Call(func=builtin_ref(name), args=list(args), keywords=[])


def store_name(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def assign_to(target, value):
    if isinstance(target, str):
        target = store_name(target)
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


def break_when_reached(counter, seq, length=True):
    """``if counter >= len(seq): break`` (``length`` False: ``>= seq``)."""
    bound = builtin_call("len", clone(seq)) if length else clone(seq)
    return gast.If(test=gast.Compare(left=load_name(counter), ops=[gast.GtE()],
                                     comparators=[bound]), body=[gast.Break()], orelse=[])


def plus_one(counter):
    return assign_to(counter, gast.BinOp(left=load_name(counter), op=gast.Add(), right=constant(1)))


#: Stream kinds that pull their items as the loop runs.
_PULLED = ("gen", "islice", "takewhile", "dropwhile", "nested", "pairwise")


class _Stream:
    """A loop's iterator taken apart: ``leaf`` (anything else, pulled in order),
    ``gen`` (a one-clause generator expression over ``parts[0]``), ``zip`` and
    ``enumerate`` (over ``parts``), ``islice`` (``start`` its start, stop and
    step), ``takewhile`` and ``dropwhile`` (``start`` the predicate)."""

    def __init__(self, kind, node, parts=(), start=None):
        self.kind, self.node, self.parts, self.start = kind, node, list(parts), start

    def has_gen(self) -> bool:
        """Whether Python computes or picks its items as they are pulled."""
        return self.kind in _PULLED or any(p.has_gen() for p in self.parts)

    def regular(self) -> bool:
        """Whether its k-th item comes from the k-th item of each leaf (no item skipped)."""
        if self.kind == "gen" and self.node.generators[0].ifs or self.kind in _PULLED[1:]:
            return False
        return all(p.regular() for p in self.parts)

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

    def may_change(self, exprs) -> bool:
        """Whether the loop's body may change what ``exprs`` read: it assigns a
        name they read, or updates something in place (an alias of theirs?)."""
        reads = {n.id for e in exprs for n in walk(e) if isinstance(n, gast.Name)}
        return bool(reads & getattr(self, "changed", set())) or getattr(self, "writes", False)

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
        if isinstance(expr, gast.GeneratorExp) and not any(c.is_async for c in expr.generators):
            return _Stream("nested", expr, [self.stream(expr.generators[0].iter)])
        if self.is_call(expr, zip) and expr.args and not expr.keywords:
            return _Stream("zip", expr, [self.stream(a) for a in expr.args])
        if self.is_call(expr, enumerate) and 1 <= len(expr.args) <= 2 and not expr.keywords:
            return _Stream("enumerate", expr, [self.stream(expr.args[0])],
                           expr.args[1] if len(expr.args) == 2 else None)
        if self.is_call(expr, itertools.islice) and 2 <= len(expr.args) <= 4 \
                and not expr.keywords:
            bounds = [*expr.args[1:], constant(1)][:3] if len(expr.args) > 2 \
                else [constant(0), expr.args[1], constant(1)]
            for i in (0, 2):  # None: from the first, one by one
                if isinstance(bounds[i], gast.Constant) and bounds[i].value is None:
                    bounds[i] = constant(i // 2)
            if all(not isinstance(b, (gast.Constant, gast.Starred))  # set before the loop
                   or isinstance(b, gast.Constant) and (b.value is None and i == 1 or type(
                       b.value) is int and b.value >= (i == 2)) for i, b in enumerate(bounds)):
                return _Stream("islice", expr, [self.stream(expr.args[0])], bounds)
        if self.is_call(expr, itertools.pairwise) and len(expr.args) == 1 \
                and not expr.keywords and self.may_change(expr.args):
            return _Stream("pairwise", expr, [self.stream(expr.args[0])])
        for kind in ("takewhile", "dropwhile"):
            if self.is_call(expr, getattr(itertools, kind)) and len(expr.args) == 2 \
                    and not expr.keywords:
                return _Stream(kind, expr, [self.stream(expr.args[1])], expr.args[0])
        return _Stream("leaf", expr)

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
        target = node.target
        if tree.regular():
            reads = set().union(*(reads_when_pulled(g.node) for g in tree.gens()))
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
            return s.node, store_name(name), [], load_name(name)
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
                patterns.append(store_name(self.fresh("i")))
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

    def driven(self, s, on_item, want, cursor=None, before=()):
        """``(iterable, target, statements)`` of a loop over the source that drives
        the stream ``s``; ``on_item(value)`` gives the statements run where ``s``
        gives ``value`` (None: it has bound ``want``); ``before``, checks that
        end the loop, run before each pull.  With a ``cursor`` (a name): the
        statements of one step of that source, read at the cursor, which
        ``break`` where it has run out."""
        if s.regular() and cursor is not None:
            checks, stmts, value = self.at(s, cursor)
            return None, None, [*before, *checks, *stmts, plus_one(cursor), *on_item(value)]
        if s.regular():
            it, pattern, stmts, value = self.flat(s, want)
            return it, pattern, [*before, *stmts, *on_item(value)]
        if s.kind == "gen":
            target, elt, tests = self.renamed(s.node)

            def source_item(value):
                if isinstance(elt, gast.Name):  # (v for v in xs if c(v)): v itself
                    inner = on_item(load_name(elt.id))
                else:
                    name = self.fresh("item")
                    inner = [assign_to(name, elt), *on_item(load_name(name))]
                return ([] if value is None else [assign_to(target, value)]) \
                    + _guarded(tests, inner)
            return self.driven(s.parts[0], source_item, target, cursor, before)
        if s.kind == "enumerate":
            count = self.fresh("count")
            self.prelude.append(located(assign_to(count, s.start or constant(0)), s.node))

            def part_item(value):
                index = self.fresh("i")
                return [assign_to(index, load_name(count)), plus_one(count),
                        *on_item(gast.Tuple(elts=[load_name(index), value], ctx=gast.Load()))]
            return self.driven(s.parts[0], part_item, None, cursor, before)
        if s.kind == "nested":
            return self.nested_loops(s, on_item, before)
        if s.kind != "zip":
            return self.picked(s, on_item, cursor, before)
        # a zip: the first argument that skips items drives it; the others are
        # read by position, or, skipping items too, pulled by a loop of their own
        j = next(i for i, p in enumerate(s.parts) if not p.regular())
        position = self.fresh("position")
        by_position = any(p.regular() for p in s.parts)
        if by_position:
            self.prelude.append(located(assign_to(position, constant(0)), s.node))
        others = {i: self.at(p, position) if p.regular() else self.pulling(p)
                  for i, p in enumerate(s.parts) if i != j}

        def driver_item(value):
            out = [c for i, (checks, _, _) in others.items() if i > j for c in checks]
            out += [stmt for _, stmts, _ in others.values() for stmt in stmts]
            out += [plus_one(position)] if by_position else []
            values = [value if i == j else others[i][2] for i in range(len(s.parts))]
            return out + on_item(gast.Tuple(elts=values, ctx=gast.Load()))
        top = [c for i, (checks, _, _) in others.items() if i < j for c in checks]
        return self.driven(s.parts[j], driver_item, None, cursor, [*before, *top])

    def nested_loops(self, s, on_item, before):
        """``driven`` for a generator of several ``for`` clauses: the later ones
        are loops inside the loop over the first's source, each run anew for
        each item of the one before (as Python evaluates them); the checks
        ``before`` each pull open the innermost loop's body too; a ``break``
        (of the body, or where something has run out) sets a flag that ends
        them all."""
        gen = s.node
        own = sorted({n.id for c in gen.generators for n in walk(c.target)
                      if isinstance(n, gast.Name)})
        rename = Renamer({name: self.fresh(name) for name in own})
        clauses = [(rename.visit(c.target), rename.visit(c.iter) if i else None,
                    [rename.visit(t) for t in c.ifs]) for i, c in enumerate(gen.generators)]
        elt = rename.visit(gen.elt)
        stop = self.fresh("stop")
        self.prelude.append(located(assign_to(stop, constant(False)), gen))

        def source_item(value):
            name = self.fresh("item")
            inner = flag_breaks([assign_to(name, elt), *on_item(load_name(name))], stop, [])
            checks = flag_breaks(copy.deepcopy(list(before)), stop, [])
            for target, it, tests in reversed(clauses[1:]):
                body = [*checks, *_guarded(tests, inner)]
                loop = gast.For(target=target, iter=it, body=body, orelse=[], type_comment=None)
                inner, checks = [loop, gast.If(test=load_name(stop), body=[gast.Break()],
                                               orelse=[])], []
            first = [] if value is None else [assign_to(clauses[0][0], value)]
            return first + _guarded(clauses[0][2], inner)
        return self.driven(s.parts[0], source_item, clauses[0][0], None, before)

    def pulling(self, s):
        """A ``zip``'s argument that skips items, after the one that drives it:
        ``(checks, [], value)``, the checks pulling its next item by a loop over
        its source from where the last pull stopped (``break`` where it has run
        out).  A generator of several clauses there is listed first (refused
        where that could change its items)."""
        for part in stream_parts(s):
            if part.kind == "nested":
                self.check_listed(part.node)
                part.kind, part.parts = "leaf", []
        cursor, found, item = self.fresh("cursor"), self.fresh("found"), self.fresh("item")
        self.prelude.append(located(assign_to(cursor, constant(0)), s.node))
        _, _, step = self.driven(s, lambda v: [assign_to(item, v), assign_to(found, constant(
            True)), gast.Break()], None, cursor)
        loop = gast.While(test=constant(True), body=step, orelse=[])
        missing = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=load_name(found)),
                          body=[gast.Break()], orelse=[])
        return [assign_to(found, constant(False)), loop, missing], [], load_name(item)

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
            return [break_when_reached(position, seq)], [assign_to(name, item)], load_name(name)
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

    # -- what is listed before the loop -----------------------------------------------------------
    def check_listed(self, expr) -> None:
        """A generator in ``expr`` that the loop lists first (in ``islice``, two
        filtering ones in a ``zip``): refused where that could give other items
        than Python's (:func:`.generator_reads.listing_hazard`)."""
        changed = getattr(self, "changed", set())
        for gen in pulled_generators(expr, self.callee):
            hazard = listing_hazard(gen, changed, self.callee)
            if hazard is not None:
                raise self.n.error(
                    f"srcgrad lists the items of this generator before the loop, but it "
                    f"{hazard}, and Python computes each item only when the loop gets to it: "
                    f"loop over the generator's source and test or compute the item in the "
                    f"loop's body", gen if getattr(gen, "lineno", None) is not None
                    else getattr(self, "where", expr))


def stream_parts(s):
    yield s
    for p in s.parts:
        yield from stream_parts(p)


def rebuilt(s):
    """The iterator expression of a stream whose leaves may have changed."""
    if s.kind == "leaf":
        return s.node
    if s.kind in ("gen", "nested"):
        s.node.generators[0].iter = rebuilt(s.parts[0])
    elif s.kind == "zip":
        s.node.args = [rebuilt(p) for p in s.parts]
    elif s.kind in ("islice", "pairwise"):
        s.node.args[0] = rebuilt(s.parts[0])
    elif s.kind in _PULLED:
        s.node.args[1] = rebuilt(s.parts[0])
    else:
        s.node.args = [rebuilt(s.parts[0]), *([s.start] if s.start is not None else [])]
    return s.node


def _own_blocks(stmt):
    """The statement lists directly inside ``stmt`` that belong to its loop
    (not a nested loop's body, not a nested function's)."""
    if isinstance(stmt, gast.If):
        return ["body", "orelse"]
    if isinstance(stmt, (gast.With, gast.AsyncWith)):
        return ["body"]
    if isinstance(stmt, gast.Try):
        return ["body", "orelse", "finalbody"]
    if isinstance(stmt, (gast.For, gast.While)):
        return ["orelse"]
    return []


def flag_breaks(stmts, flag, found) -> list:
    """``stmts`` with ``flag = True`` before each ``break`` of their loop."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.Break):
            found.append(stmt)
            out.append(gast.copy_location(assign_to(flag, constant(True)), stmt))
        else:
            for field in _own_blocks(stmt):
                setattr(stmt, field, flag_breaks(getattr(stmt, field), flag, found))
            if isinstance(stmt, gast.Try):
                for handler in stmt.handlers:
                    handler.body = flag_breaks(handler.body, flag, found)
        out.append(stmt)
    return out


def _guarded(tests, stmts) -> list:
    """``stmts`` under ``if`` the tests (all of them)."""
    if not tests:
        return stmts
    test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)
    return [gast.If(test=test, body=stmts, orelse=[])]


def _names(target) -> set:
    return {n.id for n in walk(target) if isinstance(n, gast.Name)}


__all__ = [
    "IteratorLoops",
    "assign_to",
    "break_when_reached",
    "builtin_call",
    "builtin_ref",
    "constant",
    "plus_one",
    "rebuilt",
    "store_name",
    "stream_parts",
]
