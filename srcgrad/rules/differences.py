"""Rules of finite differences: ``np.diff`` and ``np.gradient``, both modes.

Both are linear in the array they difference, so the tangent is the same
difference of the tangent.  The adjoint of ``np.diff`` is minus the difference
of the cotangent padded with zeros, once per order
(:func:`~srcgrad.runtime.diff_grad`); ``np.gradient``'s stencil is banded, and
:func:`~srcgrad.runtime.gradient_grad` applies its transpose for any spacing
and edge order.  The spacings (``dx`` or coordinate arrays) and the values
``prepend`` and ``append`` are constants: no derivative flows to them, and the
tangent pads with zeros where ``np.diff`` pads with them.
"""

import numpy as np

from ..runtime import diff_grad, gradient_grad
from .registry import adjoint, tangent


@adjoint(np.diff, "a")
def diff(out, d_out, a, n=1, axis=-1, prepend=None, append=None):
    return diff_grad(d_out, a, n, axis, prepend, append)


@tangent(np.diff, "a")
def diff_tangent(out, a, n=1, axis=-1, prepend=None, append=None, *, d_a):
    if prepend is None and append is None:
        return np.diff(d_a, n, axis)
    if append is None:
        return np.diff(d_a, n, axis, prepend=np.zeros_like(prepend))
    if prepend is None:
        return np.diff(d_a, n, axis, append=np.zeros_like(append))
    return np.diff(d_a, n, axis, prepend=np.zeros_like(prepend), append=np.zeros_like(append))


@adjoint(np.gradient, "f")
def gradient(out, d_out, f, *varargs, axis=None, edge_order=1):
    """One array out for one axis, a tuple of them (and of cotangents) for several."""
    return gradient_grad(d_out, f, varargs, axis, edge_order)


@tangent(np.gradient, "f")
def gradient_tangent(out, f, *varargs, axis=None, edge_order=1, d_f):
    """The spacings are written out (generated code differentiated again cannot
    unpack ``*varargs``): none, one for every axis, or one per axis up to three;
    the keywords where they differ from their defaults."""
    if len(varargs) == 0 and axis is None and edge_order == 1:
        return np.gradient(d_f)
    if len(varargs) == 1 and axis is None and edge_order == 1:
        return np.gradient(d_f, varargs[0])
    if len(varargs) == 2 and axis is None and edge_order == 1:
        return np.gradient(d_f, varargs[0], varargs[1])
    if len(varargs) == 0 and edge_order == 1:
        return np.gradient(d_f, axis=axis)
    if len(varargs) == 1 and edge_order == 1:
        return np.gradient(d_f, varargs[0], axis=axis)
    if len(varargs) == 0:
        return np.gradient(d_f, axis=axis, edge_order=edge_order)
    if len(varargs) == 1:
        return np.gradient(d_f, varargs[0], axis=axis, edge_order=edge_order)
    if len(varargs) == 2:
        return np.gradient(d_f, varargs[0], varargs[1], axis=axis, edge_order=edge_order)
    if len(varargs) != 3:
        assert False, "np.gradient: a tangent takes up to three spacings"
    return np.gradient(d_f, varargs[0], varargs[1], varargs[2], axis=axis,
                       edge_order=edge_order)
