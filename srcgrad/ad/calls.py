"""Splitting calls to user functions into forward/backward pairs.

A call that a differentiated value flows through, ``y = layer(W, x)``, becomes
a call of the callee's generated forward function, which also returns the
callee's residuals: ``y, layer_res = layer_forward(W, x)``.  The adjoint sweep
later passes them to ``layer_backward(layer_res, d_y)``.  Arguments are bound to
the callee's parameters here, at compile time, so keywords and defaults become
plain positional arguments.

    >>> import numpy as np
    >>> from ..pipeline import Options, prepare
    >>> from ..frontend.linker import Linker
    >>> from ..analysis.activity import activity
    >>> from ..ir.emit import unparse
    >>> from .. import _doctest_helpers as h
    >>> program = prepare(h.caller)
    >>> linker = Linker(Options(), prepare)
    >>> split_calls(program, activity(program, ["x"]), linker)  # a call was split
    True
    >>> print(unparse(program.body[0]))
    t1, scale_res = scale_forward(x, 3.0)
"""

from __future__ import annotations

import inspect

import gast

from .. import ir
from ..analysis.activity import Activity
from ..errors import SourceNotFoundError, UnsupportedSyntaxError
from ..frontend.linker import CalleePair, Linker, is_user_function
from ..frontend.parse import decorator_of, source_target
from ..frontend.wrappers import takes_wrapped_parameters
from ..ir.syntax import constant
from ..rules import registry
from ..rules.custom import custom_vjp


def split_calls(program: ir.Program, act: Activity, linker: Linker) -> bool:
    """Rewrite, in place, every active call of a user function in ``program``;
    return whether there was one (the program's shape classes are then new)."""
    rewritten = False
    for stmt in ir.walk_statements(program.body):
        op = getattr(stmt, "op", None)
        if op is None or ir.is_update(stmt):
            continue
        custom = isinstance(op.primitive, custom_vjp)
        if not (custom or is_user_function(op.primitive)) \
                or registry.user_rule(op.primitive, "vjp") is not None:
            continue   # (a rule the user registered for a function: called, not its source)
        if not any(act.is_active(t) for t in ir.target_names(stmt)):
            continue
        args = bind_arguments(program, op)
        if custom:  # the user's backward function returns one cotangent per argument
            pair = linker.request_custom(op.primitive, len(args))
        else:
            positions = tuple(i for i, a in enumerate(args)
                              if isinstance(a, gast.Name) and act.is_active(a.id))
            try:
                pair = linker.request(op.primitive, positions,
                                      getattr(op, "receiver_type", None),
                                      getattr(op, "callees", ()))
            except SourceNotFoundError as error:
                raise _at_the_call(error, program, stmt, op.primitive) from None
        residuals = program.namer.fresh(f"{pair}_res")
        target = stmt.targets[0]
        stmt.targets = [gast.Tuple(elts=[target, ir.name(residuals, store=True)],
                                   ctx=gast.Store())]
        stmt.value = gast.Call(func=ir.name(pair.forward), args=list(args), keywords=[])
        stmt.op = ir.Op(pair, list(args), {}, op.node, op.label)
        stmt.call_output = target
        stmt.residuals = residuals
        rewritten = True
    linker.adopt(program)  # the defaults bind_arguments bound (f(x) for def f(x, w=W0))
    return rewritten


def _at_the_call(error, program, stmt, fn) -> SourceNotFoundError:
    """``error`` (the source of the user function ``fn`` cannot be read: made by
    ``exec``) located at the call a value being differentiated flows into."""
    if error.lineno is not None:
        return error
    return SourceNotFoundError(
        f"{error.message}.  A value being differentiated flows into this call of "
        f"{fn.__qualname__}: define it with 'def' in a file, or, if its result needs "
        f"no gradient, pass srcgrad.stop_gradient(...) of what it is given",
        filename=program.filename, lineno=getattr(stmt, "lineno", None),
        col=getattr(stmt, "col_offset", None))


def bind_arguments(program: ir.Program, op: ir.Op) -> list:
    """The call's arguments in the callee's parameter order, defaults filled in.

    A user function's ``*rest`` and ``**kw`` arrive packed by the caller
    (normalize/calls.py ``helper_call``): the tuple as the last positional
    argument, the dict as the keyword named ``kw``; each is passed as one
    argument in its parameter's place, as the callee's normalised signature
    lists them (positional, ``*rest``, keyword-only, ``**kw``)."""
    fn = op.primitive
    where = dict(filename=program.filename, lineno=getattr(op.node, "lineno", None),
                 col=getattr(op.node, "col_offset", None))
    # the parameters of the function whose source is read (a decorator's wrapper's
    # own, not those of the function it wraps, which inspect would give)
    target = source_target(fn)
    # ... except a wrapper read as taking the wrapped function's (frontend/wrappers.py)
    sig = inspect.signature(target, follow_wrapped=takes_wrapped_parameters(target))
    packed_by_caller = is_user_function(fn)
    args, kwargs, packed, plain = list(op.args), dict(op.kwargs), {}, []
    for param in sig.parameters.values():
        if param.kind in (param.VAR_KEYWORD, param.KEYWORD_ONLY) and not packed_by_caller:
            # (a custom_vjp's rules are called with the arguments in order)
            made = f" (the wrapper the decorator {decorator_of(fn)} made, which a call " \
                f"runs)" if hasattr(fn, "__wrapped__") and hasattr(fn, "__code__") else ""
            raise UnsupportedSyntaxError(
                f"calling '{fn.__name__}'{made}, which has a **kwargs or keyword-only "
                f"parameter, with a differentiated argument is not supported yet", **where)
        if param.kind is param.VAR_POSITIONAL and not packed_by_caller:
            plain.append(param.replace(kind=param.POSITIONAL_OR_KEYWORD))
        elif param.kind is param.VAR_POSITIONAL:
            packed[param.name] = args.pop()
        elif param.kind is param.VAR_KEYWORD:
            packed[param.name] = kwargs.pop(param.name)
        else:
            plain.append(param)
    try:
        bound = sig.replace(parameters=plain).bind(*args, **kwargs)
    except TypeError as exc:
        raise UnsupportedSyntaxError(f"cannot call '{fn.__name__}' like this: {exc}",
                                     **where) from None
    out = []
    for name, param in sig.parameters.items():
        if name in packed:
            out.append(packed[name])
            continue
        if name in bound.arguments:
            out.append(bound.arguments[name])
            continue
        literal = constant(param.default)
        if literal is None:
            bound_name = program.namer.fresh(f"{fn.__name__.strip('<>')}_{name}_default")
            program.free[bound_name] = param.default
            literal = ir.name(bound_name)
        out.append(literal)
    return out


__all__ = ["CalleePair", "bind_arguments", "split_calls"]
