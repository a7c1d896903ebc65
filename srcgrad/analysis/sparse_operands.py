"""Refuse arithmetic other than ``@`` between a SciPy sparse matrix and a differentiated value.

A ``scipy.sparse`` operator read from a global or a closure (a graph
Laplacian, a stencil) is differentiated through ``@`` (runtime/linalg.sparse).
Its other operators are not ndarray's: for a sparse *matrix* ``x * L`` is the
matrix product ``x @ L`` (and ``L + x`` an ``np.matrix``), for a sparse
*array* ``L * x`` is a sparse array.  Differentiated with the elementwise
rules, ``np.sum(np.tanh(x * L))`` got the gradient of another function,
silently (found with review s37 R5-20).  :func:`check` raises
:class:`NonDifferentiableError` at a ``*``, ``/``, ``+``, ``-``, ``**``,
``//`` or ``%`` of such an operator and an active value; with a constant
(``dt * L @ u``, ``dt`` not differentiated) it is left alone.  An operator passed
as an argument, or held as a field of an object passed (``self.L``), is
named by the transformations, which see the arguments (``passed``).

    >>> import gast
    >>> from .. import ir
    >>> from .activity import Activity
    >>> class Sparse:  # stands for a scipy.sparse matrix
    ...     __module__ = "scipy.sparse._csr"
    >>> body = [gast.parse("t1 = c * L").body[0], gast.parse("t2 = x * t1").body[0]]
    >>> program = ir.Program("f", ["x", "c"], body, ir.name("t2"), "model.py", None,
    ...                      {"L": Sparse()})
    >>> check(program, Activity({"x", "t2"}, {"x", "c", "t1", "t2"}))  # c * L: a constant
    >>> program.body[1] = gast.parse("t2 = x * L").body[0]
    >>> check(program, Activity({"x", "t2"}, {"x", "t2"}))
    Traceback (most recent call last):
    srcgrad.errors.NonDifferentiableError: 'L' is a SciPy sparse matrix, whose '*' ...
"""

from __future__ import annotations

import gast

from ..errors import NonDifferentiableError
from ..ir.syntax import statements_in

__all__ = ["check"]

_SYMBOLS = {gast.Mult: "*", gast.Div: "/", gast.Add: "+", gast.Sub: "-", gast.Pow: "**",
            gast.FloorDiv: "//", gast.Mod: "%"}


def _sparse(value) -> bool:
    return (getattr(type(value), "__module__", None) or "").startswith("scipy.sparse")


def check(program, act, passed=()) -> None:
    """Raise at the first statement of ``program`` doing arithmetic other than
    ``@`` with a SciPy sparse matrix it reads (a free name, a parameter or a
    field of one that ``passed`` names: ``Options.sparse``, ``(position,
    field or None)``, review s37 R5-23) and an active value.  ``act``: the
    :class:`.activity.Activity`, or a function making it (called only where
    the program reads a sparse matrix)."""
    sparse = {name for name, value in program.free.items() if _sparse(value)}
    params = program.params
    sparse |= {params[i] for i, field in passed if field is None and i < len(params)}
    fields = {(params[i], field) for i, field in passed if field is not None and i < len(params)}
    statements = [s for top in program.body for s in statements_in(top)]
    if fields:  # t = self.L: a field holding one
        sparse |= {stmt.targets[0].id for stmt in statements
                   if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                   and isinstance(stmt.value, gast.Attribute)
                   and isinstance(stmt.value.value, gast.Name)
                   and (stmt.value.value.id, stmt.value.attr) in fields}
    if not sparse:
        return
    act = act() if callable(act) else act
    for stmt in statements:
        value = getattr(stmt, "value", None)
        if not isinstance(stmt, gast.Assign) or not isinstance(value, gast.BinOp) \
                or type(value.op) not in _SYMBOLS:
            continue
        for operand, other in ((value.left, value.right), (value.right, value.left)):
            if isinstance(operand, gast.Name) and operand.id in sparse \
                    and isinstance(other, gast.Name) and act.is_active(other.id):
                symbol, shown = _SYMBOLS[type(value.op)], operand.id
                raise NonDifferentiableError(
                    f"'{shown}' is a SciPy sparse matrix, whose '{symbol}' is not NumPy's "
                    f"elementwise operator (for a sparse matrix '*' is a matrix product, "
                    f"'+' makes an np.matrix), and a value being differentiated is its "
                    f"other operand: srcgrad differentiates a sparse matrix through '@' "
                    f"only; write '{shown} @ ...' for the product, or use "
                    f"{shown}.toarray() (a dense copy) for elementwise arithmetic",
                    filename=program.filename, lineno=getattr(stmt, "lineno", None),
                    col=getattr(value, "col_offset", None))
