"""Normalisation of statements: assignment in every form, appends, dispatch.

Part of :mod:`.normalizer` (a mixin of its normaliser, like :mod:`.control`
and :mod:`.calls`).  Plain, tuple, chained, element (``x[i] = v``) and
augmented assignment all end here as assignments of one operation's result to
one name; ``xs.append(v)`` and ``x[i] = v`` become updates the alias check and
the adjoint sweep recognise (``ir.is_update``); ``if``, ``for`` and ``while``
go to :class:`.control.ControlFlow`.  An argument the function updates in
place is copied first, so the caller's value never changes, and checked
against the other arguments (``unshared``: ``a += b`` below updates the
caller's ``b`` in Python, which ``swap(x, x)`` would show through ``a``).

    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def swap(a, b):
    ...     a, b = b, a * 2.0
    ...     a += b
    ...     return a
    >>> print(unparse_body(normalize(parse_function(swap))))  # doctest: +ELLIPSIS
    unshared(a, (b,), ('a', 'b'), False, (...))  # a is updated in place below: ...
    unshared(b, (a,), ('b', 'a'), False, (...))  # b is updated in place below: ...
    t1 = a * 2.0
    a_1 = b
    b_1 = t1
    a_2 = a_1 + b_1
    return a_2
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import ir
from ..errors import SrcGradError
from ..frontend.fence import where_advice
from ..frontend.linker import is_user_function
from ..ir.syntax import (
    clone,
    constant,
    helper_ref,
    is_append,
    load_name,
    located,
    source_of,
    unchanged,
    walk,
)
from ..rules import registry
from .argument_checks import entry_checks, update_guards
from .argument_updates import argument_updates
from .attribute_stores import AttributeStores
from .call_writes import CallWrites
from .chained_writes import ChainedWrites
from .expressions import BINOPS, MULTI_OUTPUT, OP_LABELS
from .held_items import held_item_updates
from .mutable_defaults import default_checks
from .records_outside import RecordsOutside
from .user_methods import is_user_method, own_updates


class Statements(ChainedWrites, CallWrites, AttributeStores, RecordsOutside):
    """Statements and assignments (mixed into the normaliser)."""

    #: the parameters copied at the entry (:meth:`copy_updated_arguments`)
    copied_params: frozenset | set = frozenset()

    def whole_write(self, call):
        """``(y, v, checked)`` for a call statement that overwrites every element
        of the local array ``y`` -- ``y.fill(v)``, ``np.copyto(y, v)``, a ufunc's
        ``out=y``, ``np.nan_to_num(y, copy=False)`` -- and is the element write
        ``y[...] = v``, which srcgrad differentiates; None for any other
        statement.  ``checked`` is True where NumPy casts ``v`` into ``y`` by
        its ``'same_kind'`` rule (``copyto``, ``out=``), which refuses a float
        into an int array where ``y[...] = v`` would truncate, or refuses a ``y``
        that is no array: the write is then checked first (see
        :meth:`checked_write`)."""
        if not isinstance(call, gast.Call) or any(isinstance(a, gast.Starred) for a in call.args):
            return None

        def local(node):
            # a parameter copied at the entry is the function's own array too
            # (x.fill(v) on a row's array x: the write the adjoint undoes for x[0])
            return isinstance(node, gast.Name) and node.id in self.locals \
                and (node.id not in self.params or node.id in self.copied_params) \
                and node.id not in self.local_functions

        func = call.func
        held = func.value if isinstance(func, gast.Attribute) else None
        while isinstance(held, gast.Subscript):  # C[0].fill(v) is C[0][...] = v
            if any(isinstance(n, gast.List) for n in gast.walk(held.slice)):
                return None  # C[[0, 1]].fill(v) fills NumPy's copy: run as written
            held = held.value
        if isinstance(func, gast.Attribute) and func.attr == "fill" and local(held) \
                and len(call.args) == 1 and not call.keywords:
            return clone(func.value), call.args[0], False
        callee = self.callee(call)
        if callee is np.copyto and len(call.args) == 2 and not call.keywords \
                and local(call.args[0]):
            return clone(call.args[0]), call.args[1], True
        if (isinstance(callee, np.ufunc) and callee.nout == 1 or callee is np.clip) \
                and [k.arg for k in call.keywords] == ["out"]:
            out = call.keywords[0].value
            if isinstance(out, gast.Tuple) and len(out.elts) == 1:
                out = out.elts[0]
            if local(out) and len(call.args) == (3 if callee is np.clip else callee.nin):
                return clone(out), gast.copy_location(gast.Call(
                    func=call.func, args=call.args, keywords=[]), call), True
        if self.replaces_in_place(call) and local(call.args[0]):
            # np.nan_to_num(y, copy=False): y's NaNs and infinities replaced in y
            named = dict(zip(("nan", "posinf", "neginf"), call.args[2:]))
            keywords = [k for k in call.keywords if k.arg != "copy"]
            keywords += [gast.keyword(arg=k, value=v) for k, v in named.items()]
            return clone(call.args[0]), gast.copy_location(gast.Call(
                func=call.func, args=[clone(call.args[0])], keywords=keywords), call), True
        return None

    def replaces_in_place(self, call) -> bool:
        """Whether ``call`` is ``np.nan_to_num(y, copy=False)``, which changes the
        array ``y`` in place and returns ``y`` itself.  A ``copy`` that is not a
        literal is refused: whether ``y`` changes would depend on its value."""
        if not isinstance(call, gast.Call) or not call.args \
                or self.callee(call) is not np.nan_to_num:
            return False
        copy = next((k.value for k in call.keywords if k.arg == "copy"),
                    call.args[1] if len(call.args) > 1 else None)
        if copy is None:
            return False
        if not isinstance(copy, gast.Constant):
            raise self.error("np.nan_to_num with a copy= that is not a literal True or False "
                             "is not supported: write copy=False (it changes the array in "
                             "place) or leave copy out", copy)
        return not copy.value

    def written_by(self, call):
        """The name ``y`` whose array ``call`` changes in place and returns:
        ``np.nan_to_num(y, copy=False)``, ``np.add(a, b, out=y)``; None for any
        other expression."""
        if not isinstance(call, gast.Call):
            return None
        if self.replaces_in_place(call) and isinstance(call.args[0], gast.Name):
            return call.args[0]
        out = next((k.value for k in call.keywords if k.arg == "out"), None)
        if isinstance(out, gast.Tuple) and len(out.elts) == 1:
            out = out.elts[0]
        if not isinstance(out, gast.Name) or not self.numpy_call(call):
            return None  # (a function of the user's may take a parameter named out)
        return out

    def numpy_call(self, call) -> bool:
        """Whether ``call`` calls a NumPy function or ufunc, whose ``out=y``
        writes its result into ``y`` and returns ``y``."""
        callee = self.callee(call)
        return isinstance(callee, np.ufunc) \
            or (getattr(callee, "__module__", None) or "").split(".")[0] == "numpy"

    def check_replaced_in_place(self):
        """Refuse ``np.nan_to_num(y, copy=False)`` and a call with ``out=y`` where
        its change of ``y`` would go unseen: anywhere but a statement of its own
        or the whole value of an assignment to a name (``z = np.nan_to_num(y,
        copy=False)``, with ``y`` a name), which :meth:`statement` and
        :meth:`assign` rewrite into the element write ``y[...] = ...`` srcgrad
        differentiates (or refuse, where they cannot)."""
        statements, assigned = set(), set()
        for node in walk(self.func):
            if isinstance(node, gast.Expr):
                statements.add(id(node.value))
            elif isinstance(node, gast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], gast.Name):
                assigned.add(id(node.value))
        for node in walk(self.func):
            if not isinstance(node, gast.Call) or id(node) in statements:
                continue
            nan_to_num = self.replaces_in_place(node)
            out = any(k.arg == "out" and not (isinstance(k.value, gast.Constant)
                                              and k.value.value is None)
                      for k in node.keywords) and (self.numpy_call(node) or (
                          isinstance(node.func, gast.Attribute)
                          and hasattr(np.ndarray, node.func.attr)))  # y.clip(out=w)
            if not (nan_to_num or out) or (id(node) in assigned
                                           and self.written_by(node) is not None):
                continue
            if nan_to_num:
                raise self.error("np.nan_to_num(y, copy=False) changes y in place; srcgrad "
                                 "follows that as a statement of its own or as 'z = "
                                 "np.nan_to_num(y, copy=False)' with y a variable: write it "
                                 "so, or drop copy=False", node)
            if any(k.arg == "where" for k in node.keywords):  # np.divide(..., where=m)
                raise self.error(where_advice(node), node)
            raise self.error(f"'{source_of(node)}' writes into its out= array, a change "
                             f"srcgrad follows only for a NumPy function called as a "
                             f"statement of its own, or as 'z = np.f(..., out=y)' with y a "
                             f"variable: write it so (np.clip(x, lo, hi, out=y) for "
                             f"x.clip(lo, hi, out=y)), then use y", node)

    def checked_write(self, target, value, stmt):
        """``np.copyto(y, v)``, ``f(a, b, out=y)`` or ``np.nan_to_num(y, copy=False)``
        as ``y[...] = v``, checked first: ``castable(y, v, np.copyto, y, v)`` runs
        the call itself, which raises NumPy's own error, where NumPy would refuse
        it -- ``'same_kind'`` casting refuses ``v``'s dtype in ``y`` (found by
        review: ``np.copyto(y, x)`` into an int ``y`` truncated where NumPy
        raises), or ``y`` is no array."""
        call = stmt.value
        into = ir.name(self.env.get(target.id, target.id))  # y's name here
        atom = self.atom(value)
        made = self.out[-1] if self.out else None
        if not isinstance(value, gast.Call):  # np.copyto(y, v)
            args, keywords = [into, clone(atom)], []
        elif isinstance(atom, gast.Name) and isinstance(made, gast.Assign) \
                and ir.target_names(made) == [atom.id] and getattr(made, "op", None):
            # its value computed: run again with its operands, into y
            args = [clone(a) for a in made.op.args]
            keywords = [gast.keyword(arg="out", value=into)]
            if self.callee(call) is np.nan_to_num:
                keywords = [gast.keyword(arg="copy", value=gast.Constant(value=False, kind=None))]
                keywords += [gast.keyword(arg=k, value=clone(v)) for k, v in made.op.kwargs.items()]
        else:
            return atom
        func = clone(call.func)
        self.collect_free(func)
        check = gast.Call(func=helper_ref("castable"),
                          args=[clone(into), clone(atom), func, *args], keywords=keywords)
        guard = gast.copy_location(gast.Expr(value=located(check, stmt)), stmt)
        guard.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
        self.out.append(guard)
        return atom

    def statement(self, stmt):
        if isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value, stmt)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.assign([stmt.target], stmt.value, stmt)
        elif isinstance(stmt, gast.AugAssign):
            target = stmt.target
            if isinstance(target, gast.Subscript) and self.chained_write(target):
                self.chained_augmented(stmt)  # y[a][b] += v: t = y[a]; t[b] += v
                return
            if isinstance(target, gast.Subscript) and self.written_view(target):
                self.view_augmented(stmt)  # y.T[1] += v: t = y.T; t[1] += v
                return
            if isinstance(target, gast.Subscript):  # x[i] += v
                index = self.index(target.slice)
                base = self.updated_array(target)
                current = gast.copy_location(
                    gast.Subscript(value=ir.name(base), slice=clone(index),
                                   ctx=gast.Load()), target)
                old_item = self.atom_of(current, ir.Op(operator.getitem, [ir.name(base), index],
                                                       {}, target, "indexing"))
                right = self.atom(stmt.value)
                new_item = self.atom_of(
                    gast.BinOp(left=old_item, op=stmt.op, right=right),
                    ir.Op(BINOPS[type(stmt.op)], [old_item, right], {}, stmt,
                          OP_LABELS.get(BINOPS[type(stmt.op)], "operator")))
                # d[k] += v on a list or dict changes the array d[k] holds in place
                # (then stores it back): the alias check must know
                self.out[-1].item_update = (base, old_item.id, clone(index))
                self.out[-1].user_target = getattr(stmt, "user_target", None) \
                    or source_of(target)
                self.out[-1].augmented_symbol = OP_LABELS.get(BINOPS[type(stmt.op)], "+")
                self.setitem(target, new_item, index, stmt)
                return
            if isinstance(target, gast.Attribute):  # self.t += 1: attribute_stores.py
                self.attribute_store(target, stmt.value, stmt, stmt.op)
                return
            load = gast.Name(id=target.id, ctx=gast.Load(), annotation=None, type_comment=None)
            gast.copy_location(load, target)
            binop = gast.BinOp(left=load, op=stmt.op, right=stmt.value)
            gast.copy_location(binop, stmt)
            old = self.env.get(target.id)
            if getattr(self, "argument_checks", None) is not None:  # t = b[2]; t *= v
                self.out.extend(update_guards(self.argument_checks, stmt, old,
                                              self.parsed.filename))
            self.assign([target], binop, stmt)
            # NumPy updates an array in place here: the alias check must know
            self.out[-1].augmented = old
            self.out[-1].augmented_symbol = OP_LABELS.get(BINOPS[type(stmt.op)], "+")
            self.out[-1].user_target = target.id
        elif isinstance(stmt, gast.Expr) and self.recorded_outside(stmt):
            # HISTORY.append(float(l)), HISTORY never read back: run as written, as
            # print is, and left out of a checkpointed loop's reruns (records_outside.py)
            node = self.opaque(stmt)
            node.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
            node.records = True  # (ad/in_place.py, memory/checkpointing.py)
            self.out.append(node)
        elif isinstance(stmt, gast.Expr) and self.part_append(stmt):
            pass  # log['trace'].append(v): part = log['trace']; part.append(v)
        elif isinstance(stmt, gast.Expr) and is_append(stmt.value) \
                and not is_user_method(self.callee, stmt.value.func):  # not self.append(v)
            call = stmt.value
            base = self.updated_array(gast.Subscript(value=call.func.value, slice=None,
                                                     ctx=gast.Load()), appended=True)
            item = self.atom(call.args[0])
            node = gast.Expr(value=gast.Call(func=gast.Attribute(
                value=ir.name(base), attr="append", ctx=gast.Load()), args=[item], keywords=[]))
            node.op = ir.Op(ir.APPEND, [ir.name(base), item], {}, stmt, ".append()")
            self.out.append(gast.copy_location(node, stmt))
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) \
                and self.calls_partial(stmt.value):
            # p(m, v), p = functools.partial(np.putmask, y): the statement
            # np.putmask(y, m, v) -- followed or refused as that call is, never
            # taken for a pure call whose result is unused (partials.py)
            self.shown_statement(*self.partial_statement(stmt))
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) \
                and (self.is_local_function(self.unalias(stmt.value.func))
                     or self.is_local_pop(stmt.value)):
            # add(v), a local function called for what it does (acc[0] += v), or
            # xs.pop(): as any call of it, its result unused
            tmp = self.namer.temp()
            self.locals.add(tmp)
            self.expr_into(stmt.value, gast.copy_location(gast.Name(
                id=tmp, ctx=gast.Store(), annotation=None, type_comment=None), stmt))
        elif isinstance(stmt, gast.Expr) and self.accumulated_at(stmt.value) is not None:
            for made in self.accumulated_at(stmt.value):
                self.statement(located(made, stmt))
        elif isinstance(stmt, gast.Expr) and self.dict_update(stmt.value) is not None:
            for made in self.dict_update(stmt.value):
                self.statement(located(made, stmt))
        elif isinstance(stmt, gast.Expr) and self.put_along(stmt.value) is not None:
            self.statement(located(self.put_along(stmt.value), stmt))
        elif isinstance(stmt, gast.Expr) and self.filled_diagonal(stmt.value) is not None:
            self.statement(located(self.filled_diagonal(stmt.value), stmt))  # (calls.py)
        elif isinstance(stmt, gast.Expr) and self.whole_write(stmt.value) is not None:
            # y.fill(v), np.copyto(y, v), np.multiply(a, b, out=y) -> y[...] = ...
            target, value, checked = self.whole_write(stmt.value)
            every = located(gast.Subscript(value=target, slice=gast.Constant(
                value=Ellipsis, kind=None), ctx=gast.Store()), stmt)
            if checked:  # with NumPy's casting check first (checked_write)
                atom = self.checked_write(target, located(value, stmt), stmt)
                self.setitem(every, atom, self.index(every.slice), stmt)
            else:
                self.statement(located(gast.Assign(targets=[every], value=value,
                                                   type_comment=None), stmt))
        elif isinstance(stmt, (gast.Expr, gast.Assert, gast.Raise)):
            node = self.opaque(stmt)
            node.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
            self.out.append(node)
        elif isinstance(stmt, gast.Pass):
            pass
        elif isinstance(stmt, gast.FunctionDef):
            self.local_function(stmt.name, stmt)
        elif isinstance(stmt, gast.If):
            self.if_statement(stmt)
        elif isinstance(stmt, gast.For):
            self.for_statement(stmt)
        elif isinstance(stmt, gast.While):
            self.while_statement(stmt)
        elif isinstance(stmt, (gast.Break, gast.Continue)):
            self.out.append(gast.copy_location(type(stmt)(), stmt))
        else:  # pragma: no cover - the fence rejects everything else
            raise self.error(f"'{type(stmt).__name__}' statements are not supported", stmt)

    def assign(self, targets, value, stmt):
        first, rest = targets[0], targets[1:]
        if rest and not isinstance(first, gast.Name):  # a[0] = b = v: bind v's atom to each
            atom = self.atom(value)
            for target in targets:
                self.bind(target, atom, stmt)
            return
        if isinstance(value, gast.Lambda) and len(targets) == 1 and isinstance(first, gast.Name):
            self.local_function(first.id, value)
            return
        made = self.partial_lambda(value) if len(targets) == 1 \
            and isinstance(first, gast.Name) else None
        if made is None and len(targets) == 1 and isinstance(first, gast.Name):
            made = self.transform_lambda(value)  # g = srcgrad.grad(L): made_transforms.py
        if made is not None:  # m = functools.partial(np.multiply, w): partials.py
            self.local_function(first.id, made)
            return
        written = self.written_by(value) if len(targets) == 1 \
            and isinstance(first, gast.Name) else None
        if written is not None:
            # z = np.nan_to_num(y, copy=False), z = np.add(a, b, out=y): y changes in
            # place (a statement of its own), and z is y itself
            self.statement(gast.copy_location(gast.Expr(value=value), stmt))
            self.assign(targets, clone(written), stmt)
            return
        closure = self.closure_call(value)
        if closure is not None:  # flat, unflatten = flatten(params): inlined, see calls.py
            self.bind_closures(targets, *closure, stmt)
            return
        if isinstance(first, gast.Name):
            self.expr_into(value, first)
        elif isinstance(first, (gast.Tuple, gast.List)):
            self.unpack(first, value)
        elif isinstance(first, gast.Subscript) and self.chained_write(first):
            self.chained_assign(first, value, stmt)
        elif isinstance(first, gast.Subscript) and self.written_view(first):  # y.T[1] = v
            self.view_assign(first, value, stmt)
        elif isinstance(first, gast.Subscript):  # y[0] = [a, b] of an array: array_operands.py
            value = self.written_as_array(first, value, stmt)
            self.setitem(first, self.atom(value), self.index(first.slice), stmt)
        elif isinstance(first, gast.Attribute) and not rest:  # attribute_stores.py
            self.attribute_store(first, value, stmt)
            return
        else:
            raise self.error("assignment to an element or attribute (in-place update) "
                             "is not supported yet", first)
        for extra in rest:  # a = b = value, a = d['h'] = value: each gets a's value
            self.bind(extra, gast.copy_location(ir.name(self.env[first.id]), first), stmt)

    def updated_array(self, target, appended=False) -> str:
        """The current name of the array ``x`` in ``x[i] = ...`` (of the list ``x``
        in ``x.append(v)``, ``appended``)."""
        base = target.value
        if appended and not (isinstance(base, gast.Name) and base.id in self.locals):
            # (L.append(v) on a module-level list was refused as an element
            # assignment, which it is not: review s34, R2-4)
            shown = source_of(base)
            where = ("is not a local variable (a global, or a variable of an enclosing "
                     "function)") if isinstance(base, gast.Name) else "is not a local variable"
            raise self.error(f"'{shown}.append(...)' changes '{shown}' in place, and '{shown}' "
                             f"{where}: srcgrad does not follow a change a function makes to a "
                             f"container it does not own; build a local list instead (ys = []; "
                             f"ys.append(v)) and return it or read it in the function; a number "
                             f"recorded for later (HISTORY.append(float(l))) is followed in the "
                             f"differentiated function itself, or in a helper that only records, "
                             f"where no other name or helper reads the list", base)
        if not isinstance(base, gast.Name) or base.id not in self.locals:
            raise self.error("only elements of a local variable can be assigned "
                             "(x[i] = v, x[i][j] = v with x[i] a basic index); assign to a "
                             "local copy (y = x.copy()) of a global, an attribute or an "
                             "array indexed by a list or mask", base)
        if base.id not in self.env:
            raise self.error(f"local variable '{base.id}' is used before it is assigned",
                             base, SrcGradError)
        return self.env[base.id]

    def setitem(self, target, value, index, stmt):
        """``x[index] = value``: an in-place update of ``x`` (see ir.is_update)."""
        base = self.updated_array(target)
        node = ir.assign(gast.Subscript(value=ir.name(base), slice=index, ctx=gast.Store()),
                         value)
        node.op = ir.Op(operator.setitem, [ir.name(base), index, value], {}, stmt,
                        "element assignment")
        self.out.append(gast.copy_location(node, stmt))

    def copy_updated_arguments(self):
        """Arguments updated in place are copied first: the caller's arrays never change.
        One updated through another name (``h = x; h[0] = v``) is copied whole, the
        arrays a list holds too; and each updated one is checked first against the
        other arguments, which must not share its memory (argument_updates.py)."""
        with unchanged(self.func):  # analyses only, a dozen walks of the function: one
            self.check_replaced_in_place()
            found = self.argument_checks = argument_updates(
                self.func, self.params, self.callee,
                getattr(self.parsed, "called", False))  # called: from differentiated code
            for shown, value in found.bound.items():  # layers.W, read by a called helper
                found.refs[shown] = self.namer.fresh("bound")
                self.free[found.refs[shown]] = value
            # h = st['h']; h *= 2 (for w in ws: w *= 0.5): st's item changes, and the
            # code follows it through st as for a dict made here (held_items.py)
            held = self.held_params = held_item_updates(self.func, found, self.sequence_params)
            for param in (p for p in self.params if p in found.checked):
                self.out.extend(entry_checks(param, self.params, found, self.parsed.filename))
            updated = own_updates(self.func, self.callee) | found.direct | found.shared
        self.out.extend(default_checks(self.parsed.fn, self.func, updated, self.namer,
                                       self.free, self.parsed.filename))  # cache=[]
        self.copied_params = set()
        for param in self.params:
            if param in updated or param in held:
                # snapshot() copies an array, list or dict and leaves a number alone
                # (the name may be rebound to an array before it is updated)
                copier = "private_copy" if param in found.shared | held else "snapshot"
                copied = ir.name(param)
                if param in held and param in self.sequence_params:  # a tuple too: a list
                    copied = gast.Call(func=load_name("list"), args=[copied], keywords=[])
                call = gast.Call(func=helper_ref(copier), args=[copied], keywords=[])
                gast.copy_location(call, self.func)
                self.expr_into(call, gast.Name(id=param, ctx=gast.Store(), annotation=None,
                                               type_comment=None))
                self.out[-1].comment = f"{param} is updated in place below: work on a copy"
                self.out[-1].container_copy = param in held
                self.copied_params.add(param)

    def unpack(self, target, value):
        """``a, b = value``: names bound one by one, nested targets recursively.

        Python evaluates the whole right-hand side before binding any name, so a
        source that a binding before it overwrites (``a, b = b, a`` inside a loop,
        where both keep their names) is copied to a temporary first."""
        if any(isinstance(e, gast.Starred) for e in target.elts):  # first, *rest = ...
            self.unpack_starred(target, value, value)
            return
        if isinstance(value, (gast.Tuple, gast.List)) \
                and not any(isinstance(v, gast.Starred) for v in value.elts):
            if len(value.elts) != len(target.elts):
                raise self.error(f"cannot unpack {len(value.elts)} values into "
                                 f"{len(target.elts)} names", value, SrcGradError)
            atoms = self.parallel_sources(target.elts, [self.atom(v) for v in value.elts],
                                          value)
            for elt, atom in zip(target.elts, atoms):
                self.bind(elt, atom, value)
            return
        if isinstance(value, gast.Call) and all(isinstance(e, gast.Name) for e in target.elts):
            prim = self.callee(value)
            if prim in MULTI_OUTPUT and MULTI_OUTPUT[prim] != len(target.elts):
                raise self.error(f"{registry.display_name(prim)} returns "
                                 f"{MULTI_OUTPUT[prim]} values, not {len(target.elts)}",
                                 value, SrcGradError)
            if is_user_function(prim) or prim in MULTI_OUTPUT:
                # a, b = f(a, b): f's pair returns the tuple.  The arguments are
                # evaluated before the targets are bound (a straight-line target gets
                # a fresh name, which the arguments must not read)
                expr, op = self.call(value)
                if self.current_names(target) & set(ir.names_in(expr)):
                    # a, b = f(a, b) in a loop: into temporaries first, as for `h = h * 2`
                    # (the adjoint of an operation must not write its own operand)
                    temps = [self.namer.temp() for _ in target.elts]
                    self.emit_tuple(temps, expr, op, value)
                    for elt, tmp in zip(target.elts, temps):
                        self.emit_copy(elt, gast.copy_location(ir.name(tmp), value), value)
                    return
                self.emit_tuple([self.define(elt.id) for elt in target.elts], expr, op, value)
                return
        self.unpack_atom(target, self.atom(value), value)

    def emit_tuple(self, names, expr, op, node):
        """``names[0], names[1], ... = expr`` computed by ``op``."""
        stmt = ir.assign(gast.Tuple(elts=[ir.name(n, store=True) for n in names],
                                    ctx=gast.Store()), expr)
        stmt.op = op
        self.out.append(gast.copy_location(stmt, node))

    def unpack_atom(self, target, whole, node):
        """``a, b = t`` for an atom ``t``: element by element (``a = t[0]``, ...)."""
        if any(isinstance(e, gast.Starred) for e in target.elts):
            self.unpack_starred_atom(target, whole, node)
            return
        for elt in target.elts:
            if not isinstance(elt, (gast.Name, gast.Tuple, gast.List, gast.Subscript,
                                    gast.Attribute)):
                raise self.error("only names, elements, attributes and tuples of them can be "
                                 "unpacked into", elt)
        whole = self.parallel_sources(target.elts, [whole], node, after=-1)[0]
        self.check_unpacked(whole, len(target.elts), False, node)
        for i, elt in enumerate(target.elts):
            index = gast.Constant(value=i, kind=None)
            item = gast.Subscript(value=whole, slice=index, ctx=gast.Load())
            op = ir.Op(operator.getitem, [whole, index], {}, node, "unpacking")
            if isinstance(elt, gast.Name):
                stmt = ir.assign(self.define(elt.id), item)
                stmt.op = op
                self.out.append(gast.copy_location(stmt, elt))
            else:
                self.bind(elt, self.atom_of(item, op), node)

    def check_unpacked(self, whole, count, starred, node):
        """``unpacked(t, 2, False, where)`` before ``a = t[0]; b = t[1]``: a
        sequence of another length raises, as Python's unpacking does."""
        if not isinstance(whole, gast.Name):
            return
        where = constant((self.parsed.filename, getattr(node, "lineno", None),
                          getattr(node, "col_offset", None)))
        call = gast.Call(func=helper_ref("unpacked"), args=[
            ir.name(whole.id), gast.Constant(value=count, kind=None),
            gast.Constant(value=starred, kind=None), where], keywords=[])
        guard = gast.copy_location(gast.Expr(value=call), node)
        guard.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
        self.out.append(guard)

    def bind(self, target, atom, node):
        """``target = atom`` for a name, an element ``x[i]`` or a (nested) tuple of
        them."""
        if isinstance(target, gast.Name):
            self.emit_copy(target, atom, node)
        elif isinstance(target, (gast.Tuple, gast.List)):
            self.unpack_atom(target, atom, node)
        elif isinstance(target, gast.Subscript):  # u[0], u[1] = u[1], u[0]
            self.setitem(target, atom, self.index(target.slice), node)
        elif isinstance(target, gast.Attribute):  # c.t, c.u = c.u, c.t: attribute_stores.py
            self.attribute_store(target, None, node, atom=atom)
        else:
            raise self.error("only names, elements, attributes and tuples of them can be "
                             "unpacked into",
                             target)

    def parallel_sources(self, targets, atoms, node, after=0):
        """``atoms`` with each one that an earlier binding of ``targets`` overwrites
        replaced by a temporary copy made before any binding.

        Atom ``j`` is read after the bindings of ``targets[:j + 1 + after]`` (an
        element-by-element unpacking reads its one atom after every binding:
        ``after=-1`` with one atom means all of them).  Only a binding that keeps
        its name overwrites -- inside a loop or branch; a straight-line definition
        gets a fresh name and leaves the old value readable."""
        stored = [self.current_names(t) for t in targets]
        result = []
        for j, atom in enumerate(atoms):
            before = stored if after < 0 else stored[:j + after]
            if isinstance(atom, gast.Name) and any(atom.id in names for names in before):
                tmp = self.namer.temp()
                stmt = ir.assign(tmp, atom)
                stmt.op = ir.Op(operator.pos, [atom], {}, node, "assignment")
                self.out.append(gast.copy_location(stmt, node))
                atom = gast.copy_location(ir.name(tmp), atom)
            result.append(atom)
        return result

    def current_names(self, target) -> set[str]:
        """The names that binding ``target`` here overwrites in place."""
        if not self.depth:
            return set()
        return {self.env[n] for n in ir.stored_names(target) if n in self.env}
