"""Views read after an update of their base: re-derived, not refused.

``r = y[1:]; y[2] = 0.0; ... r`` -- NumPy changes ``r`` with ``y``, because ``r``
is a window on ``y``'s memory.  The dataflow srcgrad differentiates does not
see that: ``r`` keeps the value it had.  So, right after the update, the view is
taken again from the updated base::

    shared = taken_again(r, y[1:], y, 2, ...)  # before: still that window? (else: sees y[2]?)
    y[2] = 0.0
    if shared:
        r = y[1:]                    # after it: what NumPy's r now shows

The same for ``y += v``, which srcgrad compiles as ``y = y + v`` (a new array):
a view of the old ``y`` is taken again from the new one.  A view of a view
(``s = r.T``) is taken again after the view it is made from.

Sound because the re-derived value is exactly what the view shows after the
update whenever the view is still a window on the base, which the run-time test
establishes: the view is assigned once (so ``r`` at the update is the value of
its one definition), that definition runs on every path to the update (it is
earlier in the update's block or in a block around it), and its other operands
(indices, shapes) are constants or names assigned once, so taking the view
again takes the same window.  Where the test fails -- the "view" was a copy
(``y[0]`` of a 1-D array is a number, ``reshape`` may copy) -- nothing changes,
as nothing changes in NumPy.  Other sharing (a view made in an earlier loop
iteration, a list holding the array) is left to the alias check.

    >>> import numpy as np
    >>> from .frontend import parse_function
    >>> from .normalize import normalize, unparse_body
    >>> from .aliasing import check_aliases
    >>> def f(x):
    ...     y = x * 1.0
    ...     r = y[1:]
    ...     y[2] = 0.0
    ...     return np.sum(r)
    >>> program = normalize(parse_function(f))
    >>> check_aliases(program)
    >>> print(unparse_body(program))
    y = x * 1.0
    r = y[1:]
    shared = taken_again(r, y[1:], y, 2, "'y' is updated in place while 'r' ...", ...)
    y[2] = 0.0
    if shared:
        r = y[1:]
    t1 = np.sum(r)
    return t1
"""

from __future__ import annotations

import operator

import gast

from . import ir
from .syntax import clone, helper_ref


def write_back(statements, views, counts, blocks, namer, dominates, containers) -> set[int]:
    """After each element assignment to a view taken by basic indexing (``r =
    y[1:]``, then ``r[0] = v``), write the view back into its base::

        shared = same_window(r, y[1:])
        r[0] = v
        if shared:
            y[1:] = r

    In NumPy the update changed ``y`` through ``r``; the write-back changes
    nothing in memory (``y[1:]`` is ``r``) and tells the dataflow that ``y``
    changed.  Returns the ids of the updates written back."""
    made = {ir.target_names(v)[0]: v for v in views}
    done = set()
    for stmt in statements:
        if not (ir.is_update(stmt) and getattr(stmt, "op", None) is not None
                and stmt.op.primitive is operator.setitem):
            # (r += v, compiled as r_1 = r + v, leaves r_1 a new array where NumPy's r
            # stays a window on y: that case is left to the alias check)
            continue
        old = ir.target_names(stmt)[0]
        view = made.get(old)
        if view is None or counts.get(old, 0) != 1 or not dominates(view, stmt) \
                or not _steady_operands(view, counts) or not _basic_getitem(view) \
                or view.op.args[0].id in containers:
            continue  # (an item of a list is the array it holds, not a window on it)
        base, index = view.op.args[0].id, view.op.args[1]
        if counts.get(base, 0) > 1:
            continue  # rebound somewhere: the view may belong to an earlier value
        block = blocks[id(stmt)][0]
        flag, test = _test(namer, "shared", "same_window",
                           [ir.name(old), _rebased(view.value, base, base)], view.op.node, stmt)
        back = ir.assign(gast.Subscript(value=ir.name(base), slice=clone(index),
                                        ctx=gast.Store()), ir.name(old))
        back.op = ir.Op(operator.setitem, [ir.name(base), clone(index), ir.name(old)], {},
                        stmt.op.node, "element assignment")
        gast.copy_location(back, stmt)
        branch = gast.copy_location(gast.If(test=ir.name(flag), body=[back], orelse=[]), stmt)
        at = block.index(stmt)
        block[at + 1:at + 1] = [branch]
        block[at:at] = [test]
        done.add(id(stmt))
    return done


def _basic_getitem(view) -> bool:
    """``y[1:]``, ``y[0]``, ``y[:, 2]``: indexing that gives a window on ``y``."""
    if view.op.primitive is not operator.getitem:
        return False
    return not any(isinstance(n, (gast.List, gast.Compare)) for n in gast.walk(view.op.args[1]))


