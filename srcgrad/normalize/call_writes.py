"""Calls that write into an array or dict, as the writes srcgrad follows.

Part of :mod:`.statements` (a mixin of its normaliser), kept apart because
each rewrite answers one question -- what does this call leave in its first
argument? -- and writes that as an assignment:

- ``np.add.at(y, idx, v)`` / ``np.subtract.at`` / ``np.multiply.at``: the
  element updates, in order, for a list of int literals; ``y[...] =
  added_at(y, idx, v)`` (``multiplied_at``, ...) for any other index
  (runtime/scatter.py);
- ``np.put_along_axis(y, idx, v, axis)``: ``y[along_axis_index(y, idx, axis)]
  = v``, the assignment NumPy makes (runtime/picks.py);
- ``d.update({'a': x}, b=y)`` on a local dict: ``d['a'] = x; d['b'] = y``.

Before and after (the dict's update, as the item writes it is):

    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(x):
    ...     d = {'a': x}
    ...     d.update(b=x * 2.0)
    ...     return d['b']
    >>> print(unparse_body(normalize(parse_function(f))))
    d = {'a': x}
    t1 = x * 2.0
    d['b'] = t1
    t2 = d['b']
    return t2
"""

from __future__ import annotations

import gast
import numpy as np

from .. import ir
from ..ir.syntax import clone, helper_ref, walk


def constant_of_int(node):
    """The int a literal (``2``, ``-1``) stands for; None for anything else."""
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) \
            and isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


def load_np(ufunc_ref):
    """``np`` in ``np.add.at``: the module the call named (``numpy.add.at``: numpy)."""
    return clone(ufunc_ref.value)


def _held_root(y):
    """The local name ``y`` is or is an item of: ``S`` for ``S['acc']`` or
    ``L[1][0]`` (keys and indices of names and constants, evaluated twice by
    the rewrite, and no list index, whose item NumPy copies); None otherwise."""
    node = y
    while isinstance(node, gast.Subscript):
        if any(isinstance(n, (gast.List, gast.Call, gast.NamedExpr)) for n in walk(node.slice)):
            return None
        node = node.value
    return node if isinstance(node, gast.Name) else None


