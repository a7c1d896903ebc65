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
update whenever the view is still that window on the base, which the run-time
test establishes on the view's current value: no static argument about the
view's history is needed for the value, only that the view statement runs on
every path to the update (it is earlier in the update's block or in a block
around it: the name is bound) and that no binding of the view's name or its
other operands (indices, shapes) lies on a path between them (see
:func:`.paths.undisturbed`: a path-sensitive test, so code that an early return
copied into both branches counts once), so taking the view again takes the
same window.  Where the test fails -- the "view" was a copy (``y[0]`` of a 1-D
array is a number, ``reshape`` may copy) -- nothing changes, as nothing changes
in NumPy, and the view must not see the update either (else the test raises).

The same test follows a view of *another* name that may be the same array
(``v = d['h'][1:]``, then ``t = d['h']; t += 1.0``): it compares ``v`` with the
same view of ``t`` (``window(t, 1:)``, ``window_by(t, 'reshape', 2, 2)``, None
where that view does not fit ``t``).  A list or dict holding the updated array,
or a view of it taken again, gets it stored back where it held it
(:func:`insert_holders`); another name for the very same array is bound to the
updated one (:func:`insert_identities`).

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize, unparse_body
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
import numpy as np

from .. import ir, runtime
from ..ir.syntax import SliceToCall, clone, helper_ref, source_of


def write_back(statements, views, steady, blocks, namer, dominates, containers,
               holders=None) -> set[int]:
    """After each element assignment to a view taken by basic indexing (``r =
    y[1:]``, then ``r[0] = v``), write the view back into its base::

        shared = same_window(r, y[1:])
        r[0] = v
        if shared:
            y[1:] = r

    In NumPy the update changed ``y`` through ``r``; the write-back changes
    nothing in memory (``y[1:]`` is ``r``) and tells the dataflow that ``y``
    changed.  Returns the ids of the updates written back.

    ``holders``: ``(arrays, user, filename)`` -- the names known to be arrays,
    the user's name for each name, the file: the test of a base that may be a
    tuple (an argument, ``a = t[0]``) refuses one, located, as it runs.
    """
    made: dict[str, list] = {}  # (for row in Y: ... in two loops: two views named row)
    for v in views:
        made.setdefault(ir.target_names(v)[0], []).append(v)
    done = set()
    for stmt in statements:
        if not (ir.is_update(stmt) and getattr(stmt, "op", None) is not None
                and stmt.op.primitive is operator.setitem):
            # (r += v, compiled as r_1 = r + v, leaves r_1 a new array where NumPy's r
            # stays a window on y: that case is left to the alias check)
            continue
        old = ir.target_names(stmt)[0]
        # the view that reaches the write: the last of its name on every path to it
        view = next((v for v in reversed(made.get(old, [])) if dominates(v, stmt)), None)
        if view is None or not steady(view, stmt) \
                or not (_basic_getitem(view) or _undone(view, old, namer) is not None) \
                or view.op.args[0].id in containers:
            continue  # (an item of a list is the array it holds, not a window on it)
        if not _basic_getitem(view):  # v = y.reshape(2, 3); v[0] = a: y[...] = reshaped v
            _write_back_whole(stmt, view, old, namer, blocks[id(stmt)][0])
            done.add(id(stmt))
            continue
        base, index = view.op.args[0].id, view.op.args[1]
        block = blocks[id(stmt)][0]
        flag, test = _test(namer, "shared", "same_window",
                           [ir.name(old), _rebased(view.value, base, base)], view.op.node, stmt)
        if holders is not None and base not in holders[0]:
            # (a base that may be a tuple, an argument: a = t[0]; a[1] = v is refused
            # as it runs there, located, instead of t[0] = a raising TypeError)
            test.value.keywords = _tuple_check(base, old, view, stmt, holders, statements)
        back = ir.assign(gast.Subscript(value=ir.name(base), slice=clone(index),
                                        ctx=gast.Store()), ir.name(old))
        back.op = ir.Op(operator.setitem, [ir.name(base), clone(index), ir.name(old)], {},
                        stmt.op.node, "element assignment")
        # (what the alias check's message about this write says: the user's update
        # of the view and what the view is of, not srcgrad's base t2 of for col in M.T)
        back.written_back = (old, _user_base(base, statements, holders[1])
                             if holders is not None else base, _source(base, statements) != base)
        if holders is not None and base not in holders[0]:
            # (a base that may be a list: u = L[0][1]; u[0] = v changes the item u
            # itself, which another name for it sees -- h in L = [[y, h]]: the
            # checks of this write-back test the item too, as it was written)
            back.written_from = (old, clone(stmt.op.args[1]))
        gast.copy_location(back, stmt)
        branch = gast.copy_location(gast.If(test=ir.name(flag), body=[back], orelse=[]), stmt)
        at = block.index(stmt)
        block[at + 1:at + 1] = [branch]
        block[at:at] = [test]
        done.add(id(stmt))
    return done


