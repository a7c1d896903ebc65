"""``d.pop(k)`` and ``d.pop(k, default)`` on a dict the function builds,
spelled as the read and the rebinding srcgrad follows.

Part of :mod:`.sugar` (a mixin of its desugarer).  ``pop`` changes the dict
in place, which srcgrad does not follow (it has no ``del``); it was refused
with the advice to read the item and rebind the dict (review s35, R3-3).
Where nothing but the name ``d`` can see the dict, the two are the same
program, so the rewrite is made here::

    v = d.pop(k)            ->  v = d[k]
                                d = {key: item for key, item in d.items() if key != k}
    v = d.pop(k, default)   ->  v = d.get(k, default)
                                d = {key: item for key, item in d.items() if key != k}
    s = s + d.pop(k) * w    ->  popped = d[k]; d = {...}; s = s + popped * w
                                (nothing in the statement reading d before the pop)

(the comprehension then becomes the loop that fills a new dict,
:mod:`.dict_comprehensions`; its variables get fresh names).  The same
keys in the same order are left, and ``get`` evaluates ``default`` when
``pop`` does, whether the key is there or not.

Sound only where no other reference to the dict object exists, since the
rebinding makes a new dict where Python's ``pop`` changes the old one: the
name is a local (not a parameter, global or closure variable) that every
binding makes a new dict (a display, a comprehension or ``dict(...)``), and
every read of it is through it -- an item ``d[k]``, a method ``d.get(k)``,
``k in d``, ``len(d)``, a loop over it, ``return d`` -- never the bare dict
put somewhere else (``e = d``, ``f(d)``, ``xs.append(d)``).  The key is a
constant or a name the statement does not rebind (evaluated once either way).
A pop inside a loop over the dict itself (``for k in d: d.pop(k)``, which
Python stops with a RuntimeError) is not rewritten.  Anything else is left as
it is (and refused, with the advice, as before).

    >>> show = lambda stmt: [gast.unparse(s).strip() for s in DictPops.popped(
    ...     gast.parse(stmt).body[0], lambda base: base + '_1')]
    >>> for line in show("v = d.pop('a', x)") + show("v = d.pop(k)"):
    ...     print(line)
    v = d.get('a', x)
    d = {key_1: item_1 for key_1, item_1 in d.items() if key_1 != 'a'}
    v = d[k]
    d = {key_1: item_1 for key_1, item_1 in d.items() if key_1 != k}
"""

from __future__ import annotations

import gast

from ..ir.syntax import clone, walk

#: Builtins that read a dict without keeping it (``len(d)``, ``list(d)``).
_READERS = frozenset({"len", "list", "tuple", "sorted", "set", "sum", "min", "max", "any",
                      "all", "iter", "enumerate", "reversed", "dict"})


