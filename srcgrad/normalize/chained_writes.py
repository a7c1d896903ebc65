"""``y[a][b] = v``: a write into a part of ``y`` (a list's item, an array's view).

Python's chained assignment changes the part ``y[a]`` in place, and ``y`` sees
it through that part: a row of an array, an item of a list or dict.  The
normaliser writes it as a copy of the part, written, then put back -- ``t =
snapshot(y[a]); t[b] = v; y[a] = t`` -- so that no view of ``y`` is left to
follow; the other names for the item (``state = [pos, vel]``) are followed by
the alias check (``slot_write``, analysis/aliasing.follow_slot_writes).  Where
the index is a name or an expression of names, ``y[a]`` may be NumPy's copy
(a mask, an integer array) whose write Python loses: ``view_index`` checks it
as the code runs.  Mixed into the normaliser (see :mod:`.statements`).

    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def rows(x, t):
    ...     Y = x * 1.0
    ...     Y[t][0] = 2.0
    ...     return Y
    >>> print(unparse_body(normalize(parse_function(rows))))  # doctest: +ELLIPSIS
    Y = x * 1.0
    view_index(Y, t, 'Y[t]', (...))  # the write below reaches Y if Y[t] is a view
    t2 = Y[t]
    t1 = snapshot(t2)
    t1[0] = 2.0
    Y[t] = t1
    return Y
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import clone, constant, helper_ref, located, source_of, walk


class ChainedWrites:
    """``y[a][b] = v`` on a local ``y`` (mixed into the normaliser)."""

    def chained_assign(self, first, value, stmt):
        """``y[a][b] = v`` as ``t = snapshot(y[a]); t[b] = v; y[a] = t``: a copy
        of the part (no view of ``y`` to follow), written, then put back."""
        part, outer = self.namer.temp(), first.value
        self.check_view_index(outer, stmt)
        self.locals.add(part)
        store = gast.Name(id=part, ctx=gast.Store(), annotation=None, type_comment=None)
        copied = gast.Call(func=helper_ref("snapshot"), args=[clone(outer)], keywords=[])
        marks = []
        for made in (gast.Assign(targets=[store], value=copied, type_comment=None),
                     gast.Assign(targets=[gast.Subscript(
                         value=ir.name(part), slice=first.slice, ctx=gast.Store())],
                         value=value, type_comment=None),
                     gast.Assign(targets=[gast.Subscript(
                         value=clone(outer.value), slice=clone(outer.slice),
                         ctx=gast.Store())], value=ir.name(part), type_comment=None)):
            self.statement(located(made, stmt))
            marks.append(self.out[-1])
        # the item y[a] was copied: where y is a list, tuple or dict, the other
        # names for that item (lst = [z, z], state = [pos, vel]) must see the write
        # too -- the alias check follows or checks them (aliasing.follow_slot_writes)
        old = getattr(getattr(marks[0], "op", None), "args", None)
        if old and isinstance(old[0], gast.Name) and ir.is_update(marks[1]):
            marks[2].slot_write = (old[0].id, clone(marks[1].op.args[1]),
                                   source_of(outer), stmt)

    def chained_augmented(self, stmt):
        """``y[a][b] op= v`` as Python runs it: ``t = y[a]; t[b] op= v`` -- the
        part taken once, then its item updated in place (an array's element, or
        the array a list's item holds), which the alias check follows into ``y``
        as it follows ``t = d['h']; t[1] *= 3.0`` written out."""
        target = stmt.target
        part = self.namer.fresh("part")
        self.locals.add(part)
        store = gast.Name(id=part, ctx=gast.Store(), annotation=None, type_comment=None)
        self.statement(gast.copy_location(gast.Assign(
            targets=[gast.copy_location(store, target)], value=clone(target.value),
            type_comment=None), stmt))
        update = gast.copy_location(gast.AugAssign(target=gast.copy_location(gast.Subscript(
            value=gast.copy_location(ir.name(part), target), slice=clone(target.slice),
            ctx=gast.Store()), target), op=stmt.op, value=stmt.value), stmt)
        update.user_target = source_of(target)  # messages name y[a][b], not the part
        self.statement(update)

    def chained_write(self, target) -> bool:
        """Whether ``target`` is ``y[a][b]`` (or deeper) on a local ``y``, ``a`` a
        basic index -- an int, a name, a slice -- so that ``y[a]`` is the part of
        ``y`` (a view, or a list's item) that Python's assignment changes."""
        outer = target.value
        if not isinstance(outer, gast.Subscript):
            return False

        def basic(index):
            if isinstance(index, gast.Tuple):
                return all(basic(e) for e in index.elts)
            if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub):
                index = index.operand  # y[-1][j] = v
            if isinstance(index, gast.BinOp) and isinstance(
                    index.op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)):
                # y[t + 1][j] = v: a number, or an array (view_index checks, as it runs)
                return all(isinstance(side, (gast.Name, gast.BinOp)) or (
                    isinstance(side, gast.Constant) and type(side.value) is int) and basic(side)
                    for side in (index.left, index.right))
            # (a str key: a dict's item, st["h"][0] = v)
            return isinstance(index, (gast.Slice, gast.Name)) or (
                isinstance(index, gast.Constant) and type(index.value) in (int, str))

        root = outer
        while isinstance(root, gast.Subscript):
            if not basic(root.slice):
                return False
            root = root.value
        return isinstance(root, gast.Name) and root.id in self.locals

    def check_view_index(self, outer, node):
        """``view_index(y, a, message, where)`` before ``y[a][b] = v`` where ``a``
        is (or holds) a name: an int or a slice makes ``y[a]`` a view, which the
        write changes, but a mask or an integer array makes it NumPy's copy, and
        Python's write is lost -- the code below, which writes the part back into
        ``y``, would change ``y``; only the values can tell which."""
        if not any(isinstance(n, gast.Name) for n in walk(outer.slice)):
            return  # (y[0][j], y[1:][j]: a view)
        index = self.index(clone(outer.slice))
        if not any(isinstance(n, gast.Name) for n in walk(index)):
            return  # (i = 1; grid[i][0] = v: an int)
        where = constant((self.parsed.filename, getattr(node, "lineno", None),
                          getattr(node, "col_offset", None)))
        call = gast.Call(func=helper_ref("view_index"), args=[
            self.atom(clone(outer.value)), index, gast.Constant(value=source_of(outer), kind=None),
            where], keywords=[])
        guard = gast.copy_location(gast.Expr(value=call), node)
        guard.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
        guard.comment = f"the write below reaches {source_of(outer.value)} if {source_of(outer)} is a view"
        self.out.append(guard)
