"""A helper called for what it does to its arguments, inlined where it is called.

Part of :mod:`.sugar` (a mixin of its desugarer).  Simulation and training
code calls module-level helpers as statements for their effect:
``apply_boundary(u)`` (``u[0] = u[-1] = 0.0``), ``update(state, g)``
(``state['m'] = 0.9 * state['m'] + g``), ``push(log, v)``.  srcgrad
differentiates a called function through what it returns, so such a call,
with a value being differentiated flowing into it, was refused ("run as
written ... define the function inside this one").  Its body is what the
caller means, so the statement becomes that body, before the rest of the
normaliser reads the function: the scan of what the function updates in
place (the entry copies of its arguments, normalize/argument_updates.py) and
the alias analysis see the updates as if the caller had written them.  The
helper's globals are renamed to its own module's where that is another, and
one it reads that is also a variable here is refused, located
(:meth:`.inlining.Inlining.own_globals` and ``check_globals_seen``).

Before, a helper pinning its argument's first element; after (the normalised
caller), its body inlined at the call, its parameter the caller's variable
(:func:`_inlined`):

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(x):
    ...     u = x * 2.0
    ...     _pin_ends(u)
    ...     return np.sum(u ** 2)
    >>> def _pin_ends(a):
    ...     a[0] = 0.0
    >>> _pin_ends.__module__ = "model"  # (a doctest's function counts as srcgrad's own)
    >>> print(unparse_body(normalize(parse_function(f))))
    u = x * 2.0
    u[0] = 0.0
    t1 = u ** 2
    t2 = np.sum(t1)
    return t2

Sound because Python runs the helper's body with its parameters bound to the
objects passed, which is what the inlined body does, its variables fresh
names (rebinding one leaves the caller's variables alone).  Only a plain
module-level function qualifies: positional parameters with constant
defaults or none, no ``*args``/``**kwargs``, no closure, not calling itself,
no ``return`` but a last one of nothing, a name or a constant (its result is
unused), no nested ``def``; one that updates none of its parameters is left
a call (its result unused, nothing to differentiate).
"""

from __future__ import annotations

import inspect
import types

import gast

from ..errors import SourceNotFoundError, SrcGradError
from ..frontend.errstate import merge_errstate
from ..frontend.fence import check as check_supported
from ..frontend.linker import is_user_function
from ..frontend.parse import parse_function
from ..ir.syntax import Renamer, clone, is_append, is_docstring, updated_in_place, walk
from .argument_updates import augmented_parameters, deep_parameters, updated_arguments
from .records_outside import detached


class EffectCalls:
    """``helper(a, b)`` as a statement, the helper updating a parameter in
    place: its body in the call's place (mixed into the desugarer)."""

    def visit_Expr(self, node):
        node = super().visit_Expr(node)  # (hs.extend(e) and the like: .list_methods)
        call = getattr(node, "value", None) if isinstance(node, gast.Expr) else None
        if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Name) \
                or call.func.id in self.n.locals or self.deferred:
            return node
        fn = self.callee(call)
        inlining = self.__dict__.setdefault("effect_inlining", [])
        if fn in inlining or not _inlinable(fn, call):
            return node
        parsed = parse_function(fn)
        try:
            check_supported(parsed.node, parsed.filename, callee=True)
        except SrcGradError:
            return node  # (run as written, as before, where nothing it does is followed)
        body = parsed.node.body
        if len(body) > 1 and is_docstring(body[0]):
            body = body[1:]
        if isinstance(body[-1], gast.Return) and _plain(body[-1].value):
            body = body[:-1]  # (its result unused)
        if not body or any(isinstance(n, (gast.Return, gast.FunctionDef))
                           for s in body for n in walk(s)):
            return node  # a return midway, or a nested def: left to the call
        fdef = self.n.own_globals(fn, gast.copy_location(gast.FunctionDef(
            name=fn.__name__, args=parsed.node.args, body=body, decorator_list=[],
            returns=None, type_comment=None), parsed.node), parsed.filename)
        self.n.check_globals_seen(fdef, fn, call)
        merge_errstate(self.n.parsed.errstate, parsed.errstate)  # (its with np.errstate)
        self.n.collect_free(call.func)  # bound and watched: a redefined helper regenerates
        inlining.append(fn)
        try:
            out = []
            for stmt in _inlined(fn, fdef, call, self.n.locals - set(self.n.params),
                                 self.fresh, set(self.n.params)):
                made = self.visit(stmt)  # its own rewrites (and effect calls in it)
                out.extend(made if isinstance(made, list) else [made])
            return out
        finally:
            inlining.pop()


def _plain(value) -> bool:
    """A returned value that computing again has no effect: nothing, a name, a constant."""
    return value is None or isinstance(value, (gast.Name, gast.Constant))


