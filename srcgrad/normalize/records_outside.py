"""``HISTORY.append(float(loss))``: a function recording a number in a list it
does not own, for the caller to read afterwards.

Notebook code logs inside the objective it hands to an optimiser::

    def loss(w):
        l = np.mean((X @ w - y) ** 2)
        HISTORY.append(float(l))
        return l

srcgrad refused it ("'HISTORY.append(...)' changes 'HISTORY' in place, and
'HISTORY' is not a local variable"): it does not follow changes to containers
a function does not own.  Nothing here needs following: the function never
reads ``HISTORY`` back, so no value it returns depends on the list, and what
it appends is a new number or string (``float(l)``, ``l.item()``, an
f-string), which no later statement of the generated code can change in
place.  Such a statement runs as written, once, where Python runs it -- as
``print`` does (ad/in_place.py ``only_reports``) -- and a checkpointed loop's
reruns leave it out, so the list gets one entry per call of the function
under every policy.

    >>> import gast
    >>> tree = gast.parse('''
    ... def f(w):
    ...     l = np.sum(w ** 2)
    ...     HISTORY.append(float(l))
    ...     LOG.append(l)
    ...     SEEN.append(w.item())
    ...     return l * len(SEEN)
    ... ''').body[0]
    >>> [records_only(tree, name) for name in ("HISTORY", "LOG", "SEEN")]
    [True, True, False]
    >>> [detached(stmt.value.args[0]) for stmt in tree.body[1:4]]
    [True, False, True]
"""

from __future__ import annotations

import types

import gast

from ..frontend.linker import is_library_module
from ..frontend.parse import static_value
from ..frontend.source_lines import read_names
from ..ir.syntax import is_append, walk

#: Calls whose result is a new, immutable value: a number, a string, a tuple
#: (``x.tolist()`` a new list of numbers).  Not ``.copy()``: a list's or dict's
#: is shallow, its arrays still the function's (review s37 D-19).
_CONVERSIONS = frozenset(("float", "int", "bool", "str", "repr", "round", "abs", "len"))
_METHODS = frozenset(("item", "tolist"))


def detached(value, counters=frozenset()) -> bool:
    """Whether ``value`` (what is appended) is a new object no later statement
    can change: a constant, ``float(...)`` and the like, ``x.item()``,
    ``x.tolist()``, an f-string, one of ``counters`` (names only
    ever a ``range``'s ints), or a tuple of these."""
    if isinstance(value, (gast.Constant, gast.JoinedStr)):
        return True
    if isinstance(value, gast.Name):
        return value.id in counters
    if isinstance(value, gast.Tuple):
        return all(detached(v, counters) for v in value.elts)
    if not isinstance(value, gast.Call):
        return False
    func = value.func
    if isinstance(func, gast.Name):
        return func.id in _CONVERSIONS
    if isinstance(func, gast.Attribute) and func.attr == "format" \
            and isinstance(func.value, gast.Constant) and isinstance(func.value.value, str):
        return True  # an f-string, as the frontend writes it (frontend/fstrings.py)
    return isinstance(func, gast.Attribute) and func.attr in _METHODS and not value.args


def records_only(func, name: str) -> bool:
    """Whether every read of ``name`` in ``func`` is the receiver of a
    statement ``name.append(v)``: the function adds to the list and never
    looks at it."""
    receivers = {id(stmt.value.func.value) for stmt in walk(func)
                 if isinstance(stmt, gast.Expr) and is_append(stmt.value)
                 and stmt.value.func.value.id == name}
    return all(id(node) in receivers for node in walk(func)
               if isinstance(node, gast.Name) and node.id == name)


