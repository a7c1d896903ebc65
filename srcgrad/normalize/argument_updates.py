"""Which arguments a function changes in place, through whatever name.

``x[i] = v`` changes the caller's array when ``x`` is the argument, and just as
much when ``x`` is another name for it (``h = x``), a view of it (``r =
x[1:]``, ``x.T``, a row in ``for row in X``) or an array a list argument holds
(``a = xs[0]``).  Generated code must never change the caller's arrays, and
must never give another value than Python where two arguments are one array
(``f(x, x)`` with ``a[0] = v``: Python's ``b`` sees the update).  The
normaliser asks this module which arguments to copy and which to check, at the
entry, against the others (see ``copy_updated_arguments`` in
:mod:`.statements` and ``unshared`` in :mod:`srcgrad.runtime.structures`).

The look is flow-insensitive and conservative.  A name is related to the names
its value was made from: the same memory (``h = x``, ``x.reshape(n)``, a call
that may return its argument -- anything but arithmetic, ufuncs and the NumPy
and math functions that make a new array), a part of it (``x[1:]``, ``xs[0]``,
``p.W``, a loop's item) or a container holding it (``[x, y]``, ``c[k] = x``,
``c.append(x)``, ``xs.copy()``).  An update in place (``h[i] = v``,
``h.append(v)``, ``h.fill(v)``, ``np.add.at(h, i, v)``, ``out=h``, ``h += v``)
changes the memory of ``h``, of what ``h`` is a part of, and, as ``h`` may be
an element, of what those hold -- never of what ``h`` itself holds
(``state['h'] = v`` leaves the array ``state`` held alone).  A wrong guess
costs a copy or a check, never a wrong value.

    >>> import gast
    >>> from ..frontend.parse import MISSING
    >>> tree = gast.parse('''
    ... def f(x, w, xs, s):
    ...     h = x
    ...     h[0] = 2.0 * w
    ...     y = x.copy()
    ...     y[1] = w
    ...     z = np.zeros(3)
    ...     z[0] = w
    ...     a = xs[0]
    ...     a += 1.0
    ...     s[0] = 1.0
    ...     return np.sum(h * y)
    ... ''').body[0]
    >>> import numpy as np
    >>> def resolve(call):
    ...     return np.zeros if getattr(call.func, "attr", "") == "zeros" else MISSING
    >>> found = argument_updates(tree, ["x", "w", "xs", "s"], resolve)
    >>> sorted(found.shared), sorted(found.direct), sorted(found.checked)
    (['x'], ['s'], ['s', 'x', 'xs'])

Only another argument read after an update (later in the source, or in a
loop around both) can tell: ``helper(y[:3], y[1:])`` updating ``b`` after its
last read of ``a`` runs as in Python, and is checked against no one.  Where
every update of an argument is ``t op= v`` of an element or view ``t`` (``t =
b[2]; t *= v``), the check runs there, as the code runs (``untouched``): a
number ``t`` changes nothing in place, and a row does only if it overlaps the
other argument.  The same look tells the caller of a function that updates its
argument whether it reads that memory after the call (:func:`.call_updates.read_after_call`).
Besides the other arguments, an updated argument is checked against the
other items of itself (``f([w, w])``, tied weights: ``a, b = ps; a[0] = v``
shows in ``b``) and against the arrays the function reads from its globals or
closure (``f(W)`` reading ``W``), where one is read after the update
(:func:`_items_and_free`).

``w`` is neither: ``y[1] = w`` changes ``y`` (which may be a list holding ``w``
from then on), never ``w``'s memory.  ``xs`` is checked, not copied: ``a +=
1.0`` makes a new array in the generated code, but in Python it changes the
array ``xs`` holds, which another argument may be.  An argument bound to a new value by
the first statement that names it (``a = a.copy()``) is none of the
function's business from there on.
"""

from __future__ import annotations

import builtins
import collections
import inspect
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import SrcGradError
from ..frontend.parse import MISSING, parse_function, static_value
from ..ir.syntax import source_of, updated_in_place, walk
from .free_reads import bound_names, free_values
from .scopes import scoped_names, shown
from .helper_depth import (
    HELD,
    PART,
    PURE,
    SAME,
    Summary,
    default_functions,
    effects,
    passed_functions,
    user_callable,
)
from .user_methods import is_user_method

#: Methods that change their object in place.
UPDATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
    "popitem", "sort", "reverse", "fill", "resize", "put", "itemset", "partition",
    "setfield", "add", "discard",
})
#: Methods whose result is a new object, never the memory of their object.
FRESH_METHODS = frozenset({
    "copy", "astype", "sum", "mean", "std", "var", "prod", "max", "min", "dot", "cumsum",
    "cumprod", "round", "clip", "flatten", "tolist", "item", "argmax",
    "argmin", "any", "all", "nonzero", "trace", "repeat", "take", "compress", "argsort",
    "ptp", "count", "index", "__len__", "__contains__",
})
#: NumPy functions whose result may be (a view of) an argument's memory.
_VIEW_NAMES = (
    "reshape", "ravel", "transpose", "squeeze", "expand_dims", "swapaxes", "moveaxis",
    "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "require",
    "broadcast_to", "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "flip",
    "fliplr", "flipud", "rot90", "rollaxis", "diagonal", "diag", "real", "imag",
    "real_if_close", "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack",
    "float64", "float32", "float16", "longdouble", "complex128", "complex64", "matrix",
    "asmatrix", "permute_dims", "matrix_transpose",
)
VIEW_FUNCTIONS = frozenset(id(f) for f in (
    *(getattr(np, n, None) for n in _VIEW_NAMES),
    getattr(np.linalg, "matrix_transpose", None), getattr(np.linalg, "diagonal", None),
    np.lib.stride_tricks.as_strided,
    getattr(np.lib.stride_tricks, "sliding_window_view", None),
) if f is not None)
#: NumPy functions that write into their first argument.
UPDATING_FUNCTIONS = frozenset(id(f) for f in (
    getattr(np, n, None) for n in ("copyto", "put", "place", "putmask", "fill_diagonal",
                                   "put_along_axis")) if f is not None)
#: Builtins that make a new container of their argument's items.
CONTAINER_BUILTINS = frozenset(id(getattr(builtins, n)) for n in (
    "list", "tuple", "dict", "set", "frozenset", "sorted", "reversed"))