#: Views of a whole array by its shape (``v = y.reshape(2, 3)``), and how the
#: call that undoes each is written: ``v`` reshaped to ``y``'s shape, its axes
#: swapped back, transposed back, or ``v`` itself (``y.view()``).
_RESHAPES = (np.reshape, np.ndarray.reshape, np.ravel, np.ndarray.ravel)
_SWAPS = (np.swapaxes, np.ndarray.swapaxes)
_TRANSPOSES = (np.transpose, np.ndarray.transpose, np.ndarray.T)


def _undone(view, old, namer):
    """The statements making ``y``'s new value from the view ``old`` of it
    (``view``, a reshape, ravel, axis swap, transpose or ``view()`` of all of
    ``y``, C order) after an element of ``old`` is written, and that value's
    name; None for any other view."""
    args = view.op.args
    kind = undo_kind(view)
    base, node = args[0].id if kind is not None else None, view.op.node
    if kind == "reshape":
        shape = namer.fresh("shape")
        first = ir.assign(shape, gast.Call(func=_np("shape"), args=[ir.name(base)], keywords=[]))
        first.op = ir.Op(np.shape, [ir.name(base)], {}, node, "np.shape")
        value = namer.fresh(base)
        second = ir.assign(value, gast.Call(func=_np("reshape"),
                                            args=[ir.name(old), ir.name(shape)], keywords=[]))
        second.op = ir.Op(np.reshape, [ir.name(old), ir.name(shape)], {}, node, "np.reshape")
        return [first, second], value
    if kind == "swap":
        value = namer.fresh(base)
        back = ir.assign(value, gast.Call(func=_np("swapaxes"),
                                          args=[ir.name(old), *map(clone, args[1:])],
                                          keywords=[]))
        back.op = ir.Op(np.swapaxes, [ir.name(old), *map(clone, args[1:])], {}, node,
                        "np.swapaxes")
        return [back], value
    if kind == "transpose":
        value = namer.fresh(base)
        back = ir.assign(value, gast.Call(func=_np("transpose"), args=[ir.name(old)],
                                          keywords=[]))
        back.op = ir.Op(np.transpose, [ir.name(old)], {}, node, "np.transpose")
        return [back], value
    if kind == "view":
        return [], old
    return None


def undo_kind(view):
    """Which whole view of its base ``view`` is that :func:`_undone` can undo
    -- "reshape", "swap", "transpose", "view" -- or None."""
    prim, args = view.op.primitive, view.op.args
    if not args or not isinstance(args[0], gast.Name) or view.op.kwargs:
        return None
    if any(prim is p for p in _RESHAPES) and (prim in (np.ravel, np.ndarray.ravel)) == (
            len(args) == 1):
        return "reshape"
    if any(prim is p for p in _SWAPS) and len(args) == 3 \
            and all(isinstance(a, gast.Constant) for a in args[1:]):
        return "swap"
    if any(prim is p for p in _TRANSPOSES) and len(args) == 1:
        return "transpose"
    if prim is np.ndarray.view and len(args) == 1:
        return "view"
    return None


