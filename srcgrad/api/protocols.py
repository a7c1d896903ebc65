"""Arguments whose class reads its items its own way: refused, located.

srcgrad differentiates ``for w in L``, ``L[i]`` and ``d.items()`` of an
argument with the rules of the built-in list, tuple and dict: the loop runs
over the stored items in order, ``L[i]`` reads the stored item, and the
gradient with respect to the container holds the cotangent of each stored
item.  A subclass that defines ``__iter__`` or ``__getitem__`` in Python (a
list applying its layers last-to-first, a named tuple scaling what it returns),
or a dict subclass with its own ``items()``/``values()``/``keys()`` reads
something else: differentiated with the built-in's
rules, the value or the gradient is that of other code, silently.  Such an
argument is refused when the call is checked, naming the argument, its class
and the method, located at the function's ``def``.

    >>> from .._doctest_helpers import scale      # a function of a user's module
    >>> class ScaledList(list):
    ...     __getitem__ = scale                     # def __getitem__(self, i) in the class
    >>> own_protocol(ScaledList)
    ('__getitem__', 'list')
    >>> own_protocol(list), own_protocol(dict)
    (None, None)
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from ..errors import NonDifferentiableError
from ..frontend.linker import is_user_function

#: The methods, per built-in container, whose own version changes what srcgrad
#: reads from the container (a dict subclass's ``__getitem__`` is followed).
_PROTOCOLS = (
    (dict, ("items", "values", "keys")),
    (list, ("__iter__", "__getitem__", "__reversed__")),
    (tuple, ("__iter__", "__getitem__", "__reversed__")),
)


@functools.lru_cache(maxsize=256)
def own_protocol(cls):
    """``(method, built-in)`` for the first reading method ``cls`` defines in
    Python over that of the built-in container it derives from; None where it
    reads its items as the built-in does (or is no container)."""
    for base, methods in _PROTOCOLS:
        if issubclass(cls, base):
            if cls is base:
                return None
            for method in methods:
                if _defined_in_python(cls, method, base):
                    return method, base.__name__
            return None
    return None


def _defined_in_python(cls, method, base) -> bool:
    """Whether a class of ``cls``'s order before ``base`` defines ``method`` as a
    user function."""
    for k in cls.__mro__:
        if k is base:
            return False
        if method in vars(k):
            found = inspect.getattr_static(k, method)
            return is_user_function(getattr(found, "__func__", found))
    return False


def check_protocols(fn, args) -> None:
    """Raise :class:`NonDifferentiableError` for an argument of ``fn`` (or an
    item of a list, tuple or dict passed) whose class reads its items its own
    way (module docstring)."""
    for index, value in enumerate(args):
        if type(value) is float or type(value) is np.ndarray:
            continue  # the common cases: nothing to look into
        found = _first_own(value, 0)
        if found is not None:
            _refuse(fn, index, *found)


def _first_own(value, depth):
    """``(value, method, built-in)`` for ``value`` or the first item it holds (in
    lists, tuples and dicts, a few levels down) whose class reads its items its
    own way; None otherwise."""
    kind = type(value)
    if kind in (float, int, bool, str, np.ndarray) or value is None:
        return None
    if not (isinstance(value, (list, tuple, dict)) or hasattr(value, "__dict__")):
        return None
    if isinstance(value, type) or inspect.isroutine(value) or inspect.ismodule(value):
        return None
    own = own_protocol(kind)
    if own is not None:
        return (value, *own)
    if depth < 3 and isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            found = _first_own(item, depth + 1)
            if found is not None:
                return found
    return None


def _refuse(fn, index, value, method, base) -> None:
    code = getattr(fn, "__code__", None)
    params = code.co_varnames[:code.co_argcount] if code is not None else ()
    name = f"'{params[index]}'" if index < len(params) else f"at position {index}"
    cls = type(value).__qualname__
    what = f"a {cls}, a subclass of {base} with its own {cls}.{method}"
    advice = (f"pass a plain {base} of the items your {method} gives, or a plain {base} "
              f"and make the change in the function")
    raise NonDifferentiableError(
        f"argument {name} of {getattr(fn, '__name__', 'the function')} holds {what}: "
        f"srcgrad differentiates the items of an argument with the rules of the built-in "
        f"{base}, which read the stored items, "
        f"so the value or the gradient would be that of other code; {advice}",
        filename=code.co_filename if code is not None else None,
        lineno=code.co_firstlineno if code is not None else None)

