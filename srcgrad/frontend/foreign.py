"""Code written for autograd: its NumPy/SciPy wrappers read as what they wrap.

A program written for autograd imports ``autograd.numpy as np`` (and
``autograd.scipy.special``, ``autograd.scipy.stats``...).  Each function there
is NumPy's or SciPy's own, wrapped so that autograd can trace it: called with
plain arrays, the wrapper calls the wrapped function and nothing else.  So
srcgrad treats the wrapper as the function it wraps, and such code gets the
same rules, the same generated code and the same values as code that imports
NumPy itself.

autograd is never imported here (it is an optional, test-only package): its
objects are recognised by their module and by the attributes its wrappers
carry -- a primitive keeps the wrapped function (as ``fun``) and a flag
saying what it is;
the few plain Python functions of ``autograd.numpy`` (``array``,
``concatenate``, ``stack``, ``mean``...) stand for NumPy's functions of the
same name.

    >>> import numpy as np
    >>> native(np.tanh) is np.tanh
    True
    >>> def dot(*args): return np.dot(*args)
    >>> dot.__module__, dot._is_autograd_primitive, dot.fun = "autograd.tracer", True, np.dot
    >>> native(dot) is np.dot             # how autograd's primitives look
    True
"""

from __future__ import annotations

import sys
import types


def _from_autograd(obj) -> bool:
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and (module == "autograd" or module.startswith("autograd."))


def native(obj, name=None):
    """The NumPy/SciPy function an autograd wrapper stands for; ``obj``
    itself for anything else (and for autograd objects with no such
    function, which then go the way any other object goes).  ``name``: the
    name the program reads it by (``concatenate`` in ``np.concatenate``),
    which says what a wrapper written as a lambda stands for."""
    if isinstance(obj, types.ModuleType):
        return _module(obj)
    for _ in range(4):               # a wrapper of a wrapper, at most a few deep
        if not _from_autograd(obj):
            return obj
        try:
            inner = _wrapped(obj)
        except Exception:  # noqa: BLE001 - an object whose attributes raise: leave it be
            return obj
        if inner is not None:
            obj = inner
            continue
        return _same_name(obj, name)
    return obj


def _module(module):
    """``numpy`` for ``autograd.numpy``, ``scipy.special`` for
    ``autograd.scipy.special``: what the program's ``np.exp`` then reads, so
    that generated code calls NumPy itself.  Only modules already imported
    (autograd's wrappers import what they wrap); anything else stays (autograd's
    module ``autograd.scipy.stats.norm`` stands for an object of SciPy's, which
    an exported module could not import: its functions are unwrapped one by
    one instead)."""
    name = module.__name__
    if not name.startswith(("autograd.numpy", "autograd.scipy")):
        return module
    parts = name.split(".")[1:]
    found = sys.modules.get(parts[0])
    for part in parts[1:]:
        found = getattr(found, part, None)
    return found if isinstance(found, types.ModuleType) else module


def _wrapped(obj):
    """The function an autograd primitive wraps, or None: ``primitive`` keeps
    it as ``fun``; ``notrace_primitive`` (for functions with no gradient, such
    as ``shape``) only in its closure, as ``f_raw``."""
    if getattr(obj, "_is_autograd_primitive", False) is True:
        inner = getattr(obj, "fun", None)
        return inner if callable(inner) else None
    if getattr(obj, "_is_primitive", False) is True and isinstance(obj, types.FunctionType):
        cells = dict(zip(obj.__code__.co_freevars, obj.__closure__ or ()))
        if "f_raw" in cells:
            inner = cells["f_raw"].cell_contents
            return inner if callable(inner) else None
    return None


def _same_name(obj, name=None):
    """NumPy's (SciPy's) function of the same name for a plain Python function
    of autograd's ``numpy``/``scipy`` wrappers (``autograd.numpy.concatenate``
    is a lambda of ``numpy_wrapper`` that calls ``numpy.concatenate``)."""
    if not isinstance(obj, types.FunctionType):
        return obj
    parts = obj.__module__.split(".")[1:]    # drop "autograd"
    if not parts or parts[0] not in ("numpy", "scipy"):
        return obj
    names = [n for n in (name, obj.__name__) if n and n.isidentifier()]
    while parts:                             # autograd.numpy.numpy_wrapper -> numpy
        loaded = sys.modules.get(".".join(parts))
        for candidate in names:
            found = getattr(loaded, candidate, None) if loaded is not None else None
            if callable(found) and not _from_autograd(found):
                return found
        parts.pop()
    return obj


__all__ = ["native"]
