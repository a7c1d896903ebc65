"""Builtins on containers and starred expressions, rewritten into known forms.

Part of :mod:`.normalizer` (a mixin of its normaliser).  Before a statement
is normalised, :meth:`Sugar.desugar` rewrites, in the function's tree, what
the rest of the normaliser has no form for into what it has:

- ``map(f, xs, ys)`` -> ``(f(a, b) for a, b in zip(xs, ys))``, so ``f`` (a user
  function, a lambda, a NumPy function) is called, and differentiated, as if
  written out; ``filter(f, xs)`` -> ``(a for a in xs if f(a))``;
- ``zip(...)`` and ``enumerate(...)`` used as values, not looped over
  (``list(zip(a, b, c))``) -> the list of tuples a comprehension builds;
  ``zip(*rows)``, the transposition, -> ``[tuple([r[j] for r in rows]) for j
  in range(...)]``;
- ``reversed(xs)`` -> ``xs[::-1]`` (``sequence(xs)[::-1]`` when ``xs`` may be a
  dict; in a loop whose body changes the list, a generator reading ``xs[j]``
  when the loop gets to it, as Python's reverse iterator does);
- ``d.keys()``, ``d.values()``, ``d.items()`` used as values, not looped over
  (``sorted(d.items())``) -> ``keys_of(d)`` and lists a comprehension builds
  from it (inside a loop's ``zip`` or ``enumerate``: a generator, each value
  read when the loop gets to it, as a live view does);
- ``*t`` in a call or a tuple or list display, where ``t`` is a display, a
  name only ever bound to displays of one length (or a slice of one with
  whole-number bounds, ``*parts[1:]``), or a global tuple -> its
  elements (``f(y, *args)`` -> ``f(y, args[0], args[1])``); a display with a
  ``*x`` of unknown length -> a concatenation, ``(*x.shape, 2)`` ->
  ``tuple(x.shape) + (2,)``; a call of a user function with ``*rest`` gets the
  arguments past its named parameters as one star, ``f(a, b, *t)`` ->
  ``f(a, *((b,) + tuple(t)))`` for ``def f(x, *rest)``;
- a ``for`` or ``while`` statement, once its parts are rewritten: how it ends
  (``else``, ``zip(..., strict=True)``: :mod:`.loop_exits`) and when its
  iterator computes its items (generators, ``map``, ``filter`` in ``zip`` or
  ``enumerate``: :mod:`.iterators`; ``itertools``: :mod:`.itertools_pulls`).

Conditions and what ``raise`` and ``assert`` evaluate are left alone: they
are run as written, never differentiated.  A ``*x`` whose length is not
known stays in a call of a function without a rule (``rs.randn(*x.shape)``:
nothing is differentiated through it) and is refused, located, in a call
that needs one argument per parameter (a rule, a user function without
``*args``).  The other methods: ``first, *rest = items``
(:meth:`Sugar.unpack_starred`), a parameter whose default is a function
(:meth:`.specialise.Specialisation.function_defaults`); ``any``, ``all`` and the like
(:data:`NON_DIFFERENTIABLE_BUILTINS`) are calls kept whole, like comparisons.

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(xs, ws):
    ...     scale = (2.0, 0.5)
    ...     hs = list(map(np.tanh, reversed(xs)))
    ...     first, *rest = hs
    ...     return np.sum(first * ws[0]) + mix(*scale) * len(rest)
    >>> def mix(a, b):
    ...     return a * b
    >>> print(unparse_body(normalize(parse_function(f))))
    scale = (2.0, 0.5)
    t1 = []
    t3 = sequence(xs)
    t2 = t3[::-1]
    t4 = range(len(t2))
    for k in t4:
        item_1 = t2[k]
        t5 = np.tanh(item_1)
        t1.append(t5)
    hs = list(t1)
    unpacked(hs, 1, True, ('<doctest srcgrad.normalize.sugar[3]>', 4, 19))
    t6 = hs[1:]
    first = hs[0]
    rest = list(t6)
    t7 = ws[0]
    t8 = first * t7
    t9 = np.sum(t8)
    t10 = scale[0]
    t11 = scale[1]
    t12 = mix(t10, t11)
    t13 = len(rest)
    t14 = t12 * t13
    t15 = t9 + t14
    return t15
"""

from __future__ import annotations

import functools
import itertools
import operator
import types

import gast
import numpy as np

