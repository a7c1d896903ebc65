"""Builtins on containers, rewritten into loops and comprehensions srcgrad has a form for.

Part of :mod:`.sugar` (a mixin of its desugarer), kept apart because each
rewrite here spells one builtin out in what the normaliser already knows --
a comprehension, a generator expression, a slice, a loop -- so what it calls
is differentiated as if written out: ``map``, ``filter``, ``zip`` and
``enumerate`` used as values, ``zip(*rows)``, ``reversed``, dict views, ``max``
and ``min`` of more than two values, ``functools.reduce``:

    >>> import functools
    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from ..ir.emit import unparse
    >>> from .normalizer import _Normalizer
    >>> def f(xs, ys, d):
    ...     pairs = list(zip(xs, ys))
    ...     hs = list(map(np.tanh, reversed(ys)))
    ...     big = max(xs[0], xs[1], xs[2])
    ...     total = functools.reduce(lambda a, b: a + b, xs, 0.0)
    ...     return sorted(d.items()), pairs, hs, big, total
    >>> normalizer = _Normalizer(parse_function(f))
    >>> normalizer.desugar()
    >>> print(unparse(normalizer.func))
    def f(xs, ys, d):
        pairs = list([(item, item_1) for item, item_1 in zip(xs, ys)])
        hs = list((np.tanh(item_2) for item_2 in sequence(ys)[::-1]))
        big = max(max(xs[0], xs[1]), xs[2])
        acc = 0.0
        for item_3 in xs:
            acc = (lambda a, b: a + b)(acc, item_3)
        total = acc
        return (sorted([(key, d[key]) for key in keys_of(d)]), pairs, hs, big, total)
"""

from __future__ import annotations

import gast

from ..ir.syntax import clone, helper_ref, load_name, walk
from .iterators import builtin_ref


def _located(tree, where):
    """``tree`` with every node that has no location given ``where``'s."""
    for sub in walk(tree):
        if getattr(sub, "lineno", None) is None and "lineno" in sub._attributes:
            gast.copy_location(sub, where)
    return tree