#: Builtins whose result never shares an argument's memory.
FRESH_BUILTINS = frozenset(id(getattr(builtins, n)) for n in (
    "len", "range", "float", "int", "bool", "complex", "str", "isinstance", "print", "abs",
    "sum", "round", "divmod", "pow", "any", "all", "hash", "id", "repr", "type", "callable",
    "hasattr", "format", "ord", "chr"))


@dataclass
class ArgumentUpdates:
    """What :func:`argument_updates` found: ``shared``, the arguments updated
    through another name (to copy whole, arrays they hold included);
    ``direct``, those updated by their own name (``x[i] = v``, ``xs.pop()``:
    a copy of the argument itself will do);
    ``checked``, every argument updated at all (to check against the other
    arguments); ``where``, for each of those, the first update (a node) and the
    name it updates."""

    shared: set = field(default_factory=set)
    direct: set = field(default_factory=set)
    checked: set = field(default_factory=set)
    where: dict = field(default_factory=dict)
    #: for each checked argument, the others to check it against at the entry:
    #: those read after one of its updates
    others: dict = field(default_factory=dict)
    #: ``id(t *= v)`` -> ``(param, other)`` pairs checked before that update
    #: (:func:`.argument_checks.update_guards`), instead of at the entry
    guards: dict = field(default_factory=dict)
    placed: set = field(default_factory=set)
    #: argument -> (update node, how): two of its items must not share memory,
    #: checked at the entry (:func:`.argument_checks.entry_checks`, ``items_apart``)
    items: dict = field(default_factory=dict)
    #: argument -> the global or closure names (arrays, containers of them)
    #: read after one of its updates, checked at the entry (``apart_from_free``)
    free: dict = field(default_factory=dict)
    #: every such name, also those checked where the update runs (``guards``)
    free_names: set = field(default_factory=set)
    #: those of them the function does not know by that plain name (``layers.W``,
    #: a called helper's global or closure value) -> the value, which the
    #: normaliser binds in the generated module, under the name in ``refs``
    bound: dict = field(default_factory=dict)
    refs: dict = field(default_factory=dict)


def argument_updates(func, params, resolve, callee=False, own_only=False) -> ArgumentUpdates:
    """Which of ``params`` the function ``func`` (a gast FunctionDef) updates in
    place, through which name; ``resolve(call)`` is the object a call's
    function refers to, or ``MISSING`` where that is not static.  ``callee``:
    ``func`` is called from differentiated code, where ``t = a[0]; t += v``
    changes the caller's array (:func:`callee_view_guards`).  ``own_only``:
    its own updates only (``shared``, ``direct``, ``checked``), without the
    look at other items, globals and the other arguments (a summary of a
    called function, :func:`call_summary`)."""
    scan = Scan(func, params, resolve)
    scan.run()
    found = ArgumentUpdates()
    if callee:
        callee_view_guards(func, params, scan, found)
    # a = a.copy() first: from there on, 'a' is a new array of the function's
    kept = [p for p in params if not scan.rebound_first(p)]
    updates = collections.defaultdict(list)  # param -> the updates reaching it
    reaching = collections.defaultdict(set)  # id(update) -> the params it reaches
    for name, node, kind in scan.updates:
        reached = scan.reached(name)
        for param in kept:
            if scan.find(param) not in reached:
                continue
            found.checked.add(param)
            found.where.setdefault(param, (node, name))
            updates[param].append((node, kind))
            reaching[id(node)].add(param)
            if kind == "item":
                (found.shared if name != param else found.direct).add(param)
    if own_only:
        return found
    order = _items_and_free(func, params, scan, resolve, found)
    if len(params) < 2 or not found.checked:
        return found
    order = order or Order(func, scan)
    seen = {q: scan.seeing(q) for q in params}
    stored = {n.id for n in walk(func) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)}
    copied = updated_in_place(func) | found.direct | found.shared
    for param in (p for p in params if p in found.checked):
        # only another argument read after an update can see it (or differ)
        others = [q for q in params if q != param and any(
            order.after(read, node) for node, _ in updates[param] for read in seen[q])]
        if not others:
            continue
        # 't = b[2]; t *= v' changes b's memory only where t turns out an array:
        # checked as it runs, against the arguments' memory, where the update is
        guarded = param not in copied and all(
            kind == "augmented" and isinstance(node, gast.AugAssign)
            and isinstance(node.target, gast.Name) and id(node) not in order.nested
            and reaching[id(node)] == {param} for node, kind in updates[param]) \
            and not any(q in stored for q in others)
        if guarded:
            for node, _ in updates[param]:
                found.guards.setdefault(id(node), []).extend(
                    (param, q) for q in others if order.after_any(seen[q], node))
                found.guards[id(node)].sort(key=lambda pq: params.index(pq[1])
                                            if pq[1] in params else len(params))
        else:
            found.others[param] = others
    found.guards = {k: v for k, v in found.guards.items() if v}
    return found


#: The ``other`` of a guard pair (:func:`.argument_checks.update_guards`) that checks the other
#: items of the argument itself (``item_once``), not another argument.
ITEMS = "<items>"


