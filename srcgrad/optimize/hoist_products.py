"""A loop's product of an argument's row and a loop-invariant matrix, formed
for every step before the loop: the input projection of a recurrent loop.

In ``for t in t1: h = np.tanh(xs[t] @ W + h @ U)`` the product ``xs[t] @ W``
does not depend on the loop's state: all of them are one stacked product
``xs @ W``, made before the loop, whose matrices the loop reads
(``t3 = t3_steps[t]``) -- one call instead of ``T``, and no temporary per
step.  The forward sweep of a recurrent loop is where this pays: its state
products (``h @ U``) cannot be hoisted, but the input ones can.

The value must stay the function's own, bit for bit, and it does where the
stacked product calls, for each step, the routine the step's own product
calls: NumPy's ``matmul`` decides between BLAS's gemm, gemv and its own loop
from the core dimensions and strides alone, once, and then runs that choice
on each matrix of the stack (``numpy/_core/src/umath/matmul.c.src``), and a
row ``xs[t]`` of a stack has exactly the core dimensions and strides the
stacked call gives its step.  The runtime helper
(:func:`srcgrad.runtime.steps.products_by_step`) stacks only there: NumPy
arrays of one BLAS dtype, a 2-D ``W``, the loop over a ``range`` of rows of
``xs`` (a 2-D ``xs``, whose steps are vectors, is stacked as ``(1, n)``
matrices, the core ``matmul`` makes of a vector: one gemv a step, as in the
loop, where ``xs @ W`` would be one gemm); anywhere else it returns an
object whose ``[t]`` computes ``xs[t] @ W`` when the loop reads it, exactly
as before.

Sound when the stacked product, made before the loop, is what each step
would have computed:

* the loop is a ``for`` over a name (the helper sees the very object the
  loop iterates) with a name as its target, and has no ``break`` (the
  product of steps the loop never reaches would be work thrown away);
* ``a = X[i]`` and ``p = a @ W`` (or ``W @ a``) are statements of the loop
  body's top level, in that order, ``i`` is the loop's target and is stored
  nowhere in the body, and ``a`` is not stored between them;
* ``X`` and ``W`` are stored nowhere in the loop and are bound on every path
  to it (an argument, or assigned by a straight-line statement before the
  loop: the product before a loop that runs no step cannot fail), and nothing in
  the loop updates anything in place or calls anything that may (tape
  pushes aside): ``X`` and ``W`` hold the same numbers all through the loop.

``p`` is then a view of the stacked product, not an array of its own: the
loop's values are the same numbers, and the stack lives while a tape holds a
step of it.  Runs for the NumPy backend when optimising, after the tapes and
checkpointing passes (a checkpointed loop is a schedule, left alone).
Tested by tests/optimize/test_loop_products.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> from ..ir.naming import Namer
    >>> forward = gast.parse(
    ...     "t1 = range(xs.shape[0])\\n"
    ...     "for t in t1:\\n"
    ...     "    t2 = xs[t]\\n"
    ...     "    t3 = t2 @ W\\n"
    ...     "    t4 = h @ U\\n"
    ...     "    h = np.tanh(t3 + t4)\\n").body
    >>> print(show_statements(hoist_step_products(forward, {"xs", "W", "U", "h"}, Namer())))
    t1 = range(xs.shape[0])
    t3_steps = products_by_step(xs, W, t1)  # xs[t] @ W for every t of the loop, as one product
    for t in t1:
        t2 = xs[t]
        t3 = t3_steps[t]
        t4 = h @ U
        h = np.tanh(t3 + t4)

A loop that assigns the matrix is left alone:

    >>> forward = gast.parse(
    ...     "for t in t1:\\n"
    ...     "    t2 = xs[t]\\n"
    ...     "    t3 = t2 @ W\\n"
    ...     "    W = W * 0.5\\n").body
    >>> "products_by_step" in show_statements(hoist_step_products(forward, {"xs", "W"}, Namer()))
    False
"""

from __future__ import annotations

import gast

from .. import ir
from ..analysis.activity import has_effect
from ..ir.syntax import walk

_COMPOUND = (gast.If, gast.For, gast.While)