def _np(attr):
    return gast.Attribute(value=ir.name("np"), attr=attr, ctx=gast.Load())


def _write_back_whole(stmt, view, old, namer, block) -> None:
    """After ``stmt``, an element write into ``old``, a view of all of ``y`` by
    its shape (:func:`_undone`)::

        shared = same_window(v, y.reshape(2, 3))
        v[0] = a
        if shared:
            y_1 = np.reshape(v, np.shape(y))
            y[...] = y_1

    The write-back changes nothing in memory where ``v`` is that window on
    ``y`` (the run-time test), and tells the dataflow that ``y`` changed; where
    the view was a copy (a reshape that had to copy), nothing is written, as
    NumPy writes nothing into ``y``."""
    base = view.op.args[0].id
    made, value = _undone(view, old, namer)
    flag, test = _test(namer, "shared", "same_window",
                       [ir.name(old), _rebased(view.value, base, base)], view.op.node, stmt)
    everything = gast.Constant(value=Ellipsis, kind=None)
    back = ir.assign(gast.Subscript(value=ir.name(base), slice=everything, ctx=gast.Store()),
                     ir.name(value))
    back.op = ir.Op(operator.setitem, [ir.name(base), clone(everything), ir.name(value)], {},
                    stmt.op.node, "element assignment")
    back.written_back = (old, base, False)
    for s in (*made, back):
        gast.copy_location(s, stmt)
    branch = gast.copy_location(gast.If(test=ir.name(flag), body=[*made, back], orelse=[]),
                                stmt)
    at = block.index(stmt)
    block[at + 1:at + 1] = [branch]
    block[at:at] = [test]


def _source(base, statements) -> str:
    """The name ``base`` stands for where srcgrad made it from another as it is
    (``t1 = sequence(arrs)`` of ``for a in arrs``, ``t = +u``)."""
    source, made = base, {n: s for s in statements for n in ir.assigned_by(s)}
    while getattr(getattr(made.get(source), "op", None), "primitive", None) in (
            runtime.sequence, operator.pos) and isinstance(made[source].op.args[0], gast.Name):
        source = made[source].op.args[0].id
    return source


def _user_base(base, statements, user) -> str:
    """How the user wrote what ``base`` holds: ``M.T`` for the ``t2`` a loop
    ``for col in M.T`` runs over."""
    source = _source(base, statements)
    made = next((s for s in statements if source in ir.assigned_by(s)), None)
    op = getattr(made, "op", None)
    if op is not None and op.primitive is runtime.sequence and op.args \
            and not isinstance(op.args[0], gast.Name):
        return source_of(op.args[0])  # (t2 = sequence(M.T) in tangent code)
    return user(source)


def _tuple_check(base, old, view, stmt, holders, statements) -> list:
    """The keywords ``holder=base, message=..., where=...`` of the test before
    ``a[i] = v`` whose write-back ``t[k] = a`` a tuple ``t`` cannot take; the
    message in the user's names (``for a in arrs`` runs over srcgrad's
    ``t1 = sequence(arrs)`` by a counter of its own: 'an item of arrs')."""
    arrays, user, filename = holders
    source = _source(base, statements)
    shown, name = user(source), user(old)
    index = view.op.args[1]
    line, col = (getattr(stmt.op.node, "lineno", None) or getattr(stmt, "lineno", None),
                 getattr(stmt.op.node, "col_offset", None))
    if source != base:  # the loop's variable: no index the user wrote
        message = (f"'{name}[...] = ...' changes the array '{name}', an item of the tuple "
                   f"'{shown}', in place; srcgrad cannot follow that change into the tuple: "
                   f"hold the arrays in a list, or make new arrays and return them instead "
                   f"of changing these in place")
    else:
        item = source_of(view.op.node) if isinstance(view.op.node, gast.Subscript) \
            else f"{shown}[{source_of(index)}]"  # (a, b = t: t[0])
        message = (f"'{name}[...] = ...' changes the array '{name}', which is '{item}', an "
                   f"item of the tuple '{shown}', in place; srcgrad cannot follow that change "
                   f"into the tuple: hold the arrays in a list, or change a copy ({name} = "
                   f"{item}.copy()) and read '{name}' afterwards instead of '{item}'")
    where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (filename, line, col)],
                       ctx=gast.Load())
    return [gast.keyword(arg="holder", value=ir.name(base)),
            gast.keyword(arg="message", value=gast.Constant(value=message, kind=None)),
            gast.keyword(arg="where", value=where)]


