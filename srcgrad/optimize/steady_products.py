"""``np.dot`` for a steady adjoint loop's product with a fixed matrix, where it
is ``@`` bit for bit.

The fast loop :mod:`.steady_loops` writes out carries a recurrent state's
cotangent through the weight, ``d_h = d_t4 @ U.T``, fifty times in the RNN
benchmark.  On small matrices ``np.dot`` does the same GEMM a microsecond
sooner than ``@`` (which goes through the ufunc machinery), and ``U.T`` is the
same view in every step.  So, after the passes that may still rewrite the
loop (:mod:`.inplace_adjoint` among them), each such product ``g @ b.T`` --
``b`` a name the loop does not assign, ``g`` a new array the step made --
becomes::

    U_T = U.T
    U_T_dtype = dot_dtype(U_T, d_h.shape[0])
    for t in reversed(t1):
        ...
        d_h = np.dot(d_t4, U_T) if d_t4.dtype is U_T_dtype else d_t4 @ U_T

Sound because :func:`srcgrad.runtime.steps.dot_dtype` (whose docstring reads
the two NumPy routines side by side) returns ``U_T``'s dtype only where
``np.dot(g, U_T)`` and ``g @ U_T`` call the same BLAS routine with the same
arguments for every ``g`` of that dtype that is C- or F-contiguous, aligned,
of two axes and as many rows as the guard proved ``g`` has at every step
(``steady_loops`` marks the product with that count).  The step checks the
dtype (any other, or a dtype object that is not the same one, takes ``@``);
the rest holds because ``g`` is a new array: assigned, earlier in the same
step, the result of an arithmetic operator, ``@`` or a NumPy unary function
(through plain copies ``d_t4 = d_t5``), which NumPy allocates whole,
aligned, C- or F-contiguous for two axes -- or the product that
:mod:`.step_cotangents` writes into a row of a new C-contiguous array
(marked ``row_of_new_array``): a C-contiguous, aligned row, or where it
computes the product, a new array; ``steady_loops``' guard proved it an
``np.ndarray`` of two axes.  A product whose ``g`` is anything else (a
value carried from the step before, a row, an in-place update) stays ``@``.

Runs for the NumPy backend when optimising, on the loops ``steady_loops``
made.  Tested by tests/optimize/test_steady_products.py.

    >>> from ..ir.emit import show_statements
    >>> from ..ir.naming import Namer
    >>> sweep = gast.parse(
    ...     "if len(t1) and d_h.ndim == 2:\\n"
    ...     "    for t in reversed(t1):\\n"
    ...     "        d_t5 = d_h * (1 - h ** 2)\\n"
    ...     "        d_t4 = d_t5\\n"
    ...     "        d_h = d_t4 @ U.T\\n"
    ...     "        d_g = d_h @ U.T\\n"
    ...     "else:\\n"
    ...     "    pass\\n").body
    >>> sweep[0].steady_loop = True
    >>> for stmt in sweep[0].body[0].body[2:]:
    ...     stmt.value.rows = "d_h.shape[0]"
    >>> print(show_statements(dot_products(sweep, Namer())))
    if len(t1) and d_h.ndim == 2:
        U_T = U.T
        U_T_dtype = dot_dtype(U_T, d_h.shape[0])  # U_T's dtype where np.dot(g, U_T) is g @ U_T
        for t in reversed(t1):
            d_t5 = d_h * (1 - h ** 2)
            d_t4 = d_t5
            d_h = np.dot(d_t4, U_T) if d_t4.dtype is U_T_dtype else d_t4 @ U_T
            d_g = d_h @ U.T
    else:
        pass

(``d_g = d_h @ U.T``: ``d_h`` is the product just made, but through ``@``
on one path -- new as well; the pass keeps to the operators it lists.)
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import call_to, walk

#: NumPy's unary math functions: a new array of a float array's dtype and shape.
_UNARY = frozenset({"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh",
                    "square", "abs", "absolute", "negative", "sign", "log1p", "expm1",
                    "arctan", "reciprocal"})
_NEW = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.MatMult)


def dot_products(body, namer) -> list:
    """``body`` with the products of the loops :mod:`.steady_loops` made
    written as ``np.dot`` where that is the same (see the module docstring)."""
    for stmt in body:
        if getattr(stmt, "steady_loop", False):
            _rewrite(stmt, namer)
    return body


def _fast_loop(made):
    for k, stmt in enumerate(made.body):
        if isinstance(stmt, gast.For):
            return k, stmt
    return None, None


def new_array(value, unary=_UNARY) -> bool:
    """Whether ``value`` makes a new array (given operands that are arrays):
    arithmetic, a negation, or ``np.f(a)`` of a function named in ``unary``."""
    if isinstance(value, gast.BinOp):
        return isinstance(value.op, _NEW)
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, gast.USub)
    return isinstance(value, gast.Call) and not value.keywords and len(value.args) == 1 \
        and isinstance(value.func, gast.Attribute) and value.func.attr in unary \
        and isinstance(value.func.value, gast.Name) and value.func.value.id == "np"


def _made_in_step(body, k, name) -> bool:
    """Whether ``name``, read by statement ``k``, holds a new array that an
    earlier statement of the same step made (through plain copies)."""
    for stmt in reversed(body[:k]):
        if name not in ir.target_names(stmt):
            continue
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)):
            return False
        value = stmt.value
        if isinstance(value, gast.Name):   # a copy: where its value was made
            return _made_in_step(body, body.index(stmt), value.id)
        return new_array(value) or getattr(stmt, "row_of_new_array", False)
    return False


def _product(node):
    """``(g, b)`` if ``node`` is ``g @ b.T`` as :mod:`.steady_loops` wrote it
    (marked with ``g``'s rows), else None."""
    if not (isinstance(node, gast.BinOp) and getattr(node, "rows", None)
            and isinstance(node.op, gast.MatMult) and isinstance(node.left, gast.Name)
            and isinstance(node.right, gast.Attribute) and node.right.attr == "T"
            and isinstance(node.right.value, gast.Name)):
        return None
    return node.left.id, node.right.value.id


class _Dots(gast.NodeTransformer):
    """Rewrites the products of one statement of the loop, hoisting what they need."""

    def __init__(self, loop, guarded, namer):
        self.loop, self.guarded, self.namer = loop, guarded, namer
        self.assigned = {n for stmt in loop.body for n in ir.target_names(stmt)}
        self.hoisted: dict = {}   # b -> (b_T, the name of its dtype)
        self.before: list = []
        self.position = 0

    def visit_BinOp(self, node):
        found = _product(node)
        if found is None:
            return self.generic_visit(node)
        g, b = found
        rows = gast.parse(node.rows).body[0].value
        if b in self.assigned or not _made_in_step(self.loop.body, self.position, g) \
                or {n.id for n in walk(rows) if isinstance(n, gast.Name)} - self.guarded:
            return node   # (rows: read where the guard read them, so bound there)
        if b not in self.hoisted:
            transposed = self.namer.fresh(f"{b}_T")
            dtype = self.namer.fresh(f"{b}_T_dtype")
            self.hoisted[b] = (transposed, dtype)
            self.before.append(ir.assign(transposed, gast.Attribute(
                value=ir.name(b), attr="T", ctx=gast.Load())))
            self.before.append(ir.assign(dtype, call_to("dot_dtype", ir.name(transposed), rows)))
            self.before[-1].comment = f"{transposed}'s dtype where np.dot(g, {transposed}) " \
                                      f"is g @ {transposed}"
        transposed, dtype = self.hoisted[b]
        dot = gast.Call(func=gast.Attribute(value=ir.name("np"), attr="dot", ctx=gast.Load()),
                        args=[ir.name(g), ir.name(transposed)], keywords=[])
        same = gast.Compare(left=gast.Attribute(value=ir.name(g), attr="dtype", ctx=gast.Load()),
                            ops=[gast.Is()], comparators=[ir.name(dtype)])
        product = gast.BinOp(left=ir.name(g), op=gast.MatMult(), right=ir.name(transposed))
        return gast.IfExp(test=same, body=dot, orelse=product)


def _rewrite(made, namer) -> None:
    at, loop = _fast_loop(made)
    if loop is None:
        return
    dots = _Dots(loop, {n.id for n in walk(made.test) if isinstance(n, gast.Name)}, namer)
    for k, stmt in enumerate(loop.body):
        if isinstance(stmt, gast.Assign):
            dots.position = k
            stmt.value = dots.visit(stmt.value)
    made.body[at:at] = dots.before


__all__ = ["dot_products"]
