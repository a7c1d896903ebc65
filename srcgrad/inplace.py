"""Accumulating cotangents in place, into arrays the adjoint sweep owns.

A loop's adjoint adds one contribution per iteration to the cotangent of a
value the loop reads, a weight matrix for instance: ``d_U = d_U + g`` makes a
new array each time; ``d_U = accumulate(d_U, g)`` adds into the one it has
(:func:`.runtime.accumulate`: in place where ``d_U + g`` would have ``d_U``'s
shape and dtype, so the numbers are the same, else ``d_U + g``).  That is only
sound where nothing else can see the array: here, a cotangent whose every
assignment is the zero start ``d_U = 0.0`` or an accumulation ``d_U = d_U + g``
(so its array was made by an addition of the sweep's own), and which nothing
reads but those accumulations and the final ``return``.

    >>> import gast
    >>> from .emit import show_statements
    >>> body = gast.parse("d_U = 0.0\\nfor t in ts:\\n    d_U = d_U + g(t)\\n"
    ...                   "    d_h = d_h + d_U\\nd_V = 0.0\\nfor t in ts:\\n"
    ...                   "    d_V = d_V + g(t)\\nreturn grad_like((d_U, d_V), (U, V))").body
    >>> print(show_statements(accumulate_in_place(body, {"d_U", "d_V"})))
    d_U = 0.0
    for t in ts:
        d_U = d_U + g(t)
        d_h = d_h + d_U
    d_V = 0.0
    for t in ts:
        d_V = accumulate(d_V, g(t))
    return grad_like((d_U, d_V), (U, V))

(``d_U`` is read by ``d_h``'s accumulation: it keeps its copies.)  The first
accumulation adds to the float ``0.0`` and so makes a fresh array; the later
ones add into it.
"""

from __future__ import annotations

import gast

from .syntax import walk


def accumulate_in_place(body, cotangents) -> list:
    """``body`` (a function's statements) with ``d = d + g`` written
    ``d = accumulate(d, g)`` for each name ``d`` in ``cotangents`` whose array
    only the sweep can see."""
    owned = set(cotangents)
    for stmt in _statements(body):
        if _is_zero_start(stmt, owned):
            continue
        if _is_accumulation(stmt, owned):
            reads = walk(stmt.value.right)
        elif isinstance(stmt, gast.Return):
            continue  # the gradients returned: grad_like copies what it must
        elif isinstance(stmt, gast.For):
            reads = walk(stmt.iter) + walk(stmt.target)
        elif isinstance(stmt, (gast.If, gast.While)):
            reads = walk(stmt.test)
        else:
            reads = walk(stmt)
        owned -= {n.id for n in reads if isinstance(n, gast.Name)}
    if not owned:
        return body
    for stmt in _statements(body):
        if _is_accumulation(stmt, owned):
            stmt.value = gast.Call(func=gast.Name(id="accumulate", ctx=gast.Load(),
                                                  annotation=None, type_comment=None),
                                   args=[stmt.value.left, stmt.value.right], keywords=[])
    return body


def _statements(body):
    """Every statement of ``body``, nested ones too, the compound ones included."""
    out = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            out.extend(_statements(stmt.body) + _statements(stmt.orelse))
    return out


def _target(stmt):
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    return None


def _is_zero_start(stmt, names) -> bool:
    return _target(stmt) in names and isinstance(stmt.value, gast.Constant) \
        and stmt.value.value == 0.0 and type(stmt.value.value) is float


def _is_accumulation(stmt, names) -> bool:
    name = _target(stmt)
    value = getattr(stmt, "value", None)
    return name in names and isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) \
        and isinstance(value.left, gast.Name) and value.left.id == name
