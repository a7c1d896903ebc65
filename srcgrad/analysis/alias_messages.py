"""The messages of the alias check's refusals, in the user's names.

An update that another name sees and srcgrad cannot follow is refused
(:mod:`.aliasing`); the message says what changes, which name would miss it,
and a rewrite that keeps what the program computes -- a copy only where the
copy is what the user means, never where it would leave the other name with
the old values (findings F5, F29 of session 33: advice that changed the result).

    >>> import gast
    >>> from .. import ir
    >>> stmt = ir.assign("t2", gast.Constant(value=1.0, kind=None))
    >>> stmt.item_update, stmt.augmented_symbol = ("box", "t1", None), "*"
    >>> stmt.user_target = "box[0]"
    >>> print(refusal(stmt, "t1", "h", None, lambda n: n))  # doctest: +NORMALIZE_WHITESPACE
    'box[0] *= ...' updates the array 'box[0]' in place, and 'h' shares its memory and is
    read afterwards; srcgrad cannot follow that change into 'h': update 'h' itself
    (h[...] *= ...) and store into 'box' after that update
"""

from __future__ import annotations

import operator
import re

import gast

from .. import ir, runtime
from ..frontend.linker import is_user_function
from ..ir.syntax import source_of

__all__ = ["refusal"]


def refusal(stmt, x, other, source, user, held=False, looped=None, maker=None) -> str:
    """What an update ``stmt`` of ``x`` that ``other`` sees is refused with, in the
    user's names: ``x`` for the ``x_1`` the compiler renamed it to, the user's
    expression (``d['h']``, ``W[1:]``) for a temporary.  ``held``: ``other`` is
    a list, tuple or dict holding ``x`` (``lst.append(b); b[1] = v``), which
    sees the write -- a copy of ``x`` would change what the program computes.
    ``looped``: ``x`` is the variable of ``for x in Y`` (what the loop runs
    over, as written), which a copy or a new array for ``x`` would leave
    unchanged: the update is to be written by index, ``Y[i] -= ...``.
    ``maker``: the statement that bound ``x``; where it calls a user function
    (``b = ident(buf)``), a copy of ``x`` would leave ``other`` unchanged: the
    write is to be ``other``'s own (review s34, R2-10/R2-20)."""
    shown_x = getattr(stmt, "user_target", None) or user(x)
    shown_other = user(other)
    if held and ir.is_update(stmt) and source is None and shown_other.isidentifier() \
            and not re.fullmatch(r"t\d+", other) \
            and getattr(stmt, "written_back", None) is None:  # (t1: a display of srcgrad's)
        holder = f"'{shown_other}'" if shown_other != shown_x or other == x \
            else f"another variable named '{shown_other}'"  # (a local function's 'out')
        return (f"'{shown_x}' is updated in place while {holder}, which holds it "
                f"(or a view of it), is read afterwards; srcgrad cannot follow that "
                f"change into it: write the element through "
                f"'{shown_other}' ({shown_other}[i][...] = ...), or update '{shown_x}' "
                f"before it is stored in '{shown_other}'")
    if getattr(stmt, "written_back", None) is not None:
        # r = y[1:]; r[0] = v written back (y[1:] = r): the user's r, not the base
        view, base, looped = stmt.written_back
        view, what = user(view), "the loop's variable over" if looped else "a view of"
        return (f"'{view}[...] = ...' changes the array '{view}', {what} '{base}', in "
                f"place, and '{shown_other}' shares its memory and is read afterwards; "
                f"srcgrad cannot follow that change: write into '{shown_other}' by index "
                f"instead ({shown_other}[...] = ...)")
    node = getattr(getattr(source, "op", None), "node", None)
    if looped is not None or (source is not None and source.op.primitive is runtime.sequence
                              and isinstance(source.op.args[0], gast.Name)):
        # for w in ws: w *= 0.5, ws passed in: what the loop runs over is ws itself
        items = source_of(looped) if isinstance(looped, gast.expr) else user(
            looped or source.op.args[0].id)
        symbol = getattr(stmt, "augmented_symbol", "+")
        how = f"{items}[i] {symbol}= ..." if not ir.is_update(stmt) else f"{items}[i][...] = ..."
        return (f"'{shown_x}' is an item of '{items}', which is read afterwards, and is "
                f"updated in place here; srcgrad cannot follow that change through the "
                f"loop's variable: update the items by index (for i in range(len({items})): "
                f"{how})")
    if source is not None and source.op.primitive is not operator.pos \
            and isinstance(node, gast.expr) and not isinstance(node, (gast.Tuple, gast.List)):
        hint = f"{shown_other} = {source_of(node)}.copy()"  # the view, as the user wrote it
    else:
        hint = f"{shown_x} = {shown_x}.copy()"
    # (a local function's 'out' and the caller's: two variables of one name)
    sharer = f"'{shown_other}'" if shown_other != shown_x or other == x \
        else f"another variable named '{shown_other}'"
    call = getattr(getattr(maker, "op", None), "node", None)
    if ir.is_update(stmt) and is_user_function(getattr(getattr(maker, "op", None),
                                                       "primitive", None)) \
            and isinstance(call, gast.Call) and shown_other.isidentifier():
        return (f"'{shown_x}' is updated in place while {sharer} shares its memory "
                f"and is read afterwards ('{source_of(call)}' may return '{shown_other}' "
                f"itself, or a view of it); srcgrad cannot follow a change made through "
                f"what a helper returns: write into '{shown_other}' itself "
                f"({shown_other}[...] = ...), or take the view in the function "
                f"({shown_x} = {shown_other}[...])")
    if ir.is_update(stmt):
        return (f"'{shown_x}' is updated in place while {sharer} shares its memory "
                f"and is read afterwards; srcgrad cannot follow that change: make a copy "
                f"({hint})")
    symbol = getattr(stmt, "augmented_symbol", "+")
    item = getattr(stmt, "item_update", None)
    if item is not None and not held and shown_other.isidentifier():
        # box = [h[1:]]; box[0] *= 3.0, h read: a new array for box[0], or a copy,
        # would leave h as it was -- the update is to be h's own (found by review)
        box = user(item[0])
        return (f"'{shown_x} {symbol}= ...' updates the array '{shown_x}' in place, and "
                f"{sharer} shares its memory and is read afterwards; srcgrad cannot "
                f"follow that change into '{shown_other}': update '{shown_other}' itself "
                f"({shown_other}[...] {symbol}= ...) and store into '{box}' after that "
                f"update")
    return (f"'{shown_x} {symbol}= ...' updates the array '{shown_x}' in place, and "
            f"{sharer} shares its memory and is read afterwards; srcgrad cannot "
            f"follow that change: write '{shown_x} = {shown_x} {symbol} ...' or make a copy "
            f"({hint})")
