"""A scalar cotangent times an array, without the pass over the array where
the scalar is 1: ``grad``'s seed.

``grad`` starts its adjoint sweep from the cotangent 1, and where the
function returns a sum the first rules multiply by it: the benchmark chain's
``return np.sum(aa * m + s)`` gives ``d_cc = unreduced(d_t3, x)`` (a NumPy 1)
and ``d_aa = d_cc * m`` -- a new array of a million ones times ``m``, that
is ``m``'s numbers again, read once by ``d_aa * np.cos(y)``.  A careful hand
writes ``np.cos(y) * m``.  This pass makes the product::

    d_aa = d_cc * m   ->   d_aa = times_one(d_cc, m)

and :func:`srcgrad.runtime.inplace.times_one` gives ``m``'s array itself
where ``d_cc`` is 1 and the product has ``m``'s dtype (else the product).
IEEE multiplication by 1 gives back each number, NaN's sign and the sign of
zero included, so the gradient is bit for bit the one without the pass (a
signalling NaN, which arithmetic never makes, would come back quieted).  The
products the in-place pass writes into an array, ``into_second(np.multiply,
d_cc, aa)``, skip their pass in the helper in the same way.

Sound when nothing can tell ``d_aa`` from a new array: the scalar is a name
bound once, at the top level, by a seed helper (``grad_seed``,
``unreduced``, ``summed_elementwise_seed``, ``summed_product_seed``: a
number, never an array of several); ``d_aa`` is bound once; and every later
mention of ``d_aa`` or ``m`` is an operand of arithmetic, of a NumPy ufunc
called without ``out=``, or of an in-place helper in the position it only
reads, or a ``del`` -- no statement writes into either array, hands it back
or keeps it, and no loop or branch mentions either.  Runs after the
in-place pass (:mod:`.inplace_adjoint`), whose writes are then known.
Tested by tests/optimize/test_unit_seed.py.

    >>> from ..ir.emit import show_statements
    >>> body = gast.parse("d_t = grad_seed(t)\\nd_a = d_t * m\\nd_y = into_second(np.multiply, "
    ...                   "d_a, np.cos(y))\\nd_x = d_a * 2.0").body
    >>> print(show_statements(seed_products(body)))
    d_t = grad_seed(t)
    d_a = times_one(d_t, m)  # d_t * m: m itself where d_t is 1
    d_y = into_second(np.multiply, d_a, np.cos(y))
    d_x = d_a * 2.0
    >>> body = gast.parse("d_t = grad_seed(t)\\nd_a = d_t * m\\nd_a2 = into_first(np.add, d_a, e)").body
    >>> print(show_statements(seed_products(body)))   # d_a's array is written into: left alone
    d_t = grad_seed(t)
    d_a = d_t * m
    d_a2 = into_first(np.add, d_a, e)
"""

from __future__ import annotations

from collections import Counter

import gast
import numpy as np

from ..ir.syntax import call_to, load_name, walk

#: The runtime helpers whose value is a scalar cotangent.
_SEEDS = frozenset({"grad_seed", "unreduced", "summed_elementwise_seed", "summed_product_seed"})
#: The in-place helpers and the position of the argument each one only reads.
_READ_AT = {"into_first": 2, "into_second": 1}
_COMPOUND = (gast.For, gast.While, gast.If, gast.With, gast.Try, gast.FunctionDef)


def seed_products(body, scalars=frozenset()) -> list:
    """``body`` (a function's statements) with each product of a seed and an
    array made with ``times_one`` where the module docstring's conditions hold;
    ``scalars``: names known to hold numbers (no array to keep: left alone)."""
    made = {stmt.targets[0].id for stmt in body if _binds_name(stmt)
            and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name)
            and stmt.value.func.id in _SEEDS}
    if not any(_binds_name(stmt) and isinstance(stmt.value, gast.BinOp)
               and isinstance(stmt.value.op, gast.Mult)
               and (isinstance(stmt.value.left, gast.Name) and stmt.value.left.id in made
                    or isinstance(stmt.value.right, gast.Name) and stmt.value.right.id in made)
               for stmt in body):
        return body  # no product of a seed: no need to count every assignment
    name, store = gast.Name, gast.Store
    counts = Counter(n.id for stmt in body for n in walk(stmt)
                     if type(n) is name and type(n.ctx) is store)
    seeds = {n for n in made if counts.get(n) == 1}
    for at, stmt in enumerate(body):
        if not (_binds_name(stmt) and isinstance(stmt.value, gast.BinOp)
                and isinstance(stmt.value.op, gast.Mult)):
            continue
        target, left, right = stmt.targets[0].id, stmt.value.left, stmt.value.right
        if not (isinstance(left, gast.Name) and isinstance(right, gast.Name)):
            continue
        seed, array = (left, right) if left.id in seeds else (right, left)
        if seed.id not in seeds or array.id in seeds or array.id in scalars \
                or counts.get(target) != 1 \
                or target in (seed.id, array.id):
            continue
        rest = body[at + 1:]
        if _only_read(rest, target) and _only_read(rest, array.id):
            stmt.value = call_to("times_one", load_name(seed.id), load_name(array.id))
            if not getattr(stmt, "comment", None):
                stmt.comment = f"{seed.id} * {array.id}: {array.id} itself where {seed.id} is 1"
    return body


def _binds_name(stmt) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], gast.Name)


def _only_read(stmts, name) -> bool:
    """Whether each mention of ``name`` in ``stmts`` is one that only reads its
    array at once (see the module docstring) or a ``del``."""
    for stmt in stmts:
        if isinstance(stmt, gast.Delete):
            continue
        if isinstance(stmt, _COMPOUND):
            if any(isinstance(n, gast.Name) and n.id == name for n in walk(stmt)):
                return False
            continue
        if not _reads_alone(stmt, name, None, None):
            return False
    return True


def _reads_alone(node, name, parent, position) -> bool:
    """Whether every ``name`` under ``node`` is read where its array is only read."""
    if isinstance(node, gast.Name):
        return node.id != name or isinstance(node.ctx, gast.Load) and _reading(parent, position)
    children = []
    if isinstance(node, gast.Call):
        children = [(child, at) for at, child in enumerate(node.args)]
        children += [(kw.value, None) for kw in node.keywords]
        children.append((node.func, "func"))
    else:
        children = [(child, None) for child in gast.iter_child_nodes(node)]
    return all(_reads_alone(child, name, node, at) for child, at in children)


def _reading(parent, position) -> bool:
    """Whether ``parent`` only reads its operand at ``position``: arithmetic,
    a NumPy ufunc called without ``out=`` (a new array either way), or the
    operand an in-place helper does not write into."""
    if isinstance(parent, (gast.BinOp, gast.UnaryOp)):
        return True
    if not (isinstance(parent, gast.Call) and isinstance(position, int)):
        return False
    func = parent.func
    if isinstance(func, gast.Name):
        return _READ_AT.get(func.id) == position
    return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
        and func.value.id == "np" and isinstance(getattr(np, func.attr, None), np.ufunc) \
        and not parent.keywords
