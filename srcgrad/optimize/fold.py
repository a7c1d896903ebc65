"""Folding single-use temporaries back into the expression that reads them.

A-normal form gives every intermediate value a name (``t1 = l + 1.0``), which
the rules need; once the sweeps are built, a temporary that nothing saves and
that only the next statement reads can go back inside that statement.  The code
then reads like what was written (``m = np.sqrt(l + 1.0)``), and it runs
faster: a named array stays alive until the function returns, an unnamed one
is freed as soon as it is used, and NumPy can even compute ``x @ W + b`` in the
buffer of ``x @ W`` (it reuses temporaries that nothing else references).

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> body = gast.parse("t1 = x @ W\\nt2 = t1 + b\\nh = np.tanh(t2)\\n"
    ...                   "t3 = h * 2\\nreturn t3, t1").body
    >>> print(show_statements(fold_temporaries(body, {"t1", "t2", "t3"})))
    t1 = x @ W
    h = np.tanh(t1 + b)
    return h * 2, t1

Folded cotangents are tidied, without changing a bit of the result:
``d_x + -d_y * c`` becomes ``d_x - d_y * c``.
Only a temporary assigned once and read once, by the statement right after
its own (so that nothing can change its operands in between), is folded, and
never into a loop's test or a comprehension, which would evaluate it again.

Sound when the folded expression sees the values its own statement saw:

* one store and one load of the temporary in the whole function, the load in
  the next statement of the same block.  A loop body is folded on its own, so
  neither the first statement of a body (the load may be of the previous
  iteration's value, or of the value from before the loop) nor the statement
  after a loop is ever a "next statement";
* no statement between: the lowering of ``a, b = b, a * c`` (``t = a * c;
  a = b; b = t``) keeps ``t``, since ``a = b`` rebinds an operand;
* a call in the reading statement that completes before the load would run
  before a definition that calls something: refused (order of effects); the
  temporaries come from A-normal form, in evaluation order, so a definition
  without a call is never moved past a call that was after it;
* never into a while test, a for header, a comprehension or a lambda (run
  again, or later); an ``if`` test runs once.

``_tidy`` is exact (negation commutes with IEEE products and quotients;
scaling by a power of two cancels) barring overflow or underflow of ``2 * m``,
and only ever touches cotangents.  Tested by tests/optimize/test_optimize_soundness.py
(``fold_across_rebinding``, ``while_test_temporary``, ``parallel_swap_then_use``).

    >>> body = gast.parse("t = a * c\\na = b\\nb = t").body
    >>> print(show_statements(fold_temporaries(body, {"t"})))
    t = a * c
    a = b
    b = t
"""

from __future__ import annotations

import math

import gast

from ..ir.syntax import walk_nodes

# Where a folded expression would run more than once, or later than its statement.
_DEFERRED = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def fold_temporaries(body, temporaries, arithmetic=frozenset()) -> list:
    """``body`` (a function's statements) with each temporary in ``temporaries``
    that is stored once and loaded once, by the next statement, folded into it.

    A name in ``arithmetic`` (the cotangent of a temporary) folds only where its
    value calls nothing: ``d_n = -(d_o * o)``, but not ``unreduce(...)`` inside
    ``unbroadcast(...)``, which would no longer read well.
    """
    names = set(temporaries) | set(arithmetic)
    stores: dict[str, int] = {}
    loads: dict[str, int] = {}
    for node in walk_nodes(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Name) and node.id in names:
            counts = stores if isinstance(node.ctx, gast.Store) else loads
            counts[node.id] = counts.get(node.id, 0) + 1
    single = {n for n in names if stores.get(n) == 1 and loads.get(n) == 1}
    return _fold_block(body, single, set(arithmetic)) if single else body


def _fold_block(stmts, single, arithmetic) -> list:
    out = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                setattr(stmt, field, _fold_block(getattr(stmt, field), single, arithmetic))
        folded = False
        while out and _foldable(out[-1], single, arithmetic) and _substitute(stmt, out[-1]):
            gone = out.pop()
            stmt.comment_before = (getattr(gone, "comment_before", [])
                                   + getattr(stmt, "comment_before", []))
            # the adjoints now computed here, for anomaly mode's message (ad/anomaly.py)
            stmt.folded_sources = [*getattr(gone, "folded_sources", []), *(
                [gone.source_stmt] if getattr(gone, "source_stmt", None) is not None else []),
                *getattr(stmt, "folded_sources", [])]
            folded = True
        out.append(_tidy(stmt) if folded else stmt)
    return out


