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

import collections
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import types
from dataclasses import dataclass, field

import gast

from ..errors import SrcGradError
from ..frontend.linker import element_classes, is_user_function
from ..frontend.parse import MISSING, parse_function, static_value
from ..ir.syntax import source_of, updated_in_place, walk
from .free_reads import bound_names, free_values
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
from .memory_scan import Order, Scan, held_below
from .scopes import shown


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
    #: argument -> the ``(update node, name updated)`` pairs reaching it
    updates: dict = field(default_factory=dict)
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
    # (a summary of a called function follows its calls at any depth itself)
    deep = set() if own_only else _updaters_as_updates(func, kept, scan, resolve)
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
            found.updates.setdefault(param, []).append((node, name))
            reaching[id(node)].add(param)
            if kind == "item":
                (found.shared if name != param or param in deep else found.direct).add(param)
    if own_only:
        return found
    order = _items_and_free(func, params, scan, resolve, found)
    for param, call in deep.items():
        # the callee may read another item after changing one ("f([z, z])"): the
        # copy of the list and its arrays would hide that, so they are checked apart
        found.items.setdefault(param, (call, shown(param), None))
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
            order.after(read, node) or _read_by(read, node, scan)
            for node, _ in updates[param] for read in seen[q])]
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
    for call, own, _, _ in _updater_calls(func, params, scan, resolve):
        if call not in found[own]:
            found[own].append(call)
    return found


def _updater_calls(func, params, scan, resolve):
    """``(call, param, relation, deep)`` for each call of :func:`_passed_to_updaters`
    and each of ``params`` whose memory it may change: ``relation`` how what is
    passed relates to the parameter (``PART``: ``g(x[0])``), ``deep`` whether the
    callee may change the arrays a list it is passed holds (None: the callee is
    not known)."""
    for call, callee, pairs, passed in _calls_passing(func, params, scan, resolve):
        theirs = effects(callee, call_summary, passed) if callee is not None else None
        for param, own, relation in pairs:
            if theirs is not None and param not in theirs.deep and (
                    relation == HELD or param not in theirs.item | theirs.augmented):
                continue
            yield call, own, relation, None if theirs is None else param in theirs.deep


def _updaters_as_updates(func, kept, scan, resolve) -> set:
    """Record in ``scan`` each call passing one of ``kept`` to a user function
    that changes it in place (``zero_(x)``, ``def zero_(a): a[0] = 0.0``) as
    an update of that parameter's memory, as ``np.putmask(x, m, v)`` is one: the
    function's caller then gets a copy, checked against the other arguments and
    its other items ("f(w, [z, z])"), as for an update the function makes itself.
    Such a call that srcgrad runs as written (its argument not differentiated)
    changed the caller's array.  Returns the parameters whose arrays held in a
    list the callee may change (to copy whole, ``private_copy``)."""
    deep, scan.by_callees = {}, set()
    called = _called_parameters(func, kept, scan, resolve)
    for call, own, relation, holds in _updater_calls(func, kept, scan, resolve):
        if own in called or holds is None:
            # via(box, y): box, a callable object the code is specialised on; f(x), f a
            # function passed: specialised on it, the code calls it as the caller's
            continue
        if any(node is call for _, node, _ in scan.updates) and id(call) not in scan.by_callees:
            continue  # x.update_(v) of a user's method: the scan has it already
        scan.by_callees.add(id(call))
        scan.update([(own, PART if relation == PART else SAME)], call, "item")
        if holds:
            deep.setdefault(own, call)
    return deep


def _called_parameters(func, kept, scan, resolve) -> set:
    """Those of ``kept`` that hold something called: called here (``box(y)``,
    ``box.run(y)``), or passed to a user function that calls what it gets
    (``via(box, y)``, ``def via(box, a): return box(a)``) -- an object the code
    is specialised on, never an array to copy (the scan's look, flow-insensitive,
    joins ``box`` to ``y`` through ``r = via(box, y)``)."""
    def calls(body, name):
        return any(isinstance(n, gast.Call) and (
            isinstance(n.func, gast.Name) and n.func.id == name
            or isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name)
            and n.func.value.id == name) for n in walk(body))
    found = {p for p in kept if calls(func, p)}
    for call, callee, pairs, _ in _calls_passing(func, kept, scan, resolve):
        try:
            node = parse_function(callee).node if callee is not None else None
        except SrcGradError:
            node = None
        for param, own, _ in pairs:
            passed = [a for a in [*call.args, *(k.value for k in call.keywords)]
                      if isinstance(a, gast.Name) and a.id == own]
            if passed and node is not None and param is not None and calls(node, param):
                found.add(own)
    return found


