"""A srcgrad transformation made inside the differentiated function.

``g = srcgrad.grad(L)`` in MAML's inner step, ``fprime = srcgrad.grad(lambda
t: t ** 3 + t)`` in a Newton solve: the function transformed is a module-level
function, or a local ``def`` or lambda that reads no variable of the function
around it (its parameters and globals only).  Such a function is the same
whenever the code runs, so the transformation is made once, when srcgrad
compiles, exactly as ``G = srcgrad.grad(L)`` written at module level would be;
each call ``g(w)`` is then a call of that object, which :meth:`.calls.Calls.call`
differentiates as it does a gradient made at module level (a custom_vjp of
srcgrad's second-order code, api/gradient_calls.py).  The local function keeps
its own code: srcgrad finds it among the constants of the compiled function
around it (:func:`local_code`), so its source, file and lines are the user's.

A local function reading variables of the function around it (a closure over
the data ``xs``, or over a value being differentiated) is lifted: compiled
again from its text with those variables as parameters after its own
(:func:`lifted_code`; srcgrad's frontend reads its source with them too,
frontend/parse.py), and each call ``g(w)`` passes them as they are at the
call, as Python's closure reads them.  The gradient made is then a function
of them as well, so the second-order rules differentiate it along them: the
inner gradient's dependence on a closed-over value being differentiated is
part of the outer gradient.  Refused, located, saying to pass them as
arguments: a closure reading a local function, one with defaults or
``*args``, and a closure given to hvp, hessian or jacobian (whose calls take
other arguments than the function's).

The object made is held by a name bound in the generated module
(``grad_L``), and ``g`` is kept as a lambda standing for it (``lambda w:
grad_L(w)``), the way a partial made here is (:mod:`.partials`, whose
``partial_of`` the calls read): a call of ``g``, and ``g`` passed to a helper
that is inlined, are handled as a partial's are; where the function has
defaults, the lambda has them too and is inlined at each call.  Anything else
done with ``g`` (returned, kept in a list) is refused as for a local function.

Before, a local function and a lambda transformed inside the function; after,
calls of the gradients made (``L`` itself, called directly, is inlined):

    >>> import numpy as np
    >>> import srcgrad
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(w):
    ...     def L(v):
    ...         return np.sum(v ** 2)
    ...     g = srcgrad.grad(L)
    ...     fprime = srcgrad.grad(lambda t: t ** 3)
    ...     return L(w - 0.1 * g(w)) + fprime(w[0])
    >>> print(unparse_body(normalize(parse_function(f))))
    t1 = grad_L(w)
    t2 = 0.1 * t1
    v_2 = w - t2
    t3 = v_2 ** 2
    t4 = np.sum(t3)
    t5 = t4
    t6 = w[0]
    t7 = grad_lambda(t6)
    t8 = t5 + t7
    return t8
"""

from __future__ import annotations

import ast
import copy
import inspect
import linecache
import types

import gast

from ..errors import SrcGradError
from ..frontend.parse import MISSING, lambda_spans, parse_function, source_target
from ..ir.syntax import load_name, source_of, walk
from .partials import free_parameters

#: The srcgrad functions that make a callable from a function (``grad(f)``,
#: ``hessian(f, wrt=1)``), by name; their module is srcgrad's api, which the
#: normaliser may not import (tests/test_layering.py), so they are known by it.
TRANSFORMS = ("grad", "value_and_grad", "hvp", "hessian", "jacobian")
_API = ("srcgrad.api.transforms", "srcgrad.api.higher")


def is_transform(fn) -> bool:
    """Whether ``fn`` is one of srcgrad's :data:`TRANSFORMS`."""
    return getattr(fn, "__module__", None) in _API and getattr(fn, "__name__", None) in TRANSFORMS


def made_transform(value, resolve) -> bool:
    """Whether ``value`` (an expression) calls one of srcgrad's transformations,
    ``resolve(call)`` naming the object a call's function refers to: for the
    scan of updates (memory_scan.py), which takes the name it is bound to for
    :data:`MADE`."""
    return isinstance(value, gast.Call) and isinstance(value.func, (gast.Name, gast.Attribute)) \
        and is_transform(resolve(value))


