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

This module walks the tree and picks the rewrite; the rewrites of builtins
are in :mod:`.builtin_forms`, the spelling out of ``*t`` in :mod:`.starred`.

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

import collections
import functools
import itertools
import operator
import types

import gast
import numpy as np

from .. import ir
from ..errors import SrcGradError
from ..frontend.linker import Packed, is_user_function
from ..frontend.parse import MISSING
from ..ir.syntax import (
    assigned_names,
    clone,
    is_dict_view,
    load_name,
    source_of,
    updated_in_place,
    walk_nodes,
)
from ..ir.transformer import Transformer
from ..rules import registry
from .builtin_forms import BuiltinForms
from .chosen_functions import choose_local_functions
from .dict_comprehensions import DictComprehensions
from .dict_pops import DictPops, private_dicts
from .effect_calls import EffectCalls
from .generator_reads import StaleIterators, changed_names
from .inlining import takes_rest
from .iterators import IteratorLoops, builtin_ref
from .itertools_pulls import ItertoolsPulls
from .list_methods import ListMethods
from .loop_exits import LoopExits
from .starred import StarExpansion, fixed_lengths, tuple_lengths, with_packed_lengths

#: Builtins whose value carries no derivative: computed as written (like a comparison).
NON_DIFFERENTIABLE_BUILTINS = (any, all, isinstance, issubclass, callable, hasattr, bool)


class Sugar(StaleIterators):
    """Builtins on containers and starred expressions (mixed into the normaliser)."""

    def desugar(self) -> None:
        """Rewrite the function's tree in place (see the module docstring)."""
        self.refuse_stale_iterators()
        choose_local_functions(self.func)  # act defined in both branches: chosen per call
        # a *rest, **kw or tuple display the call packed (Packed): of known size
        packed = [c for c in self.callees if isinstance(c, Packed)]
        fixed = fixed_lengths(self.func)
        lengths = with_packed_lengths(self.func, fixed, packed)
        self.tuple_lengths = {**tuple_lengths(self.func, fixed),
                              **{p.name: lengths[p.name] for p in packed if p.name in lengths}}
        self.packed_keys = {p.name: p.keys for p in packed if p.keys is not None}
        self.private_dicts = private_dicts(self.func, self.params, self.callee)  # (d.pop(k))
        _Desugarer(self, lengths).visit(self.func)
        self.dict_names |= {t.id for n in walk_nodes(self.func) if isinstance(n, gast.Assign)
                            and isinstance(n.value, gast.Dict) for t in n.targets
                            if isinstance(t, gast.Name)}  # (d = dict(a=x): a display now)

    def starred_call(self, node, prim) -> None:
        """Refuse a call that keeps a ``*x`` of unknown length where srcgrad must
        match arguments to parameters (a rule, a user function, a method)."""
        starred = next(a for a in node.args if isinstance(a, gast.Starred))
        if (prim is min or prim is max) and len(node.args) == 1 and not node.keywords:
            # min(*x) is min(x), the least of its items (of two or more: one
            # item raises TypeError in Python, its value here) (review s37 R5-8)
            node.args = [starred.value]
            return
        local = self.local_callee(node)
        if local is not None and takes_rest(local, node):
            return   # h(a, *t) for a local def h(x, *rest): rest is tuple(t) (inlining.py)
        if prim is MISSING or registry.lookup(prim) is not None \
                or isinstance(prim, functools.partial) \
                or (isinstance(prim, types.MethodType) and is_user_function(prim.__func__)) \
                or (is_user_function(prim) and not _takes_rest(prim, node, starred)):
            raise self.error(
                f"srcgrad cannot tell how many arguments '*{source_of(starred.value)}' "
                f"passes here: build the tuple in the function (args = (a, b)) or pass its "
                f"elements one by one", starred)

    def local_callee(self, node):
        """The local def or lambda a call calls, or None."""
        func = self.unalias(node.func)
        if isinstance(func, gast.Lambda):
            return func
        if isinstance(func, gast.Name) and isinstance(
                self.local_functions.get(func.id), (gast.FunctionDef, gast.Lambda)):
            return self.local_functions[func.id]
        return None

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


def _takes_rest(fn, node, starred) -> bool:
    """``f(a, *t)`` for ``def f(x, *rest)``: ``t`` is ``rest``, whatever its length."""
    code = fn.__code__
    return bool(code.co_flags & 0x04) and node.args[-1] is starred \
        and len(node.args) - 1 == code.co_argcount and not node.keywords


