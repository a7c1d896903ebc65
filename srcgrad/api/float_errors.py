"""The gradient of code run on Python floats, where Python's float arithmetic
raises and NumPy's gives inf or nan.

Code specialised on Python float arguments computes in Python floats, and
Python raises where NumPy warns: the derivative of ``math.sqrt(x)`` at 0 is
``d / (2 * t)`` with ``t = 0.0`` (ZeroDivisionError), that of ``x ** 0.5`` at
0 is ``0.5 * x ** (-0.5)`` (ZeroDivisionError), a large ``x ** 3``'s is
``3 * x ** 2`` (OverflowError) -- while the function itself ran: its own
arithmetic raised nothing.  A derivative is NumPy's here: inf, -inf or nan,
with NumPy's RuntimeWarning, as the same function of ``np.float64``
arguments gives it.  So a float-specialised gradient that raises one of
those is run again: first the function itself, and where it raises too the
error is Python's own and goes on; otherwise the gradient is computed by
:func:`~srcgrad.vjp` with the float arguments as ``np.float64`` and the seed
``np.float64(1.0)`` -- NumPy's arithmetic throughout -- each gradient of a
Python float argument a Python float again (``float(g)``, as ``grad_like``
gives it), and the value is the function's own.  Where even that raises
(a float that NumPy does not make, ``math.sqrt(t) ** -1``), a
:class:`NonDifferentiableError` says so.  Only on that error path: a call
that raises nothing runs the specialised code alone.

    >>> import math
    >>> def f(x):
    ...     return math.sqrt(x)
    >>> def gradient(x):  # what the specialised code does
    ...     t = math.sqrt(x)
    ...     return 1.0 / (2 * t)
    >>> def vjp(fn, *args, wrt):  # a stand-in for srcgrad.vjp
    ...     t = math.sqrt(args[0])
    ...     return t, lambda d: (d / (2 * t),)
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     on_float_errors(gradient, f, (0,), True, False, vjp)(0.0)
    inf
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from ..errors import NonDifferentiableError

#: What Python's float arithmetic raises where NumPy's gives inf or nan.
_RAISED = (ZeroDivisionError, OverflowError)


def on_float_errors(target, fn, wrt, single, with_value, vjp):
    """``target`` (a generated gradient function of ``fn``'s arguments), run
    again with NumPy's arithmetic where Python's float arithmetic raises in it
    (module docstring).  ``wrt``: the positions differentiated; ``single``: one
    gradient, not a tuple; ``with_value``: ``(value, gradient)`` is returned;
    ``vjp``: :func:`srcgrad.vjp`."""
    def gradient(*args, **kwargs):
        __tracebackhide__ = True
        try:
            return target(*args, **kwargs)
        except _RAISED as error:
            return _with_numpy(error, fn, args, kwargs, wrt, single, with_value, vjp)
    return gradient


def _with_numpy(error, fn, args, kwargs, wrt, single, with_value, vjp):
    __tracebackhide__ = True
    try:
        value = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args], **kwargs)
    except _RAISED:
        raise error from None  # the function itself raises it: Python's own error
    numpy = [numpy_floats(a) for a in args]
    _, pullback = vjp(functools.partial(fn, **kwargs) if kwargs else fn, *numpy, wrt=tuple(wrt))
    try:
        found = pullback(np.float64(1.0))
    except _RAISED as again:
        raise _not_differentiable(fn, again) from error
    grads = tuple(python_floats(g, args[p]) for p, g in zip(wrt, found))
    grads = grads[0] if single else grads
    return (value, grads) if with_value else grads


def holds_floats(value) -> bool:
    """A Python float, or a list or tuple holding one (``dist(p, q)`` of two
    points given as lists): code whose arithmetic may be Python's."""
    return type(value) is float or isinstance(value, np.floating) or (
        type(value) in (list, tuple) and any(map(holds_floats, value)))


def numpy_floats(value):
    """``value`` with each Python float in it (at any depth of lists and tuples)
    an ``np.float64``: the same number, NumPy's arithmetic."""
    if type(value) is float:
        return np.float64(value)
    if type(value) in (list, tuple):
        return type(value)(map(numpy_floats, value))
    return value


def python_floats(found, like):
    """``found`` (computed in NumPy floats) in the types of ``like``: a Python
    float for a Python float, lists and tuples of them item by item."""
    if found is None:
        return None
    if type(like) is float:
        return float(np.real(found))
    if type(like) in (list, tuple) and isinstance(found, (list, tuple)) \
            and len(found) == len(like):
        return type(found)(python_floats(f, w) for f, w in zip(found, like))
    return found


def _not_differentiable(fn, again) -> NonDifferentiableError:
    return NonDifferentiableError(
        f"the derivative of {getattr(fn, '__name__', 'the function')} at these "
        f"arguments is computed in Python floats, whose arithmetic raised "
        f"{type(again).__name__} ({again}) where NumPy's would give inf or nan: "
        f"pass the arguments as np.float64 or arrays")


def tangents_on_float_errors(target, fn, args, moving):
    """``target(*args, *moving)`` (generated tangent code: ``(value, tangent)``),
    run again with NumPy's arithmetic where Python's float arithmetic raises in
    it, as :func:`on_float_errors` does for a gradient (review s37 R5-19:
    ``math.sqrt(s)`` at ``s = 0`` raised ZeroDivisionError from the generated
    code).  The value is the function's own; a float tangent a Python float.
    ``args`` are the generated function's (keyword-only values last, by
    position, as :func:`.second_order.all_arguments` gives them)."""
    __tracebackhide__ = True
    try:
        return target(*args, *moving)
    except _RAISED as error:
        kwonly = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind is inspect.Parameter.KEYWORD_ONLY]
        given = len(args) - len(kwonly)
        try:  # the function's own value (where it raises too, the error is Python's)
            own = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args[:given]],
                     **dict(zip(kwonly, args[given:])))
        except _RAISED:
            raise error from None
        try:
            _, tangent = target(*map(numpy_floats, args), *map(numpy_floats, moving))
        except _RAISED as again:
            raise _not_differentiable(fn, again) from error
        return own, python_floats(tangent, own)
