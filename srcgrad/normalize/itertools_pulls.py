"""Loops over ``itertools.islice``, ``takewhile`` and ``dropwhile``.

Part of :mod:`.sugar` (a mixin of its desugarer, beside
:class:`.iterators.IteratorLoops`, which calls :meth:`ItertoolsPulls.picked`
for these kinds of stream), kept apart because each keeps its own count or
flag while the loop runs, as Python's does:

- ``islice(it, start, stop, step)`` counts what it pulls from ``it``, passes on
  the items at ``start``, ``start + step``, ... and stops before pulling at
  ``stop`` (bounds computed where the code runs: ``None`` there is the
  default, a bound out of range raises Python's ``ValueError``);
- ``takewhile(p, it)`` ends the loop at the first item ``p`` rejects;
- ``dropwhile(p, it)`` tests items until ``p`` rejects one, then passes on all.

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

import gast

from ..ir.syntax import clone, load_name, located
from .iterators import assign_to, break_when_reached, builtin_call, constant, plus_one


class ItertoolsPulls:
    """``islice``, ``takewhile`` and ``dropwhile`` in a loop's iterator (mixed
    into the desugarer, with :class:`.iterators.IteratorLoops`, whose ``driven``
    and ``bound`` it calls)."""

    def picked(self, s, on_item, cursor):
        """``driven`` for ``itertools.islice``, ``takewhile`` and ``dropwhile``:
        ``islice`` counts what it pulls, passes on the items at its positions and
        stops before pulling at ``stop``; ``takewhile`` ends the loop at its
        first false test; ``dropwhile`` tests until one is false."""
        test = s.start
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
            it, pattern, stmts = self.driven(s.parts[0], part_item, None, cursor)
            if isinstance(stop, gast.Constant) and stop.value is None:
                return it, pattern, stmts
            end = break_when_reached(pulled, stop, length=False)
            if not isinstance(stop, gast.Constant):  # None where the code runs: no end
                end.test = gast.BoolOp(op=gast.And(), values=[gast.Compare(
                    left=clone(stop), ops=[gast.IsNot()], comparators=[constant(None)]), end.test])
            return it, pattern, [end, *stmts]
        if s.kind == "takewhile":
            def part_item(value):
                ended = gast.UnaryOp(op=gast.Not(), operand=gast.Call(
                    func=clone(test), args=[value], keywords=[]))
                return [gast.If(test=ended, body=[gast.Break()], orelse=[]),
                        *on_item(clone(value))]
            return self.driven(s.parts[0], part_item, None, cursor)
        dropping = self.fresh("dropping")
        self.prelude.append(located(assign_to(dropping, constant(True)), s.node))

        def part_item(value):
            still = gast.Call(func=clone(test), args=[value], keywords=[])
            return [gast.If(test=load_name(dropping), body=[assign_to(dropping, still)],
                            orelse=[]),
                    gast.If(test=gast.UnaryOp(op=gast.Not(), operand=load_name(dropping)),
                            body=on_item(clone(value)), orelse=[])]
        return self.driven(s.parts[0], part_item, None, cursor)

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
