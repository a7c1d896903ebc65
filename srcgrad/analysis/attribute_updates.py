"""An attribute's array changed in place through another name, then read again.

``a = p.W; a[1] = v; ... p.W`` (``p`` a named tuple, a dataclass, an object):
NumPy writes into the one array, and ``p.W`` shows the change.  srcgrad's code
reads a copy of the attribute (``a = snapshot(p.W)``, so that the caller's
object never changes: :func:`.aliasing.copy_updated_attributes`), which the
dataflow it differentiates would then never carry back into ``p.W``: the value
and the gradient were those of the unchanged field, silently (outside tester
T2 #16).  The alias check leaves the decision to a run-time ``untouched(p, a,
...)`` guard, which the copy makes pass.  So such a program is refused here,
at compile time, located at the update -- before the copy is made and before
any analysis of gradient flow (which misses the write as well, and warned
that the gradient was always zero for ``a = m.W; a *= x``).

Refused: an update (``a[i] = v``, ``a op= v``) of a name bound by an attribute
read ``a = h.A``, guarded against ``h``, where ``h`` may be read afterwards
(:func:`.paths.stale`) other than for another attribute (``h.b`` only, or
nothing, reads no changed memory: that program runs as before).

    >>> from collections import namedtuple
    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> from ..normalize.attribute_reads import type_attribute_reads
    >>> from .aliasing import check_aliases, copy_updated_attributes
    >>> P = namedtuple("P", "W b")
    >>> def f(x):
    ...     p = P(x * 1.0, x * 2.0)
    ...     a = p.W
    ...     a[1] = p.b[0] * 3.0
    ...     return np.sum(p.W ** 2)
    >>> program = normalize(parse_function(f))
    >>> type_attribute_reads(program)
    >>> check_aliases(program)
    >>> copy_updated_attributes(program)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    srcgrad.errors.AliasedUpdateError: 'a[...] = ...' changes the array 'a', which is 'p.W', in place, and 'p.W' is read afterwards (line ...): srcgrad cannot follow a change to an attribute's array made through another name: ...
"""

from __future__ import annotations

import gast

from .. import ir
from ..errors import AliasedUpdateError
from . import paths
from .slot_writes import location, user_names

__all__ = ["refuse_hidden_attribute_updates"]


def refuse_hidden_attribute_updates(program: ir.Program) -> None:
    """Raise :class:`AliasedUpdateError` at the first update of an attribute's
    array through another name that the attribute's holder would show (see the
    module docstring)."""
    statements = list(ir.walk_statements(program.body))
    reads = {}  # a -> (holder, attribute, statement) for a = holder.attribute
    for s in statements:
        op = getattr(s, "op", None)
        if isinstance(s, gast.Assign) and not ir.is_update(s) and op is not None \
                and op.primitive is ir.GETATTR and isinstance(s.targets[0], gast.Name) \
                and isinstance(op.args[0], gast.Name):
            reads[s.targets[0].id] = (op.args[0].id, _attribute(op), s)
    if not reads:
        return
    blocks = paths.blocks_of(program.body)
    loops = paths.enclosing_loops(program.body)
    order = {id(s): i for i, s in enumerate(statements)}
    user = user_names(program, statements)
    for guard in statements:
        parts = _guard(guard)
        if parts is None or parts[1] not in reads:
            continue
        other, a = parts
        holder, attribute, bound = reads[a]
        if other != holder or attribute is None:
            continue
        update = _guarded_update(guard, blocks)
        if update is None:
            continue
        seen = _seen_by(program, statements, update, holder, attribute, order, loops, blocks)
        if seen is None:
            continue
        shown = f"{user(holder)}.{attribute}"
        where = " (it is returned)" if seen == "returned" else f" (line {location(seen)[0]})"
        if ir.is_update(update):
            what = f"'{user(a)}[...] = ...' changes the array '{user(a)}'"
        else:
            symbol = getattr(update, "augmented_symbol", None) or "op"
            what = f"'{user(a)} {symbol}= ...' changes the array '{user(a)}'"
        # (what is read afterwards: the attribute, or the holder itself -- B after
        # Bt = B.T, which is all of B where B is an array)
        read = shown if seen != "returned" and _reads_attribute(seen, holder, attribute) \
            else user(holder)
        if attribute in _ARRAY_VIEWS:
            # B.T of a helper's B: an array's view or an object's field, decided as
            # the code runs; the method is the array's alone, and is followed
            how = (f"if '{user(holder)}' is an array, take the view with a method "
                   f"({user(a)} = {_ARRAY_VIEWS[attribute].format(user(holder))}), which "
                   f"srcgrad follows; if it is an object, read '{user(a)}' afterwards "
                   f"instead of '{shown}'")
        else:
            how = (f"read '{user(a)}' afterwards instead of '{shown}', or change a copy "
                   f"({user(a)} = {shown}.copy()) if '{shown}' should keep its value")
        message = (f"{what}, which is '{shown}', in place, and '{read}' is read "
                   f"afterwards{where}: srcgrad, which cannot tell here whether "
                   f"'{user(holder)}' is an array or an object, cannot follow a change to "
                   f"an attribute's array made through another name: {how}"
                   if attribute in _ARRAY_VIEWS else
                   f"{what}, which is '{shown}', in place, and '{read}' is read "
                   f"afterwards{where}: srcgrad cannot follow a change to an attribute's "
                   f"array made through another name: {how}")
        lineno, col = location(update)
        raise AliasedUpdateError(message, filename=program.filename, lineno=lineno, col=col)