from .. import ir
from ..errors import SrcGradError
from ..frontend.linker import is_user_function
from ..frontend.parse import MISSING
from ..ir.syntax import (
    assigned_names,
    clone,
    helper_ref,
    is_dict_view,
    load_name,
    source_of,
    updated_in_place,
    walk,
)
from ..rules import registry
from .generator_reads import StaleIterators, changed_names
from .iterators import IteratorLoops, builtin_ref
from .itertools_pulls import ItertoolsPulls
from .loop_exits import LoopExits

#: Methods that change the length of a list.
_RESIZING = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})

#: Builtins whose value carries no derivative: computed as written (like a comparison).
NON_DIFFERENTIABLE_BUILTINS = (any, all, isinstance, issubclass, callable, hasattr, bool)


class Sugar(StaleIterators):
    """Builtins on containers and starred expressions (mixed into the normaliser)."""

    def desugar(self) -> None:
        """Rewrite the function's tree in place (see the module docstring)."""
        self.refuse_stale_iterators()
        _Desugarer(self, fixed_lengths(self.func)).visit(self.func)

    def starred_call(self, node, prim) -> None:
        """Refuse a call that keeps a ``*x`` of unknown length where srcgrad must
        match arguments to parameters (a rule, a user function, a method)."""
        starred = next(a for a in node.args if isinstance(a, gast.Starred))
        if prim is MISSING or registry.lookup(prim) is not None \
                or isinstance(prim, functools.partial) \
                or (isinstance(prim, types.MethodType) and is_user_function(prim.__func__)) \
                or (is_user_function(prim) and not _takes_rest(prim, node, starred)):
            raise self.error(
                f"srcgrad cannot tell how many arguments '*{source_of(starred.value)}' "
                f"passes here: build the tuple in the function (args = (a, b)) or pass its "
                f"elements one by one", starred)

    def starred_callee(self, node):
        """What a call with a ``*x`` argument calls, as :meth:`starred_call` needs it."""
        func = self.unalias(node.func)
        if isinstance(func, gast.Lambda) or self.typed_method(func) is not None or (
                isinstance(func, gast.Name) and func.id in self.local_functions):
            return MISSING
        if isinstance(func, gast.Attribute) and not self.is_static(func):
            return getattr(np.ndarray, func.attr, None) or ir.UnknownMember(func.attr, True)
        return self.callee(node)

    def unpack_starred(self, target, value, node) -> None:
        """``first, *rest = items``: ``rest`` is a list of the items in between."""
        elts = target.elts
        star = _star_position(self, elts)
        after = len(elts) - star - 1
        names = elts[:star] + [elts[star].value] + elts[star + 1:]
        if isinstance(value, (gast.Tuple, gast.List)) \
                and not any(isinstance(v, gast.Starred) for v in value.elts):
            if len(value.elts) < len(elts) - 1:
                raise self.error(f"cannot unpack {len(value.elts)} values into "
                                 f"{len(elts) - 1} or more names", value, SrcGradError)
            atoms = [self.atom(v) for v in value.elts]
            middle = atoms[star:len(atoms) - after]
            rest = self.atom_of(gast.List(elts=middle, ctx=gast.Load()),
                                ir.Op(ir.BUILD_LIST, middle, {}, node, ir.BUILD_LIST.label))
            atoms = atoms[:star] + [rest] + atoms[len(atoms) - after:]
            for elt, atom in zip(names, self.parallel_sources(names, atoms, node)):
                self.bind(elt, atom, node)
            return
        self.unpack_starred_atom(target, self.atom(value), node)

    def unpack_starred_atom(self, target, whole, node) -> None:
        """``first, *rest, last = t`` for an atom ``t``: ``first = t[0]``, ``rest =
        list(t[1:-1])``, ``last = t[-1]``."""
        elts = target.elts
        star = _star_position(self, elts)
        after = len(elts) - star - 1
        names = elts[:star] + [elts[star].value] + elts[star + 1:]
        whole = self.parallel_sources(names, [whole], node, after=-1)[0]
        self.check_unpacked(whole, len(elts) - 1, True, node)
        upper = gast.Constant(value=-after, kind=None) if after else None
        window = gast.Slice(lower=gast.Constant(value=star, kind=None), upper=upper, step=None)
        part = self.atom_of(gast.Subscript(value=clone(whole), slice=window, ctx=gast.Load()),
                            ir.Op(operator.getitem, [whole, window], {}, node, "unpacking"))
        values = [_element(whole, i, node) for i in range(star)]
        values.append((gast.Call(func=builtin_ref("list"), args=[part], keywords=[]),
                       ir.Op(list, [part], {}, node, "list")))
        values.extend(_element(whole, j - after, node) for j in range(after))
        for elt, (expr, op) in zip(names, values):
            if isinstance(elt, gast.Name):
                stmt = ir.assign(self.define(elt.id), expr)
                stmt.op = op
                self.out.append(gast.copy_location(stmt, elt))
            else:
                self.bind(elt, self.atom_of(expr, op), node)


