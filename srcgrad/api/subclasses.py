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

import numpy as np

from ..errors import NonDifferentiableError

__all__ = ["check_subclass", "overridden"]

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


def check_subclass(fn, index, value) -> None:
    """Raise :class:`NonDifferentiableError`, naming argument ``index`` of
    ``fn``, where ``value`` (an ndarray subclass) computes otherwise than
    ndarray (module docstring)."""
    if isinstance(value, np.matrix):
        what, advice = ("an np.matrix, whose '*' is a matrix product",
                        "np.asarray(...) (with '@' where a matrix product is meant)")
    elif isinstance(value, np.ma.MaskedArray):
        what, advice = ("a masked array, whose sums and means leave its masked entries out",
                        "an ndarray with the masked entries filled (a.filled(0.0)) "
                        "or the mask as weights")
    elif (name := overridden(value)) is not None:
        kind = type(value).__qualname__
        what, advice = (f"a {kind}, a subclass of np.ndarray that defines its own {name}",
                        f"np.asarray(...) of it, and write what {kind}.{name} computes "
                        f"into the function")
    else:
        return
    code = fn.__code__
    params = code.co_varnames[:code.co_argcount]
    shown = f"'{params[index]}'" if index < len(params) else f"at position {index}"
    raise NonDifferentiableError(
        f"argument {shown} of {fn.__name__} is {what}: srcgrad's rules follow "
        f"np.ndarray's arithmetic, which would give the derivative of other code; "
        f"pass {advice}", filename=code.co_filename, lineno=code.co_firstlineno)
