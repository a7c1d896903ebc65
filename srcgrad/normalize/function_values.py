"""Calls of functions held as values: ``ACTS[name](h)``, ``for f in FNS: x = f(x)``.

Notebook and autograd-style code keeps functions in lists and dicts -- a table
of activations, a list of transforms applied in turn, ``f = np.sin if odd else
np.cos`` -- and calls the one a key or a loop picks.  Which function runs is
only known when the code runs, but the functions it may be are known when it
compiles: those the function names as values (``[np.sin, helper]``, an ``if``
expression's two) and those held by the lists, tuples and dicts it reads from
its globals and closure.  The call becomes one branch per such function,
chosen by identity, each an ordinary call srcgrad differentiates (a rule, or
a user function's own code), after a guard that raises a located error for
any other function (one in a list the caller passed, say)::

    t = ACTS[name]
    if t is not relu and t is not np.tanh:
        raise error_at("SrcGradError", "...", where)
    if t is relu:
        result = relu(h)
    else:
        result = np.tanh(h)

Part of :mod:`.calls` (a mixin of its ``Calls``, so of the normaliser).

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(x):
    ...     for g in [np.sin, np.exp]:
    ...         x = g(x)
    ...     return x
    >>> print(unparse_body(normalize(parse_function(f))))  # doctest: +ELLIPSIS
    t1 = [np.sin, np.exp]
    t2 = range(len(t1))
    for k in t2:
        g = t1[k]
        t3 = g is not np.sin and g is not np.exp
        if t3:
            raise error_at('SrcGradError', "f was differentiated for 'g(...)' calling one ...)
        t4 = g is np.sin
        if t4:
            result_1 = np.sin(x)
        else:
            result_1 = np.exp(x)
        x = result_1
    return x
"""

from __future__ import annotations

import ast
import inspect
import re

import gast
import numpy as np

from ..frontend.function_tables import (
    ElementFunctions,
    held_functions,
    is_function_value,
    shown_function,
)
from ..frontend.linker import is_user_function
from ..frontend.parse import static_value
from ..ir.syntax import clone, load_name, walk

#: The most functions one call chooses among: beyond, the call is refused as before.
MAX_CHOICES = 32


def _may_take(fn, call) -> bool:
    """Whether ``fn`` may be called with ``call``'s arguments: a function whose
    parameters cannot bind them (``FNS = [np.sin, np.add]``, ``f(x)``) is not
    one the call can mean, and its branch would be refused when compiling."""
    if any(isinstance(a, gast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return True
    if isinstance(fn, np.ufunc):
        return len(call.args) == fn.nin  # (an output passed by position is no call to choose)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return False
    return True


def _name_of(fn, where) -> str:
    """A base for the name the code binds ``fn`` to: its own, or for a lambda
    the key it is held under (``ACTS['relu']``: ``relu``; ``FNS[1]``: ``fns_1``)."""
    base = getattr(fn, "__name__", "")
    if base.isidentifier():
        return base
    key = where.rsplit("[", 1)[-1].strip("]'\"") if "[" in where else ""
    if key.isidentifier():
        return key
    return re.sub(r"\W+", "_", where).strip("_").lower() or "function"  # TRANSFORMS[1]


class FunctionValues:
    """Calls of a local or an item holding a function (mixed into :class:`.calls.Calls`)."""

    def function_choices(self) -> list:
        """``(function, where)`` for each function a call of a value may call, in
        order of first mention: those the function names as values -- not in a
        call's function position --, those the lists, tuples and dicts it
        reads from its globals and closure hold, and those the lists passed
        to it hold (the call's :class:`ElementFunctions`, the code specialised
        on them); ``where``, how the source reaches it (``np.sin``,
        ``ACTS['relu']``)."""
        if getattr(self, "_function_choices", None) is None:
            called = {id(n.func) for n in walk(self.func) if isinstance(n, gast.Call)}
            found = {}
            resolver = self.parsed.resolver
            for node in walk(self.func):
                if id(node) in called or not isinstance(node, (gast.Name, gast.Attribute)) \
                        or not isinstance(node.ctx, gast.Load):
                    continue
                value = static_value(node, resolver, self.locals)
                if is_function_value(value):
                    found.setdefault(id(value), (value, ast.unparse(gast.gast_to_ast(node))))
                elif isinstance(node, gast.Name):
                    for held, where in held_functions(value, node.id):
                        found.setdefault(id(held), (held, where))
            for callee in self.callees:  # def net(params, x, acts): the functions in acts
                if isinstance(callee, ElementFunctions):
                    for held in callee.functions:
                        found.setdefault(id(held), (held, f"{shown_function(held)} in "
                                                          f"{callee.name}"))
            self._function_choices = list(found.values())
        return self._function_choices

    def function_value_call(self, node, func):
        """``f(x)`` for ``f`` a local, or ``FNS[i](x)``, that holds one of
        :meth:`function_choices`: one branch per function (module docstring).
        Returns ``(result atom, op)``, or None where there is no choice to make."""
        if not isinstance(func, (gast.Name, gast.Subscript)) \
                or isinstance(func, gast.Name) and func.id not in self.locals:
            return None
        choices = [(fn, where) for fn, where in self.function_choices() if _may_take(fn, node)]
        if not choices or len(choices) > MAX_CHOICES:
            return None
        shown = ast.unparse(gast.gast_to_ast(func))
        if isinstance(func, gast.Name):
            held = func
        else:  # FNS[i] evaluated once, into a local, before the arguments, as Python does
            tmp = self.namer.temp()
            self.locals.add(tmp)
            self.expr_into(func, gast.copy_location(gast.Name(
                id=tmp, ctx=gast.Store(), annotation=None, type_comment=None), func))
            held = gast.copy_location(load_name(tmp), func)
        refs = [self.function_reference(fn, where) for fn, where in choices]

        def same(ref, op):
            return gast.Compare(left=clone(held), ops=[op()], comparators=[clone(ref)])

        message = (f"{self.func.name} was differentiated for '{shown}(...)' calling one of the "
                   f"functions it names or reads from its lists and dicts "
                   f"({', '.join(where for _, where in choices)}), and this is another: "
                   f"srcgrad makes code for the functions it sees when it compiles -- keep "
                   f"the function in a global list or dict, or pass it as an argument")
        calls = [(same(ref, gast.Is), same(ref, gast.IsNot), gast.Call(
            func=clone(ref), args=[clone(a) for a in node.args],
            keywords=[gast.keyword(arg=k.arg, value=clone(k.value)) for k in node.keywords]))
            for ref in refs]
        return self.chosen_call(node, calls, message)

    def function_reference(self, fn, where):
        """How the code names ``fn``: ``np.tanh`` by the module it is in, else a
        name srcgrad binds to it (a user function, a lambda: ``relu_fn`` for
        ``ACTS['relu']``)."""
        ref = self.static_reference(fn) if not is_user_function(fn) else None
        if ref is None:
            ref = load_name(self.namer.fresh(f"{_name_of(fn, where)}_fn"))
            ref.helper = fn
            self.free[ref.id] = fn
        return ref