def _located(tree, where):
    """``tree`` with every node that has no location given ``where``'s."""
    for sub in walk(tree):
        if getattr(sub, "lineno", None) is None and "lineno" in sub._attributes:
            gast.copy_location(sub, where)
    return tree


def _element(whole, i, node):
    index = gast.Constant(value=i, kind=None)
    return (gast.Subscript(value=clone(whole), slice=index, ctx=gast.Load()),
            ir.Op(operator.getitem, [whole, index], {}, node, "unpacking"))


def _star_position(normalizer, elts) -> int:
    stars = [i for i, e in enumerate(elts) if isinstance(e, gast.Starred)]
    if len(stars) > 1:
        raise normalizer.error("multiple starred names in one assignment", elts[stars[1]],
                               SrcGradError)
    return stars[0]


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


def _takes_rest(fn, node, starred) -> bool:
    """``f(a, *t)`` for ``def f(x, *rest)``: ``t`` is ``rest``, whatever its length."""
    code = fn.__code__
    return bool(code.co_flags & 0x04) and node.args[-1] is starred \
        and len(node.args) - 1 == code.co_argcount and not node.keywords


def fixed_lengths(func) -> dict[str, int]:
    """Names only ever bound (``name = ...``) to tuple or list displays of one
    length, never resized: ``*name`` stands for that many elements."""
    lengths: dict[str, int | None] = {}
    direct = set()
    for node in walk(func):
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
    for node in walk(func):
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


