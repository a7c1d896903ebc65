"""Parameters named like what the generated code calls by name (``np``, ``psi``).

Every rule writes NumPy as ``np`` (``into_first(np.multiply, ...)``), and the
generated function takes the user's parameters by their names, so a parameter
named ``np`` -- a count of points (``def f(x, np=4)``, NumPy imported as
``N``) -- shadowed the module in the generated code: grad raised a raw
AttributeError ('int' object has no attribute 'multiply') and hvp returned
zeros, silently (review s37 R5-3); so did one named like a runtime helper
(``psi``, the digamma the adjoint of gammaln calls, for a wave function;
``expand``, ``signum``) or a user's rule called by name: raw TypeErrors
(R5-4).  A local so named was already renamed (``Expressions.define``); a
parameter keeps its name in the signature, which keyword calls use.  So the
compiled program calls it ``np_1`` (:func:`rename_parameters`, before the
normaliser reads the function), and the generated function written out
(:func:`show_parameters`) takes ``np`` again, copies it to ``np_1`` on its
first line, and reaches NumPy (the helper) through a name of its own
(``import numpy``; ``from srcgrad.runtime import psi as psi_2``):

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

import builtins
import math
import re

import gast
import numpy as np

from .. import ir, runtime
from ..ir.syntax import walk
from ..rules import registry

__all__ = ["MODULES", "called_by_name", "rename_parameters", "show_parameters"]

#: The modules the generated code calls by a fixed name.
MODULES = {"np": np, "math": math}


def called_by_name() -> dict[str, object]:
    """What the generated code may call by a fixed name: the builtins, the
    runtime helpers, the users' rules (registry.called_functions) and the
    modules."""
    return {**{n: getattr(builtins, n) for n in dir(builtins) if not n.startswith("_")},
            **{n: getattr(runtime, n) for n in runtime.__all__},
            **registry.called_functions(), **MODULES}


def rename_parameters(func) -> dict[str, str]:
    """Rename, in place, ``func``'s parameters named like one of :data:`MODULES`
    and their uses in its body; return ``{new name: user's name}``."""
    args = func.args
    params = [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
              *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]
    taken = {n.id for n in walk(func) if isinstance(n, gast.Name)}
    shown, reserved = {}, None
    for param in params:
        if param.id not in MODULES:
            reserved = called_by_name() if reserved is None else reserved
            if param.id not in reserved:
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
    parameter names.  Where its code calls what a parameter's name means
    (``np.multiply``): ``def grad_f(x, np=4):``, ``np_1 = np`` on its first
    line, and the body's ``np`` (NumPy) renamed to ``alias("np")``, a
    module-level name the caller binds to it, ``"numpy"`` (``"builtins.len"``
    for a builtin); elsewhere the parameter's own name throughout, the code
    as it was before the rename (module docstring)."""
    renamed = [p for p in function.params if p in shown]
    if not renamed:
        return
    nodes = [n for stmt in function.body for n in walk(stmt) if isinstance(n, gast.Name)]
    called = {n.id for n in nodes}
    back = {p: shown[p] for p in renamed if shown[p] not in called}
    for node in nodes:  # not called: the user's name again
        if node.id in back:
            node.id = back[node.id]
    if back:  # and in the comments (# save: arguments x, max)
        word = re.compile(r"\b(" + "|".join(map(re.escape, back)) + r")\b")
        for stmt in (n for top in function.body for n in walk(top)):
            if getattr(stmt, "comment", None):
                stmt.comment = word.sub(lambda m: back[m.group(1)], stmt.comment)
            if getattr(stmt, "comment_before", None):
                stmt.comment_before = [word.sub(lambda m: back[m.group(1)], c)
                                       for c in stmt.comment_before]
    function.params = [back.get(p, p) for p in function.params]
    kept = [p for p in renamed if p not in back]
    if not kept:
        return
    names = {shown[p]: alias(shown[p]) for p in kept}
    function.body = [_Aliased(names).visit(stmt) for stmt in function.body]
    function.params = [shown.get(p, p) for p in function.params]
    copies = [gast.Assign(targets=[ir.name(p, store=True)], value=ir.name(shown[p]),
                          type_comment=None) for p in kept]
    for copy, p in zip(copies, kept):
        copy.comment = f"the parameter {shown[p]}, renamed: the code calls " + (
            f"the module {MODULES[shown[p]].__name__}" if shown[p] in MODULES
            else shown[p]) + f" as {names[shown[p]]}"
    function.body[:0] = copies


class _Aliased(gast.NodeTransformer):
    """Names replaced by their aliases (a name, or ``module.name``)."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        meant = self.names.get(node.id)
        if meant is None:
            return node
        base, _, attr = meant.partition(".")
        made = ir.name(base) if not attr else gast.Attribute(
            value=ir.name(base), attr=attr, ctx=gast.Load())
        return gast.copy_location(made, node)
