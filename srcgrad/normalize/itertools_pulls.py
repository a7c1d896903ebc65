"""Loops over ``itertools``: ``islice``, ``takewhile``, ``dropwhile``, ``pairwise``
and ``product``.

Part of :mod:`.sugar` (a mixin of its desugarer, beside
:class:`.iterators.IteratorLoops`, which calls :meth:`ItertoolsPulls.picked`
for these kinds of stream), kept apart because each keeps its own count or
flag while the loop runs, as Python's does:

- ``islice(it, start, stop, step)`` counts what it pulls from ``it``, passes on
  the items at ``start``, ``start + step``, ... and stops before pulling at
  ``stop`` (bounds computed where the code runs: ``None`` there is the
  default, a bound out of range raises Python's ``ValueError``);
- ``takewhile(p, it)`` ends the loop at the first item ``p`` rejects;
- ``dropwhile(p, it)`` tests items until ``p`` rejects one, then passes on all;
- ``pairwise(xs)`` of a list the body changes keeps the item it gave last and
  reads the next when the loop gets to it (a pair is never read again);
- ``pairwise(xs)`` and ``product(xs, ys)`` inside ``zip`` or ``enumerate`` ->
  ``zip(xs, xs[1:])`` and the list of the tuples (``product`` lists its inputs
  first too), which the loop takes apart like any other
  (:meth:`ItertoolsPulls.taken_apart`; at the top of a loop the normaliser
  runs over them by index already).

Before, a loop over every other item of a map whose function reads what the
body updates; after, the loop runs over the map's source, counting:

    >>> import itertools
    >>> from ..frontend.parse import parse_function
    >>> from ..ir.emit import unparse
    >>> from .normalizer import _Normalizer
    >>> def f(x, w):
    ...     s = 0.0
    ...     for v in itertools.islice(map(lambda u: u * s + w, x), 1, None, 2):
    ...         s = s + v
    ...     return s
    >>> normalizer = _Normalizer(parse_function(f))
    >>> normalizer.desugar()
    >>> print(unparse(normalizer.func))
    def f(x, w):
        s = 0.0
        pulled = 0
        for item_1 in x:
            item_2 = (lambda u: u * s + w)(item_1)
            position = pulled
            pulled = pulled + 1
            if position >= 1 and (position - 1) % 2 == 0:
                v = item_2
                s = s + v
        return s
"""

from __future__ import annotations

import itertools

import gast

from ..ir.syntax import clone, helper_ref, load_name, located
from .iterators import (
    assign_to,
    break_when_reached,
    builtin_call,
    constant,
    plus_one,
    rebuilt,
    store_name,
    stream_parts,
)


