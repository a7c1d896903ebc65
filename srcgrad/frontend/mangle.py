"""Private names of a class's methods, mangled as Python mangles them.

Inside a class body Python renames every identifier ``__name`` (two leading
underscores, not two trailing) to ``_Class__name``: ``self.__w`` in a method
of ``C`` reads the attribute ``_C__w``, ``__G`` the global ``_C__G``.  The
source srcgrad reads still says ``self.__w``, and generated code -- a module
of its own, outside the class -- read the attribute ``__w``, which no object
has: a raw AttributeError from the generated code.  The parsed method gets
the names Python gave its code (:func:`mangle_private_names`); keywords of a
call are not mangled, as Python does not mangle them.

    >>> import gast
    >>> tree = gast.parse("def f(self, x):\\n    return self.__w * x + __G")
    >>> mangle_private_names(tree.body[0], "C.f")
    >>> print(gast.unparse(tree).strip())
    def f(self, x):
        return self._C__w * x + _C__G
"""

from __future__ import annotations

import gast

__all__ = ["mangle_private_names", "owner_class"]


def owner_class(qualname: str) -> str | None:
    """The name of the innermost class whose body defines the function
    ``qualname`` names (``C`` of ``C.f`` and of ``C.f.<locals>.g``), or None."""
    parts = qualname.split(".")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "<locals>" or parts[i + 1] == "<locals>":
            continue  # a function's name, followed by <locals>
        return parts[i]
    return None


def _mangled(name: str, cls: str) -> str:
    stripped = cls.lstrip("_")
    if not name.startswith("__") or name.endswith("__") or not stripped:
        return name
    return f"_{stripped}{name}"


def mangle_private_names(node, qualname: str) -> None:
    """Rename, in place, the private names of the function ``node`` (defined
    where ``qualname`` says) as Python did when it compiled it."""
    cls = owner_class(qualname)
    if cls is None:
        return
    for sub in gast.walk(node):
        if isinstance(sub, gast.Name):
            sub.id = _mangled(sub.id, cls)
        elif isinstance(sub, gast.Attribute):
            sub.attr = _mangled(sub.attr, cls)
        elif isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)) \
                and sub is not node:
            sub.name = _mangled(sub.name, cls)
