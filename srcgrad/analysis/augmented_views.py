"""In-place updates of a view by basic indexing, written as the element writes they are.

``row = Y[k]; row *= 2`` changes ``Y`` through the view ``row`` in NumPy;
srcgrad's normal form computes ``row_1 = row * 2``, a new array.  This pass
writes such an update as ``row[...] = row_1`` where ``row`` is an array as the
code runs, which the alias check of :mod:`.aliasing` then writes back into
``Y`` (:func:`.refresh.write_back`); a NumPy scalar is rebound as Python
does.  Split from :mod:`.slot_writes`.

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize, unparse_body
    >>> def f(x):
    ...     y = x * 1.0
    ...     v = y[1:3]
    ...     v *= 2.0
    ...     v += y[0]
    ...     return np.sum(y)
    >>> program = normalize(parse_function(f))
    >>> augmented_views(program, list(ir.walk_statements(program.body)), set())
    True
    >>> print(unparse_body(program))
    y = x * 1.0
    v = y[1:3]
    v_3 = v * 2.0
    window_1 = is_window(v)
    if window_1:
        v[...] = v_3
        v_1 = v
    else:
        v_1 = +v_3
    t1 = y[0]
    v_4 = v_1 + t1
    if window_1:
        v[...] = v_4
        v_2 = v
    else:
        v_2 = +v_4
    t2 = np.sum(y)
    return t2
"""

from __future__ import annotations

import operator

import gast

from .. import ir, runtime
from ..ir.syntax import clone, helper_ref
from . import paths
from .refresh import undo_kind
from .sharing import is_view
from .slot_writes import array_names, bindings

__all__ = ["augmented_views"]


