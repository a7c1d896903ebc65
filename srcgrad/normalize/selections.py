"""Calls that pick one item out of a sequence: ``max``/``min`` and ``xs.pop``.

Part of :mod:`.normalizer` (a mixin of its normaliser, through :mod:`.calls`).
Each call becomes the position of the item it picks, found without a
derivative, and an index with that position, which srcgrad differentiates
like any other -- so the derivative goes to exactly the item Python returns.

``max(xs)``, ``min(xs)`` of one iterable, and any ``max``/``min`` with
``key=`` or ``default=``: ``i = index_of_max(xs, key=k)``, then ``xs[i]``
(``default=d``: ``xs[i] if i >= 0 else d``).  ``index_of_max`` follows
Python's rule -- the first item, replaced by each later one whose key compares
greater -- so a tie keeps the first and a NaN is kept only where it comes
first (``max([1, nan, 2])`` is the 2; sorting, used before, put the NaN first
and gave it the derivative).  Two or more values without a keyword
(``max(a, b)``) keep the rule of two values (:mod:`srcgrad.rules.math_module`).

``v = xs.pop(k)`` on a list the function builds: ``v = xs[k]``, then ``xs``
rebound to the list without it.  Rebinding is what Python's pop does to every
name that sees the list only when no other name or object holds it: so the
list's other uses must be reads that keep nothing of it (indexing, ``len``, a
builtin or NumPy function, arithmetic, a loop over it that does not change it
-- :meth:`Selections.private_list`).  A read before the pop sees the whole
list in both.

Before, a function taking the largest of a list it pops from; after, each pick
is an index:

    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(x):
    ...     xs = [x[0], x[1], x[2]]
    ...     last = xs.pop()
    ...     return max(xs, default=0.0) * last + sum(xs)
    >>> print(unparse_body(normalize(parse_function(f))))
    t1 = x[0]
    t2 = x[1]
    t3 = x[2]
    xs = [t1, t2, t3]
    t4 = xs[-1]
    xs_1 = xs[:-1]
    last = t4
    t5 = index_of_max(xs_1, empty_ok=True)
    t8 = t5 >= 0
    if t8:
        t7 = xs_1[t5]
    else:
        t7 = 0.0
    t6 = t7
    t9 = t6
    t10 = t9 * last
    t11 = sum(xs_1)
    t12 = t10 + t11
    return t12

A local only ever bound to a list or tuple display is indexed as it is; any
other argument goes through ``sequence(xs)`` (a dict's keys, a set listed).
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import ir
from ..errors import SrcGradError
from ..frontend.parse import static_value
from ..ir.syntax import clone, helper_ref, located, source_of, walk
from .sugar import builtin_ref

#: Builtins that read a list and keep nothing of it (an iterator such as
#: ``reversed(xs)`` or ``enumerate(xs)`` keeps the list, and sees a later pop).
READING_BUILTINS = (len, sum, max, min, sorted, list, tuple, any, all, print, str, repr,
                    bool, isinstance)


class Selections:
    """``max``/``min`` of an iterable and ``xs.pop`` (mixed into the normaliser)."""

    # -- max and min ------------------------------------------------------------------
    def is_selection(self, node, prim) -> bool:
        """``max``/``min`` of one iterable, or with ``key=`` / ``default=``."""
        if not any(prim is p for p in (max, min)) or not node.args \
                or any(isinstance(a, gast.Starred) for a in node.args):
            return False
        return len(node.args) == 1 or bool(node.keywords)

    def selected(self, node, prim):
        """``max(xs, key=k, default=d)`` -> ``i = index_of_max(xs, key=k,
        empty_ok=True)`` and ``xs[i] if i >= 0 else d``; ``max(a, b, key=k)``
        picks from the tuple ``(a, b)``.  Returns the picked item's atom."""
        given = {kw.arg: kw.value for kw in node.keywords}
        unknown = sorted(set(given) - {"key", "default"})
        if unknown:
            raise self.error(f"{prim.__name__}() got an unexpected keyword argument "
                             f"'{unknown[0]}'", node, SrcGradError)
        default = given.get("default")
        if default is not None and len(node.args) > 1:
            raise self.error(f"Cannot specify a default for {prim.__name__}() with multiple "
                             f"positional arguments", node, SrcGradError)
        if len(node.args) > 1:
            items = gast.Tuple(elts=list(node.args), ctx=gast.Load())
        elif isinstance(node.args[0], (gast.List, gast.Tuple, gast.ListComp)):
            items = node.args[0]
        elif isinstance(node.args[0], gast.GeneratorExp):  # every item is read: listed
            items = gast.ListComp(elt=node.args[0].elt, generators=node.args[0].generators)
        elif isinstance(node.args[0], gast.Name) and self.always_a_sequence(node.args[0].id):
            items = None  # xs = [a, b]: indexed as it is (no sequence(xs) for its tangent's
            # "d_xs if t is xs else ..." that a second derivative reads as another name)
        else:  # an array or list as it is; a dict's keys, a set or generator listed
            items = gast.Call(func=helper_ref("sequence"), args=[node.args[0]], keywords=[])
        items = node.args[0] if items is None else self.held(items, node)
        key = given.get("key")
        keywords = [] if key is None or isinstance(key, gast.Constant) and key.value is None \
            else [gast.keyword(arg="key", value=key)]
        if default is not None:
            default = self.held(default, node) if not isinstance(default, gast.Constant) \
                else default
            keywords.append(gast.keyword(arg="empty_ok",
                                         value=gast.Constant(value=True, kind=None)))
        finder = helper_ref(f"index_of_{prim.__name__}")
        at = self.held(gast.Call(func=finder, args=[items], keywords=keywords), node)
        picked = gast.Subscript(value=clone(items), slice=clone(at), ctx=gast.Load())
        if default is not None:
            picked = gast.IfExp(test=gast.Compare(left=clone(at), ops=[gast.GtE()], comparators=[
                gast.Constant(value=0, kind=None)]), body=picked, orelse=clone(default))
        return self.held(picked, node)

    def always_a_sequence(self, name) -> bool:
        """Whether the local ``name`` (no parameter) is only ever bound, by a
        plain assignment, to a list or tuple display, a comprehension, or
        ``list(...)`` / ``tuple(...)``: a list or tuple wherever it is read."""
        if name in self.params or name not in self.locals or name in self.local_functions:
            return False
        assigns = {id(a.targets[0]): a for a in walk(self.func)
                   if isinstance(a, gast.Assign) and len(a.targets) == 1}
        bound = False
        for n in walk(self.func):
            if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load):
                assign = assigns.get(id(n))
                value = getattr(assign, "value", None)
                if not (isinstance(value, (gast.List, gast.Tuple, gast.ListComp))
                        or isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                        and value.func.id in ("list", "tuple")
                        and static_value(value.func, self.parsed.resolver, self.locals)
                        in (list, tuple)):
                    return False
                bound = True
        return bound

    def held(self, expr, node):
        """A fresh local assigned ``expr`` (normalised) before the statement: its
        name, as source to build on (read once, so evaluated once)."""
        for sub in walk(expr):
            if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, node)
        tmp = self.namer.temp()
        self.locals.add(tmp)
        self.expr_into(expr, gast.copy_location(gast.Name(
            id=tmp, ctx=gast.Store(), annotation=None, type_comment=None), node))
        return gast.copy_location(gast.Name(id=tmp, ctx=gast.Load(), annotation=None,
                                            type_comment=None), node)

    # -- xs.pop -----------------------------------------------------------------------
    def is_local_pop(self, node) -> bool:
        """``xs.pop()`` or ``xs.pop(k)`` on a list this function builds and only
        ever reads (:meth:`private_list`), appends to and pops from -- never
        passes or stores, so no other name sees it change: the item read and
        the list rebound to the rest (:meth:`popped`)."""
        func = node.func
        if not isinstance(func, gast.Attribute) or func.attr != "pop" or node.keywords \
                or not isinstance(func.value, gast.Name) or len(node.args) > 1 \
                or any(isinstance(a, gast.Starred) for a in node.args):
            return False
        name = func.value.id
        if name in self.params or name not in self.locals or name in self.local_functions:
            return False
        return name in self.__dict__.setdefault("popped_lists", {}) or \
            self.popped_lists.setdefault(name, self.private_list(name))

    def private_list(self, name) -> bool:
        """Whether the local ``name`` is only ever bound to a new list (a display,
        a comprehension, ``list(...)``) and every other use of it reads it and
        keeps nothing of it: ``.append``/``.pop``, indexing, a test (``while
        xs``, ``not xs``), an argument of a builtin that only reads
        (:data:`READING_BUILTINS`) or of a NumPy or ``math`` function (each
        makes a new value), an operand of arithmetic or a comparison, ``return
        xs``, and a loop or comprehension over it that does not pop from or
        append to it (Python's loop would see those)."""
        parents = {id(child): parent for parent in walk(self.func)
                   for child in gast.iter_child_nodes(parent)}
        for n in walk(self.func):
            if not isinstance(n, gast.Name) or n.id != name:
                continue
            parent = parents.get(id(n))
            if isinstance(n.ctx, gast.Store):
                value = parent.value if isinstance(parent, gast.Assign) \
                    and len(parent.targets) == 1 else None
                if isinstance(parent, gast.Tuple):  # S, Y = [], []
                    outer = parents.get(id(parent))
                    if isinstance(outer, gast.Assign) and outer.targets == [parent] \
                            and isinstance(outer.value, (gast.Tuple, gast.List)) \
                            and len(outer.value.elts) == len(parent.elts) \
                            and not any(isinstance(e, gast.Starred) for e in parent.elts):
                        value = outer.value.elts[parent.elts.index(n)]
                if not (isinstance(value, (gast.List, gast.ListComp))
                        or isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                        and value.func.id == "list"):
                    return False
            elif not self.only_read(n, parent, parents, name):
                return False
        return True

    def only_read(self, n, parent, parents, name) -> bool:
        """Whether the use ``n`` of the list ``name`` (its parent ``parent``)
        reads it and keeps nothing of it (:meth:`private_list`)."""
        if isinstance(parent, gast.Attribute):
            return parent.attr in ("pop", "append")
        if isinstance(parent, gast.Subscript):
            return parent.value is n and isinstance(parent.ctx, gast.Load)
        if isinstance(parent, (gast.If, gast.While)) and parent.test is n \
                or isinstance(parent, gast.UnaryOp) and isinstance(parent.op, gast.Not) \
                or isinstance(parent, (gast.BinOp, gast.Compare, gast.Return)):
            return True
        if isinstance(parent, gast.keyword):
            parent = parents.get(id(parent))
        if isinstance(parent, gast.Call) and parent.func is not n:
            prim = static_value(parent.func, self.parsed.resolver, self.locals) \
                if isinstance(parent.func, (gast.Name, gast.Attribute)) else None
            if any(prim is b for b in (zip, enumerate, reversed)) and n in parent.args:
                # for s, y in zip(S, Y): the iterator reads the list as the loop
                # runs, so the call is read as the list itself would be
                return self.only_read(parent, parents.get(id(parent)), parents, name)
            return any(prim is b for b in READING_BUILTINS) or isinstance(prim, np.ufunc) \
                or (getattr(prim, "__module__", None) or "").split(".")[0] in ("numpy", "math")
        if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is n:
            loop = parents.get(id(parent)) if isinstance(parent, gast.comprehension) else parent
            return not any(isinstance(m, gast.Attribute) and m.attr in ("pop", "append")
                           and isinstance(m.value, gast.Name) and m.value.id == name
                           for m in walk(loop))
        return False

    def popped(self, node):
        """``v = xs.pop(k)`` -> ``v = xs[k]`` and ``xs`` rebound to the rest:
        ``xs[:-1]`` for the last item, ``xs[:k] + xs[k + 1:]`` for a constant
        ``k``, and for any other index ``j = k % len(xs)``, ``xs[:j] + xs[j +
        1:]`` (after ``xs[k]``, which raises IndexError as pop does when ``k``
        is out of range) -- each an operation srcgrad differentiates."""
        xs = node.func.value
        k = node.args[0] if node.args else gast.Constant(value=-1, kind=None)
        fixed = _int_constant(k)
        if fixed is None:  # evaluated once, before the item is read
            k = self.held(k, node)
        item = self.held(gast.Subscript(value=clone(xs), slice=clone(k), ctx=gast.Load()), node)

        def part(lower, upper):
            return gast.Subscript(value=clone(xs), slice=gast.Slice(
                lower=lower, upper=upper, step=None), ctx=gast.Load())

        if fixed == -1:
            rest = part(None, gast.Constant(value=-1, kind=None))
        else:
            if fixed is None:
                k = self.held(gast.BinOp(left=clone(k), op=gast.Mod(), right=gast.Call(
                    func=builtin_ref("len"), args=[clone(xs)], keywords=[])), node)
                after = gast.BinOp(left=clone(k), op=gast.Add(),
                                   right=gast.Constant(value=1, kind=None))
            else:
                after = gast.Constant(value=fixed + 1, kind=None)
            rest = gast.BinOp(left=part(None, clone(k)), op=gast.Add(), right=part(after, None))
        target = gast.Name(id=xs.id, ctx=gast.Store(), annotation=None, type_comment=None)
        self.statement(located(gast.Assign(targets=[target], value=rest, type_comment=None),
                               node))
        result = gast.copy_location(ir.name(self.env[item.id]), node)
        return result, ir.Op(operator.pos, [result], {}, node, ".pop()")


def _int_constant(node):
    """The int ``node`` writes (``3``, ``-1``), or None."""
    text = source_of(node)
    try:
        value = int(text)
    except ValueError:
        return None
    return value if str(value) == text.strip() else None
