"""Reads of a variable the function may not have bound yet, checked.

A variable first bound inside a loop whose old value a tape saves
(:mod:`.tapes`) is bound before the loop, so that the first save has a value to
push.  Where the function itself reads such a variable on a path that did not
bind it (``for i in range(j): ...`` of no step, then ``x[i]``), Python raises
UnboundLocalError; the bound value would be read instead (R1-3: ``x[None]``, a
wrong value and gradient where the function raises).  So such a variable is
bound to the runtime's ``Unbound`` marker, and each read that may find it
unbound -- a definite-assignment walk of the forward sweep, the loop's first
step taken as its every step -- is checked first, raising what Python raises.
A read after the variable's binding on every path gets no check: the usual
loop, which binds before it reads, is unchanged.  Sound because the marker is
seen only on the paths where the function has not bound the variable: the
check raises exactly where the function's read does.

    >>> import gast
    >>> from ..ir.emit import block_lines
    >>> body = gast.parse(
    ...     "i = t2 = None\\n"
    ...     "for j in t1:\\n"
    ...     "    t2 = range(j)\\n"
    ...     "    for i in t2:\\n"
    ...     "        s = s + x[i]\\n"
    ...     "    t5 = x[i]\\n"
    ...     "    t6 = x[i] * 2.0").body
    >>> body[0].placeholder = True
    >>> print("\\n".join(block_lines(checked_reads(body, {"s", "x"}, {}), 0)))
    i = Unbound
    t2 = None
    for j in t1:
        t2 = range(j)
        for i in t2:
            s = s + x[i]
        if i is Unbound:
            raise UnboundLocalError("cannot access local variable 'i' where it is not associated with a value")
        t5 = x[i]
        t6 = x[i] * 2.0
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir import stored_names
from ..ir.syntax import helper_ref


def checked_reads(body, defined, user_names) -> list:
    """``body`` (a forward sweep with its placeholder bindings, ``stmt.placeholder``)
    with a check before each read of a placeholder-bound variable that may be
    unbound there, and those variables bound to ``Unbound`` instead of None;
    ``defined`` the names bound on entry, ``user_names`` the user's name of a
    renamed variable (``i_1 -> i``), for the message."""
    placed = {v for stmt in body if getattr(stmt, "placeholder", False)
              for v in _bound_by(stmt)}
    if not placed:
        return body
    checked: set[str] = set()
    _walk(body, set(defined), placed, checked, user_names)
    if not checked:
        return body
    out = []
    for stmt in body:
        names = _bound_by(stmt) if getattr(stmt, "placeholder", False) else ()
        marked = [v for v in names if v in checked]
        if marked:
            out.append(_bind(marked, helper_ref("Unbound"), getattr(stmt, "comment", None)))
            rest = [v for v in names if v not in checked]
            if rest:
                out.append(_bind(rest, gast.Constant(value=None, kind=None),
                                 getattr(stmt, "comment", None)))
            continue
        out.append(stmt)
    return out


def _bound_by(placeholder) -> list:
    """The names ``i = t2 = None`` binds."""
    return [t.id for t in placeholder.targets]


def _walk(stmts, bound, placed, checked, user_names) -> set:
    """Insert the checks into ``stmts`` (in place); the names bound after them."""
    bound = set(bound)
    at = 0
    while at < len(stmts):
        stmt = stmts[at]
        if getattr(stmt, "push", None) is not None or getattr(stmt, "placeholder", False):
            at += 1
            continue
        header = _header(stmt)
        unsure = [n for n in dict.fromkeys(ir.names_in(header) if header is not None else ())
                  if n in placed and n not in bound]
        for n in unsure:
            stmts.insert(at, _check(n, user_names.get(n, n), stmt))
            at += 1
        checked.update(unsure)
        bound.update(unsure)  # past the check, it is bound
        if isinstance(stmt, gast.If):
            bound = _walk(stmt.body, bound, placed, checked, user_names) & \
                _walk(stmt.orelse, bound, placed, checked, user_names)
        elif isinstance(stmt, (gast.For, gast.While)):
            inside = bound | set(stored_names(stmt.target) if isinstance(stmt, gast.For)
                                 else ())
            _walk(stmt.body, inside, placed, checked, user_names)
            if isinstance(stmt, gast.While):  # its test runs again after each step
                _recheck(stmt, placed, bound, checked, user_names)
            bound = _walk(stmt.orelse, bound, placed, checked, user_names)
        else:
            bound.update(n for t in getattr(stmt, "targets", ()) for n in stored_names(t))
            target = getattr(stmt, "target", None)
            if target is not None:
                bound.update(stored_names(target))
        at += 1
    return bound


def _header(stmt):
    """What ``stmt`` itself reads: a compound statement's test or iterable."""
    if isinstance(stmt, (gast.If, gast.While)):
        return stmt.test
    if isinstance(stmt, gast.For):
        return stmt.iter
    return stmt


def _recheck(loop, placed, bound, checked, user_names) -> None:
    """A while loop's test reading a name its body may leave unbound: checked
    at the end of the body too (rare: normalisation computes tests into names)."""
    after = _walk(list(loop.body), bound, placed, set(), {})
    for n in dict.fromkeys(ir.names_in(loop.test)):
        if n in placed and n not in after:
            loop.body.append(_check(n, user_names.get(n, n), loop))
            checked.add(n)


def _check(name, shown, stmt):
    """``if i is Unbound: raise UnboundLocalError(...)``, Python's message."""
    message = f"cannot access local variable '{shown}' where it is not associated with a value"
    test = gast.Compare(left=ir.name(name), ops=[gast.Is()], comparators=[helper_ref("Unbound")])
    error = gast.Call(func=ir.name("UnboundLocalError"),
                      args=[gast.Constant(value=message, kind=None)], keywords=[])
    check = gast.If(test=test, body=[gast.Raise(exc=error, cause=None)], orelse=[])
    return gast.copy_location(check, stmt)


def _bind(names, value, comment):
    init = ir.assign(ir.name(names[0], store=True), value)
    init.targets = [ir.name(v, store=True) for v in names]
    init.comment = comment
    init.placeholder = True  # no value of the program's: a checkpoint need not carry it
    return init
