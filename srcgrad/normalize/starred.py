"""Starred expressions whose length is known when the code is compiled, spelt out.

Part of :mod:`.sugar` (a mixin of its desugarer), kept apart because it
answers one question the rest of the desugaring never asks: how many
elements does ``*t`` stand for?  Where the answer is known -- ``t`` a display,
a name only ever bound to displays of one length (:func:`fixed_lengths`), a
slice of one with whole-number bounds, a global tuple -- the star becomes the
elements; where it is not, a display becomes a concatenation and a call of a
user function with ``*rest`` gets one star that is all of ``rest``:

    >>> from ..frontend.parse import parse_function
    >>> from ..ir.emit import unparse
    >>> from .normalizer import _Normalizer
    >>> def f(x):
    ...     args = (x, 2.0)
    ...     shape = (*x.shape, 2)
    ...     return mix(*args) + mix(*args[1:], x) * len(shape)
    >>> def mix(a, b):
    ...     return a * b
    >>> normalizer = _Normalizer(parse_function(f))
    >>> normalizer.desugar()
    >>> print(unparse(normalizer.func))
    def f(x):
        args = (x, 2.0)
        shape = tuple(x.shape) + (2,)
        return mix(args[0], args[1]) + mix(args[1], x) * len(shape)
"""

from __future__ import annotations

import gast

from ..frontend.linker import is_user_function
from ..ir.syntax import clone, walk
from .iterators import builtin_ref

#: Methods that change the length of a list.
_RESIZING = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})


def _item(whole, i):
    return gast.Subscript(value=clone(whole), slice=gast.Constant(value=i, kind=None),
                          ctx=gast.Load())


def _sliced_positions(value, lengths):
    """The positions ``t[a:b:c]`` picks, for ``t`` a name of known length and
    whole-number bounds (``parts[1:]``, ``parts[:-1]``); None otherwise."""
    if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
            and value.value.id in lengths and isinstance(value.slice, gast.Slice)):
        return None
    bounds = []
    for bound in (value.slice.lower, value.slice.upper, value.slice.step):
        if bound is None:
            bounds.append(None)
            continue
        sign = 1
        if isinstance(bound, gast.UnaryOp) and isinstance(bound.op, gast.USub):
            sign, bound = -1, bound.operand
        if not (isinstance(bound, gast.Constant) and type(bound.value) is int):
            return None
        bounds.append(sign * bound.value)
    if bounds[2] == 0:
        return None  # Python raises ValueError as the code runs: leave it to do so
    return list(range(lengths[value.value.id])[slice(*bounds)])


def fixed_lengths(func) -> dict[str, int]:
    """Names only ever bound (``name = ...``) to tuple or list displays of one
    length, never resized: ``*name`` stands for that many elements."""
    lengths: dict[str, int | None] = {}
    direct = set()
    nodes = walk(func)
    for node in nodes:
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    direct.add(id(target))
                    value = node.value
                    n = len(value.elts) if isinstance(value, (gast.Tuple, gast.List)) and not any(
                        isinstance(e, gast.Starred) for e in value.elts) else None
                    if lengths.get(target.id, n) != n:
                        n = None
                    lengths[target.id] = n
    for node in nodes:
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)) \
                and id(node) not in direct:
            lengths[node.id] = None
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in _RESIZING and isinstance(node.func.value, gast.Name):
            lengths[node.func.value.id] = None
        elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            lengths[node.value.id] = None
        elif isinstance(node, gast.arguments):
            for arg in [*node.args, *node.posonlyargs, *node.kwonlyargs,
                        node.vararg, node.kwarg]:
                if isinstance(arg, gast.Name):
                    lengths[arg.id] = None
    return {name: n for name, n in lengths.items() if n is not None}


class StarExpansion:
    """``*t`` in calls and displays (mixed into the desugarer of :mod:`.sugar`,
    which gives it ``lengths``, the :func:`fixed_lengths` of the function)."""

    def packed_rest(self, node, prim):
        """``f(a, b, *t)`` for ``def f(x, *rest)``: ``f(a, *((b,) + tuple(t)))``,
        one starred argument that is all of ``rest``, whatever its length."""
        if not is_user_function(prim) or node.keywords or prim.__code__.co_flags & 0x04 == 0:
            return node
        count = prim.__code__.co_argcount
        head, tail = node.args[:count], node.args[count:]
        if len(head) < count or any(isinstance(a, gast.Starred) for a in head) \
                or len(tail) < 2:
            return node
        rest = self.visit_Tuple(gast.copy_location(gast.Tuple(elts=tail, ctx=gast.Load()),
                                                   tail[0]))
        node.args = [*head, gast.copy_location(gast.Starred(value=rest, ctx=gast.Load()),
                                               tail[0])]
        return node

    def visit_Tuple(self, node):
        node = self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load) or \
                not any(isinstance(e, gast.Starred) for e in node.elts):
            return node
        elts = self.expand(node.elts)
        if elts is not None:
            node.elts = elts
            return node
        return self.concatenated(node)

    visit_List = visit_Tuple

    def expand(self, items):
        """``items`` with each ``*t`` of known length replaced by ``t``'s elements;
        None when the length of one is not known."""
        out = []
        for item in items:
            if not isinstance(item, gast.Starred):
                out.append(item)
                continue
            value = item.value
            if isinstance(value, (gast.Tuple, gast.List)) \
                    and not any(isinstance(e, gast.Starred) for e in value.elts):
                out.extend(value.elts)
            elif isinstance(value, gast.Name) and value.id in self.lengths:
                out.extend(gast.copy_location(_item(value, i), value)
                           for i in range(self.lengths[value.id]))
            elif _sliced_positions(value, self.lengths) is not None:  # *parts[1:]
                out.extend(gast.copy_location(_item(value.value, i), value)
                           for i in _sliced_positions(value, self.lengths))
            elif isinstance(value, gast.Name) and value.id not in self.n.locals \
                    and isinstance(self.n.parsed.resolver.lookup(value.id), tuple):
                # a global tuple: the code is regenerated when the name is rebound
                count = len(self.n.parsed.resolver.lookup(value.id))
                out.extend(gast.copy_location(_item(value, i), value) for i in range(count))
            else:
                return None
        return out

    def concatenated(self, node):
        """``(*x, a, *y)`` -> ``tuple(x) + (a,) + tuple(y)``."""
        kind = "tuple" if isinstance(node, gast.Tuple) else "list"
        parts, run = [], []
        for elt in node.elts:
            if isinstance(elt, gast.Starred):
                if run:
                    parts.append(type(node)(elts=run, ctx=gast.Load()))
                    run = []
                parts.append(gast.copy_location(gast.Call(func=builtin_ref(kind), args=[elt.value],
                                                          keywords=[]), elt))
            else:
                run.append(elt)
        if run:
            parts.append(type(node)(elts=run, ctx=gast.Load()))
        whole = parts[0]
        for part in parts[1:]:
            whole = gast.copy_location(gast.BinOp(left=whole, op=gast.Add(), right=part), node)
        return gast.copy_location(whole, node)


__all__ = ["StarExpansion", "fixed_lengths"]
