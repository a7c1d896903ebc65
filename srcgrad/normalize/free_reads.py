"""The arrays a function reads from outside: its globals and closure, and
those of every user function it calls, at any depth.

``x[0] = v; return layers.weighted(x)`` called as ``f(layers.W)``, where
``weighted`` (of another module) reads its global ``W``: Python's ``weighted``
sees the update, srcgrad's code for ``f`` works on a copy of ``x`` -- a
silently wrong value unless the entry checks that ``x`` is not ``W``
(``apart_from_free``, :func:`.argument_updates._items_and_free`).  The
function may read that array by its own name (``W``), through a module
(``layers.W``), or only through a helper it calls, which reads it as its
global or through its closure (a factory-made helper).  Each is found here,
with the reads that can tell (the name, the attribute chain, or the call of the
helper), and, where the function does not know the array by one plain name
itself, the value, which the generated code binds under a name of its own.

    >>> import gast, numpy as np
    >>> from ..frontend.parse import MISSING
    >>> W = np.ones(3)
    >>> tree = gast.parse("def f(x):\\n    return np.sum(x * W)").body[0]
    >>> def resolve(call):
    ...     return W if getattr(call.func, "id", "") == "W" else MISSING
    >>> reads, bound = free_values(tree, {"x"}, resolve)
    >>> sorted(reads), bound
    (['W'], {})
"""

from __future__ import annotations

import collections
import types

import gast

from ..errors import SrcGradError
from ..frontend.linker import is_user_function
from ..frontend.parse import MISSING, parse_function, root_name, static_value
from ..ir.syntax import walk
from ..runtime.aliases import held_arrays
from .helper_depth import user_callable


def bound_names(func) -> set:
    """Every name a statement of ``func`` (or of a function nested in it) binds."""
    names = set()
    for node in walk(func):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
    return names


def _name(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _holds_arrays(value, name) -> bool:
    if value is MISSING or isinstance(value, types.ModuleType) or callable(value):
        return False
    arrays, boxes = [], []
    held_arrays(value, name, arrays, boxes)
    return bool(arrays or boxes)


def _outside(func, local):
    """The reads in ``func`` of what lies outside it: each name not in
    ``local`` and each attribute chain rooted at one (``layers.W``), with the
    text it is shown by -- outermost chains first, so that ``layers.W`` is
    seen before its ``layers``."""
    for node in walk(func):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) \
                and node.id not in local:
            yield node, node.id
        elif isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load) \
                and root_name(node) is not None and root_name(node) not in local:
            parts, inner = [], node
            while isinstance(inner, gast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            yield node, ".".join([inner.id, *reversed(parts)])


def free_values(func, local, resolve) -> tuple[dict, dict]:
    """``(reads, bound)`` for the function ``func`` (``local``, its local
    names; ``resolve(call)``, the object a call's function names):
    ``reads`` maps each array, or container or object holding arrays, that it
    reads from outside -- by a name, an attribute chain of a module, or
    through a user function it calls -- by the text a message shows it by, to
    the nodes reading it; ``bound`` maps the text of each one not known to the
    function by that plain name (``layers.W``, a helper's global or closure
    value) to the value itself."""
    reads, bound, shown_as = collections.defaultdict(list), {}, {}

    def found(value, shown, node, plain):
        if id(value) not in shown_as:  # one array, one entry, one text
            taken = {t for t in shown_as.values()}
            unique = shown if shown not in taken else next(
                f"{shown}#{n}" for n in range(2, len(taken) + 3) if f"{shown}#{n}" not in taken)
            shown_as[id(value)] = unique
            if not plain:  # not a name of the function's own: bound for the check
                bound[unique] = value
        shown = shown_as[id(value)]
        if node not in reads[shown]:
            reads[shown].append(node)

    def lookup(node):
        return resolve(gast.Call(func=node, args=[], keywords=[]))

    for node, shown in _outside(func, local):
        if isinstance(node, gast.Attribute) and not isinstance(
                lookup(_name(root_name(node))), types.ModuleType):
            continue  # model.W: model itself, an object holding arrays, is checked
        value = lookup(node)
        if isinstance(value, types.ModuleType) or not _holds_arrays(value, shown):
            continue
        found(value, shown, node, isinstance(node, gast.Name))
    # a helper it calls that reads such a value (x[0] = v; return g(x), g reading
    # W): the call reads it, where this function knows it by its name, or bound
    for call in walk(func):
        if not isinstance(call, gast.Call) or root_name(call.func) in (None, *local):
            continue
        for name, value, shown in read_by_callee(user_callable(resolve(call))[0], set()):
            mine = lookup(_name(name))
            found(value, name if mine is value else shown, call, mine is value)
    return dict(reads), bound


def read_by_callee(fn, following) -> list:
    """The globals and closure values holding arrays that the user function
    ``fn`` reads, or a user function it calls reads, at any depth: ``(name,
    value, shown)``, ``shown`` the text naming it outside ``fn`` (``layers.W``,
    ``make.h.V`` for a closure value); each value once."""
    if not isinstance(fn, types.FunctionType) or not is_user_function(fn) \
            or id(fn) in following:
        return []
    following.add(id(fn))
    try:
        parsed = parse_function(fn)
    except SrcGradError:
        return []
    local = bound_names(parsed.node) | {a.id for a in parsed.node.args.args}
    closure = set(getattr(fn.__code__, "co_freevars", ()))
    module = (getattr(fn, "__module__", None) or "").rsplit(".", 1)[-1]
    found, seen = [], set()
    for node, name in _outside(parsed.node, local):
        if isinstance(node, gast.Attribute) and not isinstance(static_value(
                _name(root_name(node)), parsed.resolver, local), types.ModuleType):
            continue
        value = static_value(node, parsed.resolver, local)
        if id(value) in seen:
            continue
        if user_callable(value)[0] is not MISSING:  # a function, BOX.set, a partial
            value = user_callable(value)[0]
            inner = [r for r in read_by_callee(value, following) if id(r[1]) not in seen]
            seen.update(id(v) for _, v, _ in inner)
            found.extend(inner)
        elif not isinstance(value, types.ModuleType) and _holds_arrays(value, name):
            seen.add(id(value))
            prefix = fn.__qualname__.replace(".<locals>", "") \
                if name.split(".")[0] in closure else module
            found.append((name, value, f"{prefix}.{name}" if prefix else name))
    return found
