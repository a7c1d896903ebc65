"""Inlining: local functions, lambdas, and the helpers that receive or return them.

Part of :mod:`.normalizer` (a mixin of its normaliser).  A function defined
inside the differentiated one -- a nested ``def`` or a lambda -- is a closure
over its variables, which srcgrad cannot pass around as a value: it is inlined
at each call, its locals renamed afresh (:meth:`Inlining.inline_local`).  A
module-level helper that is passed one (``fixed_point(lambda z: ..., x0)``) is
inlined with it (:meth:`Inlining.inline_helper`), and so is a helper that
returns one (``flat, unflatten = flatten(params)``): its closure becomes a local
function of the caller under the target's name (:meth:`Inlining.bind_closures`).

Before, a lambda closing over a variable and called twice; after, its body at
each call, its parameter a fresh name, the variable read as it is at the call
(tests/e2e/test_closures.py and test_function_arguments.py show the helpers):

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(x, k):
    ...     c = 2.0 * k
    ...     times = lambda v: v * c
    ...     return np.sum(times(x)) + times(k)
    >>> print(unparse_body(normalize(parse_function(f))))
    c = 2.0 * k
    v_1 = x
    t1 = v_1 * c
    t2 = t1
    t3 = np.sum(t2)
    v_2 = k
    t4 = v_2 * c
    t5 = t4
    t6 = t3 + t5
    return t6
"""

from __future__ import annotations

import collections
import copy
import functools
import inspect
import types

import gast

from .. import ir
from ..errors import SrcGradError
from ..frontend.fence import check as check_supported
from ..frontend.linker import is_user_function
from ..frontend.errstate import merge_errstate
from ..frontend.parse import Resolver, located_error, parse_function
from ..ir.syntax import Renamer, assigned_names, clone, is_docstring, load_name, walk
from .chosen_functions import defined_ahead
from .iterators import builtin_ref
from .jumps import structure
from .mutable_defaults import changed_local_defaults, local_default_message
from .none_results import returns_none_in_place