def _items_and_free(func, params, scan, resolve, found):
    """The memory an updated argument may share besides the other arguments:
    another item of itself (``f([w, w])``, tied weights; ``f([y[:2], y[1:]])``)
    where one item is updated in place (``a, b = ps; a[0] = v``), and the
    arrays the function reads from its globals or closure (``f(W)`` where it
    reads ``W``).  Python shows the update there; the generated code works on a
    copy of the argument, so each is checked -- at the entry
    (``found.items``, ``found.free``), or, where every update of the argument
    is ``t op= v`` (``t`` a number in the common case), as that update runs
    (``found.guards``).  Only what is read after an update can tell.  Returns
    the :class:`Order` it made, or None where there was nothing to look at."""
    free, bound = free_values(func, scan.locals, resolve)
    if not found.checked and not free:
        return None
    order = Order(func, scan)
    copied = updated_in_place(func) | found.direct | found.shared
    stored = {n.id for n in walk(func) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)}
    if free:  # g(x), g updating its parameter in place: W read after the call sees it
        kept = [p for p in params if not scan.rebound_first(p)]
        for param, calls in _passed_to_updaters(func, kept, scan, resolve).items():
            for other, reads in free.items():
                # (a read by the call itself is the callee's to check)
                after = [c for c in calls if any(r is not c and order.after(r, c)
                                                 for r in reads)]
                if after and other not in found.free.get(param, ()):
                    found.free_names.add(other)
                    found.free.setdefault(param, []).append(other)
                    found.where.setdefault(param, (after[0], param))
                    found.checked.add(param)
    for param in (p for p in params if p in found.checked):
        ups = [(name, node, kind) for name, node, kind in scan.updates
               if scan.find(param) in scan.reached(name)]
        guarded = param not in copied and param not in stored and all(
            kind == "augmented" and isinstance(node, gast.AugAssign)
            and isinstance(node.target, gast.Name) and id(node) not in order.nested
            for _, node, kind in ups)
        seen = scan.seeing(param)
        for name, node, _ in ups:  # through an item: another item read afterwards
            if scan.find(name) == scan.find(param) or not any(
                    (scan.find(r.id) != scan.find(name) or _rebound_around(
                        r, node, name, scan, order)) and order.after(r, node)
                    for r in seen):
                continue
            if guarded:
                pairs = found.guards.setdefault(id(node), [])
                if (param, ITEMS) not in pairs:
                    pairs.append((param, ITEMS))
            else:
                target = node.target if isinstance(node, gast.AugAssign) else (
                    node.targets[0] if isinstance(node, gast.Assign) else None)
                how = shown(name) if "[" not in name or target is None \
                    else source_of(target)
                key = _static_key(func, param, name, target)
                if param in found.items and found.items[param][2] != key:
                    key = None  # two items updated, or one not known: any two
                found.items.setdefault(param, (node, how, key))
                found.items[param] = (*found.items[param][:2], key)
        for other, reads in free.items():
            after = [node for _, node, _ in ups if order.after_any(reads, node)]
            if not after:
                continue
            found.free_names.add(other)
            if guarded:
                for node in after:
                    pairs = found.guards.setdefault(id(node), [])
                    if (param, other) not in pairs:
                        pairs.append((param, other))
            elif other not in found.free.get(param, ()):
                found.free.setdefault(param, []).append(other)
                found.where.setdefault(param, (after[0], param))
    # layers.W, a helper's global or closure value: bound in the generated module
    found.bound = {name: bound[name] for name in sorted(found.free_names) if name in bound}
    return order


def _passed_to_updaters(func, params, scan, resolve) -> dict:
    """param -> the calls in ``func`` that pass it (a part of it, or a list
    holding it where the callee changes what its parameter holds) to a user
    function updating that parameter in place (:func:`updated_arguments`,
    :func:`augmented_parameters`), at any depth; a call that cannot be
    followed counts as one."""
    found = collections.defaultdict(list)
    for call, callee, pairs, passed in _calls_passing(func, params, scan, resolve):
        theirs = effects(callee, call_summary, passed) if callee is not None else None
        for param, own, relation in pairs:
            if theirs is not None and param not in theirs.deep and (
                    relation == HELD or param not in theirs.item | theirs.augmented):
                continue
            if call not in found[own]:
                found[own].append(call)
    return found


def _static_key(func, param, name, target):
    """The item of the argument ``param`` that an update of ``name`` (its
    target ``target``, where it has one) changes, where the source tells it
    by a constant: ``ps[2][0] = v``; ``a[0] = v`` with ``a = ps[2]`` or ``a, b,
    c = ps`` the one binding of ``a``; None otherwise."""
    node = target
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and node.value.id == param:
            return _constant_key(node.slice)
        node = node.value
    root = node.id if isinstance(node, gast.Name) else name
    stores = [n for n in walk(func) if isinstance(n, gast.Name) and n.id == root
              and isinstance(n.ctx, gast.Store)]
    if len(stores) != 1:
        return None
    for stmt in walk(func):
        if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1:
            continue
        bound, value = stmt.targets[0], stmt.value
        if bound is stores[0] and isinstance(value, gast.Subscript) \
                and isinstance(value.value, gast.Name) and value.value.id == param:
            return _constant_key(value.slice)
        if isinstance(bound, (gast.Tuple, gast.List)) and isinstance(value, gast.Name) \
                and value.id == param and stores[0] in bound.elts \
                and not any(isinstance(e, gast.Starred) for e in bound.elts):
            return bound.elts.index(stores[0])
    return None


def _constant_key(index):
    if isinstance(index, gast.Constant) and type(index.value) in (int, str):
        return index.value
    return None


def _rebound_around(read, node, name, scan, order) -> bool:
    """Whether ``read``, of the name ``name`` the update ``node`` changes, may
    read another item of the argument: a loop around both binds the name
    again each iteration (``for p in ps: p[0] = v; ... p``)."""
    loops = order.position.get(id(node), (None, 0, ()))[2]
    group = scan.find(name)
    return any(isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
               and scan.find(n.id) == group for loop in loops
               for n in walk(order.loops[loop]) if id(read) in order.position
               and loop in order.position[id(read)][2])


def callee_view_guards(func, params, scan, found) -> None:
    """``t = a[0]; t += v`` in a called function, ``t`` a view or an element of
    the parameter ``a``: Python changes the caller's array there in place
    where ``t`` is an array (a row of a matrix), while srcgrad's code makes a
    new one, so a caller reading its array afterwards would see other values.
    The update is checked as it runs (``(a, a)`` in ``found.guards``, placed by
    :func:`.argument_checks.update_guards`): it raises where ``t`` turns out an array sharing
    ``a``'s memory; a number (``t = b[2]`` of a vector) runs.  The callee
    cannot tell whether its caller reads the array again, so the check is made
    whatever the caller does.  ``a op= v`` through ``a`` itself (or ``h = a``)
    is the caller's to check (:func:`.call_updates.call_guard`); an argument whose elements
    the callee sets is copied, and its caller refuses to read it afterwards
    (:func:`updated_arguments`)."""
    order = None
    copied = updated_in_place(func)
    for name, node, kind in scan.updates:
        if kind != "augmented" or not isinstance(node, gast.AugAssign) \
                or not isinstance(node.target, gast.Name):
            continue
        order = order or Order(func, scan)
        if id(node) in order.nested:
            continue
        reached = scan.reached(name)
        for param in params:
            if param in copied or scan.find(param) == scan.find(name) \
                    or scan.find(param) not in reached or scan.rebound_first(param) \
                    or any(k == "item" and scan.find(param) in scan.reached(n)
                           for n, _, k in scan.updates):
                continue
            pairs = found.guards.setdefault(id(node), [])
            if (param, param) not in pairs:
                pairs.append((param, param))