def _basic_getitem(view) -> bool:
    """``y[1:]``, ``y[0]``, ``y[:, 2]``: indexing that gives a window on ``y``."""
    if view.op.primitive is not operator.getitem:
        return False
    return not any(isinstance(n, (gast.List, gast.Compare)) for n in gast.walk(view.op.args[1]))


def chain(other, x, made, steady, dominates, elements=frozenset(), rebase=False):
    """The view statements to take again, base first, so that ``other`` shows an
    update of ``x``, and the name the first of them is taken from; None if
    ``other`` is not a view this can handle.

    The views lead to ``x`` itself, or (with ``rebase``) to another name: a
    parameter, a copy, an item of a list -- which may hold the very array ``x``
    does (``r = d['h'][1:]``, then ``t = d['h']; t += v``).  The run-time test
    then compares the first view with the same view of ``x`` (``window(x, 1:)``,
    ``window_by(x, 'T')``; see :func:`_window`): whatever the other name was, a
    view that is exactly that window of ``x`` sees the update as the same window
    of the new ``x``.  (The list a loop runs over, ``sequence(xs)``, is no window
    and is never rebased.)"""
    out, name = [], other
    while True:
        view = made.get(name)
        # (a view taken again after an earlier update counts as its first definition:
        # every value the name holds is that view of the current base, or a copy)
        original = getattr(view, "refresh_of", view)
        if view is None or view.op.primitive is operator.pos or id(view) in elements \
                or not dominates(original) or not steady(original):
            break  # (a plain copy z = y is the same object: see identical)
        out.append(view)
        base = view.op.args[0].id
        if base == x:
            return out[::-1], x
        name = base
    if rebase and out and out[-1].op.primitive is not runtime.sequence:
        return out[::-1], name  # (the list a loop runs over is no window on an array)
    return None


def insert(update, views, roots, old, new, block, namer, check) -> None:
    """Around ``update`` (of the array named ``old`` before it, ``new`` after):
    test, for each view, whether it is still the window it was taken as, and take
    it again after the update where it is; where it is not, the test checks that
    it does not see the update either (``check``: the index, message and place
    that ``runtime.untouched`` needs), and raises if it does.  ``roots`` maps the
    first view of a chain taken from another name than ``old`` to that name (see
    :func:`chain`): it is compared with the window of ``old``, and taken again
    from ``new``."""
    tests, refreshes, renamed = [], [], {old: new}
    for view in views:
        target, base = ir.target_names(view)[0], view.op.args[0].id
        # the first view of a chain that leads to another name than ``old``: compared
        # with the window of ``old``, taken again from ``new`` (see chain); it, or a
        # view taken again so before, may not fit the array (``y[2]`` of a shorter
        # one): window() gives None there
        first = roots.get(id(view), old) != old
        rebased = first or getattr(view, "rebased", False)
        if rebased:
            window = _window(view, old if first else base)
        else:
            window = _rebased(view.value, base, base)
        base_after = new if first else renamed.get(base, base)
        flag, test = _test(namer, "shared", "taken_again",
                           [ir.name(target), window, ir.name(old), *check(target)],
                           view.op.node, update)
        tests.append(test)
        again = ir.assign(target, _rebased(view.value, base, base_after))
        again.op = ir.Op(view.op.primitive, [ir.name(base_after), *view.op.args[1:]],
                         view.op.kwargs, view.op.node, view.op.label)
        gast.copy_location(again, view)
        again.refresh_of = getattr(view, "refresh_of", view)
        again.rebased = rebased
        branch = gast.If(test=ir.name(flag), body=[again], orelse=[])
        refreshes.append(gast.copy_location(branch, update))
        renamed[target] = target
    at = block.index(update)
    block[at + 1:at + 1] = refreshes
    block[at:at] = tests


