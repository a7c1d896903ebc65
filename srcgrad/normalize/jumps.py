"""Structuring jumps: ``return``, ``break`` and ``continue`` end their blocks.

The adjoint of a block runs its statements' adjoints backwards, so it must
know which statements ran.  After this pass no statement follows a jump in
its block: the code after an ``if`` that may jump moves into the paths of
that ``if`` that fall through (``if c: break`` + rest becomes ``if c: break
else: rest``), so reversing an ``if`` by its recorded test reverses exactly
the statements that ran.  ``return`` becomes an assignment to one result
variable; a ``return`` inside a loop also sets a flag and breaks out, and the
code after the loop runs only when the flag is down.  The forward code keeps
the user's loops and their real ``break``/``continue``.

    >>> import gast
    >>> from ..ir.emit import unparse
    >>> src = '''
    ... def f(x, n):
    ...     for i in range(n):
    ...         if x[i] > 3:
    ...             return x[i]
    ...         x = x * 2
    ...     return x[0]
    ... '''
    >>> func = gast.parse(src).body[0]
    >>> structure(func, result="result", flag="returned")
    []
    >>> print(unparse(func))
    def f(x, n):
        returned = False
        for i in range(n):
            if x[i] > 3:
                result = x[i]
                returned = True
                break
            else:
                x = x * 2
        if returned:
            pass
        else:
            result = x[0]
        return result
"""

from __future__ import annotations

import copy

import gast

from ..ir.syntax import load_name

_JUMPS = (gast.Return, gast.Break, gast.Continue)
_LOOPS = (gast.For, gast.While)


def contains(stmts, kinds, *, into_loops=True) -> bool:
    for stmt in stmts:
        if isinstance(stmt, kinds):
            return True
        if isinstance(stmt, gast.If):
            if contains(stmt.body, kinds, into_loops=into_loops) or \
                    contains(stmt.orelse, kinds, into_loops=into_loops):
                return True
        elif isinstance(stmt, _LOOPS) and into_loops:
            if contains(stmt.body, kinds, into_loops=into_loops):
                return True
    return False


def may_jump(stmt) -> bool:
    """Whether ``stmt`` may leave its block early (a jump not inside a nested loop,
    or a ``return`` anywhere)."""
    if isinstance(stmt, _JUMPS):
        return True
    if isinstance(stmt, gast.If):
        return any(may_jump(s) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, _LOOPS):
        return contains(stmt.body, gast.Return)
    return False


def needs_structuring(func) -> bool:
    """False for the common case: no jumps, one ``return`` at the very end."""
    body = func.body
    last_is_return = bool(body) and isinstance(body[-1], gast.Return)
    inner = body[:-1] if last_is_return else body
    return contains(inner, _JUMPS) or (not last_is_return and contains(body, _JUMPS))


def structure(func, *, result: str, flag: str, fresh=None) -> list:
    """Rewrite ``func.body`` in place (see the module docstring).

    ``result`` and ``flag`` are fresh names for the returned value and the
    "returned from inside a loop" flag.  Given ``fresh`` (a namer's), where
    every ``return`` returns a tuple display of one length (``return v, i``),
    each element gets a result variable of its own (``fresh(result)``) and the
    function returns their display: a part that is an integer stays one the
    caller's forward mode gives a zero tangent, as for ``return v, i`` at the
    end.  Returns the names it made besides ``result`` and ``flag``.
    """
    if not needs_structuring(func) and not contains(func.body, (gast.Break, gast.Continue)):
        return []
    state = _State(result, flag)
    returned = _returns(func.body)
    lengths = {len(r.value.elts) if isinstance(r.value, gast.Tuple) and not any(
        isinstance(e, gast.Starred) for e in r.value.elts) else None for r in returned}
    if fresh is not None and needs_structuring(func) and len(lengths) == 1 \
            and None not in lengths and 0 not in lengths:
        state.parts = [fresh(result) for _ in range(lengths.pop())]
    if needs_structuring(func):
        body = state.block(func.body, in_loop=False)
    else:  # jumps only inside loops, one final return: keep that return as it is
        body = state.block(func.body[:-1], in_loop=False) + func.body[-1:]
    if state.flag_used:
        body.insert(0, _assign(flag, gast.Constant(value=False, kind=None)))
    if state.returns:
        body.append(gast.Return(value=gast.Tuple(elts=[load_name(p) for p in state.parts],
                                                 ctx=gast.Load()) if state.parts
                                else load_name(result)))
    func.body = body
    return list(state.parts)


def _returns(stmts) -> list:
    """The ``return`` statements of a body, through ``if`` and loops."""
    found = []
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            found.append(stmt)
        elif isinstance(stmt, (gast.If, *_LOOPS)):
            found += _returns(stmt.body) + _returns(stmt.orelse)
    return found


class _State:
    def __init__(self, result, flag):
        self.result = result
        self.flag = flag
        self.flag_used = False
        self.returns = False
        self.parts = []  # a result variable per element of the returned tuple

    def block(self, stmts, in_loop: bool) -> list:
        out = []
        for i, stmt in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(stmt, gast.Return):
                self.returns = True
                value = stmt.value if stmt.value is not None else gast.Constant(value=None, kind=None)
                if self.parts:  # return v, i -> result_1 = v; result_2 = i
                    out.extend(gast.copy_location(_assign(part, elt), elt)
                               for part, elt in zip(self.parts, value.elts))
                else:
                    out.append(gast.copy_location(_assign(self.result, value), stmt))
                if in_loop:
                    self.flag_used = True
                    out.append(_assign(self.flag, gast.Constant(value=True, kind=None)))
                    out.append(gast.copy_location(gast.Break(), stmt))
                return out
            if isinstance(stmt, (gast.Break, gast.Continue)):
                out.append(stmt)
                return out
            if isinstance(stmt, gast.If) and may_jump(stmt):
                stmt.body = self.block(stmt.body + copy.deepcopy(rest), in_loop)
                stmt.orelse = self.block(stmt.orelse + copy.deepcopy(rest), in_loop)
                out.append(stmt)
                return out
            if isinstance(stmt, gast.If):
                stmt.body = self.block(stmt.body, in_loop)
                stmt.orelse = self.block(stmt.orelse, in_loop)
            elif isinstance(stmt, _LOOPS):
                returns_inside = contains(stmt.body, gast.Return)
                stmt.body = self.block(stmt.body, in_loop=True)
                out.append(stmt)
                if returns_inside:
                    exit_ = [gast.Break()] if in_loop else [gast.Pass()]
                    guard = gast.If(test=load_name(self.flag), body=exit_,
                                    orelse=self.block(rest, in_loop))
                    out.append(gast.copy_location(guard, stmt))
                    return out
                continue
            out.append(stmt)
        return out


def _assign(target, value):
    return gast.Assign(targets=[gast.Name(id=target, ctx=gast.Store(), annotation=None,
                                          type_comment=None)], value=value, type_comment=None)
