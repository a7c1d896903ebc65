"""A matrix product summed whole: its operands' cotangents are sums, not products.

``np.sum(a @ b)`` gives every element of the product the one cotangent
``g`` (``np.mean``: ``g / size``).  The adjoint sweep spreads that scalar
over the product's shape (``unreduce``) and hands the matrix of one value to
the product's rules, two full matrix products: ``G @ b.T`` and ``a.T @ G``.
But every row of ``G @ b.T`` is ``g`` times ``b``'s row sums, and every
column of ``a.T @ G`` is ``g`` times ``a``'s column sums; this pass writes
the rules that way::

    d_t3 = unreduce(d_t4, t3)           ->  (gone)
    d_t2 = matmul_grad_a(d_t3, t2, C)   ->  d_t2 = summed_matmul_grad_a(d_t4, t2, C)
    d_C = matmul_grad_b(d_t3, t2, C)    ->  d_C = summed_matmul_grad_b(d_t4, t2, C)

The helpers (:mod:`srcgrad.runtime.summed_products`) sum the operands --
work in their size, not the product's ``m * k * n`` -- and read neither the
product nor its cotangent, so the forward sweep no longer keeps the product
for the adjoint sweep (it read ``t3`` only for its shape).  Where their
shortcut does not hold (stacks of matrices, integer arrays, Dask or CuPy
arrays) they make the product again (for Dask and CuPy, an empty stand-in
of its shape and dtype) and apply ``matmul_grad_a`` to ``unreduce(g,
product)``: what the sweep computed before.  The shortcut's
numbers differ from the product's only by the order of a sum (the runtime
module says how far); the forward sweep is untouched, so the value
``value_and_grad`` returns stays bit for bit the function's.

In ``grad`` mode, :func:`seed_without_product` goes one step further where
the function returns the sum itself: the seed then needs neither the
product nor its sum, and the forward sweep drops both.

Sound when: ``d = unreduce(g, x)`` has two arguments (a full reduction:
``g`` is the cotangent of a scalar, the same on every element of ``x``,
exactly the broadcast :func:`.inplace_adjoint.keep_scalar` recognises with
:func:`.inplace_adjoint.is_unreduce`); ``d`` is assigned once in the sweep,
by that top-level statement; every other mention of ``d`` is the first
argument of ``matmul_grad_a(d, a, b)`` or ``matmul_grad_b(d, a, b)`` in a
later top-level statement (not a loop, a branch, a container, a copy, a
``return``) -- so each reader receives exactly ``unreduce(g, x)``; and
every statement of the function that assigns ``x`` is a product ``@`` or
``np.matmul`` (no in-place update), so ``x`` has the shape and dtype of
``a @ b``, which is all ``unreduce`` reads of it, and the helper derives
them from ``a`` and ``b``.  ``g`` is passed on by name where nothing else
assigns that name in the sweep (it holds one value all along); else ``d =
g`` stays as a statement, evaluated where ``unreduce`` was -- ``np.mean``'s
``d_t3 / size_of(t2)``, whose count of the product's elements
``summed_product_size(a, b)`` takes from the operands' shapes, as the
product's shape is ``a @ b``'s.  Tested by
tests/optimize/test_summed_products.py.

    >>> import gast, operator
    >>> from types import SimpleNamespace
    >>> from .. import ir
    >>> from ..ir.emit import show_statements
    >>> product = gast.parse("t3 = t2 @ C").body[0]
    >>> product.op = ir.Op(operator.matmul, [ir.name("t2"), ir.name("C")], {}, None, "@")
    >>> program = SimpleNamespace(body=[product])
    >>> sweep = gast.parse(
    ...     "d_t4 = grad_seed(t4)\\n"
    ...     "d_t3 = unreduce(d_t4, t3)\\n"
    ...     "d_t2 = matmul_grad_a(d_t3, t2, C)\\n"
    ...     "d_C = matmul_grad_b(d_t3, t2, C)\\n"
    ...     "d_t1 = d_t2 * (1 - t2 ** 2)").body
    >>> print(show_statements(sum_products(sweep, program)))
    d_t4 = grad_seed(t4)
    d_t2 = summed_matmul_grad_a(d_t4, t2, C)  # d_t4 times C's row sums, on every row
    d_C = summed_matmul_grad_b(d_t4, t2, C)  # d_t4 times t2's column sums, in every column
    d_t1 = d_t2 * (1 - t2 ** 2)
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import ir
from ..ir.syntax import call_to, load_name, source_of, walk_nodes
from .inplace_adjoint import is_unreduce

#: The product rules rewritten, and the helpers that replace them.
_SUMMED = {"matmul_grad_a": "summed_matmul_grad_a", "matmul_grad_b": "summed_matmul_grad_b"}
_PRODUCTS = (operator.matmul, np.matmul)
#: The reductions of a product whose seed needs no product, by their name in ``np``.
_REDUCTIONS = {np.sum: "sum", np.mean: "mean"}


def sum_products(stmts, program) -> list:
    """The adjoint sweep ``stmts`` with the rules of products summed whole
    written as sums (see the module docstring); ``program`` is the function
    (its top-level statements ``body``, each with its ``op``).  ``stmts`` is
    changed in place and returned."""
    counts: dict[str, int] = {}
    walked = [walk_nodes(stmt) for stmt in stmts]  # once each (nothing changes until the end)
    for nodes in walked:
        for n in nodes:
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                counts[n.id] = counts.get(n.id, 0) + 1
    candidates: dict[str, tuple] = {}   # d -> (its statement, its position, the readers' calls)
    for at, stmt in enumerate(stmts):
        mentioned = {n.id for n in walked[at] if isinstance(n, gast.Name)} if candidates else ()
        for d in [d for d in candidates if d in mentioned]:
            calls = _product_reads(stmt, d)
            if calls is None:
                del candidates[d]
            else:
                candidates[d][2].extend(calls)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and is_unreduce(stmt.value) \
                and counts.get(stmt.targets[0].id) == 1 \
                and _only_products(program, stmt.value.args[1].id):
            candidates[stmt.targets[0].id] = (stmt, at, [])
    dropped = set()
    for d, (stmt, at, calls) in candidates.items():
        if not calls:
            continue
        g = stmt.value.args[0]
        if isinstance(g, gast.Name) and _steady_before(stmts, at, g.id, counts):
            dropped.add(id(stmt))   # the readers take g itself
        else:
            _count_from_operands(g, stmt.value.args[1].id, calls, counts)
            stmt.value, g = g, load_name(d)   # d = g, a scalar, where unreduce was
        for call, reader in calls:
            call.func = load_name(_SUMMED[call.func.id])
            call.args[0] = load_name(g.id)
            if reader.value is call and not getattr(reader, "comment", None):
                reader.comment = _comment(call, g.id)
    stmts[:] = [stmt for stmt in stmts if id(stmt) not in dropped]
    return stmts


def seed_without_product(stmts, program) -> list:
    """``grad``'s sweep ``stmts``, after :func:`sum_products`, seeded without
    the product where the function returns ``np.sum(a @ b)`` (or ``np.mean``)
    and the sweep reads neither that value nor the product but for the seed::

        d_t4 = grad_seed(t4)  ->  d_t4 = summed_product_seed(np.sum, t2, C)

    so that nothing reads ``t3 = t2 @ C; t4 = np.sum(t3)`` and the forward
    sweep drops them: one matrix product fewer.  ``grad`` does not return
    the value; it reads it for the seed's dtype, and to raise whatever the
    function raises.  The helper (:mod:`srcgrad.runtime.summed_products`)
    knows that dtype from ``a`` and ``b`` where those are NumPy vectors or
    matrices of floats whose shapes fit (the product cannot raise), and
    otherwise makes the product and its sum as the function does.

    Sound when: the output ``out`` is assigned once, at the top level, by
    ``np.sum(x)`` or ``np.mean(x)``, ``x`` once, at the top level, by ``a @
    b`` (the operator: the helper repeats it where it makes the product);
    ``a`` and ``b`` are names holding one value all along (arguments never
    assigned, or names assigned once, at the top level, in a function that
    updates nothing in place), so that at the start of the adjoint sweep
    they hold the operands the product had; and the sweep reads ``out`` only
    in the seed and ``x`` nowhere.  For ``grad`` only: ``value_and_grad``
    returns the value, ``vjp`` is given the cotangent.

        >>> import gast, operator
        >>> from types import SimpleNamespace
        >>> from .. import ir
        >>> from ..ir.emit import show_statements
        >>> body = gast.parse("t2 = np.tanh(A)\\nt3 = t2 @ C\\nt4 = np.sum(t3)").body
        >>> for stmt, op in zip(body, [ir.Op(np.tanh, [ir.name("A")], {}, None, "np.tanh"),
        ...                            ir.Op(operator.matmul, [ir.name("t2"), ir.name("C")],
        ...                                  {}, None, "@"),
        ...                            ir.Op(np.sum, [ir.name("t3")], {}, None, "np.sum")]):
        ...     stmt.op = op
        >>> program = SimpleNamespace(body=body, params=["A", "C"], output=ir.name("t4"))
        >>> sweep = gast.parse("d_t4 = grad_seed(t4)\\n"
        ...                    "d_C = summed_matmul_grad_b(d_t4, t2, C)").body
        >>> print(show_statements(seed_without_product(sweep, program)))
        d_t4 = summed_product_seed(np.sum, t2, C)  # grad_seed(t4) without t2 @ C
        d_C = summed_matmul_grad_b(d_t4, t2, C)
    """
    output = program.output
    found = returned_definitions(program)
    if found is None:
        return stmts
    once, steady_name = found

    def steady(node):
        return isinstance(node, gast.Name) and steady_name(node.id)

    total = once(output.id)
    op = getattr(total, "op", None)
    if op is None or op.primitive not in _REDUCTIONS or op.kwargs or len(op.args) != 1 \
            or not isinstance(op.args[0], gast.Name):
        return stmts
    x = op.args[0].id
    product = getattr(once(x), "op", None)
    if product is None or product.primitive is not operator.matmul or product.kwargs \
            or len(product.args) != 2 or not all(map(steady, product.args)):
        return stmts
    seeds = [stmt for stmt in stmts if isinstance(stmt, gast.Assign)
             and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name)
             and stmt.value.func.id == "grad_seed" and len(stmt.value.args) == 1
             and isinstance(stmt.value.args[0], gast.Name) and stmt.value.args[0].id == output.id]
    reads = [n.id for stmt in ir.walk_statements(stmts) for n in walk_nodes(stmt)
             if isinstance(n, gast.Name) and n.id in (x, output.id)]
    if len(seeds) != 1 or reads != [output.id]:
        return stmts
    a, b = product.args
    reduction = gast.Attribute(value=load_name("np"), attr=_REDUCTIONS[op.primitive],
                               ctx=gast.Load())
    seeds[0].value = call_to("summed_product_seed", reduction, load_name(a.id), load_name(b.id))
    seeds[0].comment = f"grad_seed({output.id}) without {a.id} @ {b.id}"
    return stmts


def returned_definitions(program):
    """``(once, steady)`` for a function returning one name and updating no
    array in place, else None: ``once(name)``, the statement binding ``name``
    once, at the top level (else None); ``steady(name)``, whether ``name``
    keeps one value all through (bound once so, or a parameter never bound):
    what a seed computed from the operands of the returned value needs
    (here and in :mod:`.elementwise_seed`)."""
    output = program.output
    if not isinstance(output, gast.Name) or any(
            ir.is_update(stmt) for stmt in ir.walk_statements(program.body)):
        return None
    counts, last = ir.definitions(program.body)
    top = {id(stmt) for stmt in program.body}

    def once(name):
        stmt = last.get(name)
        return stmt if counts.get(name) == 1 and id(stmt) in top else None

    def steady(name):
        return once(name) is not None or name in program.params and not counts.get(name)

    return once, steady


def _count_from_operands(g, x, calls, counts) -> None:
    """In ``g``, ``size_of(x)`` (or ``np.size(x)``: ``np.mean``'s count) ->
    ``summed_product_size(a, b)``, where every reader reads the one product
    ``a @ b`` of two names that the sweep never assigns (no restore between
    here and the readers: they hold the product's operands here too), so
    the count comes from their shapes, not from the product."""
    operands = {tuple(source_of(arg) for arg in call.args[1:]) for call, _ in calls}
    args = calls[0][0].args[1:]
    if len(operands) != 1 or not all(isinstance(arg, gast.Name) and not counts.get(arg.id)
                                     for arg in args):
        return
    for node in walk_nodes(g):
        if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], gast.Name) and node.args[0].id == x \
                and source_of(node.func) in ("size_of", "np.size"):
            node.func = load_name("summed_product_size")
            node.args = [load_name(arg.id) for arg in args]


def _product_reads(stmt, d):
    """``[(call, stmt), ...]``, the calls ``matmul_grad_a(d, a, b)`` and
    ``matmul_grad_b(d, a, b)`` in ``stmt``, where those are its only mentions
    of ``d`` and ``stmt`` is a top-level assignment; else None."""
    if not isinstance(stmt, gast.Assign) or d in ir.stored_names(stmt.targets[0]):
        return None
    calls = [n for n in walk_nodes(stmt.value) if isinstance(n, gast.Call)
             and isinstance(n.func, gast.Name) and n.func.id in _SUMMED
             and len(n.args) == 3 and not n.keywords
             and isinstance(n.args[0], gast.Name) and n.args[0].id == d]
    reads = sum(1 for n in walk_nodes(stmt) if isinstance(n, gast.Name) and n.id == d)
    return [(call, stmt) for call in calls] if reads == len(calls) else None


def _only_products(program, x) -> bool:
    """Whether every statement of ``program`` assigning ``x`` is a product
    ``a @ b`` or ``np.matmul(a, b)`` (and there is one)."""
    found = False
    for stmt in ir.walk_statements(program.body):
        if x in ir.assigned_by(stmt):
            op = getattr(stmt, "op", None)
            if ir.is_update(stmt) or op is None or op.primitive not in _PRODUCTS \
                    or op.kwargs or len(op.args) != 2:
                return False
            found = True
    return found


def _steady_before(stmts, at, name, counts) -> bool:
    """Whether ``name`` holds one value from ``stmts[at]`` on: the sweep never
    assigns it, or only once, in a top-level statement before ``at``."""
    if not counts.get(name):
        return True
    return counts[name] == 1 and any(name in ir.stored_names(s.targets[0])
                                     for s in stmts[:at] if isinstance(s, gast.Assign))


def _comment(call, g) -> str:
    """What the helper computes, in words."""
    a, b = (source_of(arg) for arg in call.args[1:])
    if call.func.id == "summed_matmul_grad_a":
        return f"{g} times {b}'s row sums, on every row"
    return f"{g} times {a}'s column sums, in every column"