def _read_by(read, node, scan) -> bool:
    """Whether ``read`` is in the call ``node`` that :func:`_updaters_as_updates`
    took for an update: the callee may read it after its update, and it would
    not see the update on the copy the caller now passes (``helper(x, w)``
    called ``f(z, z)``), so it counts as read after the update."""
    return id(node) in getattr(scan, "by_callees", ()) and any(read is n for n in walk(node))


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
    shared, dead = set(), _after_fresh_rebinding(func, params, scan, bindings)
    for name, node, kind in scan.updates:
        if kind != "item" or name in params or id(node) in dead:
            continue
        root = name.split("[")[0]  # a synthetic part (xs[1]) stands for its root's
        if root not in params and not any(
                id(b) not in fresh and order.after(node, b) for b in bindings[root]):
            continue
        reached = scan.reached(name)
        shared.update(p for p in kept if scan.find(p) in reached)
    return frozenset(found.direct | (found.shared & shared))


def _after_fresh_rebinding(func, params, scan, bindings=None) -> set:
    """The ids of the updates of a local name (``c[0] += x``) that run only
    after that name is rebound to a new array: ``h, c = state; c = c * 0.9;
    c[0] += x`` changes none of ``state``.  The scan joins every binding of a
    name, so this looks at the order: each binding to something other than a
    new array is followed, before the update, by a statement of the body's
    own level binding the name to a new one holding nothing else (a branch or
    loop around either keeps the update counted)."""
    if bindings is None:
        bindings = collections.defaultdict(list)
        for node in walk(func):
            if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
                bindings[scan.key(node)].append(node)
    # a new array holding nothing of another name (not ks = list(hs): its items
    # are hs's arrays, and ks[0] *= 3.0 changes them)
    fresh = {id(t) for stmt in walk(func) if isinstance(stmt, gast.Assign)
             and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
             and not scan.deps(stmt.value) for t in stmt.targets}
    top = {}
    for i, stmt in enumerate(func.body):
        for node in walk(stmt):
            top.setdefault(id(node), i)
    level = {}  # name -> the indices of the body's own statements binding it anew
    for i, stmt in enumerate(func.body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and id(stmt.targets[0]) in fresh:
            level.setdefault(scan.key(stmt.targets[0]), []).append(i)
    dead = set()
    for name, node, _ in scan.updates:
        root = name.split("[")[0]
        if root in params or root not in level or id(node) not in top:
            continue
        at = top[id(node)]
        if all(id(b) in fresh or id(b) in top and any(
                top[id(b)] < i < at for i in level[root]) for b in bindings[root]
                if id(b) not in top or top[id(b)] <= at):
            dead.add(id(node))
    return dead


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


def call_effects(fn, call, resolve, passed=None, receiver=False, local=None, owner=None):
    """What the call ``call`` of the user function ``fn`` may do to what it
    passes (:class:`.helper_depth.Effects`), knowing the functions it passes
    (``apply(setter, y)``: ``g(a)`` in ``apply`` is ``setter(a)``; a lambda
    or a function not known at compile time is not followed, so it counts as
    an update).  ``resolve(call)``, the caller's; ``passed``, its parameters
    holding known functions; ``receiver``, ``call`` is a method call;
    ``local``, its local functions and lambdas by name; ``owner``, the object
    (or class) a method call is made on: its ``self.m(p)`` calls are followed
    to that class's methods."""
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
                   + default_functions(fn, bound.arguments)
                   + _receiver_binding(fn, owner if receiver else None))


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

    receiver = _receiver_parameter(fn, func)

    def resolve(call):  # g(a), g the parameter holding setter: setter(a)
        if isinstance(call.func, gast.Name) and call.func.id in binding \
                and call.func.id not in stored:
            return binding[call.func.id]
        if receiver is not None and _on_receiver(call, receiver) and receiver not in stored:
            # self.set(p): the method of the receiver's class, where that is known
            return _method_of(binding.get(receiver, PURE), call.func.attr)
        return base(call)

    if _DISPATCH.get():  # fn's code dispatches on its own lists' classes too
        with dispatching((*_DISPATCH.get(), *_own_classes(parsed))):
            return _summary(parsed, resolve)
    return _summary(parsed, resolve)


