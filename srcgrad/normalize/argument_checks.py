"""The check statements for the arguments a function changes in place.

:mod:`.argument_updates` finds which arguments a function updates and which
others are read after an update; this module turns those findings into the
statements of the generated code that raise :class:`AliasedUpdateError`
where they share memory: at the entry (``unshared``, ``items_apart``,
``apart_from_free``) or where an update runs (``untouched``).  Apart from the
analysis so that each reads on its own: what is found, and what is emitted.
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import constant, helper_ref
from .argument_updates import ITEMS


def entry_check(param, params, found, filename):
    """``unshared(x, (y, z), ('x', 'y', 'z'), False, where)``: the statement at
    the entry of the generated function that raises
    :class:`AliasedUpdateError` where another argument read after an update is,
    holds or shares the memory of ``param``, which the function updates at
    ``where``; None where no other argument is read after an update of
    ``param`` (or each update is checked where it runs, :func:`update_guards`)."""
    others = found.others.get(param)
    if not others:
        return None
    node, _ = found.where[param]
    where = constant((filename, getattr(node, "lineno", None),
                      getattr(node, "col_offset", None)))
    call = gast.Call(func=helper_ref("unshared"), args=[
        ir.name(param), gast.Tuple(elts=[ir.name(o) for o in others], ctx=gast.Load()),
        constant((param, *others)), gast.Constant(value=_deep(param, found), kind=None),
        where], keywords=[])
    check = gast.copy_location(gast.Expr(value=call), node)
    check.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
    check.comment = f"{param} is updated in place below: no other argument may share it"
    return check


def _deep(param, found) -> bool:
    """Whether the function changes the arrays ``param`` holds, not only
    ``param`` itself: an update through another name (``found.shared``), or
    ``xs[k] op= v``, which changes the array ``xs[k]`` is in place before
    storing it back -- so that another argument holding that array
    (``f(hs, list(hs))``, ``f([h], h)``) is refused, where it read the old one
    (outside tester T2 #4 with arguments)."""
    return param in found.shared or any(
        isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Subscript)
        for node, _ in found.updates.get(param, ()))


def entry_checks(param, params, found, filename) -> list:
    """The checks at the entry of the generated function for the argument
    ``param``, which it updates in place: against the other arguments
    (:func:`entry_check`), against the other items of itself
    (``items_apart``) and against the globals and closure values read after
    the update (``apart_from_free``)."""
    checks = []
    if len(params) > 1:
        check = entry_check(param, params, found, filename)
        checks.extend([check] if check is not None else [])
    if param in found.items:
        node, how, key = found.items[param]
        call = gast.Call(func=helper_ref("items_apart"), args=[
            ir.name(param), gast.Constant(value=param, kind=None),
            gast.Constant(value=f"'{how}'", kind=None), _where(node, filename),
            *([gast.Constant(value=key, kind=None)] if key is not None else [])],
            keywords=[])
        checks.append(_statement(call, node, f"{param} is updated in place below through "
                                 f"{how}: no other item of it may share that memory"))
    if found.free.get(param):
        others = found.free[param]
        node, _ = found.where[param]
        call = gast.Call(func=helper_ref("apart_from_free"), args=[
            ir.name(param), gast.Tuple(elts=[_free_ref(found, o) for o in others],
                                       ctx=gast.Load()),
            constant((param, *others)), gast.Constant(
                value=param in found.shared or param in found.items, kind=None),
            _where(node, filename)], keywords=[])
        checks.append(_statement(call, node, f"{param} is updated in place below: "
                                 f"{', '.join(others)} must not share it"))
    return checks


def _free_ref(found, name):
    """The generated code's name for ``name``, an argument or a value read from
    outside: ``layers.W`` or a helper's global is bound under a name of its own
    (``found.refs``, :mod:`.free_reads`)."""
    return ir.name(found.refs.get(name, name))


def _where(node, filename):
    return constant((filename, getattr(node, "lineno", None),
                     getattr(node, "col_offset", None)))


