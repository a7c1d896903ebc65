"""The gradients generated code returns: each shaped and typed like its argument.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it): small,
NumPy alone, copied into exported modules.  ``grad_like`` is the last thing a
gradient function calls; it turns cotangents, which may be broadcast views,
Python floats or arrays shared between arguments, into gradients the caller
owns.
"""

from __future__ import annotations

import numpy as np

from .errors import error_at
from .namespaces import foreign, fresh_like
from .structures import gradient_like


def grad_like(g, x):
    """Return the cotangent ``g`` as a fresh gradient for argument ``x``.

    Same shape and dtype as ``x`` (a float32 argument gets a float32 gradient),
    a Python float for a Python float, the same structure for a list, tuple,
    dict or object holding arrays (a tuple of arguments too: the gradients with
    respect to several), and never a read-only view, an alias of an array the
    caller can see, or one array twice.
    """
    if type(g) is tuple and type(x) is tuple and len(g) == len(x) and _ready(g, x):
        return g  # the common case, checked without calls per array (30 us for four)
    return _grad_like(g, x, set())


def _ready(gs, xs) -> bool:
    """Whether every ``g`` of ``gs`` is already the gradient :func:`_grad_like`
    returns for its ``x`` of ``xs`` -- itself: an ``np.ndarray`` of the argument's
    shape and floating dtype, writeable, owning its memory -- and none is there
    twice."""
    for g, x in zip(gs, xs):
        if not (type(g) is np.ndarray and type(x) is np.ndarray and g.dtype == x.dtype
                and x.dtype.kind in "fc" and g.shape == x.shape and g.base is None
                and g.flags.writeable):
            return False
    return len({id(g) for g in gs}) == len(gs)


def _grad_like(g, x, made):
    """``grad_like`` with ``made``, the ids of the arrays it has returned so far:
    a cotangent may reach several leaves (``d_x = d_y = d_t``), each needs its own."""
    if isinstance(x, float):
        if type(g) is float:  # a float's cotangent in float code: nothing to convert
            return g
        # a real argument's gradient is the real part of its cotangent
        return float(np.real(g))
    if type(x) is tuple and type(g) is tuple and len(g) == len(x):  # several arguments
        return tuple([_grad_like(gi, xi, made) for gi, xi in zip(g, x)])
    if isinstance(x, np.ndarray) or np.isscalar(x):
        return _own(_array_gradient(g, x), made)
    if foreign(x):  # a Dask or CuPy array
        return _own(_array_gradient(g, x), made)
    return gradient_like(g, x, lambda g, x: _own(_array_gradient(g, x), made))


def _own(gradient, made):
    if isinstance(gradient, np.ndarray) or (type(gradient) is not float and foreign(gradient)):
        if id(gradient) in made:
            gradient = gradient.copy()
        made.add(id(gradient))
    return gradient


def _array_gradient(g, x):
    if isinstance(x, float):
        return float(np.real(g)) if isinstance(g, (complex, np.complexfloating)) else float(g)
    if type(x) is np.ndarray:  # the common case, without result_type's overhead
        dtype = x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64)
    elif foreign(x):  # a Dask or CuPy array knows its dtype without being asked its values
        dtype = np.dtype(x.dtype) if np.dtype(x.dtype).kind in "fc" else np.dtype(np.float64)
    else:
        dtype = np.result_type(x) if np.issubdtype(np.result_type(x), np.inexact) \
            else np.dtype(np.float64)  # (an int's: dtype.kind is read below)
    if (type(g) is np.ndarray and g.dtype == dtype and g.shape == np.shape(x)
            and g.flags.writeable and g.base is None):
        return g  # already a fresh array of the right kind: no copy
    if dtype.kind == "f" and np.iscomplexobj(g):
        # a real argument of a complex computation: the gradient is the real part
        # (the imaginary part is the derivative along i * x, which x cannot move)
        g = np.real(g)
    if (type(g) is not np.ndarray or type(x) is not np.ndarray) and (foreign(g) or foreign(x)):
        return _foreign_gradient(g, x, dtype)
    out = np.array(np.broadcast_to(g, np.shape(x)), dtype=dtype)
    return out if np.ndim(x) or isinstance(x, np.ndarray) else out[()]  # a 0-d array: one too


def _foreign_gradient(g, x, dtype):
    """The gradient of ``x`` where ``g`` or ``x`` is a Dask or CuPy array: an array
    of that library, never converted to NumPy -- a Dask gradient stays lazy (the
    caller computes it, with ``dask.compute`` for several at once), a CuPy one
    stays on the GPU.  It is a fresh array (``astype`` copies) of ``x``'s shape
    and floating dtype, 0-d for a scalar argument."""
    return fresh_like(g, x, dtype)


def zeros_grad(x):
    """The gradient of an argument the output does not depend on."""
    return grad_like(0.0, x)



def hook_result(result, g, hook, where=None):
    """What the gradient hook of ``srcgrad.on_grad(x, hook)`` returned for the
    cotangent ``g``, checked: it is the cotangent that flows on, so ``None`` (a
    logging hook without ``return g``) or an array of another shape raises
    GradientHookError naming the hook, at the ``on_grad`` call (``where``: its
    file, line and column), not an arithmetic error further down."""
    if result is None or (np.ndim(result) > 0 and np.shape(result) != np.shape(g)):
        name = getattr(hook, "__qualname__", None) or type(hook).__qualname__
        got = "None" if result is None else f"an array of shape {np.shape(result)}"
        raise error_at(
            "GradientHookError",
            f"the gradient hook {name} passed to on_grad returned {got} for a cotangent of "
            f"shape {np.shape(g)}: a hook returns the cotangent that flows on (end it with "
            f"'return g', or return a changed array of the same shape)",
            None if where is None else tuple(where[:3]))
    return result