def _receiver_parameter(fn, func):
    """The name of ``fn``'s receiver (``self``) where ``fn`` is a method defined
    in a class body (``Box.__call__``), else None."""
    parts = (getattr(fn, "__qualname__", "") or "").split(".")
    if len(parts) < 2 or parts[-2] == "<locals>" or not func.args.args:
        return None
    return func.args.args[0].id


def _on_receiver(call, receiver) -> bool:
    """``self.m(...)``: a call of an attribute of the receiver itself."""
    return isinstance(call.func, gast.Attribute) and isinstance(call.func.value, gast.Name) \
        and call.func.value.id == receiver


def _method_of(owner, name):
    """What ``self.name(...)`` calls, ``owner`` the receiver's object or class:
    a bound method of its class's user function, followed like any call
    (``def __call__(self, p): return self.set(p)`` changes ``p`` as ``set``
    does); MISSING for what is no user method (a field holding an array or a
    NumPy function), and where the receiver is not known here
    (:data:`.helper_depth.PURE`): the caller's own look, which knows it,
    follows the call (:func:`call_effects`, given ``owner``)."""
    if owner is PURE:
        return MISSING
    cls = owner if isinstance(owner, type) else type(owner)
    found = inspect.getattr_static(cls, name, None)
    if not isinstance(owner, type):
        field = inspect.getattr_static(owner, name, None)
        if field is not None and field is not found:
            return MISSING if not callable(field) else field  # an instance's own field
    if isinstance(found, (staticmethod, classmethod)):
        return getattr(owner, name, MISSING)
    if isinstance(found, types.FunctionType):
        return types.MethodType(found, owner) if is_user_function(found) else MISSING
    return MISSING


def _own_classes(parsed) -> tuple:
    """The classes of the user objects in the lists ``parsed`` reads from its
    globals and closure, and the dataclasses it names: those its code also
    dispatches on (normalize/specialise.py ``static_element_classes``)."""
    found, local = {}, bound_names(parsed.node)
    for node in walk(parsed.node):
        if isinstance(node, gast.Name) and node.id not in local:
            value = parsed.resolver.lookup(node.id)
            found.update(dict.fromkeys(element_classes(value)))
            if isinstance(value, type) and dataclasses.is_dataclass(value):
                found[value] = None
    return tuple(found)


def _summary(parsed, resolve):
    func = parsed.node
    # (keyword-only parameters too: def upd(x, *, q): q *= 3.0 changes the caller's q)
    params = [a.id for a in func.args.args + func.args.kwonlyargs]
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
    dead = _after_fresh_rebinding(func, params, scan)
    shared = frozenset(p for p in found.shared if any(
        id(node) not in dead for node, name in found.updates.get(p, ()) if name != p))
    return Summary(tuple(params), frozenset(item),
                   shared | _items_augmented(scan, kept, dead), augmented,
                   tuple((callee, pairs, passed) for _, callee, pairs, passed
                         in _calls_passing(func, kept, scan, resolve)))


def _items_augmented(scan, kept, dead=frozenset()) -> frozenset:
    """The parameters in ``kept`` an update ``c[k] op= v`` may reach through an
    item (``ps[0] *= c``, ``zs = ps + qs; zs[1] += c``): where the item is an
    array, NumPy changes it in place -- the array the caller's list holds, and
    the caller's name for it sees the change -- while srcgrad's code for the
    function stores a new one in its copy of the list.  They count as changed
    below their items (``deep``), so that the caller refuses a read of those
    arrays afterwards; ``t = ps[0]; t += v`` is checked where it runs
    (:func:`callee_view_guards`)."""
    return frozenset(p for p in kept for name, node, kind in scan.updates
                     if kind == "augmented" and isinstance(node, gast.AugAssign)
                     and id(node) not in dead
                     and not isinstance(node.target, gast.Name)
                     and scan.find(p) in scan.reached(name))