# How a name relates to the memory of a name its value was made from (SAME,
# PART, HELD, from :mod:`.helper_depth`): the same memory (``h = x``,
# ``x.reshape(n)``), a part of it -- a view or an element (``x[1:]``, ``xs[0]``,
# ``p.W``, a loop's item) -- or a container holding it (``[x, y]``, ``xs.copy()``
# of a list).
#: The relation of ``c[k]`` (or of an item of ``for v in c``) to what ``c`` is.
_ELEMENT = {SAME: PART, PART: PART, HELD: SAME}


class Scan:
    """The names of a function joined by memory (module docstring).

    ``same`` names are one group (union-find); ``parts`` are ``(a, c)``: ``a``
    may be a view or an element of ``c``; ``holds`` are ``(c, v)``: the
    container ``c`` may hold ``v``.  An update of ``u`` changes the memory of
    ``u``'s group; of every group ``u`` is a part of (a view's base, the list
    an element was taken from, and up); and, where ``u`` may be an element,
    of whatever those hold."""

    def __init__(self, func, params, resolve):
        self.func, self.params, self.resolve = func, list(params), resolve
        self.parent: dict[str, str] = {}
        self.parts: list = []
        self.holds: list = []
        self.updates: list = []  # (name, node, "item" | "augmented")
        # a nested function's own locals are its own (readout's 'output' is not
        # pred's list 'output'): keyed apart (:func:`.scopes.scoped_names`)
        self.scoped = scoped_names(func)
        self.locals = set(params) | bound_names(func) | set(self.scoped.values())
        self.local_functions = {n.name: n for n in walk(func)
                                if isinstance(n, gast.FunctionDef) and n is not func}
        for node in walk(func):  # f = lambda v: ...
            if isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda):
                for target in node.targets:
                    if isinstance(target, gast.Name):
                        self.local_functions[target.id] = node.value
        self.synthetic = 0
        self.fresh_calls: set = set()  # ids of calls whose result is taken as new

    def rebound_first(self, param, body=None) -> bool:
        """Whether the first statement of the body that reads or binds ``param``
        binds it to a new value (``a = a.copy()``, ``a = np.array(a)``, ``a = 2.0
        * a``), or is an ``if`` whose branches both do, so that no update can
        reach the argument's own memory."""
        for stmt in self.func.body if body is None else body:
            if not any(isinstance(n, gast.Name) and self.key(n) == param for n in walk(stmt)):
                continue
            if isinstance(stmt, gast.If) and stmt.orelse and (not any(
                    isinstance(n, gast.Name) and n.id == param for n in walk(stmt.test))
                    or not any(isinstance(n, (gast.Call, gast.NamedExpr))
                               for n in walk(stmt.test))):
                # a test reading the argument without a call (if a[0] > 0:) cannot change it
                return self.rebound_first(param, stmt.body) \
                    and self.rebound_first(param, stmt.orelse)
            return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == param \
                and not any(rel != HELD for _, rel in self.deps(stmt.value))
        return False

    def key(self, node) -> str:
        """The name a Name node stands for here: its own, or, for a local of a
        nested function, one kept apart from the enclosing function's."""
        return self.scoped.get(id(node), node.id)

    def root(self, node):
        """``x`` in ``x``, ``x[i]``, ``x.a[i].b`` (by :meth:`key`); None for anything else."""
        while isinstance(node, (gast.Subscript, gast.Attribute)):
            node = node.value
        return self.key(node) if isinstance(node, gast.Name) else None

    def find(self, v):
        while self.parent.get(v, v) != v:
            v = self.parent[v]
        return v

    def relate(self, name, shares) -> None:
        """``name`` is bound to a value related to ``shares`` (name, relation)."""
        for other, rel in shares:
            if rel == SAME:
                a, b = self.find(name), self.find(other)
                if a != b:
                    self.parent[b] = a
            elif rel == PART:
                self.parts.append((name, other))
            else:
                self.holds.append((name, other))

    def reached(self, name) -> set:
        """The groups whose memory an update of ``name`` may change."""
        reached, up = {self.find(name)}, set()
        while True:
            grown = False
            for a, c in self.parts:
                if self.find(a) in reached and self.find(c) not in up:
                    up.add(self.find(c))
                    reached.add(self.find(c))
                    grown = True
            for c, v in self.holds:  # what a container above holds may be the element
                if self.find(c) in up and self.find(v) not in up:
                    up.add(self.find(v))
                    reached.add(self.find(v))
                    grown = True
            if not grown:
                return reached

    def seeing(self, param, groups=None) -> list:
        """The reads (Name nodes) of every name that may be, be part of or hold
        ``param``'s memory (or that of ``groups``): the views and elements of
        what does, and the containers holding what does."""
        groups, grown = set(groups or ()) | {self.find(param)}, True
        while grown:
            grown = False
            for a, c in self.parts:  # a view or an element of it
                if self.find(c) in groups and self.find(a) not in groups:
                    groups.add(self.find(a))
                    grown = True
            for c, v in self.holds:  # a container holding it
                if self.find(v) in groups and self.find(c) not in groups:
                    groups.add(self.find(c))
                    grown = True
        if not hasattr(self, "reads"):
            self.reads = collections.defaultdict(list)
            for node in walk(self.func):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    self.reads[self.key(node)].append(node)
                elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                    self.reads[self.key(node.target)].append(node.target)  # x += v reads x
        return [r for name, reads in self.reads.items() if self.find(name) in groups
                for r in reads]

    def update(self, shares, node, kind) -> None:
        """An update in place of the memory of ``shares`` (name, relation)."""
        for name, rel in shares:
            if rel == SAME:
                self.updates.append((name, node, kind))
            elif rel == PART:  # xs[0].fill(v), p.W[0] = v: a part of xs changes
                self.synthetic += 1
                part = f"{name}[{self.synthetic}]"
                self.parts.append((part, name))
                self.updates.append((part, node, kind))

    def run(self) -> None:
        self.arrays = self.new_arrays()
        for node in walk(self.func):
            if isinstance(node, (gast.Assign, gast.AnnAssign)):
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                if node.value is None:
                    continue
                for target in targets:
                    if isinstance(target, (gast.Tuple, gast.List)) \
                            and isinstance(node.value, (gast.Tuple, gast.List)) \
                            and len(target.elts) == len(node.value.elts) and not any(
                                isinstance(e, gast.Starred) for e in target.elts):
                        for elt, value in zip(target.elts, node.value.elts):  # a, b = b, a
                            self.bind(elt, self.deps(value), node)
                    else:
                        self.bind(target, self.deps(node.value), node)
            elif isinstance(node, gast.AugAssign):
                target = node.target
                if isinstance(target, gast.Name):
                    # xs += ys extends the list xs: it holds ys's items after
                    self.relate(self.key(target), [(n, HELD) for n, _ in self.deps(node.value)])
                    self.updates.append((self.key(target), node, "augmented"))
                else:  # xs[0] += v: the array xs[0] is, in place; then stored back
                    root = self.root(target)
                    if root is not None:
                        whole = isinstance(target.value, gast.Name)
                        self.update([(root, SAME if whole else PART)], node, "item")
                        self.update([(root, PART)], node, "augmented")
            elif isinstance(node, (gast.For, gast.comprehension)):
                self.bind(node.target, self.element(self.deps(node.iter)), node)
            elif isinstance(node, gast.withitem) and node.optional_vars is not None:
                self.bind(node.optional_vars, self.deps(node.context_expr), node)
            elif isinstance(node, gast.NamedExpr):
                self.bind(node.target, self.deps(node.value), node)
            elif isinstance(node, gast.Call):
                self.call_effects(node)

    @staticmethod
    def element(shares) -> list:
        return [(n, _ELEMENT[rel]) for n, rel in shares]

    def bind(self, target, shares, node) -> None:
        """``target = value`` where ``value`` relates to ``shares``."""
        if isinstance(target, gast.Name):
            self.relate(self.key(target), shares)
        elif isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:  # a, b = pair: each an element of it
                self.bind(elt, self.element(shares), node)
        elif isinstance(target, gast.Starred):
            self.bind(target.value, shares, node)
        elif isinstance(target, (gast.Subscript, gast.Attribute)):
            # x[i] = v: x changes, and (a list or dict) holds v's memory from now on
            root = self.root(target)
            if root is None:
                return
            whole = isinstance(target.value, gast.Name)
            if whole and root not in self.arrays:  # an array's elements take v's values
                self.relate(root, [(n, HELD) for n, _ in shares])
            # x[i][j] = v, p.W[0] = v: a part of x changes
            self.update([(root, SAME if whole else PART)], node, "item")

    def new_arrays(self) -> set:
        """The names bound only to arrays that NumPy makes anew (``y =
        np.zeros(n)``, ``np.exp(x)``): ``y[i] = v`` copies ``v``'s values into
        them and holds nothing of it."""
        fresh, other = set(), set()
        for node in walk(self.func):
            if isinstance(node, (gast.Assign, gast.AnnAssign)) and node.value is not None:
                made = isinstance(node.value, gast.Call) and self.makes_array(node.value)
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, gast.Name):
                        (fresh if made else other).add(self.key(target))
            elif isinstance(node, (gast.For, gast.comprehension, gast.NamedExpr)):
                other.update(self.key(n) for n in walk(node.target) if isinstance(n, gast.Name))
            elif isinstance(node, gast.withitem) and node.optional_vars is not None:
                other.update(self.key(n) for n in walk(node.optional_vars)
                             if isinstance(n, gast.Name))
        return fresh - other - set(self.params)

    def makes_array(self, call) -> bool:
        if not isinstance(call.func, (gast.Name, gast.Attribute)) or (
                isinstance(call.func, gast.Name) and call.func.id in self.local_functions):
            return False
        callee = self.resolve(call)
        if callee is MISSING or id(callee) in VIEW_FUNCTIONS or callee is np.array:
            return False
        if isinstance(callee, np.ufunc):
            return True
        return (getattr(callee, "__module__", None) or "").split(".")[0] == "numpy"

    def call_effects(self, call) -> None:
        """The updates a call makes: a method that changes its object, a NumPy
        function or ufunc method that writes into its first argument, ``out=``;
        and a local function's parameters joined to what it is passed."""
        func = call.func
        if isinstance(func, gast.Attribute) and func.attr in UPDATING_METHODS \
                and not is_user_method(self.resolve, func):  # self.update(m): the user's
            receiver = self.deps(func.value)
            for name, rel in receiver:  # xs.append(v): xs holds v
                if rel == SAME:
                    self.relate(name, [(n, HELD) for a in call.args for n, _ in self.deps(a)])
            self.update(receiver, call, "item")
        for keyword in call.keywords:
            if keyword.arg == "out":
                self.update(self.deps(keyword.value), call, "item")
        if isinstance(func, gast.Lambda) or isinstance(func, gast.Name) \
                and func.id in self.local_functions:  # (lambda p: setter(p))(a) too
            inner = func if isinstance(func, gast.Lambda) else self.local_functions[func.id]
            names = [self.key(a) for a in inner.args.args if isinstance(a, gast.Name)]
            passed = [d for a in [*call.args, *(k.value for k in call.keywords)]
                      for d in self.deps(a)]
            for name in names:
                self.relate(name, [(n, SAME) for n, _ in passed])
            return
        callee = self.resolve(call) if isinstance(func, (gast.Name, gast.Attribute)) \
            else MISSING
        if callee is not MISSING and call.args and (
                id(callee) in UPDATING_FUNCTIONS or _ufunc_at(callee)
                or (callee is np.nan_to_num and _told_not_to_copy(call, 1))):
            self.update(self.deps(call.args[0]), call, "item")

    def deps(self, node) -> list:
        """The local names whose memory ``node``'s value may be, be part of or
        hold, each with that relation."""
        if isinstance(node, gast.Name):
            return [(self.key(node), SAME)] if self.key(node) in self.locals else []
        if isinstance(node, gast.Subscript):
            return self.element(self.deps(node.value))
        if isinstance(node, gast.Attribute):  # x.T, p.W
            return [(n, PART) for n, _ in self.deps(node.value)]
        if isinstance(node, gast.Starred):
            return self.deps(node.value)
        if isinstance(node, (gast.Tuple, gast.List, gast.Set)):
            return [(n, HELD) for e in node.elts for n, _ in self.deps(e)]
        if isinstance(node, gast.Dict):
            return [(n, HELD) for v in node.values for n, _ in self.deps(v)]
        if isinstance(node, gast.IfExp):
            return self.deps(node.body) + self.deps(node.orelse)
        if isinstance(node, gast.BoolOp):
            return [d for v in node.values for d in self.deps(v)]
        displays = (gast.List, gast.Tuple, gast.ListComp)
        if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Mult)) \
                and any(isinstance(o, displays) for o in (node.left, node.right)):
            # ws + [z], [y] * 2: a new list holding the same items (taken, for ws,
            # as ws itself: what changes its items changes ws's)
            return [(n, rel if isinstance(o, displays) else SAME)
                    for o in (node.left, node.right) for n, rel in self.deps(o)]
        if isinstance(node, gast.NamedExpr):
            return self.deps(node.value)
        if isinstance(node, (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)):
            # the loop targets are related to what they run over (run); the elements
            return [(n, SAME) for sub in walk(node) if isinstance(sub, gast.Name)
                    for n, _ in self.deps(sub)]
        if isinstance(node, gast.Call):
            return self.call_deps(node)
        return []  # arithmetic, comparisons, constants, lambdas: new values

    def call_deps(self, call) -> list:
        func = call.func
        if id(call) in self.fresh_calls:
            return []
        passed = [(n, SAME) for a in [*call.args, *(k.value for k in call.keywords)]
                  for n, _ in self.deps(a)]
        outs = [e for k in call.keywords if k.arg == "out"
                for e in (k.value.elts if isinstance(k.value, gast.Tuple) else [k.value])]
        returned_out = [d for e in outs for d in self.deps(e)]  # np.f(a, out=y) returns y
        if isinstance(func, gast.Name) and func.id in self.local_functions:
            inner = self.local_functions[func.id]
            returned = [d for sub in walk(inner) if isinstance(sub, gast.Return)
                        and sub.value is not None for d in self.deps(sub.value)]
            if isinstance(inner, gast.Lambda):
                returned = self.deps(inner.body)
            return passed + [(n, SAME) for n, _ in returned]
        if isinstance(func, gast.Attribute) and self.root(func) in self.locals:
            if outs:  # x.clip(0, 1, out=y) returns y
                return returned_out
            if func.attr == "copy":  # a new array, or a new list holding the same items
                return [(n, HELD) for n, _ in self.deps(func.value)]
            if func.attr in FRESH_METHODS and not _told_not_to_copy(call):
                return []  # (x.astype(t, copy=False) may be x itself)
            # x.reshape(...), d.get(k), xs.pop(): the memory or an item of x
            return [(n, SAME) for n, _ in self.deps(func.value)] + passed
        callee = self.resolve(call) if isinstance(func, (gast.Name, gast.Attribute)) \
            else MISSING
        if callee is MISSING or id(callee) in VIEW_FUNCTIONS or _told_not_to_copy(call):
            # (np.array(x, copy=None), np.nan_to_num(x, copy=False): x itself)
            return passed
        module = getattr(callee, "__module__", None) or ""
        if outs and module.split(".")[0] == "numpy":
            return returned_out
        if isinstance(callee, np.ufunc) or id(callee) in FRESH_BUILTINS:
            return []
        if id(callee) in CONTAINER_BUILTINS:  # list(xs), sorted(xs): the same items
            return [(n, HELD) for n, _ in passed]
        if module.split(".")[0] in ("numpy", "math", "scipy"):
            return []  # NumPy's functions other than the views make new arrays
        return passed


