"""``functools.partial`` made inside the differentiated function.

A partial built where the function runs (``m = functools.partial(np.multiply,
w)``, or ``apply_n(functools.partial(np.multiply, w), x, 3)``) binds values only
known then, so srcgrad cannot resolve it to an object when it compiles (a
partial made at module level is such an object: :meth:`.calls.Calls.call`).
It stands for a local function, which srcgrad inlines where it is called: the
values the partial binds are evaluated where it is made, into names of their
own (Python evaluates them once, then: a later ``w = w * 2`` does not reach the
partial), and each call of it is the call of its function with those values
first, the call's own arguments after, its keywords over the partial's --
exactly what ``functools.partial.__call__`` does, so a NumPy function with a
rule (``np.multiply(w, x)``) is differentiated as written, and a user function
is inlined or specialised as a call of it is.

The partial is kept as a lambda (``lambda b: np.multiply(w_bound, b)``, its
parameters those of the function that the partial leaves to fill): that is
what the passes that follow a local function passed to a helper (inlining the
helper, the scan of what it updates) read.  The lambda carries ``partial_of``,
which the calls use.

    >>> import gast, numpy as np
    >>> from ..ir.syntax import source_of
    >>> from .._doctest_helpers import scale
    >>> free_parameters(np.multiply, 1, set())
    ['x2']
    >>> free_parameters(scale, 0, set())         # def scale(v, k=2.0): v, not k
    ['v']
    >>> free_parameters(scale, 0, {'v'})
    []
    >>> free_parameters(np.sum, 0, set())       # a, then axis (a default): a only
    ['a']
    >>> call = gast.parse("F(p, x, k=1)").body[0].value
    >>> lam = gast.parse("lambda y: F(p, y)").body[0].value
    >>> lam.partial_of = (call.func, call.args[:1], call.keywords)
    >>> site = gast.parse("m(x, k=2, j=3)").body[0].value
    >>> print(source_of(partial_call(lam, site)))
    F(p, x, k=2, j=3)
"""

from __future__ import annotations

import functools
import inspect

import gast
import numpy as np

from ..frontend.parse import MISSING
from ..ir.syntax import clone, load_name, walk