def _statement(call, node, comment):
    check = gast.copy_location(gast.Expr(value=call), node)
    check.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
    check.comment = comment
    return check


def update_guards(found, node, current, filename) -> list:
    """The checks to run before the update ``node`` (``t *= v``, ``t`` an
    element or a view of an argument, its value now under the name
    ``current``): ``untouched(y, t, None, message, where)`` for each other
    argument ``y`` read afterwards, which raises where ``t`` is an array
    sharing ``y``'s memory -- Python changes it there in place, srcgrad's code
    makes a new array.  A number (``t = b[2]`` of a vector) shares nothing."""
    pairs = found.guards.get(id(node))
    if not pairs or current is None:
        return []
    found.placed.add(id(node))
    where = constant((filename, getattr(node, "lineno", None),
                      getattr(node, "col_offset", None)))
    target = node.target.id
    checks = []
    for param, other in pairs:
        if other == ITEMS:  # another item of the argument itself (a, b = ps; a += v)
            call = gast.Call(func=helper_ref("item_once"), args=[
                ir.name(param), gast.Constant(value=param, kind=None), ir.name(current),
                gast.Constant(value=target, kind=None), where], keywords=[])
            checks.append(_statement(call, node, f"{target} may be part of the argument "
                                     f"{param}: no other item of it may see it"))
            continue
        part = "" if target == param else f", part of '{param}'"
        shown = f"'{other}', which this function reads from its globals or closure," \
            if other in found.free_names else f"the argument '{other}'"
        message = (
            f"the argument '{param}' is updated in place here ('{target} op= ...' changes "
            f"the array '{target}'{part}), and {shown} shares "
            f"that memory and is read afterwards: Python would show '{other}' the change, "
            f"but srcgrad's generated code makes a new array for '{target}', so the values "
            f"would differ; pass a copy (x.copy()) as one of them, or write "
            f"'{target} = {target} op ...'")
        if other == param:  # a called function's view of its argument (callee_view_guards)
            message = (
                f"'{target} op= ...' updates the array '{target}' in place, and it is part "
                f"of the argument '{param}': Python changes the caller's array there, but "
                f"srcgrad's generated code makes a new array for '{target}', so a caller "
                f"reading its array afterwards would see other values (a called function "
                f"is checked whatever its caller reads); write '{target} = {target} op ...' "
                f"and return what the caller needs")
        symbol = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/",
                  gast.MatMult: "@", gast.Pow: "**", gast.FloorDiv: "//",
                  gast.Mod: "%"}.get(type(node.op))
        if symbol is not None:
            message = message.replace(" op= ", f" {symbol}= ").replace(" op ", f" {symbol} ")
        call = gast.Call(func=helper_ref("untouched"), args=[
            _free_ref(found, other), ir.name(current), gast.Constant(value=None, kind=None),
            gast.Constant(value=message, kind=None), where], keywords=[])
        check = gast.copy_location(gast.Expr(value=call), node)
        check.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
        check.comment = f"{target} may be part of the argument {param}: {other} must not see it"
        check.comment = f"{target} may be part of the argument {param}: the caller's array" \
            if other == param else check.comment
        checks.append(check)
    return checks


def unplaced_checks(found, params, filename) -> list:
    """Entry checks for the arguments whose guards the normaliser never placed
    (an update it did not reach as written): the whole argument, as before."""
    missing = {param for key, pairs in found.guards.items() if key not in found.placed
               for param, other in pairs if other != param}
    checks = []
    for param in (p for p in params if p in missing):
        unplaced = [(key, q) for key, pairs in found.guards.items()
                    if key not in found.placed for p, q in pairs if p == param and q != p]
        found.others[param] = sorted({q for _, q in unplaced if q in params},
                                     key=params.index)
        found.free[param] = sorted({q for _, q in unplaced if q in found.free_names})
        if any(q == ITEMS for _, q in unplaced):
            found.items.setdefault(param, (found.where[param][0], param, None))
        found.others = {k: v for k, v in found.others.items() if v}
        checks.extend(entry_checks(param, params, found, filename))
    return checks
