"""Functions held in lists, tuples and dicts: what a call of such an item may call.

``ACTS[name](h)``, ``for f in TRANSFORMS: x = f(x)`` and a list of activations
passed as an argument (``def net(params, x, acts)``) call a function chosen
when the code runs from a few known when it compiles
(normalize/function_values.py dispatches on them by identity).  This module
says which values count as such functions, finds them in a container, and
describes the functions a list argument holds as an entry of
``Options.callees`` (:class:`ElementFunctions`), so that the code is
specialised on them as it is on a function passed.

    >>> import numpy as np
    >>> held_functions({"tanh": np.tanh, "scale": 2.0, "pair": (np.sin, 1.0)}, "ACTS")
    [(<ufunc 'tanh'>, "ACTS['tanh']"), (<ufunc 'sin'>, "ACTS['pair'][0]")]
    >>> ElementFunctions(2, "acts", (np.tanh, np.sin))
    acts=[np.tanh, np.sin]
"""

from __future__ import annotations

import types

import numpy as np

#: Containers longer than this are not looked into.
_MAX_ITEMS = 1000


def is_function_value(value) -> bool:
    """Whether ``value`` is a function a call can be specialised on by identity:
    a Python function or lambda, a builtin (``math.sin``), a NumPy ufunc or
    function -- not a bound method (a new object at each read) nor a class."""
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)):
        return True
    return type(value).__name__ == "_ArrayFunctionDispatcher"  # np.sum, np.dot (NumPy >= 1.25)


def held_functions(value, name: str) -> list:
    """``(function, where)`` for each function among the items of the list or
    tuple ``value`` or the values of the dict ``value`` (and of the tuples in
    them: ``[(np.sin, 1.0)]``, ``[(W, b, np.tanh), ...]``), ``where`` how
    ``name[...]`` reaches it."""
    if type(value) not in (list, tuple, dict) or len(value) > _MAX_ITEMS:
        return []
    found = []
    pairs = value.items() if type(value) is dict else enumerate(value)
    for key, item in pairs:
        where = f"{name}[{key!r}]"
        if type(item) is tuple and len(item) <= 16:
            found.extend((i, f"{where}[{k}]") for k, i in enumerate(item)
                         if is_function_value(i))
        elif is_function_value(item):
            found.append((item, where))
    return found


def shown_function(fn) -> str:
    """How a message names the function ``fn``: ``np.tanh``, ``relu``."""
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", repr(fn))
    return f"np.{name}" if module.split(".")[0] == "numpy" or isinstance(fn, np.ufunc) \
        else name


class ElementFunctions:
    """The functions a list, tuple or dict argument holds (``acts=[np.tanh,
    relu]``): a call of an item is one branch per function (an entry of
    :attr:`Options.callees`; equal by the functions' identity; kept in memory
    only, as :class:`.linker.ElementClasses` is)."""

    __slots__ = ("functions", "name", "position")

    def __init__(self, position: int, name: str, functions: tuple):
        self.position, self.name, self.functions = position, name, functions

    def __eq__(self, other):
        return isinstance(other, ElementFunctions) and self.position == other.position \
            and len(self.functions) == len(other.functions) \
            and all(a is b for a, b in zip(self.functions, other.functions))

    def __hash__(self):
        return hash((self.position, tuple(map(id, self.functions))))

    def __repr__(self):
        return f"{self.name}=[{', '.join(map(shown_function, self.functions))}]"

    def stable_description(self):
        return None
