"""A decorator's ``def wrapper(*args, **kwargs)``, given the parameters it is called with.

The textbook decorator -- unit conversion, scaling, clipping, validation --
is ``functools.wraps(fn)`` around ``def wrapper(*args, **kwargs): return k *
fn(*args, **kwargs)``.  A call of the decorated function runs the wrapper,
so srcgrad differentiates the wrapper's source; but its parameters say
nothing of what it is passed, and srcgrad refused it (review s36 R4-12).
The signature Python reports for it (``inspect.signature``, which follows
``__wrapped__``) is the wrapped function's, and that is how srcgrad calls it:
the wrapper is read as taking those parameters by position, and binding the
tuple and the dict it collects them in itself::

    def wrapper(*args, **kw):            def wrapper(x, y):
        return k * fn(*args, **kw)   ->      args = (x, y)
                                             kw = {}
                                             return k * fn(*args, **kw)

for ``fn(x, y)``: what Python binds for a call by position, and for one by
keyword too where the wrapper only passes ``args`` and ``kw`` on.  Only
plain parameters are taken (a default a number, a string or None, written in
the signature as it is: ``fn`` gets the very object it would have used), and
names the wrapper does not use itself (else the refusal that says why stays).

    >>> import functools, gast
    >>> def wrapped(x, y):
    ...     return x * y
    >>> @functools.wraps(wrapped)
    ... def wrapper(*args, **kw):
    ...     return 2.0 * wrapped(*args, **kw)
    >>> node = gast.parse("def wrapper(*args, **kw):\\n    return 2.0 * fn(*args, **kw)").body[0]
    >>> bind_wrapper_parameters(node, wrapper)
    True
    >>> print(gast.unparse(node).strip())
    def wrapper(x, y):
        args = (x, y)
        kw = {}
        return 2.0 * fn(*args, **kw)
"""

from __future__ import annotations

import inspect
import textwrap
import weakref

import gast

from ..ir.syntax import is_docstring, walk


def wrapped_parameters(node, target):
    """The names the wrapper ``node`` (the definition of ``target``) takes in
    place of its ``*args`` and ``**kwargs``: the wrapped function's plain
    parameters (``inspect.signature`` follows ``__wrapped__``), where the
    wrapper takes nothing else, reads its ``args`` and ``kwargs`` only to pass
    them on (``fn(*args, **kw)``: a call by keyword binds as one by position
    does) and uses none of those names itself; else None."""
    a = node.args
    if a.vararg is None or a.args or a.posonlyargs or a.kwonlyargs or a.defaults:
        return None
    try:
        called = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    params = list(called.parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
           or not (p.default is p.empty or _literal(p.default)) for p in params):
        return None  # (a default the wrapper's own signature can write: a number, a string)
    packs = {a.vararg.id, *([a.kwarg.id] if a.kwarg is not None else [])}
    passed = {id(n.value) for n in walk(node) if isinstance(n, gast.Starred)} \
        | {id(k.value) for n in walk(node) if isinstance(n, gast.Call)
           for k in n.keywords if k.arg is None}
    used = set()
    for n in walk(node):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Param):
            used.add(n.id)
            if n.id in packs and id(n) not in passed:
                return None  # args[0], len(args), kw.get(...): read as a tuple or dict
    names = [p.name for p in params]
    return None if used & set(names) or packs & set(names) else names


def _literal(value) -> bool:
    """Whether a default is a constant the rewritten signature can hold as it
    is (``def wrapper(x, k=3.0)``: the object itself, passed on as the call
    would leave it to ``fn``)."""
    return value is None or type(value) in (bool, int, float, complex, str)


def takes_wrapped_parameters(fn) -> bool:
    """Whether srcgrad reads the decorator's wrapper ``fn`` as taking the
    wrapped function's parameters (:func:`bind_wrapper_parameters`), so that a
    call of it passes them as they are, not packed into a tuple and a dict."""
    code = getattr(fn, "__code__", None)
    if code is None or not hasattr(fn, "__wrapped__") \
            or not code.co_flags & inspect.CO_VARARGS:
        return False
    # one answer per wrapper function, not per code: every function one decorator
    # wraps shares the wrapper's code, and the answer depends on the wrapped one's
    # signature (review s36 D-10)
    known = _TAKES.get(fn)
    if known is None:
        try:
            node = gast.parse(textwrap.dedent(inspect.getsource(code))).body[0]
        except (OSError, TypeError, SyntaxError, IndexError):
            node = None
        known = _TAKES[fn] = isinstance(node, gast.FunctionDef) \
            and wrapped_parameters(node, fn) is not None
    return known


_TAKES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def bind_wrapper_parameters(node, target) -> bool:
    """Rewrite ``node``, the definition of the wrapper ``target`` (a function
    with ``__wrapped__``), to take :func:`wrapped_parameters` and bind its
    ``args`` and ``kwargs`` itself (module docstring).  False, and ``node``
    unchanged, where that does not apply."""
    names = wrapped_parameters(node, target)
    if names is None:
        return False
    a = node.args

    def name(id_, ctx):
        return gast.copy_location(gast.Name(id=id_, ctx=ctx, annotation=None,
                                            type_comment=None), node)

    bound = [gast.copy_location(gast.Assign(
        targets=[name(a.vararg.id, gast.Store())],
        value=gast.copy_location(gast.Tuple(elts=[name(n, gast.Load()) for n in names],
                                            ctx=gast.Load()), node), type_comment=None), node)]
    if a.kwarg is not None:
        bound.append(gast.copy_location(gast.Assign(
            targets=[name(a.kwarg.id, gast.Store())],
            value=gast.copy_location(gast.Dict(keys=[], values=[]), node),
            type_comment=None), node))
    for stmt in bound:
        for sub in walk(stmt):
            if "lineno" in sub._attributes:
                gast.copy_location(sub, node)
    docstring = node.body[:1] if node.body and is_docstring(node.body[0]) else []
    node.body = [*docstring, *bound, *node.body[len(docstring):]]
    a.args = [name(n, gast.Param()) for n in names]
    a.defaults = [gast.copy_location(gast.Constant(value=p.default, kind=None), node)
                  for p in inspect.signature(target).parameters.values()
                  if p.default is not p.empty]
    a.vararg = a.kwarg = None
    return True
