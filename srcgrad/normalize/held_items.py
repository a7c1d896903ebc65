"""An argument's items updated in place through a name of their own.

``h = st['h']; h *= 2`` changes the array the dict ``st`` holds, and a later
``st['h']`` reads the changed one; so does ``for w in ws: w *= 0.5`` for the
list ``ws``.  For a dict or list the function makes, srcgrad follows that
change through the container (:mod:`..analysis.aliasing` stores the updated
array back where the container holds it, ``held_at``).  An argument is the
caller's: the generated code must leave it and its arrays alone, so it works
on a copy of its own (``st = private_copy(st)``: the dict and the arrays it
holds), which the alias check then takes for a container of the function's,
as it takes one the function made (``container_copy`` on that statement).

Only for an argument that is a list or tuple (the call says so:
``sequence_params``), read only by its items (copied as a list: a tuple's
items are stored back into it, the tuple never seen), or is read like a dict (every subscript of it a string
key), every update reaching it a ``name op= v`` of another name, and no name
rebinding it.  Whatever it turns out to hold, the store back is decided as
the code runs (``held_at``), and sharing it cannot follow is refused there.

    >>> import gast
    >>> from .argument_updates import ArgumentUpdates
    >>> func = gast.parse(
    ...     "def f(st, x):\\n"
    ...     "    h = st['h']\\n"
    ...     "    h *= 2\\n"
    ...     "    return np.sum(st['h'] * x)\\n").body[0]
    >>> update = func.body[1]
    >>> found = ArgumentUpdates(checked={'st'}, updates={'st': [(update, 'h')]})
    >>> held_item_updates(func, found, ())
    {'st'}
    >>> held_item_updates(func, ArgumentUpdates(checked={'st'}, updates={
    ...     'st': [(update, 'st')]}), ())
    set()
"""

from __future__ import annotations

import gast

from ..ir.syntax import walk
from .argument_updates import ITEMS


def held_item_updates(func, found, sequence_params) -> set[str]:
    """The parameters of ``func`` whose items it updates only through names
    of their own (``found``: :func:`.argument_updates.argument_updates`'s
    look), each a list or tuple passed (``sequence_params``) or read like a
    dict: to copy at the entry and follow as a container (module docstring)."""
    stored = {n.id for n in walk(func) if isinstance(n, gast.Name)
              and isinstance(n.ctx, (gast.Store, gast.Del))}
    held = set()
    for param in sorted(found.checked - found.direct - found.shared - stored):
        updates = found.updates.get(param, ())
        if updates and all(isinstance(node, gast.AugAssign) and isinstance(
                node.target, gast.Name) and node.target.id == name != param
                for node, name in updates) \
                and ((param in sequence_params and _read_by_items(func, param))
                     or _read_like_a_dict(func, param)):
            held.add(param)
    for param in held:  # copied whole: checked at the entry, not where each update runs
        others = {q for pairs in found.guards.values() for p, q in pairs
                  if p == param and q not in (ITEMS, param)}
        found.others[param] = sorted(set(found.others.get(param, ())) | others)
        found.guards = {k: [pq for pq in v if pq[0] != param]
                        for k, v in found.guards.items()}
        node, name = found.updates[param][0]
        found.items.setdefault(param, (node, name, None))  # [y, y]: two items, one array
        found.shared.add(param)  # its items are what the others must not share
    return held


def _read_by_items(func, param) -> bool:
    """Whether every read of ``param`` in ``func`` takes an item of it, loops over
    it or takes its length: then a tuple passed may be worked on as a list
    (``list(tp)``, which the updated items are stored back into), the tuple
    itself never seen."""
    allowed = set()
    for node in walk(func):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name):
            allowed.add(id(node.value))
        elif isinstance(node, (gast.For, gast.comprehension)) and isinstance(
                node.iter, gast.Name):
            allowed.add(id(node.iter))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id == "len" and len(node.args) == 1:
            allowed.add(id(node.args[0]))
    return all(id(n) in allowed for n in walk(func) if isinstance(n, gast.Name)
               and n.id == param and isinstance(n.ctx, gast.Load))


def _read_like_a_dict(func, param) -> bool:
    """Whether ``param`` is subscripted in ``func``, each time by a string."""
    subscripts = [n for n in walk(func) if isinstance(n, gast.Subscript)
                  and isinstance(n.value, gast.Name) and n.value.id == param]
    return bool(subscripts) and all(
        isinstance(n.slice, gast.Constant) and isinstance(n.slice.value, str)
        for n in subscripts)
