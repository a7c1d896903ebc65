"""List methods that change a list, spelled as the updates srcgrad follows.

Part of :mod:`.sugar` (a mixin of its desugarer).  ``hs.append(v)`` and ``hs
+= [...]`` are updates the normaliser knows; ``extend``, ``insert``,
``reverse`` and ``sort(key=...)`` were refused ("may change 'hs' in place ...
in a way srcgrad cannot follow"), though each is exactly one of those on a
list: ``hs.extend(e)`` is ``hs += list(e)``, ``hs.insert(i, v)`` is ``hs[i:i]
= [v]``, ``hs.reverse()`` is ``hs[:] = hs[::-1]`` and ``hs.sort(key=k)`` is
``hs[:] = sorted(hs, key=k)``: the same list object changed in place, so every
other name for it sees the change as Python's does.  Only on a local that is
certainly a list (every binding a list display, a list comprehension,
``list(...)`` or ``x.tolist()``): an array's ``sort`` is :mod:`..analysis.sorts_in_place`'s, and
a user object's methods of these names are its own.

    >>> from ..frontend.parse import parse_function
    >>> from ..ir.emit import unparse
    >>> from .normalizer import _Normalizer
    >>> def f(x):
    ...     hs = [x * 1.0]
    ...     hs.extend([x * 2.0, x * 3.0])
    ...     hs.insert(0, x)
    ...     hs.reverse()
    ...     hs.sort(key=lambda h: h[0])
    ...     return hs
    >>> normalizer = _Normalizer(parse_function(f))
    >>> normalizer.desugar()
    >>> print(unparse(normalizer.func))
    def f(x):
        hs = [x * 1.0]
        hs += list([x * 2.0, x * 3.0])
        hs[0:0] = [x]
        hs[:] = hs[::-1]
        hs[:] = sorted(hs, key=lambda h: h[0])
        return hs
"""

from __future__ import annotations

import gast

from ..ir.syntax import clone, walk
from .iterators import builtin_call

#: The methods rewritten, with the arguments each takes.
_METHODS = {"extend": (1, ()), "insert": (2, ()), "reverse": (0, ()),
            "sort": (0, ("key", "reverse"))}


class ListMethods:
    """``hs.extend(e)``, ``hs.insert(i, v)``, ``hs.reverse()``, ``hs.sort(key=k)``
    on a local list (mixed into the desugarer)."""

    def visit_Expr(self, node):
        node = self.generic_visit(node)
        call = node.value
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and isinstance(call.func.value, gast.Name)
                and call.func.attr in _METHODS):
            return node
        count, keywords = _METHODS[call.func.attr]
        if len(call.args) != count or any(isinstance(a, gast.Starred) for a in call.args) \
                or any(kw.arg not in keywords for kw in call.keywords) \
                or not self.certainly_list(call.func.value.id):
            return node
        name = call.func.value
        whole = gast.Slice(lower=None, upper=None, step=None)
        if call.func.attr == "extend":  # hs += list(e)
            made = gast.AugAssign(target=_store(name), op=gast.Add(),
                                  value=builtin_call("list", call.args[0]))
        elif call.func.attr == "insert":  # hs[i:i] = [v]
            made = gast.Assign(targets=[gast.Subscript(
                value=clone(name), slice=gast.Slice(lower=call.args[0],
                                                    upper=clone(call.args[0]), step=None),
                ctx=gast.Store())], value=gast.List(elts=[call.args[1]], ctx=gast.Load()),
                type_comment=None)
        elif call.func.attr == "reverse":  # hs[:] = hs[::-1]
            backwards = gast.Subscript(value=clone(name), slice=gast.Slice(
                lower=None, upper=None, step=gast.UnaryOp(op=gast.USub(), operand=gast.Constant(
                    value=1, kind=None))), ctx=gast.Load())
            made = _whole_write(name, whole, backwards)
        else:  # hs[:] = sorted(hs, key=k)
            ordered = builtin_call("sorted", clone(name))
            ordered.keywords = call.keywords
            made = _whole_write(name, whole, ordered)
        for part in walk(made):
            gast.copy_location(part, node)
        return gast.copy_location(made, node)

    def certainly_list(self, name: str) -> bool:
        """Whether every binding of the local ``name`` makes a list
        (:func:`certainly_list`)."""
        return certainly_list(self.n.func, self.n.params, self.callee, name)


def certainly_list(func, params, callee, name: str, seen=frozenset(),
                   displays=(gast.List, gast.ListComp)) -> bool:
    """Whether every binding of the local ``name`` of ``func`` makes a list: a
    display, a list comprehension (``displays``: a tuple display too, for a
    caller asking for a list or tuple), ``list(...)`` (``callee`` resolves a
    call's function), ``x.tolist()``, another such name (``ks = hs``) or a
    slice of one (``hs = hs[1:]``: taken to be a list where every other
    binding is, a greatest fixed point), or ``hs += e`` (a list's ``+=`` extends it, where the other
    bindings make it one); not a parameter, a loop's target or an unpacked
    value.

        >>> f = gast.parse("def f(x, a):\\n    ys = []\\n    ys += [x]\\n    a += [x]").body[0]
        >>> certainly_list(f, ["x", "a"], None, "ys"), certainly_list(f, ["x", "a"], None, "a")
        (True, False)
    """
    if name in params:
        return False
    if name in seen:
        return True  # (hs = hs[1:]: a list if hs's other bindings are)
    found = False
    for node in walk(func):
        if isinstance(node, gast.Name) and node.id == name \
                and isinstance(node.ctx, gast.Store):
            augmented = next((a for a in walk(func) if isinstance(a, gast.AugAssign)
                              and a.target is node), None)
            if augmented is not None:
                # hs += e extends a list in place, a list still (review s36 R4-17:
                # hs += [v] in a loop, then hs.extend(w), was refused)
                if not isinstance(augmented.op, gast.Add):
                    return False
                found = True
                continue
            value = next((a.value for a in walk(func)
                          if isinstance(a, gast.Assign) and len(a.targets) == 1
                          and a.targets[0] is node), None)
            if not (isinstance(value, displays) or (
                    isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                    and callee(value) is list) or _to_list(value) or (
                    isinstance(value, gast.Name)
                    and certainly_list(func, params, callee, value.id, seen | {name},
                                       displays)) or (
                    isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Slice)
                    and isinstance(value.value, gast.Name)
                    and certainly_list(func, params, callee, value.value.id,
                                       seen | {name}, displays))):
                return False
            found = True
    return found


def _to_list(value) -> bool:
    """``x.tolist()``: an array's items as a list (review s37 R5-7: ``xs =
    x.tolist(); xs.sort()`` was taken for an array's sort, a raw TypeError from
    the generated code).  A 0-d array's is a number, whose ``sort`` Python
    refuses too."""
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
        and value.func.attr == "tolist" and not value.args and not value.keywords


def _store(name):
    return gast.Name(id=name.id, ctx=gast.Store(), annotation=None, type_comment=None)


def _whole_write(name, whole, value):
    """``hs[:] = value``: the list's items replaced, the list itself kept."""
    return gast.Assign(targets=[gast.Subscript(value=clone(name), slice=whole,
                                               ctx=gast.Store())],
                       value=value, type_comment=None)
