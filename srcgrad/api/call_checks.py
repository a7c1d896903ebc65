"""Checks of what the user hands a gradient when it runs: the arguments of
``grad(f)(...)`` and the cotangent given to ``vjp``'s pullback (with what a
cotangent stands for: None a zero one, a list the array it spells).

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
    the pullback of f was given a cotangent of shape (2,) for an output of shape (3,): pass one shaped like the output (or a single number)
    >>> cotangent_for((None, [1.0, 2.0]), (1.0, np.ones(2)), f)  # None: a zero cotangent
    (0.0, array([1., 2.]))
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
    """Refuse a cotangent that does not match ``value``, the output it is for
    (see :func:`cotangent_for`)."""
    cotangent_for(cotangent, value, fn, where)


def cotangent_for(cotangent, value, fn, where: str = ""):
    """The cotangent the backward sweep is given for ``cotangent``, the user's,
    for ``value``, the output it is for -- or a SrcGradError saying what to pass.

    - None stands for a zero cotangent: the output (or that part of a tuple,
      list or dict output) does not reach the loss (it reached the backward
      sweep as None, which turned the whole gradient into NaN; review r1);
    - one value stands for that value at every element, as a number always
      did: an array of size one too (``np.ones(1)`` for a scalar output, as
      autograd and NumPy's broadcasting take it), given as that number;
    - a list or tuple of numbers for an array output is the array it spells,
      and an array for a list or tuple output of as many items its rows;
    - otherwise an array must have the output's shape, and a tuple, list or
      dict output a cotangent of the same length or (some of its) keys."""
    if value is None:
        return cotangent
    if cotangent is None:
        return _zeros_like(value)
    if isinstance(value, (tuple, list)):
        if isinstance(cotangent, np.ndarray) and cotangent.ndim and len(cotangent) == len(value):
            cotangent = list(cotangent)  # one row per item (list(x) of an array's rows)
        if not isinstance(cotangent, (tuple, list)):
            raise SrcGradError(
                f"the pullback of {_name(fn)} was given a cotangent of type "
                f"{type(cotangent).__name__} for an output{where} that is a "
                f"{type(value).__name__} of {len(value)} item(s): pass a tuple of one "
                f"cotangent per item (None for an item that does not matter)")
        if len(value) != len(cotangent):
            raise SrcGradError(
                f"the pullback of {_name(fn)} was given a cotangent of {len(cotangent)} "
                f"item(s) for an output{where} of {len(value)}: pass one per item")
        parts = [cotangent_for(c, v, fn, f"{where}[{i}]")
                 for i, (c, v) in enumerate(zip(cotangent, value))]
        return _like(cotangent, parts)
    if isinstance(value, dict):
        if not isinstance(cotangent, dict):
            raise SrcGradError(
                f"the pullback of {_name(fn)} was given a cotangent of type "
                f"{type(cotangent).__name__} for an output{where} that is a dict: pass a "
                f"dict of cotangents for (some of) its keys")
        if set(cotangent) - set(value):
            raise SrcGradError(
                f"the pullback of {_name(fn)} was given a cotangent with the key(s) "
                f"{sorted(map(repr, set(cotangent) - set(value)))} that the output{where} lacks")
        return {key: cotangent_for(c, value[key], fn, f"{where}[{key!r}]")
                for key, c in cotangent.items()}
    if not isinstance(value, (np.ndarray, np.generic, int, float, complex)):
        return cotangent  # a user object: its own cotangent, as the code takes it
    if isinstance(cotangent, (list, tuple)):
        try:
            cotangent = np.asarray(cotangent)
        except ValueError:
            cotangent = None
        if cotangent is None or cotangent.dtype.kind not in "biufc":
            raise SrcGradError(
                f"the pullback of {_name(fn)} was given a list or tuple for an output{where} "
                f"of shape {np.shape(value)} that is no array of numbers: pass an array "
                f"shaped like the output")
    if isinstance(cotangent, np.ndarray) and cotangent.size == 1 \
            and cotangent.shape != np.shape(value):
        return cotangent.reshape(())[()]  # one number, of the array's dtype
    shape = np.shape(cotangent) if isinstance(cotangent, (np.ndarray, np.generic, float, int,
                                                          complex)) else None
    if shape is not None and shape != () and shape != np.shape(value):
        raise SrcGradError(
            f"the pullback of {_name(fn)} was given a cotangent of shape {shape} for an "
            f"output{where} of shape {np.shape(value)}: pass one shaped like the output "
            f"(or a single number)")
    return cotangent


def _zeros_like(value):
    """A zero cotangent for ``value``: zeros of its shape and type, part by part."""
    if isinstance(value, (tuple, list)):
        return _like(value, [_zeros_like(v) for v in value])
    if isinstance(value, dict):
        return {k: _zeros_like(v) for k, v in value.items()}
    if isinstance(value, (bool, np.bool_, str, bytes)):
        return None  # not differentiated: nothing flows back from it
    if isinstance(value, (np.ndarray, np.generic)):
        return np.zeros_like(value)[()]  # (a NumPy scalar for a NumPy scalar)
    if isinstance(value, (float, int, complex)):
        return type(value)(0)
    return None


def _like(container, parts):
    """``parts`` in a container of ``container``'s kind (a named tuple's own class)."""
    if isinstance(container, tuple) and hasattr(type(container), "_fields"):
        return type(container)(*parts)
    return type(container)(parts) if isinstance(container, (tuple, list)) else tuple(parts)
