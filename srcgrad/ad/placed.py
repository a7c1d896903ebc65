"""The place of the user's call, for runtime helpers that may refuse as they run.

Some derivatives exist for some values only.  The singular vectors of a
non-square matrix's full SVD are not unique, so neither mode can differentiate
them, while the singular values have a derivative whatever the shape; whether
the matrix is square, and whether a cotangent or tangent of the vectors is
needed, shows only when the code runs.  So the rules' helpers refuse then
(:func:`~srcgrad.runtime.svd_grad`, :func:`~srcgrad.runtime.missing_tangent`).
A rule cannot know where it is inlined: both sweeps hand each such call the
place of the user's call, ``where=(file, line, column)``, and the error names it
as a refusal at compile time does.

    >>> import gast
    >>> from srcgrad import ir
    >>> call = gast.parse("svd_grad(g, out, a)").body[0].value
    >>> place([call], "f.py", 3, 8)
    >>> print(ir.syntax.source_of(call))
    svd_grad(g, out, a, where=('f.py', 3, 8))
"""

from __future__ import annotations

import gast

from ..ir.syntax import constant, walk_nodes

#: Runtime helpers that take ``where=`` and may raise with it.
PLACED = frozenset({"svd_grad", "missing_tangent"})


def place(nodes, filename, lineno, col, helper=None) -> None:
    """Add ``where=(filename, lineno, col)`` to every call of a helper in
    :data:`PLACED` (or of ``helper``) inside ``nodes`` (statements or
    expressions, changed in place)."""
    for root in nodes:
        for node in walk_nodes(root):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                    and (node.func.id in PLACED or node.func.id == helper) \
                    and not any(k.arg == "where" for k in node.keywords):
                node.keywords.append(gast.keyword(arg="where",
                                                  value=constant((filename, lineno, col))))


def place_op(nodes, program, op, helper=None) -> None:
    """:func:`place` at the call ``op`` of ``program`` (for the calls of
    ``helper`` too, one not in :data:`PLACED`)."""
    place(nodes, program.filename, getattr(op.node, "lineno", None),
          getattr(op.node, "col_offset", None), helper)
