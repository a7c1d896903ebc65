"""A loop-invariant weight's cotangent formed after the adjoint loop, with one
product, instead of one small product per step.

A recurrent loop ``for t in ...: h = np.tanh(xs[t] @ W + h @ U)`` gives the
adjoint loop, for each weight, an accumulation of one small matrix product
per step: ``d_W = d_W + matmul_grad_b(d_t3, xs[t], W)``.  Summed over the
steps that is one product of the steps stacked (``xs`` as a ``(T * B, I)``
matrix, transposed, times the ``(T * B, H)`` stack of the cotangents), which
BLAS computes several times faster than ``T`` products of ``B`` rows and the
sums between them.  This pass makes the adjoint loop collect each step's
cotangent (and the step's operand, or for a row ``xs[t]`` of an argument
its index ``t``) in a list, and forms the weight's cotangent after the loop:
``d_W = matmul_grad_b_steps(d_W, d_W_steps, W, rows=xs)`` (runtime/steps.py).

The helper forms the stacked product only where it is the same sum: NumPy
float or complex arrays, every step of one shape and dtype, 1-D or 2-D per
step, a 2-D weight; there the gradient differs from the step-by-step sum by
the order of the additions alone (within a few ``n * eps`` of the sum of the
terms' magnitudes).  Anywhere else it adds ``matmul_grad_b`` of each step in
the loop's order, exactly the sums the loop made, bit for bit.  The
operands are the arrays themselves, not copies: a value the tape holds
(``h``) is collected as the reference the restore gives back.  Same for
``matmul_grad_a`` into a loop-invariant left operand (``W @ h``).

Sound when the collected values are the values the loop's sums would have
read, and the sum after the loop is the one the loop would have left:

* the accumulation ``d = d + matmul_grad_b(g, a, W)`` is the only mention of
  ``d`` in the loop (every mention is such a site, with one weight ``W``
  and one kind, ``_a`` or ``_b``), and ``d`` is assigned before the loop by
  a straight-line statement of the same block: nothing reads or resets the
  partial sum while the loop runs, and the helper, right after the loop,
  continues from the value before it (bound even if the loop runs no step);
* ``W`` is stored nowhere in the loop, so after the loop it is the weight
  each step multiplied (its shape is all the cotangent reads of it), and it
  is bound on every path (an argument, a top-level assignment of the
  forward sweep or of the block before the loop), so reading it after a
  loop that ran no step cannot fail;
* nothing in the loop updates anything in place (no element assignment, no
  ``append``, no helper writing into an array): a collected array is never
  changed after it is collected, and a restore ``h = h_tape.pop()`` rebinds
  the name without touching the array collected before;
* a row ``a = X[i]`` is collected as its index ``i`` only where ``X`` is an
  argument that the function never assigns or updates (the same array when
  the helper reads it after the loop), and the last statement of the
  iteration to assign ``a`` before the sum is that one, at the top level of
  the loop body, with neither ``a`` nor ``i`` stored between them;
* every site of one cotangent appends to one list, in the order the loop
  runs them, so the fallback adds the same terms in the same order;
* a sum that ``shares`` another's stacked cotangents uses them only where
  its steps hold the very same arrays, in the same order (checked at run
  time, element by element, with ``is``).

Not run for the loop-checkpointing policies (``sqrt``, ``revolve``): they
keep O(sqrt(T)) or O(snapshots) states, and collecting every step's
cotangent would hold O(T) arrays again.  A loop nested in an adjoint loop
whose weight changes per outer iteration is rewritten inside it (the
product after the inner loop).  Tested by tests/optimize/test_loop_products.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> from ..ir.naming import Namer
    >>> sweep = gast.parse(
    ...     "d_U = 0.0\\n"
    ...     "d_W = 0.0\\n"
    ...     "for t in reversed(t1):\\n"
    ...     "    d_t5 = d_h * (1 - h ** 2)\\n"
    ...     "    h = h_tape.pop()\\n"
    ...     "    d_h = matmul_grad_a(d_t5, h, U)\\n"
    ...     "    d_U = d_U + matmul_grad_b(d_t5, h, U)\\n"
    ...     "    t2 = xs[t]\\n"
    ...     "    d_W = d_W + matmul_grad_b(d_t5, t2, W)\\n").body
    >>> sweep = products_after_loops(sweep, {"xs", "W", "U"}, Namer())
    >>> print(show_statements(sweep))
    d_U = 0.0
    d_W = 0.0
    d_U_steps = StepTerms()  # the terms of d_U's sum, added with one product after the loop
    d_W_steps = []  # the terms of d_W's sum, added with one product after the loop
    for t in reversed(t1):
        d_t5 = d_h * (1 - h ** 2)
        h = h_tape.pop()
        d_h = matmul_grad_a(d_t5, h, U)
        d_U_steps.append((d_t5, h))  # d_U += matmul_grad_b(d_t5, h, U), after the loop
        t2 = xs[t]
        d_W_steps.append((d_t5, t))  # d_W += matmul_grad_b(d_t5, xs[t], W), after the loop
    d_U = matmul_grad_b_steps(d_U, d_U_steps, U)  # one product of the stacked steps
    d_W = matmul_grad_b_steps(d_W, d_W_steps, W, rows=xs, shares=d_U_steps)  # one product of the stacked steps

(``StepTerms`` is a list that keeps its cotangents once stacked: ``d_W``'s
sum, whose steps hold the same arrays, uses that stack, made once.)

A sum that something else in the loop reads keeps its per-step products:

    >>> sweep = gast.parse(
    ...     "d_W = 0.0\\n"
    ...     "for t in reversed(t1):\\n"
    ...     "    d_W = d_W + matmul_grad_b(d_t5, h, W)\\n"
    ...     "    d_h = d_W @ v\\n").body
    >>> print(show_statements(products_after_loops(sweep, set(), Namer())))
    d_W = 0.0
    for t in reversed(t1):
        d_W = d_W + matmul_grad_b(d_t5, h, W)
        d_h = d_W @ v
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import source_of, walk

_HELPERS = {"matmul_grad_b": "matmul_grad_b_steps", "matmul_grad_a": "matmul_grad_a_steps"}
_LOOPS = (gast.For, gast.While)


def products_after_loops(stmts, rows, namer, bound=None) -> list:
    """The adjoint sweep ``stmts`` with each loop-invariant weight's sum of
    per-step products formed after its loop (see the module docstring).
    ``rows``: the arguments the function never assigns or updates, whose
    rows a step may be collected by index; ``namer`` gives the lists' names;
    ``bound``: the names bound on every path before the sweep (arguments,
    top-level assignments of the forward sweep), ``rows`` when not given.
    ``stmts`` is changed in place and returned."""
    _block(stmts, set(rows), namer, set(rows if bound is None else bound))
    return stmts


def _block(stmts, rows, namer, bound) -> None:
    i = 0
    while i < len(stmts):
        stmt = stmts[i]
        if isinstance(stmt, gast.If):
            _block(stmt.body, rows, namer, bound)
            _block(stmt.orelse, rows, namer, bound)
        elif isinstance(stmt, _LOOPS):
            before, after = _rewrite_loop(stmt, stmts[:i], rows, namer, bound)
            if not before:  # nothing at this level: a nested loop may still be
                _block(stmt.body, rows, namer, bound)
            elif getattr(stmt, "comment_before", None):  # "for loop of line 4, backwards"
                before[0].comment_before, stmt.comment_before = stmt.comment_before, []
            stmts[i:i + 1] = [*before, stmt, *after]
            i += len(before) + len(after)
        i += 1


def _site(stmt):
    """``(d, helper, g, operand, weight)`` if ``stmt`` is ``d = d +
    matmul_grad_b(g, operand, weight)`` (or ``_a``, with ``weight`` first),
    every operand but ``g`` a name."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    d, value = stmt.targets[0].id, stmt.value
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)
            and isinstance(value.left, gast.Name) and value.left.id == d):
        return None
    call = value.right
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
            and call.func.id in _HELPERS and len(call.args) == 3 and not call.keywords):
        return None
    g, a, b = call.args
    if not (isinstance(a, gast.Name) and isinstance(b, gast.Name)) \
            or d in ir.names_in(call):
        return None
    if call.func.id == "matmul_grad_b":
        return d, call.func.id, g, a.id, b.id
    return d, call.func.id, g, b.id, a.id


