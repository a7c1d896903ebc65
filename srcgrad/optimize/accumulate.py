"""Indexing adjoints accumulated in place: one cotangent buffer, not a zeros
array per iteration.

The adjoint of ``a[index]`` scatters the cotangent into zeros shaped like
``a`` (``getitem_grad``), and a loop that indexes ``a`` adds one such array
per iteration to ``a``'s cotangent: ``d_a = d_a + getitem_grad(g, a, i)``
costs the size of ``a`` each time, so a loop over ``n`` rows costs O(n^2).
This pass starts the cotangent as a buffer of zeros (``cotangent_buffer(a)``
instead of ``0.0``) and adds each adjoint into the elements it concerns, in
the buffer itself (``scatter_add(d_a, g, a, i)``: ``d_a[i] += g``, with
``np.add.at``'s order where indices repeat): O(size of ``a[i]``) an
iteration.  Each element is the same sum as before, in the same order, so
the gradient is bit for bit the one of the plain sums.

Sound when nothing but the adjoint sweep sees the buffer while it changes.
The pass rewrites a cotangent ``d`` only when, in the whole sweep:

* ``d`` starts at the top level, before any other mention, as ``d = 0.0``
  or as a first contribution ``d = e`` (which becomes the buffer, then
  ``d = d + e``: ``0.0 + e`` is ``e``, up to the sign of a zero that the
  plain sums' first ``+ 0.0`` dropped anyway); a zero inside a loop or branch
  is the reset of a cotangent whose variable is overwritten: left as it is;
* every other assignment to ``d`` is an accumulation ``d = d + e`` with
  ``e`` not reading ``d`` -- a sum is a fresh array, so ``d`` is always an
  array the sweep made and nobody else holds; a copy ``d = g``, an unpacked
  call result, an element update of ``d`` leave it as it is;
* every other read of ``d`` (``d_y = d``, ``f(d)``, anomaly checks) comes at
  the top level after the last in-place update, so an alias it makes never
  sees a later change; reads in the returned result are after everything;
* at least one ``getitem_grad`` accumulation into ``d`` sits in a loop (where
  the cost is), every one indexes the same array name ``a``, and nothing in
  the sweep rebinds ``a`` (a restore of ``a`` would change the buffer's shape
  and meaning); the buffer is made from ``a`` where ``d = 0.0`` was.

The helpers keep ``getitem_grad``'s rules at run time: a buffer only for a
float or complex array (``0.0``, the plain sum, for a list, a Python float or
an integer array), ``g`` cast to ``a``'s dtype before it is added, and the
plain sum wherever ``d`` is not an array of ``a``'s shape whose dtype holds
the sum.  Checkpointing (``sqrt``, ``revolve``) reruns forward segments but
runs each iteration's adjoint once, so the buffer, made before the adjoint
loop, receives each update once.  Tested by tests/optimize/test_accumulate.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> sweep = gast.parse(
    ...     "d_X = 0.0\\n"
    ...     "for i in reversed(t1):\\n"
    ...     "    d_t2 = d_s * w\\n"
    ...     "    d_X = d_X + getitem_grad(d_t2, X, i)\\n").body
    >>> print(show_statements(accumulate_in_place(sweep)))
    d_X = cotangent_buffer(X)
    for i in reversed(t1):
        d_t2 = d_s * w
        d_X = scatter_add(d_X, d_t2, X, i)  # d_X[i] += d_t2, in place

A cotangent that is copied before a later update keeps the plain sums:

    >>> sweep = gast.parse(
    ...     "d_X = 0.0\\n"
    ...     "for i in reversed(t1):\\n"
    ...     "    d_Y = d_X\\n"
    ...     "    d_X = d_X + getitem_grad(d_t2, X, i)\\n").body
    >>> print(show_statements(accumulate_in_place(sweep)))
    d_X = 0.0
    for i in reversed(t1):
        d_Y = d_X
        d_X = d_X + getitem_grad(d_t2, X, i)
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import call_to, call_to_slice, clone, source_of, walk

_COMPOUND = (gast.If, gast.For, gast.While)


def accumulate_in_place(stmts) -> list:
    """The adjoint sweep ``stmts`` with each cotangent that receives indexing
    adjoints in a loop, and that only the sweep owns, made once and updated in
    place (see the module docstring for when); ``stmts`` is changed in place."""
    for var in sorted(_looped_sites(stmts)):
        plan = _plan(stmts, var)
        if plan is not None:
            _rewrite(var, *plan)
    return stmts


def _site(stmt, var):
    """``(g, a, index)`` if ``stmt`` is ``var = var + getitem_grad(g, a, index)``."""
    if not _is_accumulation(stmt, var):
        return None
    call = stmt.value.right
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Name) \
            and call.func.id == "getitem_grad" and len(call.args) == 3 and not call.keywords \
            and isinstance(call.args[1], gast.Name):
        return tuple(call.args)
    return None


def _is_accumulation(stmt, var) -> bool:
    """``var = var + e`` with ``e`` not reading ``var``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == var):
        return False
    value = stmt.value
    return isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) \
        and isinstance(value.left, gast.Name) and value.left.id == var \
        and var not in ir.names_in(value.right)