class DictPops:
    """``d.pop(k[, default])`` on a local dict, in a statement's value (mixed
    into the desugarer; the dicts are found before anything is rewritten:
    :func:`private_dicts`)."""

    def visit_Assign(self, node):
        return self.pops_taken_out(self.generic_visit(node))

    def visit_AugAssign(self, node):
        return self.pops_taken_out(self.generic_visit(node))

    def visit_Return(self, node):
        return self.pops_taken_out(self.generic_visit(node))

    def visit_Expr(self, node):
        return self.pops_taken_out(super().visit_Expr(node))  # (hs.extend(e): .list_methods)

    def pops_taken_out(self, node):
        """``node`` with each pop it makes of a private dict read before it:
        ``v = d.pop(k)`` becomes the read and the rebinding; a pop inside an
        expression, ``s = s + d.pop(k) * d['b']``, the read into a name and the
        rebinding, then the statement reading that name -- where nothing in the
        statement reads the dict before the pop does (module docstring)."""
        if not isinstance(node, (gast.Assign, gast.AugAssign, gast.Return, gast.Expr)) \
                or getattr(node, "value", None) is None or self.deferred:
            return node
        made = []
        while True:
            call = next((c for c in _evaluated_calls(node.value)
                         if self.private_dict_pop(c, node)), None)
            if call is None:
                break
            if isinstance(node, gast.Assign) and node.value is call and len(node.targets) == 1:
                made += self.popped(node, self.fresh)
                node = None
                break
            held = self.fresh("popped")
            made += self.popped(gast.copy_location(gast.Assign(
                targets=[_name(held, store=True)], value=call, type_comment=None), node),
                self.fresh)
            if isinstance(node, gast.Expr) and node.value is call:
                node = None  # d.pop(k) as a statement: the read and the rebinding
                break
            _replace(node, call, gast.copy_location(_name(held), call))
        if not made:
            return node
        out = []
        for stmt in made:  # (the rebinding's comprehension: .dict_comprehensions)
            new = self.visit(stmt)
            out.extend(new if isinstance(new, list) else [new])
        return out if node is None else [*out, node]

    @staticmethod
    def popped(node, fresh) -> list:
        """The read and the rebinding that ``node``, ``v = d.pop(...)``, stands for."""
        call = node.value
        name, key = call.func.value, call.args[0]
        if len(call.args) == 2:
            read = gast.Call(func=gast.Attribute(value=clone(name), attr="get",
                                                 ctx=gast.Load()),
                             args=[clone(key), call.args[1]], keywords=[])
        else:
            read = gast.Subscript(value=clone(name), slice=clone(key), ctx=gast.Load())
        k, v = fresh("key"), fresh("item")
        pairs = gast.Call(func=gast.Attribute(value=clone(name), attr="items",
                                              ctx=gast.Load()), args=[], keywords=[])
        kept = gast.DictComp(key=_name(k), value=_name(v), generators=[gast.comprehension(
            target=gast.Tuple(elts=[_name(k, store=True), _name(v, store=True)],
                              ctx=gast.Store()),
            iter=pairs, ifs=[gast.Compare(left=_name(k), ops=[gast.NotEq()],
                                          comparators=[clone(key)])], is_async=0)])
        made = [gast.Assign(targets=node.targets, value=read, type_comment=None),
                gast.Assign(targets=[_name(name.id, store=True)], value=kept,
                            type_comment=None)]
        for part in (p for stmt in made for p in walk(stmt)):
            if "lineno" in part._attributes and getattr(part, "lineno", None) is None:
                gast.copy_location(part, node)
        return made

    def private_dict_pop(self, call, stmt) -> bool:
        """Whether ``call`` is ``d.pop(k)`` or ``d.pop(k, default)`` on a dict
        only the name ``d`` can reach, which nothing in ``stmt`` reads before
        the pop, and whose key and name ``stmt`` does not rebind."""
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "pop" and isinstance(call.func.value, gast.Name)
                and 1 <= len(call.args) <= 2 and not call.keywords
                and not any(isinstance(a, gast.Starred) for a in call.args)
                and isinstance(call.args[0], (gast.Constant, gast.Name))
                and call.func.value.id in self.n.__dict__.get("private_dicts", ())):
            return False
        name = call.func.value.id
        targets = stmt.targets if isinstance(stmt, gast.Assign) else \
            [stmt.target] if isinstance(stmt, gast.AugAssign) else []
        bound = {n.id for t in targets for n in walk(t) if isinstance(n, gast.Name)}
        if bound & ({name} | _key_names(call)):
            return False
        inside = {id(n) for n in walk(call)}
        end = (call.end_lineno, call.end_col_offset)
        return all((n.lineno, n.col_offset) >= end for n in walk(stmt)
                   if isinstance(n, gast.Name) and n.id == name and id(n) not in inside)


def private_dicts(func, params, callee) -> set:
    """The names ``d`` of ``d.pop(...)`` calls in ``func`` for which
    :func:`private_dict` holds (asked before any rewrite)."""
    receivers = {n.func.value.id for n in walk(func) if isinstance(n, gast.Call)
                 and isinstance(n.func, gast.Attribute) and n.func.attr == "pop"
                 and isinstance(n.func.value, gast.Name)}
    # for k in d: d.pop(k) raises in Python (the dict changed size while iterated);
    # a rebound copy would not: left to the refusal
    iterated = {n.id for loop in walk(func) if isinstance(loop, gast.For)
                for n in walk(loop.iter) if isinstance(n, gast.Name)
                and any(isinstance(c, gast.Call) and isinstance(c.func, gast.Attribute)
                        and c.func.attr == "pop" and isinstance(c.func.value, gast.Name)
                        and c.func.value.id == n.id for s in loop.body for c in walk(s))}
    return {name for name in receivers - iterated
            if private_dict(func, params, callee, name)}