def _told_not_to_copy(call, position=None) -> bool:
    """Whether ``call`` has a ``copy`` argument (a keyword, or the positional
    argument at ``position``) that is not the literal True: ``np.array(x,
    copy=False)``, ``x.astype(t, copy=False)`` may return ``x`` itself."""
    copy = next((k.value for k in call.keywords if k.arg == "copy"), None)
    if copy is None and position is not None and len(call.args) > position:
        copy = call.args[position]
    return copy is not None and not (isinstance(copy, gast.Constant) and copy.value is True)


def _ufunc_at(callee) -> bool:
    """``np.add.at`` and its kind: a ufunc method writing into its first argument."""
    return getattr(callee, "__name__", None) == "at" \
        and isinstance(getattr(callee, "__self__", None), np.ufunc)


class Order:
    """Which reads of a function may run after an update, from where they are
    written: later in the source, or in a loop around both (its next
    iteration) -- unless the loop's body binds the name read to a new value
    (``y = x * 2.0``) before the read on every iteration.  Reads in a nested
    function or lambda run wherever it is called: after anything.  An
    assignment reads its value before it stores; any other statement that
    updates (``xs.append(a)``) may read during."""

    def __init__(self, func, scan=None):
        self.scan = scan
        self.position: dict = {}  # id(node) -> (its statement, its number, loops around it)
        self.end: dict = {}       # id(statement) -> the last number inside it
        self.nested: set = set()  # ids of the nodes inside a nested function or lambda
        self.loops: dict = {}     # id(loop) -> the loop
        self.count = 0
        for stmt in func.body:
            self.visit(stmt, None, (), False)

    def visit(self, node, stmt, loops, nested) -> None:
        if isinstance(node, gast.stmt):
            stmt = node
            self.count += 1
        self.position[id(node)] = (stmt, self.count, loops)
        if nested:
            self.nested.add(id(node))
        inner = nested or isinstance(node, (gast.FunctionDef, gast.Lambda))
        for name, value in gast.iter_fields(node):
            around = loops
            if isinstance(node, gast.For) and name in ("target", "body") \
                    or isinstance(node, gast.While) and name in ("test", "body"):
                around = (*loops, id(node))  # run again at each iteration
                self.loops[id(node)] = node
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, gast.AST):
                    self.visit(child, stmt, around, inner)
        if node is stmt:
            self.end[id(stmt)] = self.count

    def after(self, read, update) -> bool:
        """Whether ``read`` (a node) may run after ``update`` (a node)."""
        if id(read) in self.nested or id(update) in self.nested:
            return True
        if id(read) not in self.position or id(update) not in self.position:
            return True
        read_stmt, read_at, read_loops = self.position[id(read)]
        stmt, at, loops = self.position[id(update)]
        if isinstance(update, gast.For):
            loops = (*loops, id(update))
        if read_stmt is stmt and not (update is stmt and isinstance(
                stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign))):
            shared = [loop for loop in read_loops if loop in loops]
            return not shared or not self.fresh_again(read, self.loops[shared[-1]])
        if read_at > self.end.get(id(stmt), at):
            return True
        shared = [loop for loop in read_loops if loop in loops]
        return bool(shared) and not self.fresh_again(read, self.loops[shared[-1]])

    def fresh_again(self, read, loop) -> bool:
        """Whether ``loop``'s body binds the name ``read`` reads to a new value
        on every iteration before it (``y = x * 2.0`` at its top level, and no
        other binding of ``y`` between)."""
        if self.scan is None or not isinstance(read, gast.Name):
            return False
        _, read_at, _ = self.position[id(read)]
        last = None
        for stmt in loop.body:
            _, at, _ = self.position[id(stmt)]
            if at >= read_at or read_at <= self.end[id(stmt)]:
                break  # the statement holding the read
            if any(isinstance(n, gast.Name) and n.id == read.id
                   and not isinstance(n.ctx, gast.Load) for n in walk(stmt)):
                last = stmt
        return isinstance(last, gast.Assign) and len(last.targets) == 1 \
            and isinstance(last.targets[0], gast.Name) and last.targets[0].id == read.id \
            and not any(rel != HELD for _, rel in self.scan.deps(last.value))

    def after_any(self, reads, update) -> bool:
        return any(self.after(read, update) for read in reads)


