"""Parameters named like the modules the generated code calls (``np``, ``math``).

Every rule writes NumPy as ``np`` (``into_first(np.multiply, ...)``), and the
generated function takes the user's parameters by their names, so a parameter
named ``np`` -- a count of points (``def f(x, np=4)``, NumPy imported as
``N``) -- shadowed the module in the generated code: grad raised a raw
AttributeError ('int' object has no attribute 'multiply') and hvp returned
zeros, silently (review s37 R5-3).  A local so named was already renamed
(``Expressions.define``); a parameter keeps its name in the signature, which
keyword calls use.  So the compiled program calls it ``np_1``
(:func:`rename_parameters`, before the normaliser reads the function), and the
generated function written out (:func:`show_parameters`) takes ``np`` again,
copies it to ``np_1`` on its first line, and reaches NumPy through a name of
its own (``numpy``, imported by the module):

    >>> import gast
    >>> func = gast.parse("def f(x, np=4):\\n    return N.sum(x) * np").body[0]
    >>> rename_parameters(func)
    {'np_1': 'np'}
    >>> [a.id for a in func.args.args], func.body[0].value.right.id
    (['x', 'np_1'], 'np_1')

Nested functions and comprehensions that bind the name themselves keep it;
a default (``def f(x, np=np)``) is read in the enclosing scope and keeps it.
"""

from __future__ import annotations

import math

import gast
import numpy as np

from .. import ir
from ..ir.syntax import walk

__all__ = ["MODULES", "rename_parameters", "show_parameters"]

#: The modules the generated code calls by a fixed name.
MODULES = {"np": np, "math": math}


def rename_parameters(func) -> dict[str, str]:
    """Rename, in place, ``func``'s parameters named like one of :data:`MODULES`
    and their uses in its body; return ``{new name: user's name}``."""
    args = func.args
    params = [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
              *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]
    taken = {n.id for n in walk(func) if isinstance(n, gast.Name)}
    shown = {}
    for param in params:
        if param.id not in MODULES:
            continue
        old, n = param.id, 1
        while f"{old}_{n}" in taken:
            n += 1
        new = f"{old}_{n}"
        taken.add(new)
        param.id = new
        for stmt in func.body:
            _rename(stmt, old, new)
        shown[new] = old
    return shown


def _binds(scope, name: str) -> bool:
    """Whether a nested function, lambda or comprehension binds ``name`` itself."""
    if isinstance(scope, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
        a = scope.args
        if any(p.id == name for p in [*a.posonlyargs, *a.args, *a.kwonlyargs,
                                       *([a.vararg] if a.vararg else []),
                                       *([a.kwarg] if a.kwarg else [])]):
            return True
        if isinstance(scope, gast.Lambda):
            return False
        body = [n for stmt in scope.body for n in walk(stmt)]
        if any(isinstance(n, gast.Nonlocal) and name in n.names for n in body):
            return False
        return any(isinstance(n, gast.Name) and n.id == name
                   and isinstance(n.ctx, (gast.Store, gast.Del)) for n in body)
    return any(isinstance(n, gast.Name) and n.id == name
               for g in scope.generators for n in walk(g.target))


def _rename(node, old: str, new: str) -> None:
    if isinstance(node, gast.Name):
        if node.id == old:
            node.id = new
        return
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
        a = node.args
        outside = [*a.defaults, *(d for d in a.kw_defaults if d is not None),
                   *getattr(node, "decorator_list", [])]
        for part in outside:  # read in the enclosing scope
            _rename(part, old, new)
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) \
                and node.name == old:
            return
        if not _binds(node, old):
            for part in node.body if isinstance(node.body, list) else [node.body]:
                _rename(part, old, new)
        return
    if isinstance(node, (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)) \
            and _binds(node, old):
        _rename(node.generators[0].iter, old, new)  # the first iterable: the enclosing scope
        return
    for child in gast.iter_child_nodes(node):
        _rename(child, old, new)


def show_parameters(function, shown: dict[str, str], alias) -> None:
    """Write ``function`` (an :class:`..assemble.Function`) with the user's
    parameter names: ``def grad_f(x, np=4):`` and ``np_1 = np`` on its first
    line, the body's ``np`` (NumPy) renamed to ``alias(module)``, a module-level
    name the caller binds to it (module docstring)."""
    renamed = [p for p in function.params if p in shown]
    if not renamed:
        return
    users = {shown[p] for p in renamed}
    names = {}
    for node in (n for stmt in function.body for n in walk(stmt)):
        if isinstance(node, gast.Name) and node.id in users:
            node.id = names.setdefault(node.id, alias(MODULES[node.id]))
    function.params = [shown.get(p, p) for p in function.params]
    copies = [gast.Assign(targets=[ir.name(p, store=True)], value=ir.name(shown[p]),
                          type_comment=None) for p in renamed]
    for copy, p in zip(copies, renamed):
        copy.comment = f"the parameter {shown[p]}, renamed: the code calls the module " \
                       f"{MODULES[shown[p]].__name__} by its own name"
    function.body[:0] = copies