def insert_holders(update, held, old, new, block, namer, check) -> None:
    """Around ``update`` (of the array named ``old`` before it, ``new`` after): for
    each ``(container, item)`` in ``held`` -- a list or dict that may hold that
    very array (``for w in ws: w *= 0.5``, ``hist.append(h); h += v``), or a view
    of it that is taken again (``hist = [z[2]]``) -- find the key it is held at,
    and store the updated array, or the view taken again, there after the
    update, as NumPy's container shows it::

        key = held_at(ws, w, w, None, ...)   # before: None if ws does not hold w
        w = w * 0.5
        if key is not None:
            ws[key] = w

    Sharing it cannot follow (the array held twice, another item seeing it, a
    nested container) raises at run time (``check``: the index, message and
    place)."""
    tests, stores = [], []
    for container, item in held:
        index, *rest = check(container)
        key, test = _test(namer, "key", "held_at",
                          [ir.name(container), ir.name(item), ir.name(old), index, *rest],
                          update, update)
        tests.append(test)
        value = new if item == old else item
        store = ir.assign(gast.Subscript(value=ir.name(container), slice=ir.name(key),
                                         ctx=gast.Store()), ir.name(value))
        store.op = ir.Op(operator.setitem, [ir.name(container), ir.name(key), ir.name(value)],
                         {}, update.op.node if getattr(update, "op", None) else update,
                         "element assignment")
        gast.copy_location(store, update)
        held_ = gast.Compare(left=ir.name(key), ops=[gast.IsNot()],
                             comparators=[gast.Constant(value=None, kind=None)])
        stores.append(gast.copy_location(gast.If(test=held_, body=[store], orelse=[]), update))
    at = block.index(update)
    block[at + 1:at + 1] = stores
    block[at:at] = tests


def identical(other, x, copies) -> bool:
    """Whether ``other`` and ``x`` may be two names for one object through plain
    copies (``z = h = v``, ``w = x``): ``copies`` are the (name, source) pairs of the
    copies in effect."""
    edges: dict[str, set] = {}
    for name, base in copies:
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
        rebind.refresh_of = rebind  # not a new definition of the name (see _undisturbed)
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


def _window(view, on):
    """The run-time expression of ``view`` taken from ``on`` instead of its own base,
    None where it does not fit (``window(y, 2)`` for ``r = x[2]``; ``window_by(y,
    'reshape', 2, 2)`` for ``r = x.reshape(2, 2)``; ``window_by(y, np.transpose)``)."""
    value = view.value
    if view.op.primitive is operator.getitem:
        index = SliceToCall().visit(clone(view.op.args[1]))
        return gast.Call(func=helper_ref("window"), args=[ir.name(on), index], keywords=[])
    if isinstance(value, gast.Attribute):  # x.T
        args, keywords = [gast.Constant(value=value.attr, kind=None)], []
    elif isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and isinstance(value.func.value, gast.Name) \
            and value.func.value.id == view.op.args[0].id:  # x.reshape(2, 2)
        args = [gast.Constant(value=value.func.attr, kind=None), *map(clone, value.args)]
        keywords = [clone(k) for k in value.keywords]
    else:  # np.transpose(x), np.reshape(x, (2, 2))
        args = [clone(value.func), *map(clone, value.args[1:])]
        keywords = [clone(k) for k in value.keywords]
    return gast.Call(func=helper_ref("window_by"), args=[ir.name(on), *args], keywords=keywords)


def _rebased(value, base, new):
    """``value`` (the view's expression) with its base ``base`` read as ``new``."""
    value = clone(value)
    for node in gast.walk(value):
        if isinstance(node, gast.Name) and node.id == base and isinstance(node.ctx, gast.Load):
            node.id = new
            break
    return value