def counters(func) -> frozenset:
    """The names of ``func`` bound only as the target of ``for name in
    range(...)`` (or of a loop over a name bound once to a ``range``):
    ints, which nothing changes in place."""
    def is_range(node) -> bool:
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id == "range"

    assigned: dict = {}  # t1 = range(3); for i in t1 (srcgrad's own code, differentiated again)
    for node in walk(func):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
    ranges = {name for name, values in assigned.items()
              if len(values) == 1 and is_range(values[0])}

    def over_range(loop) -> bool:
        return is_range(loop.iter) or isinstance(loop.iter, gast.Name) \
            and loop.iter.id in ranges

    loops = [node for node in walk(func) if isinstance(node, gast.For)]
    targets = {id(node.target) for node in loops}
    ranged = {node.target.id for node in loops
              if isinstance(node.target, gast.Name) and over_range(node)}
    other = {node.id for node in walk(func) if isinstance(node, gast.Name)
             and isinstance(node.ctx, gast.Store) and id(node) not in targets}
    other |= {node.target.id for node in loops if isinstance(node.target, gast.Name)
              and node.target.id in ranged and not over_range(node)}
    return frozenset(ranged - other)


def _holds(value, obj) -> bool:
    """``value`` is ``obj``, or a list, tuple or dict holding it directly."""
    if value is obj:
        return True
    if type(value) in (list, tuple) and len(value) <= 1000:
        return any(item is obj for item in value)
    if type(value) is dict and len(value) <= 1000:
        return any(item is obj for item in value.values())
    return False


def read_elsewhere(obj, name: str, resolver, called) -> bool:
    """Whether the list ``obj``, recorded into as ``name``, may be read other
    than through ``name`` in the function: another global or closure variable
    holding it (``H2 = H``), or a user function among ``called`` (and those
    they call, three deep) reading a global that holds it (``len(H)`` in a
    helper).  A read would see the appends, and a recomputation or a
    checkpointed loop's rerun would see more of them than the first run did
    (review s37 D-1: a silently wrong gradient under "recompute")."""
    spaces = [{k: v for k, v in resolver.globals.items() if k != name},
              {k: v for k, v in resolver.closure.items() if k != name}]
    if any(_holds(v, obj) for space in spaces for v in space.values()):
        return True
    for space in spaces:  # len(logmod.HIST): a user module's attribute (review s37 D-22)
        for value in space.values():
            if isinstance(value, types.ModuleType) \
                    and not is_library_module(getattr(value, "__name__", "") or "") \
                    and any(_holds(v, obj) for v in list(vars(value).values())):
                return True
    seen, todo = set(), [(fn, 0) for fn in called]
    while todo:
        fn, depth = todo.pop()
        code = getattr(fn, "__code__", None)
        if code is None or id(fn) in seen or depth > 3:
            continue
        seen.add(id(fn))
        names = read_names(code)
        for free in names:
            value = getattr(fn, "__globals__", {}).get(free)
            if _holds(value, obj):
                return True
            if isinstance(value, types.FunctionType):
                todo.append((value, depth + 1))
    return False


class RecordsOutside:
    """``G.append(v)`` on a list the function reads from its globals or
    closure and never reads back (mixed into the normaliser)."""

    def recorded_outside(self, stmt) -> bool:
        """Whether the statement ``stmt`` is such a record (module docstring)."""
        call = stmt.value
        if not (isinstance(stmt, gast.Expr) and is_append(call)):
            return False
        name = call.func.value.id
        obj = self.parsed.resolver.lookup(name)
        if name in self.locals or type(obj) is not list:
            return False
        if getattr(self.parsed, "called", False):
            # a helper with code of its own (it returns a value): a caller's
            # checkpointed loop would run it again, record and all (review s37
            # D-12); a helper that only records is inlined (effect_calls.py)
            return False
        if not (detached(call.args[0], counters(self.func)) and records_only(self.func, name)):
            return False
        called = [static_value(node.func, self.parsed.resolver, self.locals)
                  for node in walk(self.func) if isinstance(node, gast.Call)]
        return not read_elsewhere(obj, name, self.parsed.resolver,
                                  [fn for fn in called if isinstance(fn, types.FunctionType)])