def augmented_views(program, statements, containers) -> bool:
    """``row = Y[k]; row *= 2`` (``for row in Y: row *= 2``): NumPy writes into the
    view, and so into ``Y``.  Where ``row`` is bound once, by basic indexing of
    a name that is no list, tuple or dict, just before (nothing between rebinds
    ``row``, ``Y`` or the index), the update is written as the element write it
    is, ``row[...] = row * 2``, which the alias check writes back into ``Y``
    (:func:`.refresh.write_back`) -- where ``row`` is an array as the code runs
    (``is_window``); a NumPy scalar (``Y`` 1-D) is rebound, as Python does.  It
    was refused, valid code (found by review).  Several updates of the view
    (``row *= a; row += b``), element writes between them, are each written so;
    only the first was (review 5).  A second update of the view where the
    first rebound the name (``v = y[1:3]; v *= 2.0; v += y[0]``: the
    normaliser's ``v_1 = v * 2.0``, then ``v_2 = v_1 + t``) writes into the
    view itself where the first did (its test: there ``v_1`` is ``v``), so the
    two are followed as one would be (reviewer s33, F2).  Returns whether it
    changed the program."""
    blocks = paths.blocks_of(program.body)
    arrays = array_names(program, statements)
    defs = bindings(statements)
    loops = paths.enclosing_loops(program.body)
    order = {id(s): i for i, s in enumerate(statements)}
    # the augmented updates, by the name each updates (row *= 2; row += x: both
    # write into the view row, one after the other)
    augmented = {id(s): s.augmented for s in statements
                 if getattr(s, "augmented", None) is not None and isinstance(s, gast.Assign)
                 and not ir.is_update(s)}
    written, changed = set(), False
    # v_1 -> (the test, the view's name v, its statement): v_1 = v * 2.0 written
    # into the view v where the test holds, so that v_1 is v there
    chained: dict[str, tuple] = {}
    for update in statements:
        x = getattr(update, "augmented", None)
        if x is None or not isinstance(update, gast.Assign) or ir.is_update(update) \
                or not isinstance(update.targets[0], gast.Name):
            continue
        made = [d for d in defs.get(x, []) if not ir.is_update(d) and augmented.get(id(d)) != x]

        def own_view(stmt):
            """The last binding of ``x`` before ``stmt`` in ``stmt``'s block, if any."""
            found = [d for d in made if blocks[id(d)][0] is blocks[id(stmt)][0]
                     and order[id(d)] < order[id(stmt)]]
            return found[-1] if found else None
        earlier = chained.get(x) if len(made) == 1 and id(made[0]) in written \
            and blocks[id(made[0])][0] is blocks[id(update)][0] \
            and order[id(made[0])] < order[id(update)] else None
        # (for row in Y: ... in two loops: each loop's row = t[k] is its updates' view)
        view = earlier[2] if earlier else made[0] if len(made) == 1 else own_view(update)
        # (Y[k], or all of Y: Bt = B.T, v = B.reshape(-1), which the write-back undoes)
        if not (isinstance(view, gast.Assign) and is_view(view) and (
                view.op.primitive is operator.getitem or undo_kind(view) is not None)):
            continue
        _index_the_array(view, defs, arrays, order, loops)
        into = earlier[1] if earlier else x  # the name of the view written into
        base, operands = view.op.args[0].id, view.op.args[1:]
        if base not in arrays or any(isinstance(n, (gast.List, gast.Compare))
                                     for a in operands for n in gast.walk(a)):
            continue  # (an argument's view stays refused: the caller's array would change)
        block = blocks[id(view)][0]
        if blocks[id(update)][0] is not block or block.index(view) > block.index(update) \
                or any(own_view(d) is None if blocks[id(d)][0] is not block
                       else block.index(d) < block.index(view)
                       for d in defs[x] if augmented.get(id(d)) == x):
            # (every update of the view in its block, after it: one that runs on
            # what an earlier iteration bound is the alias check's to refuse; one
            # in another block, after a binding of its own there, updates that)
            continue
        kept = {x, into, base, *(n for a in operands for n in ir.names_in(a))}
        # (an earlier update of the view, written into it already -- its test and
        # branch -- leaves row the view, or, a number, rebound by itself)
        between = [s for s in block[block.index(view) + 1:block.index(update)]
                   if id(s) not in written]
        # (row[0] = v, Y[j] = v write into the arrays, and bind nothing)
        if any(augmented.get(id(s)) == x for s in between) \
                or any(kept & set(ir.assigned_by(s)) for s in ir.walk_statements(between)
                       if not ir.is_update(s)):
            continue
        target, node = update.targets[0].id, update.op.node
        value = program.namer.fresh(x)
        update.targets = [ir.name(value, store=True)]
        update.augmented = None
        flag = earlier[0] if earlier else program.namer.fresh("window")
        test = ir.assign(flag, gast.Call(func=helper_ref("is_window"), args=[ir.name(x)],
                                         keywords=[]))
        test.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
        every = gast.Constant(value=Ellipsis, kind=None)
        write = ir.assign(gast.Subscript(value=ir.name(into), slice=every, ctx=gast.Store()),
                          ir.name(value))
        write.op = ir.Op(operator.setitem, [ir.name(into), clone(every), ir.name(value)], {},
                         node, "element assignment")
        write.user_target = getattr(update, "user_target", None)
        inside, outside = [write], []
        for stmt_, source in ((inside, into), (outside, value)):
            if source != target:
                # (the number rebound, +row_1: a value of its own, no view for the
                # write-back to take row for)
                bind = ir.assign(target, ir.name(source) if stmt_ is inside else gast.UnaryOp(
                    op=gast.UAdd(), operand=ir.name(source)))
                bind.op = ir.Op(operator.pos, [ir.name(source)], {}, node, "assignment")
                if stmt_ is outside:
                    # a number, no window on the base: a later update of the view
                    # (row += x) finds row the view where it is an array
                    bind.refresh_of = bind
                stmt_.append(bind)
        branch = gast.If(test=ir.name(flag), body=inside, orelse=outside)
        for made_ in (test, write, branch, *inside[1:], *outside):
            gast.copy_location(made_, update)
        at = block.index(update)
        block[at + 1:at + 1] = [branch] if earlier else [test, branch]
        written.update((id(update), id(test), id(branch)))
        chained[target] = (flag, into, view)
        changed = True
    return changed


def _index_the_array(view, defs, arrays, order, loops) -> None:
    """``for row in Y`` of an array ``Y`` runs ``t = sequence(Y)`` (``Y`` bound
    by ``X.copy()``, perhaps a list's copy, is listed first), ``row = t[k]``:
    where ``Y`` is an array (``arrays``) and not rebound while the loop runs,
    ``t`` is ``Y`` itself, so the view is written ``row = Y[k]``, the row of
    ``Y`` that :func:`augmented_views` writes an update of back into ``Y``
    (reviewer s33, F5: ``for row in Y: row -= row.mean()`` was refused)."""
    base = view.op.args[0].id
    made = defs.get(base, [])
    if len(made) != 1 or getattr(made[0], "op", None) is None or ir.is_update(made[0]) \
            or made[0].op.primitive is not runtime.sequence \
            or not isinstance(made[0].op.args[0], gast.Name):
        return
    listed, array = made[0], made[0].op.args[0].id
    # (where the update stays refused, the message says to update Y[i] by index)
    node = getattr(listed.op, "node", None)
    view.loop_item_of = node.args[0] if isinstance(node, gast.Call) and node.args else array
    if array not in arrays:
        return
    running = loops.get(id(view), set()) - loops.get(id(listed), set())
    if not running or any(order[id(listed)] < order[id(d)] < order[id(view)]
                          or loops.get(id(d), set()) & running for d in defs[array]):
        return  # (no loop, or Y rebound after t = sequence(Y) while it runs)
    view.value.value = gast.copy_location(ir.name(array), view.value.value)
    view.op.args[0] = ir.name(array)