def resolver_of(parsed):
    """``resolve(call)`` for :func:`argument_updates` on a called function
    (``parsed``, a ParsedFunction): the object a call's function names in that
    function's module, or MISSING."""
    func = parsed.node
    local = bound_names(func) | {a.id for a in func.args.args}
    return lambda call: static_value(call.func, parsed.resolver, local)


def updated_arguments(parsed) -> frozenset:
    """The parameters of a called user function (``parsed``, its
    ParsedFunction) whose elements it sets through any name (``h = p; h[0] =
    v``, ``r = p[1:]; r[0] = v``), or that it passes on (or a part of which it
    passes, or a list holding which) to a user function setting them, at any
    depth (``def mid(a): return setter(a)``, :mod:`.helper_depth`): its
    caller's array changes in Python, never in srcgrad's code."""
    return effects(parsed.fn, call_summary, _unknown_pure(parsed.fn)).item


def _updated_here(parsed, found) -> frozenset:
    """The parameters ``parsed`` sets elements of itself, given ``found``, its
    own :func:`argument_updates`."""
    func, resolve = parsed.node, resolver_of(parsed)
    params = [a.id for a in func.args.args]
    if not found.shared:
        return frozenset(found.direct)
    # through another name only where that name may be bound, before the update,
    # to something other than a new array (v = np.zeros(n); v[0] = a; v = a sets
    # no element of a)
    scan = Scan(func, params, resolve)
    scan.run()
    order = Order(func, scan)
    kept = [p for p in params if not scan.rebound_first(p)]
    bindings = collections.defaultdict(list)
    for node in walk(func):  # (a nested function's parameter is bound to what it is passed)
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)) \
                and scan.key(node) not in params:
            bindings[scan.key(node)].append(node)
    fresh = {id(t) for stmt in walk(func) if isinstance(stmt, gast.Assign)
             and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
             and not any(rel != HELD for _, rel in scan.deps(stmt.value))
             for t in stmt.targets}
    shared = set()
    for name, node, kind in scan.updates:
        if kind != "item" or name in params:
            continue
        root = name.split("[")[0]  # a synthetic part (xs[1]) stands for its root's
        if root not in params and not any(
                id(b) not in fresh and order.after(node, b) for b in bindings[root]):
            continue
        reached = scan.reached(name)
        shared.update(p for p in kept if scan.find(p) in reached)
    return frozenset(found.direct | (found.shared & shared))


