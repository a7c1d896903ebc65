"""Pop a list's cotangent in place where no other name can hold it.

The adjoint of ``ys.append(y)`` in a loop reads the last element of ``ys``'s
cotangent and drops it, ``d_ys = drop_last(d_ys)``: a new list of all the
other elements, each step, because another name might hold the list the
adjoint drops from (``d_zs = d_zs + d_ys`` leaves ``d_zs`` that very list when
it was zero).  That makes the adjoint of ``n`` appends ``n**2 / 2`` element
copies: 39 times the function's time at ``n = 32000`` where the rest of the
gradient costs 2-3 times it (issue 16, scope 5).

This pass writes ``d_ys = drop_last_in_place(d_ys)`` instead, which copies
the list once into a list only ``d_ys`` holds and pops from it from then on
(runtime/owned_lists.py), where every read of ``d_ys`` in the function is

* ``cotangent_at(d_ys, k)``: an element, never the list itself;
* ``d_ys = drop_last(d_ys)`` (or the in-place form): the name rebinds itself;
* ``d_ys = d_ys + e``: the sum is ``d_ys`` itself (``e`` zero), ``e`` (``d_ys``
  zero: not an owned list, ``e`` reads no owned name but in the forms above),
  or a new list.

Then no other name, container or call ever receives the list ``d_ys`` holds,
so popping it changes what no one else reads; and ``d_ys = d_ys +
getitem_grad(g, ys, k)`` (a read of ``ys[k]``, a list of zeros but one, added
element by element: O(len) a step) becomes ``d_ys = item_added_in_place(d_ys,
g, ys, k)``, which adds ``g`` at ``k`` of the owned list.  Sound for every policy and
loop: the condition is on the whole function, read as text, whatever the
order in which its statements run.  The popped elements are the same
objects ``drop_last`` keeps, so the gradient is bit for bit the same.  Tested
by tests/optimize/test_owned_lists.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> body = gast.parse(
    ...     "d_ys = unstack(d_t5, ys)\\n"
    ...     "for t in reversed(t1):\\n"
    ...     "    d_y = cotangent_at(d_ys, -1)\\n"
    ...     "    d_ys = drop_last(d_ys)\\n"
    ...     "    d_w = d_w + d_y * x[t]\\n").body
    >>> print(show_statements(pop_in_place(body)))
    d_ys = unstack(d_t5, ys)
    for t in reversed(t1):
        d_y = cotangent_at(d_ys, -1)
        d_ys = drop_last_in_place(d_ys)
        d_w = d_w + d_y * x[t]
    >>> shared = body + gast.parse("d_zs = d_zs + d_ys").body  # another name may get it
    >>> print(show_statements(pop_in_place(shared)[1:2]))
    for t in reversed(t1):
        d_y = cotangent_at(d_ys, -1)
        d_ys = drop_last(d_ys)
        d_w = d_w + d_y * x[t]
"""

from __future__ import annotations

import gast

from ..ir.syntax import helper_ref, statements_in, walk

_DROPS = ("drop_last", "drop_last_in_place")


def pop_in_place(body: list) -> list:
    """``body`` (a function's statements) with ``d = drop_last(d)`` written
    ``d = drop_last_in_place(d)`` for each name ``d`` that only the forms of
    the module docstring read.  Changes the statements in place; returns
    ``body``."""
    # a drop is an assignment, a statement: where none is, no node needs a look
    if all(_dropped(s) is None for stmt in body for s in statements_in(stmt)):
        return body
    nodes = [node for stmt in body for node in walk(stmt)]
    drops, harmless = {}, set()
    assign, call = gast.Assign, gast.Call
    for node in nodes:
        if type(node) is not assign and type(node) is not call:
            continue  # (the forms below are assignments and calls: most nodes are neither)
        name = _dropped(node)
        if name is not None:
            drops.setdefault(name, []).append(node)
            harmless.add(id(node.value.args[0]))
        elif _self_sum(node):
            harmless.add(id(node.value.left))
        elif _self_added(node):
            harmless.add(id(node.value.args[0]))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id == "cotangent_at" and node.args:
            harmless.add(id(node.args[0]))
    if not drops:
        return body
    escaped = set()
    for node in nodes:
        if isinstance(node, gast.Name) and node.id in drops and id(node) not in harmless \
                and not isinstance(node.ctx, (gast.Store, gast.Del)):
            escaped.add(node.id)
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            escaped.add(node.target.id)  # d += e: list.__iadd__ would extend the list
    for name, stmts in drops.items():
        for stmt in stmts:  # (a drop written in place before, escaping now: a copy again)
            stmt.value.func = helper_ref("drop_last" if name in escaped else "drop_last_in_place")
    for node in nodes:  # d_ys = d_ys + getitem_grad(g, ys, k): added at k, in place
        if _self_sum(node) and node.targets[0].id in drops \
                and node.targets[0].id not in escaped and _item_read(node.value.right):
            read = node.value.right
            node.value = gast.Call(func=helper_ref("item_added_in_place"),
                                   args=[node.value.left, *read.args], keywords=[])
    return body


def _dropped(node):
    """The name ``d`` where ``node`` is ``d = drop_last(d)``, else None."""
    if not (isinstance(node, gast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)):
        return None
    value, name = node.value, node.targets[0].id
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
            and value.func.id in _DROPS and len(value.args) == 1 and not value.keywords \
            and isinstance(value.args[0], gast.Name) and value.args[0].id == name:
        return name
    return None


def _self_added(node) -> bool:
    """Whether ``node`` is ``d = item_added_in_place(d, ...)`` (this pass's)."""
    return isinstance(node, gast.Assign) and len(node.targets) == 1 \
        and isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.Call) \
        and isinstance(node.value.func, gast.Name) \
        and node.value.func.id == "item_added_in_place" and node.value.args \
        and isinstance(node.value.args[0], gast.Name) \
        and node.value.args[0].id == node.targets[0].id


def _item_read(node) -> bool:
    """Whether ``node`` is ``getitem_grad(g, x, k)``."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "getitem_grad" and len(node.args) == 3 and not node.keywords


def _self_sum(node) -> bool:
    """Whether ``node`` is ``d = d + e``."""
    return isinstance(node, gast.Assign) and len(node.targets) == 1 \
        and isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.BinOp) \
        and isinstance(node.value.op, gast.Add) and isinstance(node.value.left, gast.Name) \
        and node.value.left.id == node.targets[0].id