class _Desugarer(LoopExits, IteratorLoops, ItertoolsPulls, gast.NodeTransformer):
    def __init__(self, normalizer, lengths):
        self.n = normalizer
        self.lengths = lengths
        self.iterated: set[int] = set()   # zip/enumerate calls a loop runs over
        self.live: dict[int, set] = {}    # views a loop reads as it goes (mark_iterated):
        #                                   the names its body rebinds
        self.prelude: list = []           # statements a rewrite puts before the current one
        self.deferred = 0                 # inside a lambda, comprehension or if-expression

    def visit(self, node):
        """A statement gets the statements its rewrites made put before it
        (``functools.reduce``'s loop, :meth:`reduced`)."""
        if not isinstance(node, gast.stmt):
            return super().visit(node)
        outer, self.prelude = self.prelude, []
        new = super().visit(node)
        made, self.prelude = self.prelude, outer
        if not made:
            return new
        return [*made, *(new if isinstance(new, list) else [new])]

    def visit_Lambda(self, node):
        """What is evaluated later, or maybe not at all, is rewritten without
        statements put before the statement (a reduce there stays a call)."""
        self.deferred += 1
        try:
            return self.generic_visit(node)
        finally:
            self.deferred -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

    # -- what is run as written: left alone ------------------------------------------
    def visit_If(self, node):
        node.body = self.visit_block(node.body)
        node.orelse = self.visit_block(node.orelse)
        return node

    def visit_While(self, node):
        return self.while_loop(self.visit_If(node))

    def visit_Raise(self, node):
        return node

    visit_Assert = visit_Compare = visit_BoolOp = visit_Raise

    def visit_UnaryOp(self, node):
        return node if isinstance(node.op, gast.Not) else self.generic_visit(node)

    def visit_IfExp(self, node):
        self.deferred += 1
        try:
            node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
        finally:
            self.deferred -= 1
        return node

    def visit_block(self, stmts):
        out = []
        for stmt in stmts:
            new = self.visit(stmt)
            out.extend(new if isinstance(new, list) else [new])
        return out

    # -- loops: zip and enumerate there are looped over, not built --------------------
    def visit_For(self, node):
        changed = changed_names(node)
        if updated_in_place(gast.Module(body=node.body, type_ignores=[])):
            changed.add(None)  # (updated through an alias, maybe)
        self.rebound = assigned_names(gast.Module(body=node.body, type_ignores=[]))
        self.mark_iterated(node.iter, changed=changed)
        return self.loop(self.generic_visit(node))  # see .loop_exits and .iterators

    def visit_comprehension(self, node):
        self.mark_iterated(node.iter)
        node = self.generic_visit(node)
        outer = getattr(self, "changed", set()), getattr(self, "writes", False)
        self.changed, self.writes = set(), False  # (not a loop's body)
        try:
            node.iter = self.taken_apart(node.iter, inline=True)  # see .iterators
        finally:
            self.changed, self.writes = outer
        return node

    def mark_iterated(self, node, top=True, changed=None):
        """Mark what a loop runs over.  ``changed`` (a ``for`` statement's, not a
        comprehension's): the names its body changes -- a dict view in a ``zip``
        or ``enumerate`` there, and ``reversed(xs)`` of a list the body changes,
        become generators that read each item when the loop gets to it, as
        Python's views and reverse iterators do."""
        if is_dict_view(node) and top:  # for k, v in d.items(): the loop reads d[k]
            self.iterated.add(id(node))  # (in a zip: the values read as the loop goes)
        elif is_dict_view(node) and changed is not None:
            self.live[id(node)] = self.rebound
        if isinstance(node, gast.Call) and changed is not None and node.args \
                and self.callee(node) is reversed and isinstance(node.args[0], gast.Name) \
                and {node.args[0].id, None} & changed \
                and node.args[0].id not in self.n.dict_names:
            self.live[id(node)] = self.rebound
        if isinstance(node, gast.Call) and self.callee(node) in (zip, enumerate):
            self.iterated.add(id(node))
            for arg in node.args:
                self.mark_iterated(arg, top=False, changed=changed)
        elif isinstance(node, gast.Call) and node.args and changed is not None:
            source = {itertools.islice: 0, iter: 0, itertools.takewhile: 1,
                      itertools.dropwhile: 1}.get(self.callee(node))  # pulled as it goes
            if source is not None and len(node.args) > source:
                self.mark_iterated(node.args[source], top=False, changed=changed)

    def callee(self, node):
        if not isinstance(node.func, (gast.Name, gast.Attribute)):
            return MISSING
        return self.n.callee(node)

    # -- the rewrites -----------------------------------------------------------------
    def visit_Call(self, node):
        node = self.generic_visit(node)
        if is_dict_view(node) and id(node) not in self.iterated \
                and isinstance(node.func.value, (gast.Name, gast.Attribute)):
            return self.dict_view(node)
        prim = self.callee(node)
        if prim in (zip, enumerate) and node.keywords:
            node = self.positional(node, prim)
        if any(isinstance(a, gast.Starred) for a in node.args):
            args = self.expand(node.args)
            if args is not None:
                node.args = args
            elif prim is zip and len(node.args) == 1 and not node.keywords:
                return gast.copy_location(self.transposed(node.args[0].value), node)
            else:
                return self.packed_rest(node, prim)
        if prim in (max, min) and not node.keywords and (len(node.args) > 2 or (
                len(node.args) == 1 and isinstance(node.args[0], (gast.List, gast.Tuple))
                and node.args[0].elts
                and not any(isinstance(e, gast.Starred) for e in node.args[0].elts))):
            return self.pairwise_extreme(node, prim)
        if node.keywords or any(isinstance(a, gast.Starred) for a in node.args):
            return node
        if prim is functools.reduce and len(node.args) in (2, 3) and not self.deferred \
                and isinstance(node.args[0], (gast.Name, gast.Attribute, gast.Lambda)):
            return self.reduced(node)
        if prim is map and len(node.args) >= 2:
            return self.mapped(node)
        if prim is filter and len(node.args) == 2:
            return self.filtered(node)
        if prim is reversed and len(node.args) == 1:
            return self.reversed_(node)
        if prim in (zip, enumerate) and node.args and id(node) not in self.iterated \
                and (prim is zip or len(node.args) <= 2):
            return self.listed(node, prim)
        return node

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

    def fresh(self, base):
        return self.n.namer.fresh(base)

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
        mapping = self.held(mapping, node)
        keys = gast.copy_location(gast.Call(func=helper_ref("keys_of"), args=[clone(mapping)],
                                            keywords=[]), node)
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
            and items.id not in n.params and items.id not in n.dict_names) or (
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


__all__ = ["NON_DIFFERENTIABLE_BUILTINS", "Sugar", "builtin_ref", "fixed_lengths"]