def augmented_parameters(fn) -> frozenset:
    """The parameters of the user function ``fn`` that it may change with
    ``p += v`` (through ``p`` or another name for it), or pass on to a
    function doing so, at any depth: in place where the caller passes an array
    or a list, while srcgrad's code for ``fn`` makes a new one -- a caller
    reading that memory afterwards is checked as it runs
    (:func:`.call_updates.call_guard`)."""
    return effects(fn, call_summary, _unknown_pure(fn)).augmented


def deep_parameters(fn) -> frozenset:
    """The parameters of the user function ``fn`` whose held arrays (or the
    memory below an element of them) it, or a function it calls, may change:
    a copy of a list passed there (``helper(xs.copy())``) still shares them
    with the caller's, and a list made to be passed (``helper([y])``) holds
    the caller's ``y``."""
    return effects(fn, call_summary, _unknown_pure(fn)).deep


def _unknown_pure(fn) -> tuple:
    """Each parameter of ``fn`` paired with :data:`.helper_depth.PURE`: where no
    call tells which functions it is given, a call of one is not followed
    (the call's own look, :func:`call_effects`, knows them)."""
    code = getattr(fn, "__code__", None)
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount] if code else ()
    return tuple((name, PURE) for name in names)


def call_effects(fn, call, resolve, passed=None, receiver=False, local=None):
    """What the call ``call`` of the user function ``fn`` may do to what it
    passes (:class:`.helper_depth.Effects`), knowing the functions it passes
    (``apply(setter, y)``: ``g(a)`` in ``apply`` is ``setter(a)``; a lambda
    or a function not known at compile time is not followed, so it counts as
    an update).  ``resolve(call)``, the caller's; ``passed``, its parameters
    holding known functions; ``receiver``, ``call`` is a method call;
    ``local``, its local functions and lambdas by name."""
    try:
        bound = inspect.signature(fn).bind_partial(
            *([gast.Constant(value=None, kind=None)] if receiver else []), *call.args,
            **{k.arg: k.value for k in call.keywords if k.arg is not None})
    except (TypeError, ValueError):
        return effects(fn, call_summary, _unknown_pure(fn))
    passed = passed or {}

    def known(node):
        if isinstance(node.func, gast.Name) and node.func.id in passed:
            return passed[node.func.id]
        return resolve(node)

    return effects(fn, call_summary,
                   passed_functions(bound.arguments.items(), known, local, _follow(known))
                   + default_functions(fn, bound.arguments))


#: The user functions being followed from a lambda (:func:`_follow`): a
#: recursive one is not followed again, and counts as an update.
_FOLLOWING: set = set()


def _follow(resolve):
    """``follow(fn, call)`` for :func:`.helper_depth.passed_functions`:
    whether the call ``call`` (in a lambda or local function, ``resolve`` its
    look-up) of the user function ``fn`` changes nothing it passes, ``fn``'s
    calls followed to any depth with the functions the call passes."""
    def follow(fn, call) -> bool:
        if id(fn) in _FOLLOWING:
            return False
        _FOLLOWING.add(id(fn))
        try:
            found = call_effects(fn, call, resolve)
        finally:
            _FOLLOWING.discard(id(fn))
        return not (found.item or found.deep or found.augmented)
    return follow


