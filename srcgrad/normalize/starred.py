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

import inspect

import gast

from ..frontend.linker import Packed, is_user_function
from ..frontend.wrappers import takes_wrapped_parameters
from ..ir.syntax import clone, walk_nodes
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
    nodes = walk_nodes(func)  # (contexts are read through their names)
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


def with_packed_lengths(func, lengths, packed) -> dict[str, int]:
    """``lengths`` (:func:`fixed_lengths`) with the parameters whose length the
    call fixed (``packed``: :class:`~..frontend.linker.Packed` entries, a
    ``*rest`` or a tuple display passed) where nothing in ``func`` binds them
    again, changes an element or names a parameter of a nested function so."""
    known = {p.name: p.length for p in packed if p.length is not None}
    if not known:
        return lengths
    own = func.args
    for node in walk_nodes(func):
        if isinstance(node, gast.Name) and node.id in known and not isinstance(
                node.ctx, gast.Load) and not _own_parameter(own, node):
            known.pop(node.id)
        elif isinstance(node, gast.Subscript) and not isinstance(node.ctx, gast.Load) \
                and isinstance(node.value, gast.Name):
            known.pop(node.value.id, None)
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in _RESIZING and isinstance(node.func.value, gast.Name):
            known.pop(node.func.value.id, None)
    return {**lengths, **known}


def _own_parameter(args, node) -> bool:
    return any(node is a for a in [*args.posonlyargs, *args.args, args.vararg,
                                    *args.kwonlyargs, args.kwarg])


def packed_shapes(fn, node, lengths, receiver: int = 0) -> tuple:
    """What a call ``node`` of the user function ``fn`` packs, as
    :class:`~..frontend.linker.Packed` entries its code is specialised on: the
    number of items its ``*rest`` gets (no ``*t`` of unknown length passed),
    the keys its ``**kw`` gets, and the length of a tuple display, or of a
    name of the caller's ``lengths``, passed to another parameter
    (``odeint(f, y0, ts, args=(theta,))``); ``receiver``: 1 for a method
    called on an object (``model.run(x, *a)``: ``self`` is not in ``node.args``)."""
    if takes_wrapped_parameters(fn):  # def wrapper(*a, **k), read as fn's parameters
        return ()
    code = fn.__code__
    try:
        params = list(inspect.signature(fn, follow_wrapped=False).parameters.values())
    except (TypeError, ValueError):
        return ()
    found = []
    params = params[receiver:]
    fixed = code.co_argcount - receiver
    starred = any(isinstance(a, gast.Starred) for a in node.args)
    rest = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    if code.co_flags & inspect.CO_VARARGS and not starred and rest is not None:
        found.append(Packed(rest, length=max(0, len(node.args) - fixed)))
    rest = next((p.name for p in params if p.kind is p.VAR_KEYWORD), None)
    if code.co_flags & inspect.CO_VARKEYWORDS and rest is not None \
            and all(k.arg is not None for k in node.keywords):
        named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        found.append(Packed(rest, keys=tuple(k.arg for k in node.keywords
                                              if k.arg not in named)))
    given = [] if starred else list(zip([p.name for p in params[:fixed]], node.args))
    given += [(k.arg, k.value) for k in node.keywords
              if k.arg is not None and any(p.name == k.arg and p.kind in (
                  p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params)]
    for name, arg in given:
        if isinstance(arg, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in arg.elts):
            found.append(Packed(name, length=len(arg.elts)))
        elif isinstance(arg, gast.Name) and arg.id in lengths:
            found.append(Packed(name, length=lengths[arg.id]))
    return tuple(found)


def tuple_lengths(func, fixed=None) -> dict[str, int]:
    """:func:`fixed_lengths` of the names only ever bound to tuple displays: a
    tuple keeps its length wherever it is passed (a list passed may grow).
    ``fixed``: :func:`fixed_lengths` of ``func``, where the caller has it (not
    changed here)."""
    lengths = fixed_lengths(func) if fixed is None else dict(fixed)
    for node in walk_nodes(func):
        if isinstance(node, gast.Assign) and not isinstance(node.value, gast.Tuple):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    lengths.pop(target.id, None)
    return lengths


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


__all__ = ["StarExpansion", "fixed_lengths", "packed_shapes", "tuple_lengths",
           "with_packed_lengths"]