def hoist_step_products(forward, params, namer) -> list:
    """The forward sweep ``forward`` with each top-level loop's products of
    an argument's row and a loop-invariant matrix made before the loop (see
    the module docstring).  ``params``: the function's parameters, bound
    before everything; ``namer`` gives the stacked products' names.
    ``forward`` is changed in place and returned."""
    k = 0
    while k < len(forward):
        loop = forward[k]
        if isinstance(loop, gast.For):
            made = _hoist(loop, forward[:k], set(params), namer)
            forward[k:k] = made
            k += len(made)
        k += 1
    return forward


def _stores(stmts) -> set[str]:
    names = set()
    for stmt in ir.walk_statements(stmts):
        names.update(ir.assigned_by(stmt))
        if not isinstance(stmt, _COMPOUND):
            names.update(ir.stored_names(stmt))
    return names


def _keeps_arrays(loop) -> bool:
    """Whether nothing in ``loop`` updates a value in place or calls what may."""
    for stmt in ir.walk_statements(loop.body):
        if isinstance(stmt, (*_COMPOUND, gast.Pass, gast.Continue)) or getattr(stmt, "push", False):
            continue
        if not isinstance(stmt, gast.Assign) or ir.is_update(stmt) or has_effect(stmt):
            return False
        if any(isinstance(n, (gast.Subscript, gast.Attribute))
               and isinstance(getattr(n, "ctx", None), gast.Store) for n in walk(stmt)):
            return False
    return True


def _row(stmt, index):
    """``(a, X)`` if ``stmt`` is ``a = X[index]``."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Subscript) \
            and isinstance(stmt.value.value, gast.Name) and isinstance(stmt.value.slice, gast.Name) \
            and stmt.value.slice.id == index:
        return stmt.targets[0].id, stmt.value.value.id
    return None


def _product(stmt, row):
    """``(p, W, stepped)`` if ``stmt`` is ``p = row @ W`` (stepped 0) or ``p = W @ row`` (1)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.BinOp)
            and isinstance(stmt.value.op, gast.MatMult)
            and isinstance(stmt.value.left, gast.Name) and isinstance(stmt.value.right, gast.Name)):
        return None
    left, right = stmt.value.left.id, stmt.value.right.id
    if left == row and right != row:
        return stmt.targets[0].id, right, 0
    if right == row and left != row:
        return stmt.targets[0].id, left, 1
    return None


def _hoist(loop, earlier, params, namer) -> list:
    """The statements to put before ``loop``; its products are rewritten in place."""
    if not (isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Name)) \
            or any(isinstance(n, gast.Break) for n in walk(loop)) or not _keeps_arrays(loop):
        return []
    index, body = loop.target.id, loop.body
    stored = _stores(body) | {index}
    if index in _stores(body):
        return []
    bound = params | {n for stmt in earlier if not isinstance(stmt, _COMPOUND)
                      for n in ir.assigned_by(stmt)}  # bound on every path to the loop
    made = []
    for k, stmt in enumerate(body):
        found = _row(stmt, index)
        if found is None:
            continue
        row, array = found
        if array in stored or array not in bound:
            continue
        for later in body[k + 1:]:
            product = _product(later, row)
            if product is not None:
                target, matrix, stepped = product
                if matrix not in stored and matrix in bound:
                    made.append(_rewrite(later, loop, array, matrix, stepped, target, namer))
            if row in _stores([later]):
                break
    return made


def _rewrite(stmt, loop, array, matrix, stepped, target, namer):
    steps = namer.fresh(f"{target}_steps")
    args = [ir.name(array), ir.name(matrix), ir.name(loop.iter.id)]
    keywords = [gast.keyword(arg="stepped", value=gast.Constant(value=1, kind=None))] \
        if stepped else []
    before = ir.assign(steps, gast.Call(func=ir.name("products_by_step"), args=args,
                                        keywords=keywords))
    index = loop.target.id
    shown = f"{array}[{index}] @ {matrix}" if stepped == 0 else f"{matrix} @ {array}[{index}]"
    before.comment = f"{shown} for every {index} of the loop, as one product"
    stmt.value = gast.Subscript(value=ir.name(steps), slice=ir.name(index), ctx=gast.Load())
    stmt.op = None  # no longer the product: an element of the stacked one
    return before