class _Desugarer(BuiltinForms, StarExpansion, LoopExits, IteratorLoops, ItertoolsPulls,
                 EffectCalls, DictPops, ListMethods, DictComprehensions, Transformer):
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

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_Lambda  # (dict: .dict_comprehensions)

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
        node = self.ndenumerated(node)
        changed = changed_names(node)
        if updated_in_place(gast.Module(body=node.body, type_ignores=[])):
            changed.add(None)  # (updated through an alias, maybe)
        self.rebound = assigned_names(gast.Module(body=node.body, type_ignores=[]))
        self.mark_iterated(node.iter, changed=changed)
        return self.loop(self.generic_visit(node))  # see .loop_exits and .iterators

    def ndenumerated(self, node):
        """``for idx, v in np.ndenumerate(X)`` -> ``for k in np.ndindex(np.shape(a)):
        idx = k; v = a[k]`` with ``a = np.asarray(X)`` before the loop (review s37
        R5-8): the same indices in the same (C) order and the same elements,
        which srcgrad follows as indexing; any other loop is returned as it is."""
        it, target = node.iter, node.target
        if not (isinstance(it, gast.Call) and len(it.args) == 1 and not it.keywords
                and not isinstance(it.args[0], gast.Starred)
                and self.callee(it) is np.ndenumerate and isinstance(target, gast.Tuple)
                and len(target.elts) == 2
                and not any(isinstance(e, gast.Starred) for e in target.elts)):
            return node
        array, index = self.fresh("ndenumerated"), self.fresh("index")
        self.prelude.append(gast.copy_location(gast.Assign(
            targets=[gast.Name(id=array, ctx=gast.Store(), annotation=None, type_comment=None)],
            value=self.numpy_call("asarray", it.args[0]), type_comment=None), node))
        node.iter = gast.copy_location(self.numpy_call(
            "ndindex", self.numpy_call("shape", load_name(array))), it)
        where, value = target.elts
        node.target = gast.Name(id=index, ctx=gast.Store(), annotation=None, type_comment=None)
        node.body = [gast.copy_location(gast.Assign(targets=[where], value=load_name(index),
                                                    type_comment=None), target),
                     gast.copy_location(gast.Assign(targets=[value], value=gast.Subscript(
                         value=load_name(array), slice=load_name(index), ctx=gast.Load()),
                         type_comment=None), target),
                     *node.body]
        return node

    def numpy_call(self, name, *args):
        """``np.name(*args)``, NumPy reached by a name the function's module binds
        to it, else by a fresh one the generated module binds (as a function
        passed is)."""
        resolver = self.n.parsed.resolver
        found = next((k for k in ("np", "numpy", *resolver.globals) if k.isidentifier()
                      and k not in self.n.locals and resolver.lookup(k) is np), None)
        if found is not None:
            func = gast.Attribute(value=load_name(found), attr=name, ctx=gast.Load())
        else:
            func = load_name(self.fresh(name))
            func.helper = getattr(np, name)
            self.n.free[func.id] = func.helper
        return gast.Call(func=func, args=list(args), keywords=[])

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
        if is_dict_view(node) and self.n.own_view(node):  # s.items() of a user's class
            return
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
                and isinstance(node.func.value, (gast.Name, gast.Attribute)) \
                and not self.n.own_view(node):
            return self.dict_view(node)
        prim = self.callee(node)
        if prim is dict and not node.args and node.keywords \
                and all(k.arg is not None for k in node.keywords):
            # dict(a=x, b=y) is the display {'a': x, 'b': y}: keys known, values followed
            return gast.copy_location(gast.Dict(
                keys=[gast.Constant(value=k.arg, kind=None) for k in node.keywords],
                values=[k.value for k in node.keywords]), node)
        if prim is collections.OrderedDict and not node.args and node.keywords \
                and all(k.arg is not None for k in node.keywords):
            # OrderedDict(a=x, b=y) is OrderedDict({'a': x, 'b': y}): the same items in
            # the same order, the dict followed as dict(...)'s is (review s37 R5-8)
            node.args = [gast.copy_location(gast.Dict(
                keys=[gast.Constant(value=k.arg, kind=None) for k in node.keywords],
                values=[k.value for k in node.keywords]), node)]
            node.keywords = []
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

    def fresh(self, base):
        return self.n.namer.fresh(base)


__all__ = ["NON_DIFFERENTIABLE_BUILTINS", "Sugar", "builtin_ref", "fixed_lengths"]