def _stores(stmts) -> set[str]:
    """Names stored (assigned, a loop target, updated in place) in ``stmts``."""
    names = set()
    for stmt in ir.walk_statements(stmts):
        names.update(ir.assigned_by(stmt))
        if not isinstance(stmt, (gast.If, gast.For, gast.While)):
            names.update(ir.stored_names(stmt))
    return names


def _mutates(loop) -> bool:
    """Whether anything in ``loop`` may change an existing array or list."""
    for stmt in ir.walk_statements(loop.body):
        if isinstance(stmt, (gast.If, gast.For, gast.While, gast.Pass)):
            continue
        if not isinstance(stmt, gast.Assign) or ir.is_update(stmt) \
                or not all(isinstance(t, (gast.Name, gast.Tuple)) for t in stmt.targets):
            return True
        if any(isinstance(n, (gast.Subscript, gast.Attribute))
               and isinstance(getattr(n, "ctx", None), gast.Store) for n in walk(stmt)):
            return True
        if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name)
               and n.func.id in ("into_first", "into_second", "scatter_add")
               for n in walk(stmt.value)):
            return True
    return False


def _top_stores(stmts) -> set[str]:
    """Names the straight-line statements of ``stmts`` assign: bound after them."""
    return {n for stmt in stmts if not isinstance(stmt, (gast.If, gast.For, gast.While))
            for n in ir.assigned_by(stmt)}