class CallWrites:
    """Calls writing into their first argument, as assignments (mixed into the normaliser)."""

    def accumulated_at(self, call):
        """``np.add.at(y, [0, 0, 2], v)`` on a local array ``y`` (or an argument
        copied at the entry: the adjoint then puts its old elements back for a
        row of it read before), the indices a list
        of int literals -> ``t = np.broadcast_to(v, np.shape(y[[0, 0, 2]]))``, then
        ``y[0] += t[0]; y[0] += t[1]; y[2] += t[2]``: the unbuffered adds, in
        order (bit for bit what ``np.add.at`` computes), each an element update
        srcgrad differentiates (``np.subtract.at``: ``-=``, ``np.multiply.at``:
        ``*=``).  Any other index (an array, a name, a tuple ``(rows, 1)``) ->
        ``y[...] = added_at(y, index, v)`` (``subtracted_at``,
        ``multiplied_at``): the same updates into a copy, stored back into
        ``y``, a whole write (runtime/scatter.py).  None otherwise."""
        if not isinstance(call, gast.Call) or call.keywords or len(call.args) != 3 \
                or not isinstance(call.func, gast.Attribute) or call.func.attr != "at":
            return None
        callee = self.callee(call)
        op = {id(np.add): gast.Add(), id(np.subtract): gast.Sub(),
              id(np.multiply): gast.Mult()}.get(id(getattr(callee, "__self__", None)))
        y, index, v = call.args
        root = _held_root(y)
        if op is None or not isinstance(call.func.value, gast.Attribute) \
                or root is None or root.id not in self.locals \
                or root.id in self.params and root.id not in self.copied_params:
            return None
        if isinstance(v, (gast.List, gast.Tuple)) and hasattr(self, "as_array"):
            v = self.as_array(v)  # (ufunc.at makes an array of its values: findings R1-4)
        # (an item of a list or dict, np.add.at(S['acc'], idx, v), is written whole,
        # S['acc'][...] = added_at(S['acc'], idx, v): the write into an item that the
        # alias check follows through every name for it -- found by review)
        if y is not root or not isinstance(index, gast.List) or not index.elts \
                or not all(constant_of_int(e) is not None for e in index.elts):
            helper = {gast.Add: "added_at", gast.Sub: "subtracted_at",
                      gast.Mult: "multiplied_at"}[type(op)]
            return [gast.copy_location(gast.Assign(
                targets=[gast.Subscript(value=clone(y), slice=gast.Constant(value=Ellipsis,
                                                                            kind=None),
                                        ctx=gast.Store())],
                value=gast.Call(func=helper_ref(helper), args=[clone(y), index, v],
                                keywords=[]), type_comment=None), call)]
        part = self.namer.fresh("added")
        self.locals.add(part)
        gathered = gast.Subscript(value=clone(y), slice=clone(index), ctx=gast.Load())
        made = [gast.Assign(targets=[gast.Name(id=part, ctx=gast.Store(), annotation=None,
                                               type_comment=None)],
                            value=gast.Call(func=gast.Attribute(
                                value=load_np(call.func.value), attr="broadcast_to",
                                ctx=gast.Load()), args=[v, gast.Call(func=gast.Attribute(
                                    value=load_np(call.func.value), attr="shape",
                                    ctx=gast.Load()), args=[gathered], keywords=[])],
                                keywords=[]), type_comment=None)]
        for j, at in enumerate(index.elts):
            made.append(gast.AugAssign(
                target=gast.Subscript(value=clone(y), slice=clone(at), ctx=gast.Store()), op=op,
                value=gast.Subscript(value=ir.name(part), slice=gast.Constant(value=j, kind=None),
                                     ctx=gast.Load())))
        return made

    def put_along(self, call):
        """``np.put_along_axis(y, idx, v, axis)`` on a local array ``y`` (as for
        :meth:`accumulated_at`), ``axis`` not None -> ``y[along_axis_index(y,
        idx, axis)] = v``: the assignment NumPy makes, through the
        index it builds (runtime/picks.py), which srcgrad differentiates (a
        place written twice keeps the last value).  None otherwise."""
        if not isinstance(call, gast.Call) or len(call.args) + len(call.keywords) != 4 \
                or self.callee(call) is not np.put_along_axis \
                or any(k.arg not in ("indices", "values", "axis") for k in call.keywords):
            return None
        given = dict(zip(("arr", "indices", "values", "axis"), call.args))
        given.update({k.arg: k.value for k in call.keywords})
        y, axis = given.get("arr"), given.get("axis")
        if not isinstance(y, gast.Name) or y.id not in self.locals \
                or y.id in self.params and y.id not in self.copied_params \
                or axis is None or isinstance(axis, gast.Constant) and axis.value is None:
            return None
        index = gast.Call(func=helper_ref("along_axis_index"),
                          args=[clone(y), given["indices"], axis], keywords=[])
        return gast.Assign(targets=[gast.Subscript(value=clone(y), slice=index,
                                                   ctx=gast.Store())],
                           value=given["values"], type_comment=None)

    def dict_update(self, call):
        """``d.update({'a': x}, b=y)`` on a local dict ``d`` (one assigned a
        display) -> ``d['a'] = x; d['b'] = y``: the items in the order Python
        stores them, each an item write srcgrad follows.  None otherwise (a
        dict of keys unknown here, another object's ``update``)."""
        if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Attribute) \
                or call.func.attr != "update" or not isinstance(call.func.value, gast.Name) \
                or call.func.value.id not in self.dict_names or len(call.args) > 1 \
                or any(k.arg is None for k in call.keywords):
            return None
        d = call.func.value
        if any(isinstance(n, gast.Assign) and not isinstance(n.value, gast.Dict) and any(
                isinstance(t, gast.Name) and t.id == d.id for t in n.targets)
               for n in walk(self.func)):
            return None  # (d bound to something else somewhere: its update may be another's)
        items = []
        if call.args:
            given = call.args[0]
            if not isinstance(given, gast.Dict) or not all(
                    isinstance(k, gast.Constant) for k in given.keys):
                return None
            items += list(zip(given.keys, given.values))
        items += [(gast.Constant(value=k.arg, kind=None), k.value) for k in call.keywords]
        return [gast.Assign(targets=[gast.Subscript(value=clone(d), slice=clone(key),
                                                    ctx=gast.Store())],
                            value=value, type_comment=None) for key, value in items]
