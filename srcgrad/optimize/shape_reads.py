"""Values the adjoint sweep reads for their shape alone (issue 16, item 2).

The adjoint of a broadcasting ``+`` reads its operand for one thing: the
shape that ``unbroadcast(g, t1)`` sums the cotangent down to.  A value read
only so afterwards need not keep its numbers: :mod:`.inplace_adjoint` may
write ``t1 + b1`` into ``t1``'s array (``t1 = x @ W1``, a bias added to a
product), as a careful hand writes ``h = x @ W1; h += b1``.  Sound because
the runtime helpers write into an array only where the result has its very
type, shape and dtype (:mod:`srcgrad.runtime.inplace`), and the readers
here look at nothing else: ``unbroadcast`` at ``x``'s type and shape,
``unreduce`` and ``unreduced`` at its type, shape, size and dtype.

    >>> import gast
    >>> from ..ir.syntax import walk_nodes
    >>> nodes = walk_nodes(gast.parse("d_t1 = unbroadcast(d_t2, t1) * w").body[0])
    >>> sorted(n.id for n in nodes if id(n) in shape_reads(nodes))
    ['t1']
    >>> forward, inplace = gast.parse("t1 = x @ W1\\nh = np.tanh(t1 + b1)").body
    >>> forward.comment = "save: t1 (read by the adjoint of +)"
    >>> note_shape_read(forward, inplace, "t1")
    >>> forward.comment, inplace.comment
    ("save: t1's shape (read by the adjoint of +)", "t1's array reused: the adjoint sweep reads its shape alone")
"""

from __future__ import annotations

import gast

#: Runtime helpers that read the argument at position 1 for its type, shape
#: and dtype alone (``unbroadcast(g, x)`` sums ``g`` down to ``x``'s shape).
SHAPE_READERS = ("unbroadcast", "unreduce", "unreduced")


def shape_reads(nodes) -> set[int]:
    """The ids of the ``Name`` nodes among ``nodes`` (one statement's, as
    ``walk_nodes`` lists them) that are read for no value: the operand ``x``
    of ``unbroadcast(g, x)``, ``unreduce(g, x, ...)`` or ``unreduced(g, x)``.
    Any other mention -- the cotangent ``g``, an operand, a view ``x[0]``,
    another call's argument, a store, a ``del`` -- is not one."""
    ids = set()
    for n in nodes:
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) \
                and n.func.id in SHAPE_READERS and len(n.args) >= 2 \
                and isinstance(n.args[1], gast.Name):
            ids.add(id(n.args[1]))
    return ids


def note_shape_read(assignment, stmt, name) -> None:
    """Say, in the comments of ``assignment`` (the statement that assigned
    ``name``) and of ``stmt`` (which writes into its array), that the adjoint
    sweep reads ``name``'s shape alone: its ``# save:`` keeps no values."""
    said = getattr(assignment, "comment", None) or ""
    if f"{name} (read by" in said:
        assignment.comment = said.replace(f"{name} (read by", f"{name}'s shape (read by", 1)
    said = getattr(stmt, "comment", None)
    note = f"the adjoint sweep reads {name}'s shape alone" \
        if said and f"written into {name}'s array" in said \
        else f"{name}'s array reused: the adjoint sweep reads its shape alone"
    stmt.comment = f"{said}; {note}" if said else note