def call_summary(fn, binding=None):
    """The :class:`.helper_depth.Summary` of the user function ``fn`` on its
    own: the parameters it sets elements of, changes below their items, or
    changes with ``p += v`` itself, and which of them each of its calls to a
    user function passes where.  None where its source cannot be read.
    srcgrad's own generated code (differentiated again) updates nothing: it
    copies first.  ``binding``: the functions its parameters hold (a call of
    a parameter holding none known is not followed, and counts as updating
    what it is passed)."""
    if (getattr(fn, "__module__", None) or "").startswith("srcgrad.generated."):
        return Summary(())
    try:
        parsed = parse_function(fn)
    except SrcGradError:
        return None
    func, binding = parsed.node, binding or {}
    base, stored = resolver_of(parsed), {n.id for n in walk(func) if isinstance(
        n, gast.Name) and isinstance(n.ctx, gast.Store)}

    def resolve(call):  # g(a), g the parameter holding setter: setter(a)
        if isinstance(call.func, gast.Name) and call.func.id in binding \
                and call.func.id not in stored:
            return binding[call.func.id]
        return base(call)

    params = [a.id for a in func.args.args]
    found = argument_updates(func, params, resolve, own_only=True)
    # *args, **kw: a tuple or dict holding what the caller passed (g(*args) below)
    params += [a.id for a in (func.args.vararg, func.args.kwarg) if a is not None]
    rebound = {n.id for n in walk(func) if isinstance(n, gast.Name)
               and isinstance(n.ctx, gast.Store)}
    item = ((updated_in_place(func) - rebound) & set(params)) | _updated_here(parsed, found)
    scan = Scan(func, params, resolve)
    scan.run()
    kept = [p for p in params if not scan.rebound_first(p)]
    augmented = frozenset(p for p in kept if any(
        kind == "augmented" and scan.find(name) == scan.find(p)
        for name, _, kind in scan.updates))
    return Summary(tuple(params), frozenset(item), frozenset(found.shared), augmented,
                   tuple((callee, pairs, passed) for _, callee, pairs, passed
                         in _calls_passing(func, kept, scan, resolve)))


def _calls_passing(func, kept, scan, resolve):
    """For each call in ``func`` to a user function: ``(call, callee, pairs,
    passed)``, ``pairs`` the ``(callee's parameter, own parameter, relation)``
    of each argument whose memory is, is part of or holds that of an own
    parameter in ``kept``, ``passed`` the functions it passes
    (:func:`.helper_depth.passed_functions`); ``callee`` None where the call
    cannot be followed -- its arguments not matched to the parameters
    (``g(*args)``, ``g(**kw)``), or a function held by a local name or
    parameter not known (``g(a)``, ``g`` given no known function): then each
    own parameter passed counts as updated."""
    for call in walk(func):
        if not isinstance(call, gast.Call) or not isinstance(
                call.func, (gast.Name, gast.Attribute)):
            continue
        value = resolve(call)
        callee, preset = user_callable(value)
        if value is MISSING and isinstance(call.func, gast.Name) \
                and scan.key(call.func) in scan.locals \
                and call.func.id not in scan.local_functions:
            callee = None  # g(a): whatever g holds
        elif callee is MISSING:
            continue
        try:
            if callee is None:
                raise TypeError("a function not known here")
            if any(k.arg is None for k in call.keywords):
                raise TypeError("arguments not known one by one")
            keywords = {k.arg: k.value for k in call.keywords}
            blank = gast.Constant(value=None, kind=None)
            star = next((i for i, a in enumerate(call.args) if isinstance(a, gast.Starred)),
                        len(call.args))
            signature = inspect.signature(callee)
            bound = signature.bind_partial(
                *[blank] * preset[0], *call.args[:star],
                **{**{k: blank for k in preset[1]}, **keywords})
            passed = [(p, a if isinstance(a, gast.expr) else gast.Tuple(
                elts=list(a.values() if isinstance(a, dict) else a), ctx=gast.Load()))
                for p, a in bound.arguments.items()]
            passed += _unmatched(signature, bound, call.args[star:])
        except (TypeError, ValueError):
            callee, passed = None, [(None, a) for a in [
                *call.args, *(k.value for k in call.keywords)]]
        pairs = []
        for param, arg in passed:
            for name, rel in scan.deps(arg):
                group, below = scan.find(name), held_below(scan, name)
                for own in kept:
                    if scan.find(own) in scan.reached(name):
                        # h = a[0]; g(h): a part of a, whatever g is passed
                        relation = rel if scan.find(own) == group else (
                            HELD if rel == HELD else PART)
                    elif scan.find(own) in below:  # lst = [a]; g(lst)
                        relation = HELD
                    else:
                        continue
                    if (param, own, relation) not in pairs:
                        pairs.append((param, own, relation))
        if pairs:
            yield call, callee, tuple(pairs), () if callee is None else \
                passed_functions(passed, resolve, scan.local_functions, _follow(resolve)) \
                + default_functions(callee, dict(passed))


def _unmatched(signature, bound, rest) -> list:
    """``f(y, t, *args)``: the arguments from the first starred one on, whose
    parameters are not known one by one, paired with every positional
    parameter left (an item of ``args`` may be any of them): the call is
    followed, not taken as updating all it passes (srcgrad refuses a ``*args``
    of unknown length later, where it matches arguments, with its own reason)."""
    if not rest:
        return []
    items = [gast.Subscript(value=a.value, slice=gast.Constant(value=0, kind=None),
                            ctx=gast.Load()) if isinstance(a, gast.Starred) else a
             for a in rest]
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    left = [p.name for p in signature.parameters.values()
            if p.kind in kinds and p.name not in bound.arguments]
    rest_param = [p.name for p in signature.parameters.values()
                  if p.kind == inspect.Parameter.VAR_POSITIONAL]
    return [(p, item) for p in left for item in items] + [
        (p, gast.Tuple(elts=items, ctx=gast.Load())) for p in rest_param]


def held_below(scan, name) -> set:
    """The groups whose memory an update of the items of ``name`` may change
    (a callee writing ``state[1][0] = v``): what ``name`` holds, what those
    hold, and what each of them is a view or an element of.  ``state = [pos,
    vel]; state = step(state)``: Python's ``vel`` is the array step updated,
    whatever name the result is bound to."""
    held, todo = set(), [scan.find(name)]
    while todo:
        group = todo.pop()
        for c, v in scan.holds:
            if scan.find(c) == group and scan.find(v) not in held:
                held.add(scan.find(v))
                todo.append(scan.find(v))
    return set().union(*(scan.reached(g) for g in held)) if held else set()
