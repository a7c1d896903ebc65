"""Adjoint rules of ``ndarray`` methods and attributes that have no NumPy
function twin registered elsewhere (``x.T``, ``x.reshape(3, 4)``, ``x.astype``).

The reverse pass looks a method call ``x.f(...)`` up under the unbound method
``np.ndarray.f`` (an attribute ``x.T`` under its descriptor) and passes the
receiver as the first argument, named ``a`` in every rule.  Methods that share
a function's semantics (``x.sum``, ``x.max``, ``x.dot``, ``x.trace``...) are
registered beside that function, with the same rule.
"""

import numpy as np

from ..runtime import move_cotangent, reshape_like, unbroadcast
from .registry import adjoint, nondifferentiable


@adjoint(np.ndarray.T, name="np.ndarray.T")
def T(out, d_out, a):  # noqa: N802 - mirrors the attribute
    return np.transpose(d_out)


@adjoint(np.ndarray.mT, name="np.ndarray.mT")
def mT(out, d_out, a):  # noqa: N802 - mirrors the attribute
    return move_cotangent(d_out, np.swapaxes, -1, -2)


@adjoint(np.ndarray.reshape, "a", name="np.ndarray.reshape")
def reshape(out, d_out, a, *shape, order="C"):
    """``x.reshape(3, 4)`` and ``x.reshape((3, 4))`` alike."""
    if order == "C":  # the default: folded away at inlining
        return reshape_like(d_out, a)
    return reshape_like(d_out, a, order)


@adjoint(np.ndarray.ravel, name="np.ndarray.ravel")
def ravel(out, d_out, a, order="C"):
    if order == "C":  # the default: folded away at inlining
        return reshape_like(d_out, a)
    return reshape_like(d_out, a, order)


@adjoint(np.ndarray.flatten, name="np.ndarray.flatten")
def flatten(out, d_out, a, order="C"):
    if order == "C":  # the default: folded away at inlining
        return reshape_like(d_out, a)
    return reshape_like(d_out, a, order)


@adjoint(np.ndarray.squeeze, name="np.ndarray.squeeze")
def squeeze(out, d_out, a, axis=None):
    return reshape_like(d_out, a)


@adjoint(np.ndarray.transpose, "a", name="np.ndarray.transpose")
def transpose(out, d_out, a, *axes):
    """``x.transpose()``, ``x.transpose(1, 0, 2)`` and ``x.transpose((1, 0, 2))``."""
    if len(axes) == 0:
        return np.transpose(d_out)
    perm = axes[0] if len(axes) == 1 else axes
    return move_cotangent(d_out, np.transpose, np.argsort(np.mod(perm, np.ndim(a))))


@adjoint(np.ndarray.swapaxes, "a", name="np.ndarray.swapaxes")
def swapaxes(out, d_out, a, axis1, axis2):
    return move_cotangent(d_out, np.swapaxes, axis1, axis2)


@adjoint(np.ndarray.copy, name="np.ndarray.copy")
def copy(out, d_out, a, order="C"):
    return d_out


@adjoint(np.ndarray.astype, "a", name="np.ndarray.astype")
def astype(out, d_out, a, dtype):
    """The cotangent is cast back to ``a``'s dtype."""
    return np.asarray(d_out, dtype=a.dtype)


@adjoint(np.ndarray.clip, "a", name="np.ndarray.clip")
def clip(out, d_out, a, min=None, max=None):  # noqa: A002 - mirrors numpy
    """The cotangent passes where min <= a <= max (where the output is a)."""
    return unbroadcast(d_out * (out == a), a)


for _attr in ("shape", "ndim", "size", "dtype", "nonzero", "itemsize", "nbytes"):
    nondifferentiable(getattr(np.ndarray, _attr), name=f"np.ndarray.{_attr}")
