"""Refuse ndarray subclasses whose arithmetic is not ndarray's.

srcgrad's rules are those of ``np.ndarray``.  An ``np.matrix`` multiplies by
``*`` as matrices do, a masked array leaves its masked entries out of sums, and
a user's subclass that defines its own ``__pow__``, ``__mul__`` or
``__array_ufunc__`` computes what its methods say: differentiated with
ndarray's rules, each would get the derivative of other code, silently
(review s34 R2-16: ``__pow__`` scaled by 10 gave [0.6, -1, 1.8] where
differences give [6, -10, 18]).  A subclass that only adds methods or carries
metadata (``__array_finalize__``), and NumPy's own (``np.memmap``,
``np.recarray``), computes as ndarray does and is differentiated.

    >>> import numpy as np
    >>> class Scaled(np.ndarray):
    ...     def __pow__(self, p):
    ...         return np.asarray(self) ** p * 10.0
    >>> class Tagged(np.ndarray):
    ...     def __array_finalize__(self, obj):
    ...         self.tag = getattr(obj, "tag", None)
    >>> overridden(np.ones(2).view(Scaled)), overridden(np.ones(2).view(Tagged))
    ('__pow__', None)
"""

from __future__ import annotations

import functools
import types

import numpy as np

from ..errors import NonDifferentiableError
from ..frontend.linker import is_library_module

__all__ = ["check_subclass", "held_refusal", "overridden", "refusal"]

#: ndarray's names a subclass may define without changing what it computes.
_HARMLESS = frozenset({
    "__array_finalize__", "__new__", "__init__", "__repr__", "__str__", "__format__",
    "__reduce__", "__reduce_ex__", "__setstate__", "__getstate__", "__doc__", "__module__",
    "__dict__", "__weakref__", "__init_subclass__", "__class_getitem__", "__hash__",
    "__array_priority__", "__sizeof__", "__dir__", "__qualname__", "__slots__",
    "__annotations__", "__firstlineno__", "__static_attributes__", "__orig_bases__",
    "__parameters__"})


def overridden(value) -> str | None:
    """The first of ndarray's names (an operator, ``__array_ufunc__``, a
    method) that a user's class of ``value`` defines anew, or None."""
    for cls in type(value).__mro__:
        if cls is np.ndarray:
            break
        if (getattr(cls, "__module__", "") or "").split(".")[0] == "numpy":
            continue  # np.memmap, np.recarray: ndarray's arithmetic
        for name in sorted(vars(cls)):
            if name not in _HARMLESS and hasattr(np.ndarray, name):
                return name
    return None


def refusal(value) -> tuple[str, str] | None:
    """``(what value is, what to use instead)`` where ``value`` is an ndarray
    subclass that computes otherwise than ndarray (module docstring), else None.

        >>> refusal(np.ones(2)) is None, refusal(np.ma.masked_array([1.0]))[0]
        (True, 'a masked array, whose sums and means leave its masked entries out')
    """
    if not isinstance(value, np.ndarray) or type(value) is np.ndarray:
        return None
    if isinstance(value, np.matrix):
        return ("an np.matrix, whose '*' is a matrix product",
                "np.asarray(...) (with '@' where a matrix product is meant)")
    if isinstance(value, np.ma.MaskedArray):
        return ("a masked array, whose sums and means leave its masked entries out",
                "an ndarray with the masked entries filled (a.filled(0.0)) "
                "or the mask as weights")
    if (name := overridden(value)) is not None:
        kind = type(value).__qualname__
        return (f"a {kind}, a subclass of np.ndarray that defines its own {name}",
                f"np.asarray(...) of it, and write what {kind}.{name} computes "
                f"into the function")
    return None


#: How many values :func:`held_refusal` looks at, at most, in one object.
_LOOKS = 100_000


def held_refusal(value, fields=None) -> tuple[str, tuple[str, str]] | None:
    """``(route, refusal)`` for the first array :func:`refusal` refuses among
    the items of lists, tuples and dicts and the fields of user objects that
    ``value`` holds -- ``route`` as Python reads it (``"[0]"``, ``".m"``,
    ``"['w'][1]"``) -- or None.  ``fields``, where given, are the only
    attributes of an object looked at (those the code reads).

        >>> held_refusal([np.ones(2), {"w": np.ma.masked_array([1.0])}])[0]
        "[1]['w']"
        >>> held_refusal((1.0, np.ones(2))) is None
        True
    """
    todo, seen, looks = [("", value, 0)], set(), 0
    while todo and looks < _LOOKS:
        route, item, depth = todo.pop()
        looks += 1
        if isinstance(item, np.ndarray):
            found = refusal(item)
            if found is not None:
                return route, found
            continue
        if depth > 8 or id(item) in seen or isinstance(item, (str, bytes, float, int)):
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            members = [(f"[{k!r}]", v) for k, v in item.items()]
        elif isinstance(item, (list, tuple)):
            members = [(f"[{i}]", v) for i, v in enumerate(item)]
        elif _user_object(item):
            members = [(f".{k}", v) for k, v in vars(item).items()
                       if fields is None or k in fields]
        else:
            continue
        todo.extend((route + step, v, depth + 1) for step, v in reversed(members))
    return None


def _user_object(value) -> bool:
    """An instance of a user's class (or a SimpleNamespace), whose fields the
    code may read."""
    kind = type(value)
    return kind is types.SimpleNamespace or isinstance(getattr(value, "__dict__", None), dict) \
        and not isinstance(value, (type, types.ModuleType, types.FunctionType,
                                   types.MethodType, functools.partial)) \
        and not is_library_module(getattr(kind, "__module__", "") or "builtins")


def check_subclass(fn, index, value) -> None:
    """Raise :class:`NonDifferentiableError`, naming argument ``index`` of
    ``fn``, where ``value`` (an ndarray subclass) computes otherwise than
    ndarray, or holds such an array in its items or fields (module docstring)."""
    route, found = "", refusal(value)
    if found is None and not isinstance(value, np.ndarray):
        held = held_refusal(value)
        if held is None:
            return
        route, found = held
    if found is None:
        return
    what, advice = found
    code = fn.__code__
    params = code.co_varnames[:code.co_argcount]
    name = params[index] if index < len(params) else None
    shown = f"argument '{name}'" if name else f"the argument at position {index}"
    start = f"{shown} of {fn.__name__} " + (
        f"holds, at {name or 'it'}{route}, {what}" if route else f"is {what}")
    raise NonDifferentiableError(
        f"{start}: srcgrad's rules follow "
        f"np.ndarray's arithmetic, which would give the derivative of other code; "
        f"pass {advice}", filename=code.co_filename, lineno=code.co_firstlineno)