class Inlining:
    """Local functions and the helpers inlined with them (mixed into the normaliser)."""

    def local_function(self, name, node):
        """Remember a nested ``def`` or a lambda: each call is inlined."""
        if getattr(node, "decorator_list", []):
            raise self.error(
                f"a decorated nested function ('{name}') is not supported: srcgrad inlines "
                f"a nested function at each call and cannot follow what the decorator "
                f"makes of it; define '{name}' and its decorator at module level, or call "
                f"the function undecorated", node)
        if self.depth and len({(getattr(n, "lineno", None), getattr(n, "col_offset", None))
                               for n in walk(self.func) if (
                isinstance(n, gast.FunctionDef) and n.name == name and n is not self.func) or (
                isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store))}) > 1:
            # act = lambda ... in both branches of an if: which one a call inlines
            # depends on the path, and srcgrad inlines at compile time (counted by
            # place: the code after an early return is copied into a branch, and
            # a definition there with it)
            raise self.error(f"the local function '{name}' is defined more than once, here "
                             f"inside a branch or loop: define it once (a condition inside it "
                             f"can choose), or give each definition its own name", node)
        self.local_functions[name] = self.bind_defaults(node)
        self.locals.discard(name)

    def chosen_ahead(self, body) -> None:
        """Remember, before a loop's ``body`` is normalised, the local functions
        it defines after a call choosing them (:func:`.chosen_functions.defined_ahead`)."""
        for name, node in defined_ahead(body):
            if name not in self.local_functions:
                self.local_functions[name] = node
                self.locals.discard(name)

    def bind_defaults(self, node):
        """``node`` with each default that reads a variable of this function
        evaluated here, where the ``def`` or ``lambda`` runs, into a fresh name
        (Python evaluates defaults once, at the definition: ``lambda v, k=k: v * k``
        keeps the ``k`` of that moment, whatever ``k`` is when it is called, which
        is how a closure made in a loop keeps its ``i``)."""
        if getattr(node, "defaults_bound", False) or not node.args.defaults and not any(
                node.args.kw_defaults):
            return node
        params = node.args.args[len(node.args.args) - len(node.args.defaults):]
        defaults = []
        for param, default in [*zip(params, node.args.defaults),
                               *zip(node.args.kwonlyargs, node.args.kw_defaults)]:
            if default is None:  # a keyword-only parameter without a default
                defaults.append(default)
                continue
            if not self.is_local_function(default) and any(
                    isinstance(n, gast.Name) and n.id in self.locals for n in walk(default)):
                held = self.namer.fresh(f"{param.id}_default")
                self.locals.add(held)
                self.assign([gast.copy_location(gast.Name(
                    id=held, ctx=gast.Store(), annotation=None, type_comment=None), default)],
                    default, default)
                default = gast.copy_location(load_name(held), default)
            defaults.append(default)
        node = copy.copy(node)
        node.args = copy.copy(node.args)
        node.args.defaults = defaults[:len(params)]
        node.args.kw_defaults = defaults[len(params):]
        node.defaults_bound = True
        return node

    def is_local_function(self, node) -> bool:
        """A lambda written here, or the name of a local function or lambda."""
        return isinstance(node, gast.Lambda) or (
            isinstance(node, gast.Name) and node.id in self.local_functions)

    def spread_local(self, fdef, call):
        """``fdef`` (a nested def or a lambda) as inlined at ``call``: with
        ``*rest``, the items the call passes past the positional parameters as
        parameters of their own and ``rest`` their tuple (:func:`spread_rest`);
        called ``h(a, *t)`` with ``t`` of a length not known when srcgrad
        compiles, ``rest`` a parameter given ``tuple(t)``, what Python binds
        it to (:func:`packed_rest`).  With the call as the function sees it."""
        if fdef.args.vararg is None:
            return fdef, call
        if isinstance(fdef, gast.Lambda):
            fdef = gast.copy_location(gast.FunctionDef(
                name="lambda", args=fdef.args, body=[gast.copy_location(
                    gast.Return(value=fdef.body), fdef.body)],
                decorator_list=[], returns=None, type_comment=None), fdef)
        if any(isinstance(a, gast.Starred) for a in call.args):
            if not takes_rest(fdef, call):
                raise self.error("a local function taking *args, called with *items of a "
                                 "length srcgrad does not know when it compiles, before "
                                 "other positional arguments: pass the items one by one, or "
                                 "define the function at module level", call)
            return packed_rest(fdef, call)
        return gast.copy_location(
            spread_rest(fdef, max(len(call.args) - len(fdef.args.args), 0)), fdef), call

    def inline_helper(self, fn, call):
        """A call of the user function ``fn`` that passes it a local function or a
        lambda (which close over this function's variables, and which srcgrad
        inlines where they are called): ``fn``'s body inlined here, as a local
        function's is, its parameter bound to the lambda.  ``fn`` must read the
        same globals (a function of this module) and take plain parameters."""
        code = fn.__code__
        rest = spread_count(fn, call)  # def rk4(f, y, *args): the items args gets, or None
        if fn.__closure__ or code.co_flags & inspect.CO_VARKEYWORDS or code.co_kwonlyargcount \
                or (code.co_flags & inspect.CO_VARARGS and rest is None):
            raise self.error(
                f"'{fn.__name__}' is passed a function defined in {self.func.name} (srcgrad "
                f"inlines such a call, which it can for a module-level function with "
                f"plain parameters only): define the function passed at module level, or "
                f"{fn.__name__} at module level with plain parameters", call)
        helpers = self.__dict__.setdefault("inlined_helpers", {})
        if (fn, rest) not in helpers:
            parsed = parse_function(fn)
            check_supported(parsed.node, parsed.filename, callee=True)
            merge_errstate(self.parsed.errstate, parsed.errstate)  # (its with np.errstate)
            node = parsed.node
            body = node.body[1:] if len(node.body) > 1 and is_docstring(node.body[0]) \
                else node.body
            fdef = gast.FunctionDef(name=node.name, args=node.args, body=body,
                                    decorator_list=[], returns=None, type_comment=None)
            if rest is not None:
                fdef = spread_rest(fdef, rest)
            helpers[fn, rest] = self.own_globals(fn, fdef, parsed.filename)
        self.check_globals_seen(helpers[fn, rest], fn, call)
        self.collect_free(call.func)  # bound and watched: a redefined helper regenerates
        return self.inline_local(helpers[fn, rest], call)

    def own_globals(self, fn, fdef, filename):
        """``fdef`` (the definition of the user function ``fn``, to be inlined) as
        it reads where it is inlined: for a function of another module, each
        global it reads (``onp``, ``SCALE``) renamed to a name of its own
        (``helpers_module_onp``) that this function's resolver binds to the
        value in ``fn``'s module, and its nodes marked with their file, so that
        an error inside names the helper's file."""
        if fn.__globals__ is self.parsed.fn.__globals__:
            return fdef
        if not isinstance(self.parsed, _Inlined):
            self.parsed = _Inlined(self.parsed)
        fdef = clone(fdef)
        bound = {n.id for n in walk(fdef) if isinstance(n, gast.Name)
                 and not isinstance(n.ctx, gast.Load)}
        bound |= {n.name for n in walk(fdef) if isinstance(n, gast.FunctionDef)}
        module = (getattr(fn, "__module__", None) or "module").rsplit(".", 1)[-1]
        renames = {}
        for n in walk(fdef):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) \
                    and n.id not in bound and n.id in fn.__globals__ and n.id not in renames:
                renames[n.id] = self.namer.fresh(f"{module}_{n.id}")
                self.parsed.resolver.closure[renames[n.id]] = fn.__globals__[n.id]
        fdef = Renamer(renames).visit(fdef)
        for n in walk(fdef):
            n.source_file = filename
        return fdef

    def check_globals_seen(self, fdef, fn, call) -> None:
        """Where a global ``fn`` reads (its body ``fdef``, to be inlined here)
        has the name of a local variable here -- inlined, the body would read
        that variable instead (``T`` read by ``apply_bc``, a parameter ``T`` of
        the caller) -- rename it in ``fdef``, in place, to a name of its own
        that this function's resolver binds to the global's value, as
        :meth:`own_globals` does for a helper of another module (review s37
        R5-14: refused before, 'rename one of them').  A builtin or a
        closure value so named is refused."""
        params = {n.id for n in walk(fdef) if isinstance(n, gast.Name)  # nested ones too
                  and isinstance(n.ctx, gast.Param)} | {a.id for a in fdef.args.args}
        nested = {n.name for n in walk(fdef) if isinstance(n, gast.FunctionDef)}
        own = params | nested | assigned_names(fdef)
        renames = {}
        for n in walk(fdef):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) \
                    and n.id not in own and n.id in self.locals | set(self.local_functions) \
                    and n.id not in renames:
                if n.id not in getattr(fn, "__globals__", {}) or n.id in fn.__code__.co_freevars:
                    raise self.error(
                        f"{fn.__name__}() reads '{n.id}', and '{n.id}' is also a variable "
                        f"of {self.func.name}: srcgrad inlines {fn.__name__} here, where "
                        f"'{n.id}' would mean the variable; rename one of them", call)
                renames[n.id] = self.namer.fresh(f"{fn.__name__}_{n.id}")
        if not renames:
            return
        if not isinstance(self.parsed, _Inlined):
            self.parsed = _Inlined(self.parsed)
        for name, new in renames.items():
            self.parsed.resolver.closure[new] = fn.__globals__[name]
        Renamer(renames).visit(fdef)

    def closure_use(self, fn) -> str:
        """Why a call of ``fn``, which returns a local function, is refused here."""
        named = [n for n in sorted(returned_functions(fn)) if n != "a lambda"]
        shown, target = ", ".join(named) or "a lambda", (named or ["fn"])[0]
        return (f"{fn.__name__}() returns a local function ({shown}): srcgrad inlines "
                f"{fn.__name__} where its result is assigned to names ({target} = "
                f"{fn.__name__}(...), flat, {target} = {fn.__name__}(...) or {target} = "
                f"{fn.__name__}(...)[i]), then each call of {target} by that name; the "
                f"function cannot be kept in a container, returned or passed on")

    def closure_call(self, value):
        """``(fn, call, index)`` when ``value`` is ``fn(...)`` or ``fn(...)[i]`` for a
        user function ``fn`` that returns a local function (``flatten(params)``
        returning ``flat, unflatten``); None for any other value."""
        index = None
        if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Constant) \
                and type(value.slice.value) is int and isinstance(value.value, gast.Call):
            index, value = value.slice.value, value.value
        if not isinstance(value, gast.Call) or self.is_local_function(value.func):
            return None
        fn = self.callee(value)
        if not returned_functions(fn):
            return None
        return fn, value, index

    def bind_closures(self, targets, fn, call, index, stmt) -> None:
        """``flat, unflatten = flatten(params)`` (or ``unflatten = flatten(p)[1]``):
        ``flatten``'s body inlined here (:meth:`inline_returning`), the values it
        returns bound to their targets, and each local function it returns made a
        local function of this one under its target's name -- its calls inline
        its body, whose free names are the inlined helper's renamed variables,
        assigned nowhere else: a later call reads them as the helper left them,
        as a Python closure would."""
        if len(targets) != 1:
            raise self.error(self.closure_use(fn), stmt)
        target = targets[0]
        result = self.inline_returning(fn, call)
        if index is not None:
            if not isinstance(result, list) or not -len(result) <= index < len(result):
                raise self.error(f"{fn.__name__}() returns no item {index} here", call,
                                 SrcGradError)
            result = result[index]
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(result, list) \
                and not any(isinstance(e, gast.Starred) for e in target.elts):
            if len(target.elts) != len(result):
                raise self.error(f"cannot unpack {len(result)} values into "
                                 f"{len(target.elts)} names", stmt, SrcGradError)
            pairs = list(zip(target.elts, result))
        else:
            pairs = [(target, result)]
        for elt, value in pairs:
            function = isinstance(value, gast.Name) and value.id in self.local_functions
            if function and isinstance(elt, gast.Name):
                places = {(getattr(n, "lineno", None), getattr(n, "col_offset", None))
                          for n in walk(self.func) if isinstance(n, gast.Name)
                          and n.id == elt.id and isinstance(n.ctx, gast.Store)}
                if self.depth and len(places) > 1:  # one in each branch: which one is called
                    raise self.error(
                        f"'{elt.id}' is assigned a local function returned by "
                        f"{fn.__name__}() in more than one place, here inside a branch or "
                        f"loop: srcgrad inlines the function a call will call, so assign it "
                        f"once (a condition inside the function can choose)", elt)
                if elt.id != "_":  # `flat, _ = flatten(params)`: nothing to call later
                    self.local_function(elt.id, self.local_functions[value.id])
            elif function or isinstance(value, list) and any(
                    isinstance(v, gast.Name) and v.id in self.local_functions for v in value):
                raise self.error(self.closure_use(fn), elt)
            elif isinstance(value, list):
                self.bind(elt, self.atom_of(gast.Tuple(elts=value, ctx=gast.Load()), ir.Op(
                    ir.BUILD_TUPLE, value, {}, call, ir.BUILD_TUPLE.label)), stmt)
            else:
                self.bind(elt, value, stmt)

    def inline_returning(self, fn, call):
        """``fn``'s body inlined at ``call`` (as :meth:`inline_helper` does), for a
        helper that returns a local function: the returned value as a list of
        atoms (a returned tuple) or one atom, where a returned local function is
        a name in ``self.local_functions``.  Its nested functions get fresh names
        at each call: two calls make two closures."""
        code = fn.__code__
        rest = spread_count(fn, call)  # def rk4(f, y, *args): the items args gets, or None
        if fn.__closure__ or code.co_flags & inspect.CO_VARKEYWORDS or code.co_kwonlyargcount \
                or (code.co_flags & inspect.CO_VARARGS and rest is None):
            raise self.error(
                f"{fn.__name__}() returns a local function, which srcgrad inlines with "
                f"{fn.__name__}'s body: it can for a module-level function with plain "
                f"parameters only; define {fn.__name__} at module level, with plain "
                f"parameters", call)
        if any(getattr(f, "returning", None) is fn for f in self.inlining):
            raise self.error(f"{fn.__name__}() returns a local function and calls itself: "
                             f"srcgrad cannot inline it", call)
        parsed = parse_function(fn)
        check_supported(parsed.node, parsed.filename, callee=True)
        merge_errstate(self.parsed.errstate, parsed.errstate)  # (its with np.errstate)
        node = parsed.node
        body = node.body[1:] if len(node.body) > 1 and is_docstring(node.body[0]) else node.body
        fdef = self.own_globals(fn, gast.FunctionDef(
            name=node.name, args=node.args, body=body, decorator_list=[], returns=None,
            type_comment=None), parsed.filename)
        defined = collections.Counter(
            n.name if isinstance(n, gast.FunctionDef) else n.id for n in walk(fdef)
            if isinstance(n, gast.FunctionDef) and n is not fdef
            or isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
        for name in sorted(returned_functions(fn) - {"a lambda"}):
            if defined[name] > 1:  # def f in both branches: which one returns is not static
                raise self.error(f"{fn.__name__}() returns the local function '{name}', "
                                 f"which it defines more than once: srcgrad inlines the one "
                                 f"function returned; define it once (a condition inside "
                                 f"it can choose)", call)
        nested = sorted({n.name for n in walk(fdef) if isinstance(n, gast.FunctionDef)
                         and n is not fdef})
        renames = {n: self.namer.fresh(n) for n in nested}
        fdef = Renamer(renames).visit(fdef)
        for n in walk(fdef):
            if isinstance(n, gast.FunctionDef) and n.name in renames and n is not fdef:
                n.name = renames[n.name]
        self.check_globals_seen(fdef, fn, call)
        self.collect_free(call.func)  # bound and watched: a redefined helper regenerates
        fdef.returning = fn
        return self.inline_local(fdef, call, keep=True)

    def inline_local(self, fdef, call, keep=False):
        """The body of a nested function at its call site, with fresh local names.

        Names the body does not assign refer to the enclosing function's
        variables as they are at the call, as a closure would see them.
        ``keep``: a returned local function, alone or in a tuple, is kept as
        its name (:meth:`inline_returning`), a tuple as a list of atoms.
        """
        if any(f is fdef for f in self.inlining):
            raise self.error("recursive local functions are not supported: define the "
                             "function at module level", call)
        fdef, call = self.spread_local(fdef, call)  # def h(a, *rest): rest the items passed
        params = [a.id for a in fdef.args.args]
        kwonly = [a.id for a in fdef.args.kwonlyargs]
        kwarg = fdef.args.kwarg.id if fdef.args.kwarg is not None else None
        body = fdef.body if isinstance(fdef.body, list) else [
            gast.copy_location(gast.Return(value=fdef.body), fdef.body)]
        inner = set(params) | set(kwonly) | {kwarg} - {None} \
            | assigned_names(gast.Module(body=body, type_ignores=[]))
        renames = {n: self.namer.fresh(n) for n in sorted(inner)}
        self.namer.user_names.update({new: n for n, new in renames.items()})  # messages
        self.locals.update(renames.values())
        defaults = dict(zip(params[len(params) - len(fdef.args.defaults):], fdef.args.defaults))
        defaults.update((k, d) for k, d in zip(kwonly, fdef.args.kw_defaults) if d is not None)
        if len(call.args) > len(params):
            raise self.error(f"the local function takes {len(params)} positional arguments "
                             f"but {len(call.args)} were given", call)
        given, extra = dict(zip(params, call.args)), {}
        for kw in call.keywords:
            if kw.arg in given or kw.arg not in params + kwonly and kwarg is None:
                raise self.error(f"unexpected argument '{kw.arg}' for the local function", kw)
            (given if kw.arg in params + kwonly else extra)[kw.arg] = kw.value
        params = params + kwonly
        if kwarg is not None:  # def h(a, **kw): kw the dict of the keywords left
            self.dict_names.add(renames[kwarg])
            self.assign([gast.Name(id=renames[kwarg], ctx=gast.Store(), annotation=None,
                                   type_comment=None)], gast.copy_location(gast.Dict(
                keys=[gast.Constant(value=k, kind=None) for k in extra],
                values=list(extra.values())), call), call)
        for param in changed_local_defaults(fdef, given, self.locals):  # acc=[]; acc.append(v)
            raise self.error(local_default_message(getattr(fdef, "name", "lambda"), param),
                             call)
        for param in params:
            value = given.get(param, defaults.get(param))
            if value is None:
                raise self.error(f"missing argument '{param}' for the local function", call)
            if self.is_local_function(value):  # a lambda passed to an inlined helper
                self.local_functions[renames[param]] = value if isinstance(
                    value, gast.Lambda) else self.local_functions[value.id]
                self.locals.discard(renames[param])
                continue
            self.assign([gast.Name(id=renames[param], ctx=gast.Store(), annotation=None,
                                   type_comment=None)], value, call)
        wrapper = gast.FunctionDef(name="inlined", args=fdef.args,
                                   body=[Renamer(renames).visit(clone(s)) for s in body],
                                   decorator_list=[], returns=None, type_comment=None)
        result, flag = self.namer.fresh("result"), self.namer.fresh("returned")
        parts = structure(wrapper, result=result, flag=flag)
        self.count_assignments(wrapper.body)
        self.assignments.update(renames[p] for p in params + [kwarg] if p is not None)
        self.locals.update({result, flag, *parts})  # flag: a return inside a loop
        stmts = wrapper.body
        output = stmts.pop() if stmts and isinstance(stmts[-1], gast.Return) else None
        self.inlining.append(fdef)
        try:
            for stmt in stmts:
                self.statement(stmt)
            if output is None or output.value is None:
                return gast.Constant(value=None, kind=None)
            value = output.value
            if keep and isinstance(value, gast.Lambda):  # return lambda v: v * k
                name = self.namer.fresh("lambda_fn")
                self.local_functions[name] = value
                value = gast.copy_location(load_name(name), value)
            if keep and isinstance(value, gast.Name) and value.id in self.local_functions:
                return gast.copy_location(clone(value), value)
            if keep and isinstance(value, gast.Tuple) \
                    and not any(isinstance(e, gast.Starred) for e in value.elts):
                return [gast.copy_location(clone(e), e) if isinstance(e, gast.Name)
                        and e.id in self.local_functions else self.atom(e) for e in value.elts]
            if returns_none_in_place(value, self.callee, self.locals):
                # lambda v: hs.append(v): the call is made for what it does (none_results.py),
                # shown in messages with the user's names (v, not v_1)
                where = value if getattr(value, "lineno", None) is not None else call
                made = gast.copy_location(gast.Expr(value=value), where)
                start = len(self.out)
                self.statement(made)
                shown = Renamer({new: n for n, new in renames.items()}).visit(clone(value))
                for stmt in self.out[start:]:
                    if getattr(getattr(stmt, "op", None), "node", None) is made:
                        stmt.op.node = gast.copy_location(gast.Expr(value=shown), made)
                return gast.Constant(value=None, kind=None)
            return self.atom(value)
        finally:
            self.inlining.pop()


class _Inlined:
    """The caller's :class:`~srcgrad.frontend.parse.ParsedFunction`, once a
    helper of another module is inlined in it: its resolver also knows the
    names given to that helper's globals, and an error at one of the helper's
    nodes names the helper's file."""

    def __init__(self, parsed):
        self._parsed = parsed
        own = parsed.resolver
        self.resolver = Resolver(own.globals, dict(own.closure), own.qualname)

    def __getattr__(self, name):
        return getattr(self._parsed, name)

    def error(self, cls, message, node=None):
        filename = getattr(node, "source_file", None) or self._parsed.filename
        return located_error(cls, message, node, filename)


def returned_functions(fn) -> frozenset:
    """The local functions (nested defs, lambdas) the user function ``fn``
    returns, alone or in a tuple (``return flat, unflatten``): a call of ``fn``
    is inlined where its result is assigned (:meth:`Inlining.bind_closures`)."""
    if not isinstance(fn, types.FunctionType) or not is_user_function(fn):
        return frozenset()  # (anything else, hashable or not, returns none)
    return _returned_functions(fn)



@functools.lru_cache(maxsize=256)
def _returned_functions(fn) -> frozenset:
    try:
        func = parse_function(fn).node
    except SrcGradError:
        return frozenset()
    local = {n.name for n in walk(func) if isinstance(n, gast.FunctionDef) and n is not func}
    local |= {t.id for n in walk(func) if isinstance(n, gast.Assign)
              and isinstance(n.value, gast.Lambda) for t in n.targets if isinstance(t, gast.Name)}
    found = set()
    for node in walk(func):
        if isinstance(node, gast.Return) and node.value is not None:
            items = node.value.elts if isinstance(node.value, gast.Tuple) else [node.value]
            found |= {e.id for e in items if isinstance(e, gast.Name) and e.id in local}
            found |= {"a lambda" for e in items if isinstance(e, gast.Lambda)}
    return frozenset(found)


def spread_count(fn, call):
    """How many items the ``*rest`` of the user function ``fn`` gets at ``call``
    (no ``*t`` passed, no keyword for a positional parameter); None where it
    has none or the count is not known."""
    code = fn.__code__
    if not code.co_flags & inspect.CO_VARARGS or any(
            isinstance(a, gast.Starred) for a in call.args) or any(
            k.arg is None or k.arg in code.co_varnames[:code.co_argcount]
            for k in call.keywords) or len(call.args) < code.co_argcount:
        return None
    return len(call.args) - code.co_argcount


def takes_rest(fdef, call) -> bool:
    """``h(a, *t)`` for a local ``def h(x, *rest)`` (or lambda): each positional
    parameter given before the one starred argument, which is last, and no
    keywords: ``rest`` is ``tuple(t)``, whatever ``t``'s length."""
    return fdef.args.vararg is not None and bool(call.args) \
        and isinstance(call.args[-1], gast.Starred) \
        and not any(isinstance(a, gast.Starred) for a in call.args[:-1]) \
        and len(call.args) - 1 == len(fdef.args.args) and not call.keywords


def packed_rest(fdef, call):
    """``fdef`` with its ``*rest`` a plain last parameter, and ``call`` passing
    it the tuple of the starred argument (:func:`takes_rest`)::

        def h(x, *rest): ...     h(a, *t)   ->   def h(x, rest): ...   h(a, tuple(t))
    """
    args = copy.copy(fdef.args)
    args.args = [*fdef.args.args, fdef.args.vararg]
    args.vararg = None
    packed = gast.copy_location(clone(fdef), fdef)
    packed.args = args
    starred = call.args[-1]
    items = gast.copy_location(gast.Call(func=builtin_ref("tuple"), args=[starred.value],
                                         keywords=[]), starred)
    return packed, gast.copy_location(
        gast.Call(func=call.func, args=[*call.args[:-1], items], keywords=[]), call)


def spread_rest(fdef, count):
    """``def rk4(f, y, *args)`` inlined where ``args`` gets ``count`` items: the
    items are parameters of their own (``args_1``, ...), ``args`` is their
    tuple, bound first, and each ``*args`` in a call or display is the items,
    as Python passes them (an ``args`` bound again in the body keeps its star:
    refused later where its length is needed).

        >>> from ..ir.emit import unparse
        >>> fdef = gast.parse("def rk(f, y, *args):\\n    return f(y, *args)").body[0]
        >>> print(unparse(spread_rest(gast.fix_missing_locations(fdef), 2)))
        def rk(f, y, args_1, args_2):
            args = (args_1, args_2)
            return f(y, args_1, args_2)
    """
    rest = fdef.args.vararg.id
    taken = {n.id for n in walk(fdef) if isinstance(n, gast.Name)}
    items, k = [], 0
    while len(items) < count:
        k += 1
        if f"{rest}_{k}" not in taken:
            items.append(f"{rest}_{k}")
    rebound = any(isinstance(n, gast.Name) and n.id == rest and not isinstance(n.ctx, gast.Load)
                  and n is not fdef.args.vararg for n in walk(fdef))
    body = [clone(s) for s in fdef.body]
    if not rebound:
        for node in walk(gast.Module(body=body, type_ignores=[])):
            for field in ("args", "elts"):
                values = getattr(node, field, None)
                if isinstance(values, list) and isinstance(node, (gast.Call, gast.Tuple,
                                                                   gast.List)):
                    setattr(node, field, [
                        x for v in values for x in (
                            [gast.copy_location(load_name(i), v) for i in items]
                            if isinstance(v, gast.Starred) and isinstance(v.value, gast.Name)
                            and v.value.id == rest else [v])])
    first = body[0] if body else fdef
    packed = gast.copy_location(gast.Assign(
        targets=[gast.Name(id=rest, ctx=gast.Store(), annotation=None, type_comment=None)],
        value=gast.Tuple(elts=[load_name(i) for i in items], ctx=gast.Load()),
        type_comment=None), first)
    args = copy.copy(fdef.args)
    args.args = [*fdef.args.args, *(gast.copy_location(gast.Name(
        id=i, ctx=gast.Param(), annotation=None, type_comment=None), fdef.args.vararg)
        for i in items)]
    args.vararg = None
    args.defaults = [] if count else fdef.args.defaults
    return gast.FunctionDef(name=fdef.name, args=args, body=[packed, *body],
                            decorator_list=[], returns=None, type_comment=None)
