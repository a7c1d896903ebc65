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
        self.namer.user_names[part] = source_of(target.value)  # messages: d['h'][1], not part
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

    def part_append(self, stmt) -> bool:
        """``log['trace'].append(v)``, ``hist[0].append(v)``, ``d.setdefault(k,
        []).append(v)``: appending to a list reached through an index (or a
        call) rather than by name.  Written as Python runs it, ``part =
        log['trace']; part.append(v)`` -- the list taken once, then appended to
        -- which the alias check follows into the container that holds it
        (analysis/slot_writes.py element_writes: a copy appended to and stored
        back, the other names for the list bound to it or refused), as it does
        that code written out.  Returns whether ``stmt`` was such an append.

            >>> from ..frontend.parse import parse_function
            >>> from .normalizer import normalize, unparse_body
            >>> def f(x):
            ...     log = {'trace': []}
            ...     log['trace'].append(x * 2.0)
            ...     return log
            >>> print(unparse_body(normalize(parse_function(f))))
            t1 = []
            log = {'trace': t1}
            part = log['trace']
            t2 = x * 2.0
            part.append(t2)
            return log
        """
        call = stmt.value if isinstance(stmt, gast.Expr) else None
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "append" and len(call.args) == 1 and not call.keywords
                and not isinstance(call.args[0], gast.Starred)):
            return False
        receiver = call.func.value
        setdefault = isinstance(receiver, gast.Call) and isinstance(receiver.func, gast.Attribute) \
            and receiver.func.attr == "setdefault" and isinstance(receiver.func.value, gast.Name) \
            and receiver.func.value.id in self.dict_names and len(receiver.args) in (1, 2) \
            and not receiver.keywords and not any(isinstance(a, gast.Starred)
                                                  for a in receiver.args)
        if not (isinstance(receiver, gast.Subscript) or setdefault):
            return False
        if setdefault:
            receiver = self.set_default(receiver)
        part = self.namer.fresh("part")
        self.locals.add(part)
        store = gast.Name(id=part, ctx=gast.Store(), annotation=None, type_comment=None)
        self.statement(gast.copy_location(gast.Assign(
            targets=[gast.copy_location(store, receiver)], value=clone(receiver),
            type_comment=None), stmt))
        appended = gast.copy_location(gast.Call(func=gast.copy_location(gast.Attribute(
            value=gast.copy_location(ir.name(part), receiver), attr="append",
            ctx=gast.Load()), call.func), args=call.args, keywords=[]), call)
        self.statement(gast.copy_location(gast.Expr(value=appended), stmt))
        self.out[-1].user_target = source_of(call.func.value)  # messages: log['trace']
        return True

    def set_default(self, call):
        """``d.setdefault(k, v)`` on a local dict ``d`` as Python runs it: ``k``
        and ``v`` evaluated once, in order, then ``if k not in d: d[k] = v``;
        its value is the item ``d[k]`` (returned, as an index of ``d``), which
        the dataflow then follows as any other item of ``d``."""
        d = call.func.value
        held = []
        for arg, role in zip([*call.args, gast.Constant(value=None, kind=None)], ("key",
                                                                                 "default")):
            if not isinstance(arg, (gast.Name, gast.Constant)):  # (read twice below)
                name = self.namer.fresh(role)
                self.locals.add(name)
                self.statement(gast.copy_location(gast.Assign(targets=[gast.copy_location(
                    gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None),
                    arg)], value=clone(arg), type_comment=None), arg))
                arg = gast.copy_location(ir.name(name), arg)
            held.append(arg)
        key, default = held
        item = gast.copy_location(gast.Subscript(value=clone(d), slice=clone(key),
                                                 ctx=gast.Store()), call)
        self.statement(gast.copy_location(gast.If(
            test=gast.Compare(left=clone(key), ops=[gast.NotIn()], comparators=[clone(d)]),
            body=[gast.copy_location(gast.Assign(targets=[item], value=clone(default),
                                                 type_comment=None), call)],
            orelse=[]), call))
        return gast.copy_location(gast.Subscript(value=clone(d), slice=clone(key),
                                                 ctx=gast.Load()), call)

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

    def written_view(self, target) -> bool:
        """Whether ``target`` is ``y.T[i]`` (or ``y.transpose()[i]``,
        ``y.reshape(...)[i]``, ``y.swapaxes(...)[i]``, ``y.view()[i]``,
        ``y.ravel()[i]``) on a local ``y``: a write through a view of the
        whole of ``y`` by its shape, which :meth:`view_assign` names."""
        view = target.value
        if isinstance(view, gast.Call) and not view.keywords \
                and isinstance(view.func, gast.Attribute) \
                and view.func.attr in ("transpose", "reshape", "swapaxes", "view", "ravel") \
                and not any(isinstance(a, gast.Starred) for a in view.args):
            view = view.func
        elif not (isinstance(view, gast.Attribute) and view.attr == "T"):
            return False
        return isinstance(view.value, gast.Name) and view.value.id in self.locals \
            and view.value.id not in self.params  # (an argument's: refused, located)

    def named_view(self, target, stmt):
        """``t = y.T`` for the target ``y.T[1]``: the view's new local name."""
        view = self.namer.temp()
        self.locals.add(view)
        store = gast.Name(id=view, ctx=gast.Store(), annotation=None, type_comment=None)
        self.statement(located(gast.Assign(targets=[store], value=target.value,
                                           type_comment=None), stmt))
        return located(gast.Subscript(value=ir.name(view), slice=target.slice,
                                      ctx=gast.Store()), target)

    def view_augmented(self, stmt):
        """``y.T[1] += v`` as ``t = y.T; t[1] += v`` (:meth:`view_assign`)."""
        made = located(gast.AugAssign(target=self.named_view(stmt.target, stmt), op=stmt.op,
                                      value=stmt.value), stmt)
        made.user_target = source_of(stmt.target)
        self.statement(made)

    def view_assign(self, first, value, stmt):
        """``y.T[1] = v`` as ``t = y.T; t[1] = v``: the write through a named
        view, which analysis/refresh.py writes back into ``y`` (behind its
        run-time test that ``t`` is that window on ``y``: a reshape that had
        to copy changes nothing in ``y``, as in NumPy)."""
        self.assign([self.named_view(first, stmt)], value, stmt)

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