def _rewrite_loop(loop, earlier, rows, namer, bound):
    """The statements to put before and after ``loop`` (both empty when
    nothing in it is rewritten); the sites in it are rewritten in place."""
    if _mutates(loop):
        return [], []
    sites: dict[str, list] = {}
    for stmt in ir.walk_statements(loop.body):
        site = _site(stmt)
        if site is not None:
            sites.setdefault(site[0], []).append((stmt, site))
    if not sites:
        return [], []
    stored = _stores(loop.body) | (set(ir.stored_names(loop.target))
                                   if isinstance(loop, gast.For) else set())
    earlier = _top_stores(earlier)  # bound when the loop starts, even if it runs no step
    before, after = [], []
    first = None  # the first list of a matmul_grad_b sum: later ones share its stack
    for d in sorted(sites):
        found = sites[d]
        kinds = {(site[1], site[4]) for _, site in found}
        if len(kinds) != 1 or d not in earlier:
            continue
        helper, weight = kinds.pop()
        if weight not in bound | earlier or weight in stored or not _only_sites(loop, d, {id(stmt) for stmt, _ in found}):
            continue
        indexed = [_row(loop, stmt, site[3], rows) for stmt, site in found]
        arrays = {row[0] for row in indexed if row is not None}
        by_index = None not in indexed and len(arrays) == 1
        steps = namer.fresh(f"{d}_steps")
        for (stmt, (_, _, g, operand, _)), row in zip(found, indexed):
            term = ir.name(row[1]) if by_index else ir.name(operand)
            shown = f"{row[0]}[{row[1]}]" if by_index else operand
            args = f"{source_of(g)}, {shown}, {weight}" if helper == "matmul_grad_b" \
                else f"{source_of(g)}, {weight}, {shown}"
            call = gast.Call(func=gast.Attribute(value=ir.name(steps), attr="append",
                                                 ctx=gast.Load()),
                             args=[gast.Tuple(elts=[g, term], ctx=gast.Load())], keywords=[])
            collect = gast.Expr(value=call)
            collect.updates = steps  # an update of the list: kept while the list is read
            collect.comment = f"{d} += {helper}({args}), after the loop"
            if getattr(stmt, "origin", None) is not None:
                collect.origin = stmt.origin
            _replace(loop.body, stmt, collect)
        start = ir.assign(steps, gast.List(elts=[], ctx=gast.Load()))
        start.comment = f"the terms of {d}'s sum, added with one product after the loop"
        keywords = [gast.keyword(arg="rows", value=ir.name(arrays.pop()))] if by_index else []
        if helper == "matmul_grad_b":  # cotangents stacked once for the loop's weights
            if first is None:
                first = start
            else:
                keywords.append(gast.keyword(arg="shares", value=ir.name(first.targets[0].id)))
                first.value = gast.Call(func=ir.name("StepTerms"), args=[], keywords=[])
        sum_ = ir.assign(d, gast.Call(func=ir.name(_HELPERS[helper]),
                                      args=[ir.name(d), ir.name(steps), ir.name(weight)],
                                      keywords=keywords))
        sum_.comment = "one product of the stacked steps"
        origin = getattr(found[0][0], "origin", None)
        if origin is not None:
            sum_.origin = origin
        before.append(start)
        after.append(sum_)
    return before, after


