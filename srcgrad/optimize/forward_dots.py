"""``np.dot`` for a forward loop's product with a fixed matrix, where it is
``@`` bit for bit.

The forward sweep of ``for t in t1: h = np.tanh(xs[t] @ W + h @ U)`` makes
``h @ U`` fifty times in the RNN benchmark; on small matrices ``np.dot`` does
the same GEMM a microsecond sooner than ``@`` (which goes through the ufunc
machinery) -- a twentieth of the gradient, which the careful hand gradient
(``h += dot(hs[t], U)``) does not pay.  :mod:`.steady_products` does this for
an adjoint loop, whose shapes its guard knows; here each step checks what it
cannot know::

    U_dtype = dot_dtype(U, 2)  # U's dtype where np.dot(g, U) is g @ U
    h_dots = dot_ready(h)  # h, where the loop starts, laid out as a new array
    for t in t1:
        ...
        t4 = np.dot(h, U) if h_dots and h.dtype is U_dtype and h.ndim == 2 and len(h) > 1 else h @ U
        ...
        h = np.tanh(t5)

Sound -- the product is ``@``'s, bit for bit -- because
:func:`srcgrad.runtime.steps.dot_dtype` (whose docstring reads the two NumPy
routines side by side) returns ``U``'s dtype only where ``np.dot(g, U)`` and
``g @ U`` call the same BLAS routine with the same arguments for every ``g``
of that dtype that is C- or F-contiguous, aligned, of two axes and more than
one row; the step checks the dtype (the very object), the two axes and the
rows (a product whose columns do not match raises ``ValueError`` either way,
with NumPy's words for ``np.dot``); the layout holds
because ``h`` is, in each step, either a new array (assigned, in the step
before, the result of an arithmetic operator or a NumPy unary function, which
NumPy allocates whole, aligned, and C- or F-contiguous for two axes) or, in
the first step, the value the loop starts from, which
:func:`srcgrad.runtime.steps.dot_ready` checks once (exactly an
``np.ndarray``, aligned, C- or F-contiguous); a value the step itself made
earlier (through plain copies) needs no such check.  Writes into an array
change neither its layout nor its dtype.  ``U`` is assigned nowhere in the
loop and bound before it (an argument, or a statement before the loop), as
is the carried ``h``, so the checks before the loop read what the loop
would.

Runs for the NumPy backend when optimising, on the loops at the top level of
the forward sweep.  Tested by tests/optimize/test_forward_dots.py.

    >>> from ..ir.emit import show_statements
    >>> from ..ir.naming import Namer
    >>> sweep = gast.parse(
    ...     "h = h0\\n"
    ...     "for t in t1:\\n"
    ...     "    t4 = h @ U\\n"
    ...     "    t5 = t3 + t4\\n"
    ...     "    h = np.tanh(t5)\\n"
    ...     "    t6 = h @ U\\n").body
    >>> print(show_statements(dot_forward_products(sweep, {"U", "h0"}, Namer())))
    h = h0
    U_dtype = dot_dtype(U, 2)  # U's dtype where np.dot(g, U) is g @ U
    h_dots = dot_ready(h)  # h, where the loop starts, laid out as a new array
    for t in t1:
        t4 = np.dot(h, U) if h_dots and h.dtype is U_dtype and (h.ndim == 2) and (len(h) > 1) else h @ U
        t5 = t3 + t4
        h = np.tanh(t5)
        t6 = np.dot(h, U) if h.dtype is U_dtype and h.ndim == 2 and (len(h) > 1) else h @ U
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import call_to, source_of, walk
from .steady_products import new_array

_UNARY = frozenset({"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh",
                    "square", "abs", "absolute", "negative", "sign", "log1p", "expm1",
                    "arctan", "reciprocal", "conj", "conjugate"})


def dot_forward_products(forward, params, namer) -> list:
    """``forward`` with each fixed-matrix product of its top-level loops made
    with ``np.dot`` where that is ``@`` (see the module docstring).
    ``params``: the function's parameters."""
    out = []
    bound = set(params)
    for stmt in forward:
        if isinstance(stmt, gast.For) and not stmt.orelse:
            out.extend(_rewrite(stmt, bound, namer))
        out.append(stmt)
        bound.update(ir.target_names(stmt) if not isinstance(stmt, (gast.For, gast.While, gast.If))
                     else ())
    return out


def _assigned(body) -> dict:
    """How many statements of ``body`` (nested ones too) store each name."""
    counts: dict = {}
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _assignment(stmt):
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id, stmt.value
    return None, None


def _made_before(body, k, name) -> bool | None:
    """True where statement ``k`` reads, as ``name``, a new array an earlier
    top-level statement of the step made (through plain copies); None where
    no earlier statement of the step assigns ``name`` (the step reads the
    value it starts with); False otherwise."""
    for j in range(k - 1, -1, -1):
        stmt = body[j]
        if name not in [n.id for n in walk(stmt) if isinstance(n, gast.Name)
                        and isinstance(n.ctx, gast.Store)]:
            continue
        target, value = _assignment(stmt)
        if target != name:
            return False
        if isinstance(value, gast.Name):
            return _made_before(body, j, value.id) is True
        return new_array(value, _UNARY)
    return None


def _carried_new(body, name) -> bool:
    """Whether the body assigns ``name`` once, at its top level, a new array."""
    if _assigned(body).get(name) != 1:
        return False
    return any(_assignment(stmt)[0] == name and new_array(_assignment(stmt)[1], _UNARY)
               for stmt in body)


def _rewrite(loop, bound, namer) -> list:
    """Rewrite ``loop``'s products in place; return the statements to put before it."""
    assigned = _assigned(loop.body)
    before, hoisted, ready = [], {}, {}
    for k, stmt in enumerate(loop.body):
        _, value = _assignment(stmt)
        if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult)
                and isinstance(value.left, gast.Name) and isinstance(value.right, gast.Name)):
            continue
        g, m = value.left.id, value.right.id
        if g == m or m in assigned or m not in bound:
            continue
        made = _made_before(loop.body, k, g)
        if made is False or (made is None and not (g in bound and _carried_new(loop.body, g))):
            continue
        if m not in hoisted:
            hoisted[m] = namer.fresh(f"{m}_dtype")
            before.append(ir.assign(hoisted[m], call_to("dot_dtype", ir.name(m),
                                                        gast.Constant(value=2, kind=None))))
            before[-1].comment = f"{m}'s dtype where np.dot(g, {m}) is g @ {m}"
        checks = f"{g}.dtype is {hoisted[m]} and {g}.ndim == 2 and len({g}) > 1"
        if made is None:
            if g not in ready:
                ready[g] = namer.fresh(f"{g}_dots")
                before.append(ir.assign(ready[g], call_to("dot_ready", ir.name(g))))
                before[-1].comment = f"{g}, where the loop starts, laid out as a new array"
            checks = f"{ready[g]} and {checks}"
        stmt.value = gast.parse(f"np.dot({g}, {m}) if {checks} else {source_of(value)}",
                                mode="eval").body
    return before


__all__ = ["dot_forward_products"]