def free_parameters(fn, skipped, named) -> list[str]:
    """The names of the positional parameters of ``fn`` that a partial binding
    its first ``skipped`` positional arguments and the keywords ``named`` leaves
    to fill and that have no default (those up to the first with a default or
    bound by keyword); for a ufunc, its inputs after the bound ones (``x2``).
    Empty where the signature is not known (the calls do not need it)."""
    if isinstance(fn, np.ufunc):
        return [f"x{i + 1}" for i in range(skipped, fn.nin)]
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    positional = [p for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = []
    for param in positional[skipped:]:
        if param.default is not param.empty or param.name in named:
            break
        names.append(param.name)
    return names


def partial_call(fdef, call, partial=None):
    """The call ``call`` of the partial that ``fdef`` (its lambda) stands for,
    as the call of its function: the bound values, then ``call``'s arguments;
    the partial's keywords where ``call`` does not give them, then ``call``'s.
    ``partial``: other (function, bound values, keywords) than ``fdef``'s."""
    func, bound, keywords = partial or fdef.partial_of
    given = {kw.arg for kw in call.keywords}
    made = gast.Call(func=clone(func), args=[*map(clone, bound), *call.args],
                     keywords=[*(gast.keyword(arg=k.arg, value=clone(k.value))
                                 for k in keywords if k.arg not in given), *call.keywords])
    return _located(gast.copy_location(made, call), call)


def _located(node, where):
    for sub in walk(node):
        if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
            gast.copy_location(sub, where)
    return node


class Partials:
    """Mixed into the normaliser: partials made in the function (module docstring)."""

    def is_partial(self, node) -> bool:
        """Whether ``node`` is ``functools.partial(f, ...)`` with plain arguments
        (no ``*a``, ``**k``) and ``f`` a function named or a local function."""
        return (isinstance(node, gast.Call) and bool(node.args)
                and self.callee(node) is functools.partial
                and not any(isinstance(a, gast.Starred) for a in node.args)
                and all(k.arg is not None for k in node.keywords)
                and isinstance(node.args[0], (gast.Name, gast.Attribute)))

    def calls_partial(self, call) -> bool:
        """Whether ``call`` calls a partial: one made here by name (``p(m, v)``
        after ``p = functools.partial(np.putmask, y)``) or in place
        (``functools.partial(np.putmask, y)(m, v)``)."""
        func = self.unalias(call.func)
        if isinstance(func, gast.Name):
            return hasattr(self.local_functions.get(func.id), "partial_of")
        return self.is_partial(func)

    def partial_statement(self, stmt):
        """The call statement ``stmt`` of a partial (:meth:`calls_partial`) as
        the statement calling its function (:func:`partial_call`), and that
        statement as the user would write it, for messages (``np.putmask(y, m,
        v)``, not the names the bound values are held in)."""
        func = self.unalias(stmt.value.func)
        made = self.local_functions[func.id] if isinstance(func, gast.Name) \
            else self.partial_lambda(func, keep_names=True)
        call = _located(gast.Expr(value=partial_call(made, stmt.value)), stmt)
        shown = gast.Expr(value=partial_call(made, stmt.value, made.partial_shown))
        return call, _located(shown, stmt)

    def partial_lambda(self, node, keep_names=False):
        """The lambda the partial ``node`` stands for (module docstring), its
        bound values evaluated here into names of their own, except constants,
        local functions and -- with ``keep_names``, for a partial made in a call's
        arguments, whose callee cannot rebind the caller's names -- plain names.
        None where ``node`` is no such partial."""
        if not self.is_partial(node):
            return None
        func, bound = node.args[0], node.args[1:]
        if isinstance(func, gast.Name) and func.id in self.local_functions:
            local = self.local_functions[func.id]
            params = [a.id for a in local.args.args][len(bound):]
            named = {k.arg for k in node.keywords}
            params = params[:next((i for i, p in enumerate(params) if p in named),
                                  len(params))]
            params = params[:len(params) - len(local.args.defaults)] \
                if len(local.args.defaults) else params
        else:
            target = self.callee(gast.Call(func=func, args=[], keywords=[]))
            if target is MISSING:
                return None
            params = free_parameters(target, len(bound), {k.arg for k in node.keywords})
        values = [self._bound_value(v, keep_names) for v in bound]
        keywords = [gast.keyword(arg=k.arg, value=self._bound_value(k.value, keep_names))
                    for k in node.keywords]
        names = [self.namer.fresh(p) for p in params]
        body = gast.Call(func=clone(func), args=[*map(clone, values), *map(load_name, names)],
                         keywords=[gast.keyword(arg=k.arg, value=clone(k.value))
                                   for k in keywords])
        made = gast.Lambda(args=gast.arguments(
            args=[gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                  for n in names], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
            kwarg=None, defaults=[]), body=body)
        made = _located(gast.copy_location(made, node), node)
        made.partial_of = (func, values, keywords)
        made.partial_shown = (func, bound, node.keywords)  # as written, for messages
        made.defaults_bound = True
        return made

    def _bound_value(self, value, keep_names):
        """``value`` (an argument of a partial made here) as the partial's calls
        read it: itself where it is a constant, a local function or (with
        ``keep_names``) a plain name, or a name no other statement binds, one
        that is never assigned; else a fresh name bound to it here."""
        if isinstance(value, gast.Constant) or self.is_local_function(value):
            return value
        if isinstance(value, gast.Name) and (keep_names or value.id not in self.locals
                                             or not self.assignments.get(value.id)):
            return value
        held = self.namer.fresh(f"{value.id}_bound" if isinstance(value, gast.Name) else "bound")
        self.locals.add(held)
        self.assign([gast.copy_location(gast.Name(
            id=held, ctx=gast.Store(), annotation=None, type_comment=None), value)],
            value, value)
        return gast.copy_location(load_name(held), value)
