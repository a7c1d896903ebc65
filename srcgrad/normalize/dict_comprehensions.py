"""Dict comprehensions, written as the loop that fills a new dict.

Part of :mod:`.sugar` (a mixin of its desugarer).  ``{k: f(v) for k, v in
d.items() if c}`` is what people write to update a dict of parameters
(``params = {k: params[k] - lr * grads[k] for k in params}``); srcgrad has a
form for a dict display and for a store into a dict under a key computed as
the code runs, so the comprehension becomes, before its statement, a new
dict and the nested ``for``/``if`` statements that store each item, and the
statement reads that dict:

    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(p, lr):
    ...     q = {k: v - lr * v for k, v in p.items() if k != 'skip'}
    ...     return q['w']
    >>> print(unparse_body(normalize(parse_function(f))))
    made = {}
    t1 = keys_of(p)
    t2 = range(len(t1))
    for k_2 in t2:
        k_1 = t1[k_2]
        v_1 = p[k_1]
        t3 = k_1 != 'skip'
        if t3:
            t4 = lr * v_1
            t5 = v_1 - t4
            made[k_1] = t5
    q = made
    t6 = q['w']
    return t6

Sound because Python evaluates a dict comprehension exactly so: the first
iterable in the enclosing scope, once, then each generator's items in order,
the conditions, and key and value of each item (a later equal key replaces
the value, as a store does), into a dict no other name holds; a key other
than a name or a constant is computed into a name first, since a store
evaluates its value before its target's key.  The
comprehension's variables have their own scope: they get fresh names here,
so the function's own ``k`` and ``v`` keep their values.  The rewrite needs
statements before the one that holds the comprehension, which a
comprehension evaluated later or maybe not at all -- inside a lambda, a
comprehension or an ``a if c else b`` -- cannot have: there it is refused,
located.
"""

from __future__ import annotations

import gast

from ..ir.syntax import Renamer, assigned_names, clone, walk


class DictComprehensions:
    """``{k: v for ...}`` -> a dict filled by a loop (mixed into the desugarer)."""

    def visit_DictComp(self, node):
        if self.deferred:
            raise self.n.error(
                "a dict comprehension inside a lambda, a comprehension or a conditional "
                "expression is not supported: build the dict in a statement of its own "
                "first (d = {k: v for ...}) and use d there", node)
        if any(gen.is_async for gen in node.generators):
            raise self.n.error("async comprehensions are not supported", node)
        (made_store,), (made,) = self.names("made", 1)
        renames = {}
        for gen in node.generators:
            for name in sorted(assigned_names(gast.Module(body=[gast.Assign(
                    targets=[gen.target], value=gast.Constant(value=None, kind=None),
                    type_comment=None)], type_ignores=[]))):
                renames.setdefault(name, self.fresh(name))
        rename = Renamer(renames)
        key = rename.visit(clone(node.key))
        body = []
        if not isinstance(key, (gast.Name, gast.Constant)):
            # Python evaluates the key before the value, a store the value first
            (key_store,), (key_load,) = self.names("key", 1)
            body.append(gast.copy_location(gast.Assign(targets=[key_store], value=key,
                                                       type_comment=None), node.key))
            key = key_load
        body.append(gast.copy_location(gast.Assign(targets=[gast.Subscript(
            value=clone(made), slice=key, ctx=gast.Store())],
            value=rename.visit(clone(node.value)), type_comment=None), node.key))
        stmt = body
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                stmt = [gast.copy_location(gast.If(test=rename.visit(clone(cond)), body=stmt,
                                                   orelse=[]), cond)]
            iterable = gen.iter if gen is node.generators[0] else rename.visit(clone(gen.iter))
            stmt = [gast.copy_location(gast.For(target=rename.visit(clone(gen.target)),
                                                iter=iterable, body=stmt, orelse=[],
                                                type_comment=None), gen.target)]
        stmt = stmt[0]
        start = gast.Assign(targets=[made_store], value=gast.Dict(keys=[], values=[]),
                            type_comment=None)
        for new in (start, stmt):
            _located(new, node)
            visited = self.visit(new)  # the loop's own rewrites (d.items(), zip, ...)
            self.prelude.extend(visited if isinstance(visited, list) else [visited])
        return _located(clone(made), node)


def _located(tree, where):
    """``tree`` with every node that has no location given ``where``'s (a loop
    the rewrite made shows the comprehension's line in the generated code)."""
    for sub in walk(tree):
        if getattr(sub, "lineno", None) is None and "lineno" in sub._attributes:
            gast.copy_location(sub, where)
    return tree