#: A function made here as the scan of updates reads it: one changing nothing
#: it is passed (a gradient makes new arrays).
MADE = gast.Lambda(args=gast.arguments(args=[], posonlyargs=[], vararg=None, kwonlyargs=[],
                                       kw_defaults=[], kwarg=None, defaults=[]),
                   body=gast.Constant(value=None, kind=None))


def local_code(code, node):
    """The code object, among the constants of ``code`` (and theirs), that the
    local ``def`` or lambda ``node`` compiled to; None where it is not found or
    not told apart from another (several lambdas of one line without columns)."""
    lam = isinstance(node, gast.Lambda)
    found, todo = [], [code]
    while todo:
        for const in todo.pop().co_consts:
            if isinstance(const, types.CodeType):
                todo.append(const)
                # (a comprehension's code, <listcomp>, is neither a def's nor a lambda's)
                if const.co_firstlineno == node.lineno and (
                        const.co_name == "<lambda>" if lam else const.co_name.isidentifier()):
                    found.append(const)
    if len(found) > 1:  # several on the line: the one whose instructions lie inside node
        part = node.body if lam else node
        start = (part.lineno, part.col_offset)
        end = (getattr(part, "end_lineno", None), getattr(part, "end_col_offset", None))
        if None in end:
            return None

        def inside(candidate):
            spans = lambda_spans(candidate)
            return spans is not None and all(start <= (line, col) and (stop, stop_col) <= end
                                              for line, stop, col, stop_col in spans)
        found = [c for c in found if inside(c)]
        # a lambda inside another's body: the innermost holds exactly its own code
        found.sort(key=lambda c: -min((s[0], s[2]) for s in lambda_spans(c)))
        found = found[:1] if found and lam else found
    return found[0] if len(found) == 1 else None


def _located(node, where):
    """``node`` with every part srcgrad wrote located at ``where``."""
    for sub in walk(node):
        if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
            gast.copy_location(sub, where)
    return node


def _literal(node):
    """The value of ``node`` where it is a literal (``0``, ``(0, 1)``, ``'save'``),
    else MISSING."""
    try:
        return ast.literal_eval(source_of(node))
    except (ValueError, SyntaxError, TypeError):
        return MISSING