def _inlined(fn, fdef, call, local_names, fresh, params=frozenset()) -> list:
    """The statements the call stands for: each parameter bound to what the call
    passes (a fresh name assigned first, or, where the call passes a variable
    of the caller and the helper never rebinds the parameter, that variable
    itself: ``lst.append(v)`` in ``push(acc, v)`` is ``acc.append(v)``, an
    update the alias analysis follows, where ``lst_1 = acc; lst_1.append(v)``
    would be one through a second name -- exact, as the parameter would be
    bound to that object for the whole body), the helper's other variables
    fresh names, then its body.  ``local_names``: the caller's variables that
    may stand for a parameter (not the caller's own parameters: the updates of
    those are followed on the copy made at the entry, through the new name,
    where ``for a in xs: a[0] = v`` on the caller's ``xs`` itself is refused).
    A caller's parameter (``params``) the helper does not loop over is written
    as itself too: ``h.append(v)`` in ``push(h, v)`` is an update of the
    caller's ``h``, followed on its entry copy, where ``h_1.append(v)`` was
    refused as an update through a second name for ``h`` (review s34, R2-5)."""
    bound = inspect.signature(fn).bind(*call.args, **{k.arg: k.value for k in call.keywords})
    bound.apply_defaults()
    stored = {n.id for n in walk(fdef) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)}
    # the globals it reads: every other name of the helper gets a new one here
    free = {n.id for n in walk(fdef) if isinstance(n, gast.Name)} - stored \
        - {a.id for a in fdef.args.args}
    looped = {n.id for loop in walk(fdef) if isinstance(loop, (gast.For, gast.comprehension))
              for n in walk(loop.iter) if isinstance(n, gast.Name)}
    renames, bindings = {}, []
    for param, value in zip(fdef.args.args, bound.arguments.values()):
        if isinstance(value, gast.Name) and value.id not in free and param.id not in stored \
                and (value.id in local_names or value.id in params and param.id not in looped):
            renames[param.id] = value.id
            continue
        renames[param.id] = fresh(param.id)
        if not isinstance(value, gast.AST):  # a default: its constant
            value = gast.Constant(value=value, kind=None)
        bindings.append(gast.copy_location(gast.Assign(
            targets=[gast.Name(id=renames[param.id], ctx=gast.Store(), annotation=None,
                               type_comment=None)], value=value, type_comment=None), call))
    for name in sorted(stored - set(renames)):
        renames[name] = fresh(name)
    # in the order the call evaluates its arguments (h(b=f(), a=g()): f first), the
    # defaults' constants after them
    written = [id(a) for a in call.args] + [id(k.value) for k in call.keywords]
    bindings.sort(key=lambda b: written.index(id(b.value)) if id(b.value) in written
                  else len(written))
    rename = Renamer(renames)
    return [*_located(bindings, call), *(rename.visit(clone(s)) for s in fdef.body)]


def _located(stmts, where):
    for stmt in stmts:
        for sub in walk(stmt):
            if getattr(sub, "lineno", None) is None and "lineno" in sub._attributes:
                gast.copy_location(sub, where)
    return stmts


def _inlinable(fn, call) -> bool:
    """Whether ``fn``, called by the statement ``call``, is a plain module-level
    function that updates a parameter in place (module docstring)."""
    if not isinstance(fn, types.FunctionType) or not is_user_function(fn) or fn.__closure__:
        return False
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR) \
            or code.co_kwonlyargcount or fn.__name__ in code.co_names:
        return False  # (a recursive one, named in its own body: left to the call)
    if any(not isinstance(d, (int, float, complex, str, bool, type(None)))
           for d in fn.__defaults__ or ()):
        return False
    if any(isinstance(a, gast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return False
    try:
        inspect.signature(fn).bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return False  # the call's own error comes later, located
    try:
        parsed = parse_function(fn)
    except SourceNotFoundError:
        return False  # made by exec: run as written (memory/helper_state.py looks at its code)
    params = {a.id for a in parsed.node.args.args}
    rebound = {n.id for n in walk(parsed.node) if isinstance(n, gast.Name)
               and isinstance(n.ctx, gast.Store)}
    return bool((updated_in_place(parsed.node) - rebound) & params or updated_arguments(parsed)
                or augmented_parameters(fn) or deep_parameters(fn)) \
        or _records(parsed.node, params)


def _records(func, params) -> bool:
    """Whether the helper ``func`` only records numbers in global lists
    (``def record(v): HISTORY.append(float(v))``) or prints: inlined, its
    statements are the caller's own (a print runs as written), which srcgrad runs as written where the
    caller never reads the list back (:mod:`.records_outside`; review s37
    R5-5, where ``record(l)`` was refused as a call run as written)."""
    body = [s for s in func.body if not is_docstring(s)]
    if body and isinstance(body[-1], gast.Return) and body[-1].value is None:
        body = body[:-1]
    return bool(body) and all(
        isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and (
            isinstance(stmt.value.func, gast.Name) and stmt.value.func.id == "print"
            or is_append(stmt.value) and stmt.value.func.value.id not in params
            and detached(stmt.value.args[0]))
        for stmt in body)
