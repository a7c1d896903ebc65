"""Checks of what the user hands a gradient when it runs: the arguments of
``grad(f)(...)`` and the cotangent given to ``vjp``'s pullback.

Both mistakes used to surface from inside srcgrad's generated code: a missing
argument as ``TypeError: grad_f() missing 1 required positional argument``
(naming a function the user never wrote), a cotangent of the wrong shape as
NumPy's broadcasting ``ValueError`` from the backward sweep.  They are
SrcGradErrors now that name the user's function, as ``jvp`` names a tangent
of the wrong shape.

    >>> import numpy as np
    >>> def f(x, y):
    ...     return x * y
    >>> try:
    ...     check_call(f, (np.ones(3),), {}, "grad")
    ... except SrcGradError as e:
    ...     print(e)
    cannot call f with these arguments (srcgrad's grad passes them to f): missing a required argument: 'y'
    >>> try:
    ...     check_cotangent(np.ones(2), np.ones(3), f)
    ... except SrcGradError as e:
    ...     print(e)
    the pullback of f was given a cotangent of shape (2,) for an output of shape (3,): pass one shaped like the output
"""

from __future__ import annotations

import inspect

import numpy as np

from ..errors import SrcGradError


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) \
        or type(fn).__qualname__


def check_call(fn, args, kwargs, mode: str) -> None:
    """Refuse arguments ``fn`` itself could not be called with."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to check against
        return
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise SrcGradError(f"cannot call {_name(fn)} with these arguments (srcgrad's {mode} "
                           f"passes them to {_name(fn)}): {exc}") from None


def check_cotangent(cotangent, value, fn, where: str = "") -> None:
    """Refuse a cotangent that does not match ``value``, the output it is for:
    an array of another shape (a scalar cotangent of an array output is taken
    as it always was), or a sequence or dict of another length or keys."""
    if cotangent is None or value is None:
        return
    if isinstance(value, (tuple, list)) and isinstance(cotangent, (tuple, list)):
        if len(value) != len(cotangent):
            raise SrcGradError(
                f"the pullback of {_name(fn)} was given a cotangent of {len(cotangent)} "
                f"item(s) for an output{where} of {len(value)}: pass one per item")
        for i, (c, v) in enumerate(zip(cotangent, value)):
            check_cotangent(c, v, fn, f"{where}[{i}]")
        return
    if isinstance(value, dict) and isinstance(cotangent, dict):
        if set(cotangent) - set(value):
            raise SrcGradError(
                f"the pullback of {_name(fn)} was given a cotangent with the key(s) "
                f"{sorted(map(repr, set(cotangent) - set(value)))} that the output{where} lacks")
        for key, c in cotangent.items():
            check_cotangent(c, value[key], fn, f"{where}[{key!r}]")
        return
    if isinstance(value, np.ndarray) or np.isscalar(value) or isinstance(value, np.generic):
        shape = np.shape(cotangent) if isinstance(cotangent, (np.ndarray, np.generic, float,
                                                              int, complex, list)) else None
        if shape is not None and shape != () and shape != np.shape(value):
            raise SrcGradError(
                f"the pullback of {_name(fn)} was given a cotangent of shape {shape} for an "
                f"output{where} of shape {np.shape(value)}: pass one shaped like the output")