class MadeTransforms:
    """Mixed into the normaliser: transformations made here (module docstring)."""

    def is_made_transform(self, node) -> bool:
        """Whether ``node`` is a call of one of srcgrad's transformations."""
        return isinstance(node, gast.Call) and is_transform(self.callee(node))

    def transform_lambda(self, node):
        """The lambda standing for the transformation ``node`` made here (module
        docstring), its object made now; None where ``node`` is no call of a
        transformation; a located refusal where it is one srcgrad cannot make
        when it compiles."""
        if not self.is_made_transform(node):
            return None
        maker = self.callee(node)
        name = f"srcgrad.{maker.__name__}"
        if not node.args or any(isinstance(a, gast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords):
            raise self.error(f"{name} called here with the function to transform given "
                             f"otherwise than as its first argument: write {name}(f, ...)",
                             node)
        lifting = maker.__name__ in ("grad", "value_and_grad")  # (hvp(f)(x, v): v last)
        fn = self.transformed_function(node.args[0], name, lifting)
        lifted = getattr(fn, "__srcgrad_lifted__", ())
        rest = [*node.args[1:], *(k.value for k in node.keywords)]
        values = [_literal(a) for a in rest]
        for arg, value in zip(rest, values):
            if value is MISSING:
                raise self.error(f"{name} is made here when srcgrad compiles, so its "
                                 f"arguments after the function must be literals (wrt=0, "
                                 f"wrt=(0, 1), policy='sqrt'); this one is computed when "
                                 f"the code runs", arg)
        args, kwargs = values[:len(node.args) - 1], dict(zip(
            [k.arg for k in node.keywords], values[len(node.args) - 1:]))
        signature = self.signature_of(fn) if lifting else None
        if signature is not None:  # its own parameters (a lifted one's come after)
            signature = signature[:len(signature) - len(lifted)]
        wrt = kwargs.get("wrt", args[0] if args else 0)
        if signature is not None and any(
                not isinstance(w, int) or not -len(signature) <= w < len(signature)
                for w in (wrt if isinstance(wrt, tuple) else (wrt,))):
            raise self.error(f"{name}(..., wrt={wrt!r}) made here: the function takes "
                             f"{len(signature)} positional argument(s) "
                             f"({', '.join(p.name for p in signature)})", node)
        if lifted:  # wrt=-1 counts from the end of its own parameters, before the lifted
            wrt = tuple(w % len(signature) for w in wrt) if isinstance(wrt, tuple) \
                else wrt % len(signature)
            args, kwargs = [], {**kwargs, "wrt": wrt}
        try:
            made = maker(fn, *args, **kwargs)
        except Exception as exc:  # a bad wrt, an unknown policy: where it is written
            raise self.error(f"{name}(...) made here: {exc}", node) from None
        ref = self.namer.fresh(f"{maker.__name__}_{getattr(fn, '__name__', 'f')}".replace(
            "<lambda>", "lambda"))
        self.free[ref] = made
        func = gast.copy_location(load_name(ref), node)
        func.helper = made
        call = gast.Call(func=func, args=[], keywords=[])
        lam = gast.Lambda(args=gast.arguments(
            args=[], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[]), body=call)
        if not lifted and (signature is None or all(p.default is p.empty for p in signature)):
            # g(w), hvp(f)(x, v): made(w), made(x, v), the arguments passed on as they are
            params = [self.namer.fresh(p) for p in free_parameters(fn, 0, set())]
            lam.partial_of = lam.partial_shown = (func, [], [])
        else:  # grad(L)(w) of def L(w, c=2.0): inlined, L's defaults filled in; the
            # variables a lifted closure reads passed after, as they are at the call
            params = [self.namer.fresh(p.name) for p in signature]
            lam.args.defaults = [self.bound_value(p.default, node) for p in signature
                                 if p.default is not p.empty]
        lam.args.args = [gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                         for p in params]
        call.args = [load_name(p) for p in [*params, *lifted]]
        lam = _located(gast.copy_location(lam, node), node)
        lam.transform_of = made
        lam.defaults_bound = True
        return lam

    @staticmethod
    def signature_of(fn):
        """The parameters of the plain function ``fn`` where they are positional
        only or positional-or-keyword (its gradient takes the same); else None."""
        if not isinstance(fn, types.FunctionType):
            return None
        params = list(inspect.signature(fn).parameters.values())
        if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
            return None
        return params

    def transformed_function(self, arg, name, lifting):
        """The function object ``arg`` (the first argument of the transformation
        ``name``) is when srcgrad compiles: a module-level function (or another
        object srcgrad transforms), a transformation made here, or a local
        function reading no variable of this function, made from its own code."""
        if isinstance(arg, gast.Name) and arg.id in self.local_functions:
            local = self.local_functions[arg.id]
            if hasattr(local, "transform_of"):  # gg = srcgrad.grad(g), g made here
                return local.transform_of
            if hasattr(local, "partial_of"):
                raise self.error(f"{name} of a functools.partial made here: the values it "
                                 f"binds are known only when the code runs, and srcgrad "
                                 f"makes {name} when it compiles; make the partial at "
                                 f"module level, or pass the values as arguments", arg)
            return self.local_function_object(local, arg.id, name, arg, lifting)
        if isinstance(arg, gast.Lambda):
            return self.local_function_object(arg, "lambda", name, arg, lifting)
        fn = self.function_value(arg)
        if fn is MISSING:
            raise self.error(f"{name} of '{source_of(arg)}', which is not a function srcgrad "
                             f"can name when it compiles: give {name} a module-level "
                             f"function, or a function defined here", arg)
        return fn

    def local_function_object(self, node, shown, name, where, lifting):
        """The function the local ``def`` or lambda ``node`` is, made from its
        code (:func:`local_code`); a closure over variables of this function
        compiled again with them as parameters after its own (:func:`lifted_code`;
        ``lifting``: for grad and value_and_grad, whose made object's calls pass
        them).  Refused, located, where that cannot be, or where it has defaults
        other than literals."""
        what = "a lambda" if isinstance(node, gast.Lambda) else f"the local function '{shown}'"
        # the function differentiated, and the helpers inlined into it (whose
        # own local functions are inlined with them)
        owners = [source_target(self.parsed.fn), *(f.returning for f in self.inlining if getattr(
            f, "returning", None) is not None), *(fn for fn, _ in getattr(
                self, "inlined_helpers", {}))]
        filename = getattr(node, "source_file", self.parsed.filename)
        found = [(c, f) for c, f in ((local_code(f.__code__, node), f) for f in owners)
                 if c is not None and c.co_filename == filename]
        if not found:
            raise self.error(f"{name} of {what}: srcgrad cannot find its code among "
                             f"those of the function around it; define it at module level",
                             where)
        code, outer = found[0]
        lifted = code.co_freevars
        if lifted:
            read = {n.id for n in walk(node) if isinstance(n, gast.Name)
                    and isinstance(n.ctx, gast.Load)}
            why = self.unliftable(node, lifted, read, lifting, name)
            made = None if why else lifted_code(node, filename, lifted)
            if made is None:
                why = why or "srcgrad cannot compile it again with them as parameters"
                names = ", ".join(f"'{n}'" for n in lifted)
                plural = "s" if len(lifted) > 1 else ""
                raise self.error(
                    f"{name} of {what}, which reads the variable{plural} {names} of the "
                    f"function around it: {why}; "
                    f"add {names} to its parameters and pass {'them' if plural else 'it'} "
                    f"at each call, or define the function at module level", where)
            qualname, code = code.co_qualname, made
        defaults = [_literal(d) for d in node.args.defaults]
        kw_defaults = {a.id: _literal(d) for a, d in zip(node.args.kwonlyargs,
                                                          node.args.kw_defaults)
                       if d is not None}
        if any(v is MISSING for v in [*defaults, *kw_defaults.values()]):
            raise self.error(f"{name} of {what}, whose parameters have defaults computed "
                             f"when the code runs: srcgrad makes {name} when it compiles; "
                             f"give literal defaults, or pass the values as arguments", where)
        fn = types.FunctionType(code, outer.__globals__, code.co_name, tuple(defaults) or None)
        if kw_defaults:
            fn.__kwdefaults__ = kw_defaults
        if lifted:  # srcgrad's frontend reads its source with them as parameters
            fn.__qualname__ = qualname
            fn.__srcgrad_lifted__ = lifted
        try:
            parse_function(fn)  # its source is found (several lambdas of a line told apart)
        except SrcGradError as exc:
            raise self.error(f"{name} of {what}: {exc.message}", where) from None
        return fn

    def unliftable(self, node, names, read, lifting, name):
        """Why the closure ``node`` over ``names`` (the variables of this function
        it reads; ``read``: the names its tree loads) cannot be lifted; None
        where it can."""
        if not lifting:
            return (f"srcgrad lifts such a function (its variables passed after its own "
                    f"parameters) for srcgrad.grad and srcgrad.value_and_grad only, not "
                    f"{name}")
        args = node.args
        if args.defaults or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            return ("srcgrad passes them after its parameters, which it can only where "
                    "they are plain ones without defaults")
        for n in names:
            if n in self.local_functions:
                return f"'{n}' is a local function, which srcgrad inlines and cannot pass"
            if n not in self.locals or n not in read:
                return f"srcgrad does not find '{n}' among this function's variables here"
        return None


def lifted_code(node, filename, names):
    """The code of the local ``def`` or lambda ``node`` compiled again as a
    module-level function taking ``names`` (variables of the function around
    it, which it reads) as parameters after its own, from its text in
    ``filename`` (the locations its code keeps are the user's); None where
    that text is not found or does not compile so."""
    lam = isinstance(node, gast.Lambda)
    try:
        tree = ast.parse("".join(linecache.getlines(filename)), filename)
    except (SyntaxError, ValueError):
        return None
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda if lam else ast.FunctionDef)
             and (n.lineno, n.col_offset) == (node.lineno, node.col_offset)]
    if len(found) != 1:
        return None
    made = copy.deepcopy(found[0])
    made.args.args += [ast.copy_location(ast.arg(arg=n), made) for n in names]
    if not lam:
        made.decorator_list = []
    module = ast.fix_missing_locations(ast.Module(
        body=[ast.copy_location(ast.Expr(value=made), made) if lam else made], type_ignores=[]))
    try:
        compiled = compile(module, filename, "exec")
    except (SyntaxError, ValueError):  # (nonlocal n, in its body)
        return None
    code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    return None if code.co_freevars else code


__all__ = ["MADE", "MadeTransforms", "TRANSFORMS", "is_transform", "lifted_code", "local_code",
           "made_transform"]