#: The classes of the objects a local name called here may hold (``m(x)`` in
#: ``for m in self.mods``), while a function given them is normalised: its
#: code, and that of the user functions it calls (handed the same classes),
#: calls ``m`` by its class's ``__call__`` -- one of these, or a guard raises.
_DISPATCH: contextvars.ContextVar = contextvars.ContextVar("dispatch", default=())


@contextlib.contextmanager
def dispatching(classes):
    """Within it, a call of a local name (``m(x)``) is followed into each of
    ``classes``' ``__call__`` (the code dispatches on them, normalize/rewrites.py
    ``dispatched``) rather than taken as updating all it passes."""
    token = _DISPATCH.set(tuple(classes))
    try:
        yield
    finally:
        _DISPATCH.reset(token)


def _dispatched():
    """``[((__call__, (1, ())), cls), ...]`` of the classes :func:`dispatching`
    names that define a user ``__call__``: what ``m(x)`` calls, ``m`` a local."""
    found = []
    for cls in _DISPATCH.get():
        call = next((k.__dict__["__call__"] for k in cls.__mro__ if "__call__" in k.__dict__),
                    None)
        if call is not None and user_callable(call)[0] is call:
            found.append(((call, (1, ())), cls))
    return found


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
        choices = [(callee, preset, _receiver_of(value))]
        if value is MISSING and isinstance(call.func, gast.Name) \
                and scan.key(call.func) in scan.locals \
                and call.func.id not in scan.local_functions:
            # g(a): whatever g holds -- m(x) for m in self.mods: its classes' __call__
            choices = [(*c, cls) for c, cls in _dispatched()] \
                or [(None, preset, None)]
        elif callee is MISSING:
            continue
        for callee, preset, owner in choices:
            yield from _passing(call, callee, preset, kept, scan, resolve, owner)


def _receiver_of(value):
    """The object a call of ``value`` passes as the receiver (``self``) of its
    code: a bound method's, or a callable object's own; else None."""
    if isinstance(value, types.MethodType):
        return value.__self__
    if value is MISSING or value is PURE or isinstance(
            value, (type, types.FunctionType, functools.partial)):
        return None
    return value


def _receiver_binding(callee, owner) -> tuple:
    """``((self, owner),)``: the callee's receiver parameter paired with the
    object (or class) it is called on, so that its ``self.m(p)`` calls are
    followed to ``owner``'s methods (:func:`_method_of`)."""
    if owner is None or callee is None:
        return ()
    names = callee.__code__.co_varnames[:1] if getattr(callee, "__code__", None) \
        and callee.__code__.co_argcount else ()
    return tuple((name, owner) for name in names)


def _passing(call, callee, preset, kept, scan, resolve, owner=None):
    """:func:`_calls_passing`'s entry for ``call`` calling ``callee`` (None: not
    followed), given ``preset`` arguments before the call's own; ``owner``, the
    object (or class) it is called on, where it is a method."""
    try:
        if callee is None:
            raise TypeError("a function not known here")
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        spread = [k.value for k in call.keywords if k.arg is None]  # f(**kw)
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
        passed += _unmatched_keywords(signature, bound, call.args[star:], spread)
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
            + default_functions(callee, dict(passed)) + _receiver_binding(callee, owner)


def _unmatched_keywords(signature, bound, rest, spread) -> list:
    """``f(y, **kw)``: an item of each dict ``kw`` paired with every parameter
    the call leaves (any may take it), the dict itself with ``**opts``: as
    :func:`_unmatched` does for a ``*args``."""
    if not spread:
        return []
    items = [gast.Subscript(value=d, slice=gast.Constant(value=0, kind=None), ctx=gast.Load())
             for d in spread]
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    left = [p.name for p in signature.parameters.values()
            if p.kind in kinds and p.name not in bound.arguments]
    if rest:  # (a *args before: the positional parameters it may fill are paired already)
        left = [p.name for p in signature.parameters.values()
                if p.kind == inspect.Parameter.KEYWORD_ONLY and p.name not in bound.arguments]
        left += [p.name for p in signature.parameters.values()
                 if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    rest_param = [p.name for p in signature.parameters.values()
                  if p.kind == inspect.Parameter.VAR_KEYWORD]
    return [(p, item) for p in left for item in items] + [
        (p, d) for p in rest_param for d in spread]


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


