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

import ast
import inspect
import textwrap
import types

import gast

from ..errors import NonDifferentiableError
from ..ir.syntax import statements_in

__all__ = ["check"]

_SYMBOLS = {gast.Mult: "*", gast.Div: "/", gast.Add: "+", gast.Sub: "-", gast.Pow: "**",
            gast.FloorDiv: "//", gast.Mod: "%"}


def _sparse(value) -> bool:
    return (getattr(type(value), "__module__", None) or "").startswith("scipy.sparse")


def sparse_routes(value, depth=0) -> set:
    """The routes (tuples of ``("attr", name)`` / ``("item", key)``) from
    ``value`` to the SciPy sparse matrices it holds in its items and a user
    object's fields, ``()`` for one itself; two levels deep.

        >>> class Sparse:  # stands for a scipy.sparse matrix
        ...     __module__ = "scipy.sparse._csr"
        >>> sorted(sparse_routes({"L": Sparse(), "w": 1.0}))
        [(('item', 'L'),)]
    """
    if _sparse(value):
        return {()}
    if depth >= 2:
        return set()
    if isinstance(value, dict):
        items = [(("item", k), v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        items = [(("item", k), v) for k, v in enumerate(value)]
    elif isinstance(getattr(value, "__dict__", None), dict) and not isinstance(value, type) \
            and not (getattr(type(value), "__module__", "") or "").startswith(("numpy", "builtins")):
        items = [(("attr", k), v) for k, v in vars(value).items()]
    else:
        return set()
    return {(step, *tail) for step, v in items for tail in sparse_routes(v, depth + 1)}


def _step(stmt):
    """``(target, base, steps)`` for ``t = base``, ``t = base.a``, ``t = base[k]``
    (a constant key) or a chain of those (``t = H.ops[0]``), ``steps`` as in
    :func:`sparse_routes`; else None."""
    if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1 \
            or not isinstance(stmt.targets[0], gast.Name):
        return None
    node, steps = stmt.value, []
    while True:
        if isinstance(node, gast.Attribute):
            steps.append(("attr", node.attr))
        elif isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant):
            steps.append(("item", node.slice.value))
        else:
            break
        node = node.value
    if not isinstance(node, gast.Name):  # (no steps: a copy, M = L of an inlined helper)
        return None
    return stmt.targets[0].id, node.id, tuple(reversed(steps))


def check(program, act, passed=()) -> None:
    """Raise at the first statement of ``program`` doing arithmetic other than
    ``@`` with a SciPy sparse matrix it reads (a free name, a parameter or a
    field of one that ``passed`` names: ``Options.sparse``, ``(position,
    field or None)``, review s37 R5-23) and an active value.  ``act``: the
    :class:`.activity.Activity`, or a function making it (called only where
    the program reads a sparse matrix)."""
    params = program.params
    # what leads to a sparse matrix from each name: () is one itself; ("attr", "L"),
    # ("item", 0), ... the fields and items read to reach one (review s37 D-32)
    leads = {name: routes for name, value in program.free.items()
             if (routes := sparse_routes(value))}
    for i, field in passed:
        if i < len(params):
            leads.setdefault(params[i], set()).add(
                () if field is None else (field,) if isinstance(field, tuple)
                else (("attr", field),))
    statements = [s for top in program.body for s in statements_in(top)]
    changed = bool(leads)
    while changed:  # t = self.L, t = ops[0], t = H.ops[0], then u = t[0]
        changed = False
        for stmt in statements:
            step = _step(stmt)
            if step is None or step[1] not in leads:
                continue
            target, base, steps = step
            tails = {r[len(steps):] for r in leads[base] if r[:len(steps)] == steps}
            if tails - leads.get(target, set()):
                leads.setdefault(target, set()).update(tails)
                changed = True
    sparse = {name for name, routes in leads.items() if () in routes}
    if not sparse:
        return
    act = act() if callable(act) else act
    for stmt in statements:
        _passed_on(stmt, sparse, program.filename)
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


def _passed_on(stmt, sparse, filename) -> None:
    """Raise where a sparse matrix is passed to a user function (differentiated
    as a pair of its own, compiled without its caller's arguments) whose body
    does arithmetic other than ``@`` with that parameter (``def helper(x, M):
    return x * M``, diff review D-32): conservatively, whatever the other operand."""
    op = getattr(stmt, "op", None)
    fn = getattr(op, "primitive", None)
    if not isinstance(fn, types.FunctionType) or not isinstance(stmt, (gast.Assign, gast.Expr)):
        return
    names = [a.id if isinstance(a, gast.Name) else None for a in op.args]
    if not any(n in sparse for n in names if n):
        return
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return
    func = tree.body[0] if tree.body and isinstance(
        tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if func is None:
        return
    params = [a.arg for a in func.args.args]
    for i, name in enumerate(names):
        if name not in sparse or i >= len(params):
            continue
        for node in ast.walk(func):
            operands = [node.left, node.right] if isinstance(node, ast.BinOp) \
                and not isinstance(node.op, ast.MatMult) else \
                [node.value] if isinstance(node, ast.AugAssign) \
                and not isinstance(node.op, ast.MatMult) else []
            if any(isinstance(o, ast.Name) and o.id == params[i] for o in operands):
                raise NonDifferentiableError(
                    f"'{name}' is a SciPy sparse matrix, passed to {fn.__name__} as "
                    f"'{params[i]}', which does arithmetic other than '@' with it (for a "
                    f"sparse matrix '*' is a matrix product, '+' makes an np.matrix): "
                    f"srcgrad differentiates a sparse matrix through '@' only; write "
                    f"'{params[i]} @ ...' there, or pass {name}.toarray() (a dense copy)",
                    filename=filename, lineno=getattr(stmt, "lineno", None),
                    col=getattr(stmt, "col_offset", None))