def _only_sites(loop, d, sites) -> bool:
    """Whether every statement of ``loop`` mentioning ``d`` is one of ``sites``."""
    if isinstance(loop, gast.For):
        header = [loop.target, loop.iter]
    else:
        header = [loop.test]
    if any(isinstance(n, gast.Name) and n.id == d for node in header for n in walk(node)):
        return False
    for stmt in ir.walk_statements(loop.body):
        if id(stmt) in sites:
            continue
        own = [stmt.test] if isinstance(stmt, (gast.If, gast.While)) else \
            [stmt.target, stmt.iter] if isinstance(stmt, gast.For) else [stmt]
        if any(isinstance(n, gast.Name) and n.id == d for node in own for n in walk(node)):
            return False
    return True


def _row(loop, site, operand, rows):
    """``(X, i)`` where the operand of the sum at ``site`` is ``X[i]``: the
    last statement to store ``operand`` before the site, in the same
    iteration, is ``operand = X[i]``, at the top level of ``loop``, with
    ``X`` an argument in ``rows``, and neither ``operand`` nor ``i`` is stored
    between it and the site."""
    body = loop.body
    top = next((k for k, stmt in enumerate(body)
                if any(inner is site for inner in ir.walk_statements([stmt]))), None)
    defs = [k for k, stmt in enumerate(body[:top]) if operand in _stores([stmt])]
    if top is None or not defs:
        return None
    made = body[defs[-1]]  # the operand's value at the site, in this iteration
    if not (isinstance(made, gast.Assign) and len(made.targets) == 1
            and isinstance(made.targets[0], gast.Name)
            and isinstance(made.value, gast.Subscript)
            and isinstance(made.value.value, gast.Name) and made.value.value.id in rows
            and isinstance(made.value.slice, gast.Name)):
        return None
    index = made.value.slice.id
    if any({operand, index} & _stores([stmt]) for stmt in body[defs[-1] + 1:top + 1]):
        return None
    return made.value.value.id, index


def _replace(stmts, old, new) -> bool:
    """Put ``new`` where ``old`` is in ``stmts`` or a block nested in them."""
    for k, stmt in enumerate(stmts):
        if stmt is old:
            stmts[k] = new
            return True
        if isinstance(stmt, (gast.If, gast.For, gast.While)) \
                and (_replace(stmt.body, old, new) or _replace(stmt.orelse, old, new)):
            return True
    return False