class ItertoolsPulls:
    """``islice``, ``takewhile`` and ``dropwhile`` in a loop's iterator (mixed
    into the desugarer, with :class:`.iterators.IteratorLoops`, whose ``driven``
    and ``bound`` it calls)."""

    def taken_apart(self, it, inline=False):
        """``itertools.pairwise(xs)`` inside ``zip``/``enumerate`` -> ``zip(xs,
        xs[1:])``; ``itertools.product(xs, ys)`` there -> ``[(a, b) for a in xs
        for b in ys]`` (its inputs listed first, as ``product`` does).  At the
        top of a loop the normaliser runs over them by index already.  With
        ``inline`` (a comprehension's, evaluated where it stands) only names are
        taken apart, read through ``sequence`` where they may not be lists."""
        tree = self.stream(it)
        if tree.kind == "leaf" and not inline and self.product_call(it) \
                and self.may_change(it.args):  # product copies its inputs first
            return self.products(it, inline) or it
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
            elif self.product_call(expr):
                made = self.products(expr, inline)
            if made is not None:
                s.node, changed = made, True
        return rebuilt(tree) if changed else it

    def product_call(self, expr) -> bool:
        """``itertools.product(xs, ...)``, ``repeat=`` (if any) a constant."""
        return self.is_call(expr, itertools.product) and bool(expr.args) and (
            not expr.keywords or [k.arg for k in expr.keywords] == ["repeat"]
            and isinstance(expr.keywords[0].value, gast.Constant)
            and type(expr.keywords[0].value.value) is int)

    def indexable(self, expr, inline=False):
        """``expr`` as an expression a loop can index and slice, evaluated once
        (None where ``inline`` and it is not a name)."""
        n = self.n
        if isinstance(expr, gast.Name) and expr.id in n.locals and expr.id not in n.params \
                and expr.id not in n.dict_names and not n.bound_to_iterator(expr.id) \
                and not n.maybe_unindexable(expr.id) \
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
        generators = [gast.comprehension(target=store_name(name), iter=clone(seq), ifs=[],
                                         is_async=0) for name, seq in zip(names, seqs)]
        made = gast.ListComp(elt=gast.Tuple(elts=[load_name(m) for m in names], ctx=gast.Load()),
                             generators=generators)
        made.uncopied = True  # a new list, read once
        return located(made, call)

    def picked(self, s, on_item, cursor, before):
        """``driven`` for ``itertools.islice``, ``takewhile`` and ``dropwhile``:
        ``islice`` counts what it pulls, passes on the items at its positions and
        stops before pulling at ``stop``; ``takewhile`` ends the loop at its
        first false test; ``dropwhile`` tests until one is false."""
        test = s.start
        if s.kind == "pairwise":
            return self.paired(s, on_item, cursor, before)
        if s.kind == "islice":
            start, stop, step = self.slice_bounds(s)
            pulled = self.fresh("pulled")
            self.prelude.append(located(assign_to(pulled, constant(0)), s.node))

            def part_item(value):
                index = self.fresh("position")
                tests = [] if isinstance(start, gast.Constant) and start.value in (0, None) \
                    else [gast.Compare(left=load_name(index), ops=[gast.GtE()],
                                       comparators=[clone(start)])]
                if not isinstance(step, gast.Constant) or step.value not in (1, None):
                    offset = gast.BinOp(left=load_name(index), op=gast.Sub(), right=clone(start))
                    tests.append(gast.Compare(left=gast.BinOp(left=offset, op=gast.Mod(),
                                                              right=clone(step)),
                                              ops=[gast.Eq()], comparators=[constant(0)]))
                inner = on_item(value)
                if tests:
                    inner = [gast.If(test=tests[0] if len(tests) == 1 else gast.BoolOp(
                        op=gast.And(), values=tests), body=inner, orelse=[])]
                return [assign_to(index, load_name(pulled)), plus_one(pulled), *inner]
            if isinstance(stop, gast.Constant) and stop.value is None:
                return self.driven(s.parts[0], part_item, None, cursor, before)
            end = break_when_reached(pulled, stop, length=False)
            if not isinstance(stop, gast.Constant):  # None where the code runs: no end
                end.test = gast.BoolOp(op=gast.And(), values=[gast.Compare(
                    left=clone(stop), ops=[gast.IsNot()], comparators=[constant(None)]), end.test])
            return self.driven(s.parts[0], part_item, None, cursor, [*before, end])
        if s.kind == "takewhile":
            def part_item(value):
                ended = gast.UnaryOp(op=gast.Not(), operand=gast.Call(
                    func=clone(test), args=[value], keywords=[]))
                return [gast.If(test=ended, body=[gast.Break()], orelse=[]),
                        *on_item(clone(value))]
            return self.driven(s.parts[0], part_item, None, cursor, before)
        dropping = self.fresh("dropping")
        self.prelude.append(located(assign_to(dropping, constant(True)), s.node))

        def part_item(value):
            still = gast.Call(func=clone(test), args=[value], keywords=[])
            return [gast.If(test=load_name(dropping), body=[assign_to(dropping, still)],
                            orelse=[]),
                    gast.If(test=gast.UnaryOp(op=gast.Not(), operand=load_name(dropping)),
                            body=on_item(clone(value)), orelse=[])]
        return self.driven(s.parts[0], part_item, None, cursor, before)

    def paired(self, s, on_item, cursor, before):
        """``driven`` for ``itertools.pairwise(xs)`` where the body changes ``xs``:
        as Python's, it keeps the item pulled last, and each pull gives that
        one and the next item of ``xs``, read when the loop gets to it (the
        first pull takes two)."""
        started, previous = self.fresh("started"), self.fresh("previous")
        self.prelude.extend(located(assign_to(name, constant(value)), s.node)
                            for name, value in ((started, False), (previous, None)))

        def part_item(value):
            item, first = self.fresh("item"), self.fresh("item")
            pair = gast.Tuple(elts=[load_name(first), load_name(item)], ctx=gast.Load())
            return [assign_to(item, value), gast.If(
                test=load_name(started),
                body=[assign_to(first, load_name(previous)),
                      assign_to(previous, load_name(item)), *on_item(pair)],
                orelse=[assign_to(previous, load_name(item)),
                        assign_to(started, constant(True))])]
        return self.driven(s.parts[0], part_item, None, cursor, before)

    def slice_bounds(self, s):
        """``islice``'s start, stop and step: constants, or names set before the
        loop -- None there meaning 0, no end and 1, a bound out of range raising
        Python's ``ValueError``."""
        out = []
        for i, b in enumerate(s.start):
            if isinstance(b, gast.Constant):
                out.append(b)
                continue
            name = self.bound(b, keep=True)
            lowest = 1 if i == 2 else 0
            given = gast.Compare(left=clone(name), ops=[gast.IsNot()],
                                 comparators=[constant(None)])
            bad = gast.UnaryOp(op=gast.Not(), operand=gast.Compare(
                left=clone(name), ops=[gast.GtE()], comparators=[constant(lowest)]))
            words = "must be None or an integer: 0 <= x <= sys.maxsize."
            message = constant("Step for islice() must be a positive integer or None." if i == 2
                               else f"Indices for islice() {words}")
            if i == 1:  # Python's words for a stop of -1
                message = gast.IfExp(test=gast.Compare(left=clone(name), ops=[gast.Eq()],
                                                       comparators=[constant(-1)]),
                                     body=constant(f"Stop argument for islice() {words}"),
                                     orelse=message)
            checks = [gast.If(test=gast.BoolOp(op=gast.And(), values=[given, bad]), body=[
                gast.Raise(exc=builtin_call("ValueError", message), cause=None)], orelse=[])]
            if i != 1:
                checks.append(gast.If(test=gast.UnaryOp(op=gast.Not(), operand=clone(given)),
                                      body=[assign_to(name.id, constant(lowest))], orelse=[]))
            self.prelude.extend(located(check, b) for check in checks)
            out.append(name)
        return out


__all__ = ["ItertoolsPulls"]