def chain(other, x, made, counts, dominates) -> list | None:
    """The view statements to take again, base first, so that ``other`` shows an
    update of ``x``; None if ``other`` is not a view of ``x`` this can handle."""
    out, name = [], other
    while True:
        view = made.get(name)
        # (a view taken again after an earlier update counts as its first definition:
        # every value the name holds is that view of the current base, or a copy)
        original = getattr(view, "refresh_of", view)
        if view is None or view.op.primitive is operator.pos or counts.get(name, 0) != 1 \
                or not dominates(original) or not _steady_operands(original, counts):
            return None  # (a plain copy z = y is the same object: see identical)
        out.append(view)
        base = view.op.args[0].id
        if base == x:
            return out[::-1]
        name = base


def _steady_operands(view, counts) -> bool:
    """The view's operands besides its base are constants or names assigned once."""
    rest = [n for arg in view.op.args[1:] for n in ir.names_in(arg)]
    rest += [n for value in view.op.kwargs.values() for n in ir.names_in(value)]
    return all(counts.get(n, 0) <= 1 for n in rest)


def insert(update, views, old, new, block, namer, check) -> None:
    """Around ``update`` (of the array named ``old`` before it, ``new`` after):
    test, for each view, whether it is still the window it was taken as, and take
    it again after the update where it is; where it is not, the test checks that
    it does not see the update either (``check``: the index, message and place
    that ``runtime.untouched`` needs), and raises if it does."""
    tests, refreshes, renamed = [], [], {old: new}
    for view in views:
        target, base = ir.target_names(view)[0], view.op.args[0].id
        flag, test = _test(namer, "shared", "taken_again",
                           [ir.name(target), _rebased(view.value, base, base), ir.name(old),
                            *check(target)], view.op.node, update)
        tests.append(test)
        again = ir.assign(target, _rebased(view.value, base, renamed.get(base, base)))
        again.op = ir.Op(view.op.primitive, [ir.name(renamed.get(base, base)), *view.op.args[1:]],
                         view.op.kwargs, view.op.node, view.op.label)
        gast.copy_location(again, view)
        again.refresh_of = getattr(view, "refresh_of", view)
        branch = gast.If(test=ir.name(flag), body=[again], orelse=[])
        refreshes.append(gast.copy_location(branch, update))
        renamed[target] = target
    at = block.index(update)
    block[at + 1:at + 1] = refreshes
    block[at:at] = tests


def identical(other, x, made) -> bool:
    """Whether ``other`` and ``x`` may be two names for one object through plain
    copies (``z = h = v``, ``w = x``): the copies among ``made``'s views."""
    edges: dict[str, set] = {}
    for name, view in made.items():
        if view is not None and view.op.primitive is operator.pos \
                and isinstance(view.value, gast.Name):
            base = view.value.id
            edges.setdefault(name, set()).add(base)
            edges.setdefault(base, set()).add(name)
    seen, todo = {x}, [x]
    while todo:
        for n in edges.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return other in seen and other != x


def insert_identities(update, names, old, new, block, namer, check) -> None:
    """Around ``update`` (of ``old``, named ``new`` after it): each of ``names``
    that is the very same array, list or dict as ``old`` is bound to ``new``
    after it (``z = h; h += 1.0``: NumPy changes the one array both names hold);
    one that is not is checked not to see the update (``check``, as for
    :func:`insert`)."""
    tests, again = [], []
    for name in names:
        flag, test = _test(namer, "same", "same_or_untouched",
                           [ir.name(name), ir.name(old), *check(name)], update, update)
        tests.append(test)
        rebind = ir.assign(name, ir.name(new))
        rebind.op = ir.Op(operator.pos, [ir.name(new)], {}, update, "assignment")
        rebind.refresh_of = rebind
        gast.copy_location(rebind, update)
        again.append(gast.copy_location(gast.If(test=ir.name(flag), body=[rebind], orelse=[]),
                                        update))
    at = block.index(update)
    block[at + 1:at + 1] = again
    block[at:at] = tests


def _test(namer, stem, helper, args, node, where):
    """``flag = helper(*args)``: a run-time test (opaque, never differentiated),
    placed at ``where``; returns the flag's name and the statement."""
    flag = namer.fresh(stem)
    test = ir.assign(flag, gast.Call(func=helper_ref(helper), args=args, keywords=[]))
    test.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
    return flag, gast.copy_location(test, where)


def _rebased(value, base, new):
    """``value`` (the view's expression) with its base ``base`` read as ``new``."""
    value = clone(value)
    for node in gast.walk(value):
        if isinstance(node, gast.Name) and node.id == base and isinstance(node.ctx, gast.Load):
            node.id = new
            break
    return value
