"""Tangent rules of ``ndarray`` methods and attributes that have no NumPy
function twin registered elsewhere (``x.T``, ``x.reshape(3, 4)``, ``x.astype``).

As in the adjoint rules the receiver is the first parameter, ``a``.  These
methods are linear, so each tangent applies the same operation to ``d_a``,
spelt with the NumPy function (which also takes a scalar tangent); ``if``
tests on the call's form are folded away at inlining.
"""

import numpy as np

from ..rules.registry import tangent


@tangent(np.ndarray.T, name="np.ndarray.T")
def T(out, a, d_a):
    return np.transpose(d_a)


@tangent(np.ndarray.mT, name="np.ndarray.mT")
def mT(out, a, d_a):
    return np.swapaxes(d_a, -1, -2)


@tangent(np.ndarray.reshape, "a", name="np.ndarray.reshape")
def reshape(out, a, *shape, order="C", d_a):
    """``x.reshape(3, 4)`` and ``x.reshape((3, 4))`` alike."""
    if len(shape) == 1 and order == "C":
        return np.reshape(d_a, shape[0])
    if len(shape) == 1:
        return np.reshape(d_a, shape[0], order=order)
    if order == "C":
        return np.reshape(d_a, shape)
    return np.reshape(d_a, shape, order=order)


@tangent(np.ndarray.ravel, name="np.ndarray.ravel")
def ravel(out, a, order="C", *, d_a):
    if order == "C":
        return np.ravel(d_a)
    return np.ravel(d_a, order=order)


@tangent(np.ndarray.flatten, name="np.ndarray.flatten")
def flatten(out, a, order="C", *, d_a):
    if order == "C":
        return np.ravel(d_a)
    return np.ravel(d_a, order=order)


@tangent(np.ndarray.squeeze, name="np.ndarray.squeeze")
def squeeze(out, a, axis=None, *, d_a):
    if axis is None:
        return np.squeeze(d_a)
    return np.squeeze(d_a, axis)


@tangent(np.ndarray.transpose, "a", name="np.ndarray.transpose")
def transpose(out, a, *axes, d_a):
    """``x.transpose()``, ``x.transpose(1, 0, 2)`` and ``x.transpose((1, 0, 2))``."""
    if len(axes) == 0:
        return np.transpose(d_a)
    if len(axes) == 1:
        return np.transpose(d_a, axes[0])
    return np.transpose(d_a, axes)


@tangent(np.ndarray.swapaxes, "a", name="np.ndarray.swapaxes")
def swapaxes(out, a, axis1, axis2, d_a):
    return np.swapaxes(d_a, axis1, axis2)


@tangent(np.ndarray.copy, name="np.ndarray.copy")
def copy(out, a, order="C", *, d_a):
    return np.copy(d_a)


@tangent(np.ndarray.astype, "a", name="np.ndarray.astype")
def astype(out, a, dtype, d_a):
    """The tangent is stored in the output's dtype."""
    return np.asarray(d_a, dtype=dtype)


@tangent(np.ndarray.clip, "a", name="np.ndarray.clip")
def clip(out, a, min=None, max=None, *, d_a):
    """The tangent passes where min <= a <= max (where the output is a), as
    the adjoint's cotangent does; ``out == a`` has the output's shape."""
    return d_a * (out == a)