def _tidy(node):
    """What folding cotangents together produces, written more simply, with the
    same floating-point result:

    * ``a + -b * c`` -> ``a - b * c``, ``a - -b`` -> ``a + b`` (``d_t = -d_y``
      read by ``d_x = d_x + d_t * c``): IEEE products and quotients commute
      with negation;
    * ``a / (2 * m) * (2 * k)`` -> ``a / m * k`` (``sqrt`` of ``k ** 2 + 1``):
      scaling by a power of two is exact, so the twos cancel.

    Children first, in field order (as a ``NodeTransformer`` would, without
    its dispatch per node); ``node`` is changed in place and returned.
    """
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list:
            for item in value:
                if isinstance(item, gast.AST):
                    _tidy(item)
        elif isinstance(value, gast.AST):
            _tidy(value)
    if type(node) is gast.BinOp:
        if isinstance(node.op, (gast.Add, gast.Sub)):
            positive = _without_sign(node.right)
            if positive is not None:
                node.right = positive
                node.op = gast.Sub() if isinstance(node.op, gast.Add) else gast.Add()
        elif isinstance(node.op, gast.Mult) and isinstance(node.left, gast.BinOp) \
                and isinstance(node.left.op, gast.Div):
            scale, divisor = _scaled(node.left.right)
            same, factor = _scaled(node.right)
            if scale is not None and scale == same:
                node.left.right, node.right = divisor, factor
    return node


def _scaled(node):
    """``(2, m)`` for ``2 * m`` (a power of two times something), else ``(None, None)``."""
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult) \
            and isinstance(node.left, gast.Constant) and type(node.left.value) in (int, float) \
            and node.left.value > 0 and math.frexp(node.left.value)[0] == 0.5:
        return node.left.value, node.right
    return None, None


def _without_sign(node):
    """``-b * c / d`` without its leading minus (``b * c / d``), or None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return node.operand
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Mult, gast.Div)):
        left = _without_sign(node.left)
        if left is not None:
            node.left = left
            return node
    return None


def _foldable(stmt, single, arithmetic) -> bool:
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in single
            and not getattr(stmt, "comment", None)):
        return False
    return stmt.targets[0].id not in arithmetic or \
        not any(isinstance(n, gast.Call) for n in walk_nodes(stmt.value))


def _substitute(stmt, definition) -> bool:
    """Put ``definition``'s value where ``stmt`` reads its target; whether it could."""
    if isinstance(stmt, (gast.Assign, gast.Expr, gast.Return)):
        holder, field = stmt, "value"
    elif isinstance(stmt, gast.If):
        holder, field = stmt, "test"
    else:  # a loop's header runs more than once (a while test) or binds names
        return False
    root = getattr(holder, field)
    if root is None:
        return False
    site = _Site(definition.targets[0].id)
    place = site.find(root, holder, field)
    if place is None:
        return False
    # a call that completes before the read would now run before the definition
    if site.calls_before and any(isinstance(n, gast.Call) for n in walk_nodes(definition.value)):
        return False
    node_or_list, key = place
    if isinstance(node_or_list, list):
        node_or_list[key] = definition.value
    else:
        setattr(node_or_list, key, definition.value)
    return True


class _Site:
    """Finds the read of ``name`` in evaluation order, noting whether a call
    finishes before it."""

    def __init__(self, name):
        self.name = name
        self.calls_before = False

    def find(self, node, parent, key):
        """``(parent, key)``, where the read is, or None."""
        if isinstance(node, gast.Name):
            if node.id == self.name and isinstance(node.ctx, gast.Load):
                return parent, key
            return None
        if isinstance(node, _DEFERRED) or not isinstance(node, gast.AST):
            return None
        for field, child in gast.iter_fields(node):
            if isinstance(child, list):
                for i, item in enumerate(child):
                    found = self.find(item, child, i)
                    if found:
                        return found
            else:
                found = self.find(child, node, field)
                if found:
                    return found
        if isinstance(node, gast.Call):
            self.calls_before = True
        return None