#: Attributes that are views of all of an array, with the method that takes
#: the same view (an object's field of that name has no such method).
_ARRAY_VIEWS = {"T": "{}.transpose()"}


def _reads_attribute(stmt, holder, attribute) -> bool:
    """Whether ``stmt`` reads ``holder`` only as ``holder.attribute``."""
    op = getattr(stmt, "op", None)
    return isinstance(stmt, gast.Assign) and op is not None and op.primitive is ir.GETATTR \
        and isinstance(op.args[0], gast.Name) and op.args[0].id == holder \
        and _attribute(op) == attribute


def _attribute(op):
    name = op.args[1] if len(op.args) > 1 else None
    return name.value if isinstance(name, gast.Constant) and isinstance(name.value, str) \
        else None


def _guard(stmt):
    """``(other, x)`` of a guard ``untouched(other, x, ...)`` the alias check
    put before an update of ``x``; None for another statement."""
    if not isinstance(stmt, gast.Expr) or not isinstance(stmt.value, gast.Call):
        return None
    call = stmt.value
    if not (isinstance(call.func, gast.Name) and call.func.id == "untouched"
            and len(call.args) >= 2 and all(isinstance(a, gast.Name) for a in call.args[:2])):
        return None
    return call.args[0].id, call.args[1].id


def _guarded_update(guard, blocks):
    """The update a guard stands before: the next statement of its block that
    is no other guard."""
    block, index, _ = blocks[id(guard)]
    for s in block[index + 1:]:
        if _guard(s) is None and not (isinstance(s, gast.Expr) and getattr(
                getattr(s, "op", None), "primitive", None) is ir.OPAQUE):
            return s
    return None


def _seen_by(program, statements, update, holder, attribute, order, loops, blocks):
    """A statement after ``update`` that may read ``holder``'s ``attribute``
    (any read of ``holder`` but that of another attribute), "returned" where
    the output holds ``holder``, or None."""
    if holder in {n.id for n in gast.walk(program.output) if isinstance(n, gast.Name)}:
        return "returned"
    for later in statements:
        if later is update or holder not in paths.reads(later) \
                or not paths.stale(later, update, holder, order, loops, blocks):
            continue
        op = getattr(later, "op", None)
        if isinstance(later, gast.Assign) and not ir.is_update(later) and op is not None \
                and op.primitive is ir.GETATTR and isinstance(op.args[0], gast.Name) \
                and op.args[0].id == holder and _attribute(op) not in (None, attribute):
            continue  # p.b: another field, memory the update does not touch
        if _guard(later) is not None:
            continue  # another check of the same kind
        return later
    return None