def _is_first(stmt, var) -> bool:
    """``var = e``, ``e`` not reading ``var``: a first contribution, straight-line."""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == var \
        and var not in ir.names_in(stmt.value)


def _is_zero(stmt, var) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == var \
        and isinstance(stmt.value, gast.Constant) and type(stmt.value.value) is float \
        and stmt.value.value == 0.0


def _looped_sites(stmts) -> set[str]:
    """Cotangents with a ``getitem_grad`` accumulation inside a loop."""
    names = set()
    for stmt in ir.walk_statements(stmts):
        if isinstance(stmt, (gast.For, gast.While)):
            for inner in ir.walk_statements(stmt.body):
                if isinstance(inner, gast.Assign) and len(inner.targets) == 1 \
                        and isinstance(inner.targets[0], gast.Name):
                    var = inner.targets[0].id
                    if _site(inner, var) is not None:
                        names.add(var)
    return names


def _mentions(node, var) -> bool:
    return any(isinstance(n, gast.Name) and n.id == var for n in walk(node))


def _own_mentions(stmt):
    """The nodes a statement itself holds (a compound statement's header only)."""
    if isinstance(stmt, gast.For):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (gast.If, gast.While)):
        return [stmt.test]
    return [stmt]


def _plan(stmts, var):
    """``(zero, sites, array)`` when rewriting ``var`` is sound, else None."""
    start = next((i for i, stmt in enumerate(stmts) if _mentions(stmt, var)), None)
    if start is None or not (_is_zero(stmts[start], var) or _is_first(stmts[start], var)):
        return None
    sites, reads, last_site, arrays = [], [], -1, set()
    for top in range(start + 1, len(stmts)):
        for stmt in ir.walk_statements([stmts[top]]):
            if not any(_mentions(node, var) for node in _own_mentions(stmt)):
                continue
            if isinstance(stmt, _COMPOUND) or _is_zero(stmt, var):
                return None  # a loop target, a test, a reset: not the simple case
            site = _site(stmt, var)
            if site is not None:
                sites.append(stmt)
                arrays.add(site[1].id)
                last_site = top
            elif _is_accumulation(stmt, var):
                continue
            elif var in _stored(stmt):
                return None  # a copy, an unpacked result, an element update
            else:
                reads.append(top)
    if len(arrays) != 1 or any(top <= last_site for top in reads):
        return None
    array = arrays.pop()
    if any(array in _stored(stmt) for stmt in ir.walk_statements(stmts)):
        return None
    return stmts, start, sites, array


def _stored(stmt) -> set[str]:
    names = set()
    for node in _own_mentions(stmt):
        names.update(n.id for n in walk(node)
                     if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
        names.update(ir.target_names(stmt))
    updated = getattr(stmt, "updates", None)
    if updated:
        names.add(updated)
    return names


def _rewrite(var, stmts, start, sites, array) -> None:
    first = stmts[start]
    if not _is_zero(first, var):  # d = e: the buffer, then d = d + e (0.0 + e is e)
        first.value = gast.BinOp(left=ir.name(var), op=gast.Add(), right=first.value)
        made = ir.assign(var, None)
        made.__dict__.update({k: v for k, v in first.__dict__.items()
                              if k in ("origin", "source_stmt")})
        stmts.insert(start, made)
        site = _site(first, var)
        if site is not None and site[1].id == array:  # d = getitem_grad(g, a, i) itself
            sites = [first, *sites]
        first = made
    first.value = call_to("cotangent_buffer", ir.name(array))
    first.origin = getattr(sites[0], "origin", None)  # what reads the array: indexing
    for stmt in sites:
        g, a, index = stmt.value.right.args
        shown = call_to_slice(clone(index))
        shown = ", ".join(map(source_of, shown.elts)) if isinstance(shown, gast.Tuple) \
            and shown.elts else source_of(shown)
        stmt.value = call_to("scatter_add", ir.name(var), g, a, index)
        stmt.comment = f"{var}[{shown}] += {source_of(g)}, in place"