def _evaluated_calls(expr):
    """The calls in ``expr`` evaluated whenever it is, in order (not those in a
    lambda, a comprehension, a conditional expression or the right of
    ``and``/``or``)."""
    if isinstance(expr, (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
                         gast.GeneratorExp, gast.IfExp)):
        return
    if isinstance(expr, gast.BoolOp):
        yield from _evaluated_calls(expr.values[0])
        return
    for child in gast.iter_child_nodes(expr):
        yield from _evaluated_calls(child)
    if isinstance(expr, gast.Call):
        yield expr


def _replace(tree, old, new) -> None:
    """Put ``new`` where ``old`` is in ``tree``."""
    for node in walk(tree):
        for field, value in gast.iter_fields(node):
            if value is old:
                setattr(node, field, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                value[next(i for i, v in enumerate(value) if v is old)] = new
                return


def private_dict(func, params, callee, name: str) -> bool:
    """Whether every binding of the local ``name`` makes a new dict and every
    read of it goes through it (no other name, container or call gets the dict).

        >>> f = gast.parse("def f(x):\\n    d = {'a': x}\\n    e = d\\n    g = {}\\n"
        ...                "    n = len(g) + g.get('a', 0.0)").body[0]
        >>> private_dict(f, ['x'], lambda c: len if c.func.id == 'len' else None, 'd')
        False
        >>> private_dict(f, ['x'], lambda c: len if c.func.id == 'len' else None, 'g')
        True
    """
    if name in params:
        return False
    parents, found = {}, False
    for node in walk(func):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in walk(func):
        if isinstance(node, (gast.Lambda, gast.FunctionDef)) and node is not func \
                and any(isinstance(n, gast.Name) and n.id == name for n in walk(node)):
            return False  # read or bound by a nested function: its own rules
        if not (isinstance(node, gast.Name) and node.id == name):
            continue
        parent = parents.get(id(node))
        if isinstance(node.ctx, gast.Store):
            if not (isinstance(parent, gast.Assign) and len(parent.targets) == 1
                    and parent.targets[0] is node and _new_dict(parent.value, callee)):
                return False
            found = True
        elif not _read_through(node, parent, parents, callee):
            return False
    return found


def _new_dict(value, callee) -> bool:
    return isinstance(value, (gast.Dict, gast.DictComp)) or (
        isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
        and callee(value) is dict)


def _read_through(node, parent, parents, callee) -> bool:
    """Whether this read of the dict keeps it where it is."""
    if isinstance(parent, gast.Subscript) and parent.value is node:
        return True
    if isinstance(parent, gast.Attribute) and parent.value is node:
        return True  # d.get(k), d.items(): a dict's methods keep no reference
    if isinstance(parent, gast.Compare) and any(
            c is node and isinstance(op, (gast.In, gast.NotIn))
            for c, op in zip(parent.comparators, parent.ops)):
        return True
    if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is node:
        return True
    if isinstance(parent, gast.Return) and parent.value is node:
        return True
    if isinstance(parent, gast.Call) and node in parent.args \
            and isinstance(parent.func, gast.Name) and parent.func.id in _READERS:
        called = callee(parent)
        return getattr(called, "__name__", None) == parent.func.id \
            and getattr(called, "__module__", None) == "builtins"
    return False


def _key_names(call) -> set:
    key = call.args[0]
    return {key.id} if isinstance(key, gast.Name) else set()


def _name(identifier, store=False):
    return gast.Name(id=identifier, ctx=gast.Store() if store else gast.Load(),
                     annotation=None, type_comment=None)
