"""How loops end: ``for ... else``, ``while ... else`` and ``zip(..., strict=True)``.

Part of :mod:`.sugar` (a mixin of its desugarer, beside
:class:`.iterators.IteratorLoops`), kept apart because both forms hang on one
fact the rest of the normaliser never needs: whether a loop ran to its end or
left it by a ``break``.

- ``for ...: body else: rest`` -> ``flag = False``, the loop with each of its
  own ``break`` setting the flag first, and ``if not flag: rest`` (a loop
  without a ``break`` is just followed by ``rest``);
- ``zip(a, b, strict=True)`` raises when it ends with items left in another
  argument -- so only where the loop runs to its end, never where it breaks
  first.  The check becomes the first part of the loop's ``else`` block, on the
  lengths of the arguments (each evaluated once, before the loop), in
  Python's words.

The driver :meth:`LoopExits.loop` runs these first, then hands the loop to
:class:`.iterators.IteratorLoops` (what the iterator computes, and when):

    >>> from ..frontend.parse import parse_function
    >>> from ..ir.emit import unparse
    >>> from .normalizer import _Normalizer
    >>> def f(x, y):
    ...     s = 0.0
    ...     for a, b in zip(x, y, strict=True):
    ...         s = s + a * b
    ...         if s > 1.0:
    ...             break
    ...     else:
    ...         s = -s
    ...     return s
    >>> normalizer = _Normalizer(parse_function(f))
    >>> normalizer.desugar()
    >>> print(unparse(normalizer.func))
    def f(x, y):
        s = 0.0
        broke = False
        for a, b in zip(x, y):
            s = s + a * b
            if s > 1.0:
                broke = True
                break
        if not broke:
            steps = min(len(x), len(y))
            if len(x) == steps:
                if len(y) != steps:
                    raise ValueError('zip() argument 2 is longer than argument 1')
            elif len(y) == steps:
                raise ValueError('zip() argument 2 is shorter than argument 1')
            s = -s
        return s
"""

from __future__ import annotations

import itertools

import gast

from ..ir.syntax import clone, load_name, located, updated_in_place
from .generator_reads import changed_names
from .iterators import (
    assign_to,
    builtin_call,
    constant,
    flag_breaks,
    rebuilt,
    stream_parts,
)


