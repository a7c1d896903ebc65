"""Releasing, at the end of the forward sweep, the values the adjoint never reads.

A local variable keeps its array alive until the function returns.  The
forward sweep computes every intermediate value of the user's function, and
the adjoint sweep reads only some of them (the saved ones); the others would
sit in memory through the whole adjoint sweep, where the gradient's own
arrays are made.  One ``del`` line, where the adjoint sweep starts, names
them: the memory decision is as visible as the saves.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> body = gast.parse("a = np.sin(x)\\nb = a * 2.0\\nc = np.sum(b * a)\\n"
    ...                   "n = len(x)\\nd_c = grad_seed(c)\\nd_b = d_c * a\\n"
    ...                   "return grad_like(d_b * 2.0 * np.cos(x), x)").body
    >>> print(show_statements(release_unread(body, 4, ["x"], {"n"})))
    a = np.sin(x)
    b = a * 2.0
    c = np.sum(b * a)
    n = len(x)
    del b  # not read by the adjoint sweep
    d_c = grad_seed(c)
    d_b = d_c * a
    return grad_like(d_b * 2.0 * np.cos(x), x)

Only names the forward sweep's top-level statements assign are released (a
name assigned in a loop or a branch alone may be unbound), and not the
arguments or values known to be scalars (``scalars``), which hold no memory
worth a line.

Sound when: the ``del`` comes after the last statement of the forward sweep,
so no forward read (a loop's back-edge included) can follow it, and it names
only what no statement from there on mentions -- read, assigned, restored from
a tape, recomputed or returned; a name the adjoint sweep reads inside a loop
appears in the loop's text and is kept.  A top-level assignment binds the name
on every path, so ``del`` cannot raise.  ``del`` unbinds a name only: an
array an alias or a tape still holds stays alive, and is not changed.  (An
element assignment ``G[i] = v`` counts as assigning ``G``; a global's is
refused by the normaliser, so ``G`` is always a local.)  Tested by
tests/memory/test_memory_soundness.py (``read_by_adjoint_loop``).
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import walk_nodes


def release_unread(body, start, params, scalars=()) -> list:
    """``body`` with ``del`` of the forward values the adjoint sweep, which begins
    at ``body[start]``, does not read."""
    assigned: dict[str, None] = {}  # in order of first assignment (a list was searched)
    for stmt in body[:start]:
        if isinstance(stmt, gast.Assign):
            assigned.update(dict.fromkeys(ir.target_names(stmt)))
    later = {n.id for stmt in body[start:] for n in walk_nodes(stmt) if isinstance(n, gast.Name)}
    unread = [n for n in assigned if n not in later and n not in params and n not in scalars]
    if not unread or start >= len(body):
        return body
    release = gast.Delete(targets=[gast.Name(id=n, ctx=gast.Del(), annotation=None,
                                             type_comment=None) for n in unread])
    release.comment = "not read by the adjoint sweep"
    return body[:start] + [release] + body[start:]
