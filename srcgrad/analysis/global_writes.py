"""Refusing updates that the alias checks would carry into a global's value.

A function may read a global (or a variable of an enclosing function) but not
change it: ``P['W'][0] = v`` or ``W[...] = v`` written in ``f`` is refused
where it is written (frontend/fence.py, normalize/).  The same change made
through another name for the global's memory -- ``Wl = P['W']; Wl *= 0.8``,
``Wl = W; Wl[...] = v`` -- reaches the alias checks (:mod:`.aliasing`,
:mod:`.refresh`, :mod:`.slot_writes`), which follow an update by storing the
written array back where another name holds it (``P['W'] = Wl``) or binding
that name to it again (``W = Wl``).  For a global those statements would
rebind the global's name as a local of the generated function (read before it
is bound, ``P = None`` first: a raw TypeError, found by review) or write into
the user's module dict.  So, once the checks are written, any statement they
added that binds or writes a name the function only reads from outside is
refused, located at the user's update, with the advice to work on a copy.

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> from .aliasing import check_aliases
    >>> P = {"W": np.ones(3)}
    >>> def f(x):
    ...     Wl = P["W"]
    ...     Wl[0] = x[0]
    ...     return np.sum(P["W"])
    >>> check_aliases(normalize(parse_function(f)))
    Traceback (most recent call last):
    ...
    srcgrad.errors.AliasedUpdateError: ...changes an array held by the dict 'P' through another name for it...
"""

from __future__ import annotations

import gast
import numpy as np

from .. import ir
from ..errors import AliasedUpdateError
from ..ir.syntax import source_of
from .slot_writes import location, no_memory


def outside_names(program: ir.Program, statements) -> set[str]:
    """The names ``program`` reads from outside (globals, closure variables) that
    hold values with memory of their own (not modules, classes, functions): the
    free names no statement of ``statements`` binds."""
    bound = {n for s in statements for n in ir.assigned_by(s)} | set(program.params)
    return {n for n in program.free if n not in bound and not no_memory(program, n)}


def refuse_outside_writes(program: ir.Program, before: set[int], outside: set[str]) -> None:
    """Raise ``AliasedUpdateError`` at the first statement not in ``before`` (the
    ids of the statements before the alias checks) that binds or writes one of
    ``outside``; ``bind_at_start``'s ``P = None`` is only a consequence of such a
    statement, located at the function's start, and is passed over."""
    if not outside:
        return
    for s in ir.walk_statements(program.body):
        if id(s) in before or getattr(s, "comment", "").startswith("bound at the start"):
            continue
        hit = sorted(set(ir.assigned_by(s)) & outside)
        if not hit:
            continue
        name = hit[0]
        op = getattr(s, "op", None)
        lineno, col = location(s)
        value = program.free[name]
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript) \
                and len(op.args) == 3:  # P['W'] = Wl: the item written back
            copy_ = f"{name}[{source_of(op.args[1])}].copy()"
        else:
            copy_ = f"{name}.copy()"
        what = f"the array '{name}'" if isinstance(value, np.ndarray) \
            else f"an array held by the {type(value).__name__} '{name}'"
        raise AliasedUpdateError(
            f"this update changes {what} through another name for it, but '{name}' is not a "
            f"variable of {program.node.name} (a global, or a variable of an enclosing "
            f"function): srcgrad does not follow a change a function makes to a value from "
            f"outside it; update a copy made in {program.node.name} ({copy_}) and read that "
            f"copy afterwards instead of '{name}'",
            filename=program.filename, lineno=lineno, col=col)


def refuse_attribute_writes(program: ir.Program, statements) -> None:
    """Raise ``AliasedUpdateError`` at an update of a name bound to an array that
    an attribute of a global holds (``b = wsmod.BUF; b[:] = v``, ``w = GM.W; w *=
    0.8``): the module's or object's array changes, which srcgrad does not
    follow -- and a second name for it (``b2 = wsmod.BUF``) was not seen as one,
    silently (review s34, R2-22: a zero gradient).  The same write through a
    global's own name, ``b = BUF``, is refused by :func:`refuse_outside_writes`."""
    held = {}
    for s in statements:
        if isinstance(s, gast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Attribute):
            value = _attribute_value(program, s.value)
            if isinstance(value, np.ndarray):
                held[s.targets[0].id] = source_of(s.value)
    if not held:
        return
    for s in statements:
        if not (ir.is_update(s) or getattr(s, "augmented", None)):  # (w *= 0.8: in place)
            continue
        written = set(ir.target_names(s)) if ir.is_update(s) else {s.augmented}
        hit = sorted(written & held.keys())
        if hit:
            lineno, col = location(s)
            raise AliasedUpdateError(
                f"this update changes the array {held[hit[0]]} through the name '{hit[0]}', "
                f"but {held[hit[0]]} is not a variable of {program.node.name} (an attribute "
                f"of a global): srcgrad does not follow a change a function makes to a value "
                f"from outside it; update a copy made in {program.node.name} "
                f"({hit[0]} = {held[hit[0]]}.copy()) and read that copy afterwards",
                filename=program.filename, lineno=lineno, col=col)


def _attribute_value(program: ir.Program, node):
    """The value ``node`` (``a.b.c`` of a name the function reads from outside)
    has when the code is compiled, or None."""
    chain = []
    while isinstance(node, gast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name) or node.id not in program.free \
            or node.id in program.params:
        return None
    value = program.free[node.id]
    for attr in reversed(chain):
        try:
            value = getattr(value, attr)
        except Exception:  # noqa: BLE001 - a property that raises: nothing known
            return None
    return value