class LoopExits:
    """Loop exits (mixed into the desugarer of :mod:`.sugar`, with
    :class:`.iterators.IteratorLoops`, whose methods it calls)."""

    def loop(self, node):
        """A ``for`` statement whose parts have been desugared, rewritten (see the
        module docstring): one statement or a list of them."""
        self.changed, self.where = changed_names(node), node.iter
        self.writes = bool(updated_in_place(gast.Module(body=node.body, type_ignores=[])))
        self.strict_checked(node)
        before, after = self.else_flagged(node)
        node.iter = self.taken_apart(node.iter)
        return [*before, self.lazy(node), *after]

    def while_loop(self, node):
        before, after = self.else_flagged(node)
        return [*before, node, *after]

    # -- for ... else ---------------------------------------------------------------------
    def else_flagged(self, node):
        """``for ...: body else: rest`` -> ``flag = False``, the loop with each of
        its own ``break`` setting the flag first, and ``if not flag: rest``: the
        statements before the loop and after it.  Without a ``break`` the
        ``else`` block just follows the loop."""
        if not node.orelse:
            return [], []
        rest, node.orelse = node.orelse, []
        flag = self.fresh("broke")
        found = []
        node.body = flag_breaks(node.body, flag, found)
        if not found:
            return [], rest
        guard = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=load_name(flag)), body=rest,
                        orelse=[])
        return [located(assign_to(flag, constant(False)), node)], [located(guard, rest[0])]

    # -- zip(..., strict=True) ---------------------------------------------------------------
    def strict_checked(self, node) -> None:
        """``zip(a, b, strict=True)`` in the loop's iterator: Python raises when the
        zip ends with items left in another argument, so only a loop that runs
        to its end can raise.  The check goes into the loop's ``else`` block (a
        ``break`` skips it), in Python's words, on the lengths of the arguments,
        each evaluated once before the loop."""
        tree = self.stream(node.iter)
        zips = [s for s in stream_parts(tree) if s.kind == "zip" and getattr(s.node, "strict", False)]
        if not zips:
            return
        for z in zips:
            z.node.strict = False
        if not tree.regular():
            raise self.n.error("srcgrad cannot check zip(..., strict=True) over a generator "
                               "that skips items: drop strict=True and compare the lengths "
                               "after the loop", zips[0].node)
        for leaf in tree.leaves():
            self.bind_leaf(leaf)
        node.iter = rebuilt(tree)
        lengths = [n for n in map(self.length_of, tree.leaves()) if n is not None]
        if not lengths:
            return  # no end: only a break leaves the loop
        steps = self.fresh("steps")
        checks = [assign_to(steps, lengths[0] if len(lengths) == 1 else builtin_call("min", *lengths))]
        for z in reversed(zips):  # an inner zip is pulled, and checks, first
            check = self.zip_check(z, steps)
            guard = [gast.Compare(left=length, ops=[gast.Gt()], comparators=[load_name(steps)])
                     for length in map(self.length_of, _leaves_before(tree, z))
                     if length is not None]
            if guard:
                check = [gast.If(test=guard[0] if len(guard) == 1 else
                                 gast.BoolOp(op=gast.And(), values=guard), body=check, orelse=[])]
            checks.extend(check)
        node.orelse = [located(stmt, z.node) for stmt in checks] + node.orelse

    def zip_check(self, z, steps):
        """Python's check when ``z`` has ended after ``steps`` items: the first
        argument that ended is shorter than those before it, or, where that is
        the first argument, the first that goes on is longer."""
        lengths = [self.length_of(p) for p in z.parts]

        def ended(length, op=gast.Eq):
            return constant(op is gast.NotEq) if length is None else \
                gast.Compare(left=clone(length), ops=[op()], comparators=[load_name(steps)])

        def fail(position, how):
            before = "argument 1" if position == 2 else f"arguments 1-{position - 1}"
            message = f"zip() argument {position} is {how} than {before}"
            return [gast.Raise(exc=builtin_call("ValueError", constant(message)), cause=None)]

        longer, shorter = [], []
        for position in range(len(lengths), 1, -1):
            length = lengths[position - 1]
            longer = [gast.If(test=ended(length, gast.NotEq), body=fail(position, "longer"), orelse=longer)]
            shorter = [gast.If(test=ended(length), body=fail(position, "shorter"),
                               orelse=shorter)]
        return [gast.If(test=ended(lengths[0]), body=longer, orelse=shorter)]

    def length_of(self, s):
        """How many items ``s`` gives, as an expression (None: no end)."""
        if s.kind == "leaf":
            return None if self.is_call(s.node, itertools.count) else builtin_call("len", clone(s.node))
        lengths = [n for n in map(self.length_of, s.parts) if n is not None]
        if not lengths:
            return None
        return lengths[0] if len(lengths) == 1 else builtin_call("min", *lengths)

    def bind_leaf(self, leaf) -> None:
        """Evaluate a leaf once, before the loop, into a name (a name or a count
        needs none): ``sequence`` lists what has no ``len`` (an iterator)."""
        expr = leaf.node
        if self.is_call(expr, itertools.count) or \
                isinstance(expr, gast.Name) and not self.n.bound_to_iterator(expr.id):
            return
        leaf.node = self.bound(expr, keep=self.is_call(expr, range)
                               or isinstance(expr, (gast.List, gast.Tuple)))



def _leaves_before(tree, target) -> list:
    """The leaves pulled before ``target`` at each step (``zip`` pulls its
    arguments left to right), ``target``'s own not counted."""
    out = []

    def visit(s):
        if s is target:
            return True
        if s.kind == "leaf":
            out.append(s)
            return False
        return any(visit(p) for p in s.parts)

    visit(tree)
    return out


__all__ = ["LoopExits"]