class BuiltinForms:
    """The rewrites of builtins on containers (mixed into the desugarer of
    :mod:`.sugar`, which calls them from its ``visit_Call``)."""

    def comprehension(self, elt, targets, iterable, where, kind=gast.ListComp):
        target = targets[0] if len(targets) == 1 else gast.Tuple(elts=targets, ctx=gast.Store())
        generator = gast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)
        node = gast.copy_location(kind(elt=elt, generators=[generator]), where)
        node.uncopied = True  # a new list, read once: used as it is, not through a copy
        for sub in walk(node):
            if hasattr(sub, "lineno") and getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, where)
        return node

    def names(self, base, count):
        made = [self.fresh(base) for _ in range(count)]
        return ([gast.Name(id=m, ctx=gast.Store(), annotation=None, type_comment=None)
                 for m in made], [load_name(m) for m in made])

    def mapped(self, node):
        """``map(f, xs, ys)`` -> ``(f(a, b) for a, b in zip(xs, ys))``."""
        function, iterables = node.args[0], node.args[1:]
        stores, loads = self.names("item", len(iterables))
        call = gast.copy_location(gast.Call(func=function, args=loads, keywords=[]), node)
        if len(iterables) == 1:
            iterable = iterables[0]
        else:
            iterable = gast.copy_location(gast.Call(func=builtin_ref("zip"), args=iterables,
                                                    keywords=[]), node)
            self.iterated.add(id(iterable))
        return self.comprehension(call, stores, iterable, node, gast.GeneratorExp)

    def filtered(self, node):
        """``filter(f, xs)`` -> ``(a for a in xs if f(a))`` (``filter(None, xs)``:
        ``if a``): the test is run, never differentiated; the items kept are."""
        function, iterable = node.args
        stores, loads = self.names("item", 1)
        test = loads[0] if isinstance(function, gast.Constant) and function.value is None \
            else gast.copy_location(gast.Call(func=function, args=[load_name(loads[0].id)],
                                              keywords=[]), node)
        made = self.comprehension(loads[0], stores, iterable, node, gast.GeneratorExp)
        made.generators[0].ifs = [test]
        for sub in walk(test):
            if hasattr(sub, "lineno") and getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, node)
        return made

    @staticmethod
    def pairwise_extreme(node, prim):
        """``max(a, b, c)`` and ``max([a, b, c])`` -> ``max(max(a, b), c)``: the
        first of tied extremes, as Python's, from the rule for two values."""
        items = node.args[0].elts if len(node.args) == 1 else node.args
        result = items[0]
        for item in items[1:]:
            result = _located(gast.Call(func=builtin_ref(prim.__name__), args=[result, item],
                                        keywords=[]), node)
        return result

    def reduced(self, node):
        """``functools.reduce(f, xs, init)`` -> the loop ``acc = init; for item in
        xs: acc = f(acc, item)``, put before the statement, and ``acc`` in its
        place (without ``init``: ``items = list(xs); acc = items[0]`` and the loop
        over ``items[1:]``).  ``f`` is called as written -- a lambda inlined, a
        user function differentiated, an ``operator`` function by its rule."""
        function, iterable = node.args[0], node.args[1]
        (acc_store,), (acc,) = self.names("acc", 1)
        (item_store,), (item,) = self.names("item", 1)
        made = []
        if len(node.args) == 3:
            made.append(gast.Assign(targets=[acc_store], value=node.args[2], type_comment=None))
        else:
            (items_store,), (items,) = self.names("items", 1)
            made.append(gast.Assign(targets=[items_store], value=gast.Call(
                func=builtin_ref("list"), args=[iterable], keywords=[]), type_comment=None))
            made.append(gast.Assign(targets=[clone(acc_store)], value=gast.Subscript(
                value=clone(items), slice=gast.Constant(value=0, kind=None), ctx=gast.Load()),
                type_comment=None))
            iterable = gast.Subscript(value=clone(items), slice=gast.Slice(
                lower=gast.Constant(value=1, kind=None), upper=None, step=None), ctx=gast.Load())
        step = gast.Assign(targets=[clone(acc_store)], value=gast.Call(
            func=function, args=[clone(acc), item], keywords=[]), type_comment=None)
        made.append(gast.For(target=item_store, iter=iterable, body=[step], orelse=[],
                             type_comment=None))
        self.prelude.extend(_located(stmt, node) for stmt in made)
        return _located(clone(acc), node)

    @staticmethod
    def positional(node, prim):
        """``enumerate(xs, start=1)`` -> ``enumerate(xs, 1)``; ``zip(a, b,
        strict=True)`` -> ``zip(a, b)`` marked ``strict`` (the loop over it checks
        the lengths, :meth:`.control.ControlFlow.strict_lengths`).  Other keywords,
        or a ``strict`` that is not a constant, are left for the call as written."""
        keywords = {k.arg: k.value for k in node.keywords}
        if prim is enumerate and list(keywords) == ["start"] and len(node.args) == 1:
            node.args = [*node.args, keywords["start"]]
            node.keywords = []
        elif prim is zip and list(keywords) == ["strict"] \
                and isinstance(keywords["strict"], gast.Constant):
            node.keywords = []
            node.strict = bool(keywords["strict"].value) and len(node.args) > 1
        return node

    def listed(self, node, prim):
        """``zip(a, b)`` -> ``[(x, y) for x, y in zip(a, b)]``, and so for enumerate."""
        count = len(node.args) if prim is zip else 2
        stores, loads = self.names("item", count)
        elt = gast.copy_location(gast.Tuple(elts=loads, ctx=gast.Load()), node)
        self.iterated.add(id(node))
        return self.comprehension(elt, stores, node, node)

    def transposed(self, rows):
        """``zip(*rows)`` -> ``[tuple([r[j] for r in rows]) for j in range(n)]``, with
        ``n = min(map(len, rows), default=0)``."""
        (row_store,), (row,) = self.names("row", 1)
        (index_store,), (index,) = self.names("j", 1)
        column = self.comprehension(gast.Subscript(value=row, slice=index, ctx=gast.Load()),
                                    [row_store], clone(rows), rows)
        elt = gast.Call(func=builtin_ref("tuple"), args=[column], keywords=[])
        shortest = gast.Call(func=builtin_ref("min"), args=[gast.Call(
            func=builtin_ref("map"), args=[builtin_ref("len"), clone(rows)], keywords=[])],
            keywords=[gast.keyword(arg="default", value=gast.Constant(value=0, kind=None))])
        count = gast.Call(func=builtin_ref("range"), args=[shortest], keywords=[])
        return self.comprehension(elt, [index_store], count, rows)

    def dict_view(self, node):
        """``d.keys()`` -> ``keys_of(d)``; ``d.values()`` -> ``[d[k] for k in
        keys_of(d)]``; ``d.items()`` -> ``[(k, d[k]) for k in keys_of(d)]``."""
        kind, mapping = node.func.attr, node.func.value
        made = gast.GeneratorExp if id(node) in self.live else gast.ListComp  # read live
        checked = self.n.view_checked(mapping, node)  # s.items() of a user's class?
        mapping = self.held(mapping, node)
        keys = gast.copy_location(gast.Call(func=helper_ref("keys_of"),
                                            args=[clone(mapping), *checked], keywords=[]), node)
        if kind == "keys":
            return keys
        (key_store,), (key,) = self.names("key", 1)
        value = gast.Subscript(value=clone(mapping), slice=key, ctx=gast.Load())
        elt = value if kind == "values" else gast.Tuple(elts=[clone(key), value],
                                                         ctx=gast.Load())
        return self.comprehension(elt, [key_store], keys, node, made)

    def held(self, container, view):
        """The container a live view reads, in a name of its own where the loop's
        body rebinds its name (Python's view keeps the object it was made from)."""
        if isinstance(container, gast.Name) and container.id in self.live.get(id(view), ()):
            return self.bound(container, keep=True)
        return container

    def reversed_(self, node):
        """``reversed(xs)`` -> ``xs[::-1]``: the same items, in an indexable form;
        in a loop whose body changes the list, ``(xs[j] for j in range(len(xs) -
        1, -1, -1))``: each item read when the loop gets to it, as Python's
        reverse iterator does."""
        items = self.held(node.args[0], node)
        n = self.n
        if id(node) in self.live:
            (index_store,), (index,) = self.names("j", 1)
            elt = gast.Subscript(value=clone(items), slice=index, ctx=gast.Load())
            minus_one = gast.Constant(value=-1, kind=None)
            last = gast.BinOp(left=gast.Call(func=builtin_ref("len"), args=[clone(items)],
                                             keywords=[]), op=gast.Sub(),
                              right=gast.Constant(value=1, kind=None))
            positions = gast.Call(func=builtin_ref("range"), args=[
                last, minus_one, gast.Constant(value=-1, kind=None)], keywords=[])
            return self.comprehension(elt, [index_store], positions, node, gast.GeneratorExp)
        indexable = isinstance(items, (gast.Tuple, gast.List)) or (
            isinstance(items, gast.Name) and items.id in n.locals
            and items.id not in n.params and items.id not in n.dict_names
            and not n.maybe_unindexable(items.id)) or (
            isinstance(items, gast.Call)
            and any(self.callee(items) is f for f in (range, list, tuple, sorted)))
        if not indexable:  # a dict's keys, an iterator: listed first
            items = gast.copy_location(gast.Call(func=helper_ref("sequence"), args=[items],
                                                 keywords=[]), items)
        step = gast.Constant(value=-1, kind=None)
        flipped = gast.Subscript(value=items, slice=gast.Slice(lower=None, upper=None, step=step),
                                 ctx=gast.Load())
        flipped.indexable = True  # a loop runs over it as it is
        return gast.copy_location(flipped, node)


__all__ = ["BuiltinForms"]
