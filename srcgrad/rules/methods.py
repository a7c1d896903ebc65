"""Rules of ``ndarray`` methods and attributes (``x.T``, ``x.reshape(3, 4)``,
``x.astype``), both modes.

The reverse and forward passes look a method call ``x.f(...)`` up under the
unbound method ``np.ndarray.f`` (an attribute ``x.T`` under its descriptor)
and pass the receiver as the first argument, named ``a`` in every rule.  A
method that computes what a NumPy function computes takes the function's rules
(:func:`.derive.alias`): here ``x.squeeze()``, ``x.swapaxes``, ``x.clip``, ``x.diagonal()``, ``x.conj()``; beside their
functions the reductions (``x.sum``, ``x.max``...), ``x.dot`` and
``x.trace``.  The others are linear, so each tangent applies the same
operation to ``d_a``, spelt with the NumPy function (which also takes a
scalar tangent; ``x.real`` and ``x.imag`` are ``np.real`` and ``np.imag``);
``if`` tests on the call's form are folded away at inlining.
"""

import numpy as np

from ..runtime import (
    layout_order,
    listed_cotangent,
    match_complex,
    move_cotangent,
    reshape_like,
    snapshot,
)
from . import construction, indexing, shapes, ufuncs  # noqa: F401 - the twins are registered first
from .derive import alias, linear
from .registry import adjoint, nondifferentiable, tangent

alias(np.ndarray.squeeze, np.squeeze, name="np.ndarray.squeeze")
alias(np.ndarray.swapaxes, np.swapaxes, name="np.ndarray.swapaxes")
alias(np.ndarray.clip, np.clip, "a", "min", "max", name="np.ndarray.clip")
alias(np.ndarray.diagonal, np.diagonal, name="np.ndarray.diagonal")
alias(np.ndarray.conj, np.conjugate, "a", name="np.ndarray.conj")
alias(np.ndarray.conjugate, np.conjugate, "a", name="np.ndarray.conjugate")
alias(np.ndarray.repeat, np.repeat, "a", name="np.ndarray.repeat")
alias(np.ndarray.take, np.take, name="np.ndarray.take")  # review s36 R4-13
nondifferentiable(np.ndarray.round, name="np.ndarray.round")  # as np.round: piecewise constant
# x.__pow__(2), x.__mul__(y): the operators written as calls (a reflected x.__radd__(y)
# only where the operands commute, so that the twin's operand order does not matter)
for _dunder, _twin in (("__add__", np.add), ("__radd__", np.add), ("__sub__", np.subtract),
                       ("__mul__", np.multiply), ("__rmul__", np.multiply),
                       ("__truediv__", np.divide), ("__pow__", np.power),
                       ("__matmul__", np.matmul)):
    alias(getattr(np.ndarray, _dunder), _twin, "a", "b", name=f"np.ndarray.{_dunder}")
alias(np.ndarray.__neg__, np.negative, "a", name="np.ndarray.__neg__")


@adjoint(np.ndarray.copy, "a", name="np.ndarray.copy")
def copy(out, d_out, a, order="C"):
    """``x.copy()`` of an array, and of a list or dict (one method name for the
    three): the cotangent passes through."""
    return d_out


@tangent(np.ndarray.copy, "a", name="np.ndarray.copy")
def copy_tangent(out, a, order="C", *, d_a):
    """A copy of the tangent, of its own kind: a list's or dict's tangent stays
    a list or dict (``np.copy`` made an array of it, which lost a dict's items
    and refused a list of arrays of different shapes)."""
    return snapshot(d_a)


@adjoint(np.ndarray.tolist, "a", name="np.ndarray.tolist")
def tolist(out, d_out, a):
    """``x.tolist()``: nested lists of ``x``'s elements as Python numbers (a
    number for a 0-d array); ``x`` gets their cotangents laid out as it is."""
    return listed_cotangent(d_out, a)


@tangent(np.ndarray.tolist, "a", name="np.ndarray.tolist")
def tolist_tangent(out, a, *, d_a):
    """The tangent's elements in the same nested lists."""
    return np.broadcast_to(d_a, np.shape(a)).tolist()


@adjoint(np.ndarray.view, "a", name="np.ndarray.view")
def view(out, d_out, a):
    """``x.view()``: the same elements, another array object (a ``dtype`` or
    ``type`` reinterprets the bytes: not taken, refused where it is called)."""
    return d_out


@tangent(np.ndarray.view, "a", name="np.ndarray.view")
def view_tangent(out, a, *, d_a):
    return d_a


@linear(np.ndarray.T, name="np.ndarray.T", call="np.transpose")
def T(out, d_out, a):  # noqa: N802 - mirrors the attribute
    return np.transpose(d_out)


@linear(np.ndarray.real, name="np.ndarray.real", call="np.real")
def real(out, d_out, a):
    """As ``np.real``: a real array's cotangent is real."""
    return match_complex(d_out, a)


@linear(np.ndarray.imag, name="np.ndarray.imag", call="np.imag")
def imag(out, d_out, a):
    """As ``np.imag``."""
    return match_complex(-1j * d_out, a)


@adjoint(np.ndarray.mT, name="np.ndarray.mT")
def mT(out, d_out, a):  # noqa: N802 - mirrors the attribute
    return move_cotangent(d_out, np.swapaxes, -1, -2)


@tangent(np.ndarray.mT, name="np.ndarray.mT")
def mT_tangent(out, a, d_a):  # noqa: N802 - mirrors the attribute
    return np.swapaxes(d_a, -1, -2)


@adjoint(np.ndarray.reshape, "a", name="np.ndarray.reshape")
def reshape(out, d_out, a, *shape, order="C"):
    """``x.reshape(3, 4)`` and ``x.reshape((3, 4))`` alike."""
    if order == "C":  # the default: folded away at inlining
        return reshape_like(d_out, a)
    if order == "F":
        return reshape_like(d_out, a, order)
    return reshape_like(d_out, a, layout_order(a, order))  # 'A': a's memory order


@tangent(np.ndarray.reshape, "a", name="np.ndarray.reshape")
def reshape_tangent(out, a, *shape, order="C", d_a):
    if len(shape) == 1 and order == "C":
        return np.reshape(d_a, shape[0])
    if len(shape) == 1 and order == "F":
        return np.reshape(d_a, shape[0], order=order)
    if len(shape) == 1:
        return np.reshape(d_a, shape[0], order=layout_order(a, order))
    if order == "C":
        return np.reshape(d_a, shape)
    if order == "F":
        return np.reshape(d_a, shape, order=order)
    return np.reshape(d_a, shape, order=layout_order(a, order))


# x.ravel('A') is np.ravel(x, 'A'): 'A' and 'K' read x in its memory order
alias(np.ndarray.ravel, np.ravel, name="np.ndarray.ravel")
alias(np.ndarray.flatten, np.ravel, name="np.ndarray.flatten")


@adjoint(np.ndarray.transpose, "a", name="np.ndarray.transpose")
def transpose(out, d_out, a, *axes):
    """``x.transpose()``, ``x.transpose(1, 0, 2)`` and ``x.transpose((1, 0, 2))``."""
    if len(axes) == 0:
        return np.transpose(d_out)
    perm = axes[0] if len(axes) == 1 else axes
    return move_cotangent(d_out, np.transpose, np.argsort(np.mod(perm, np.ndim(a))))


@tangent(np.ndarray.transpose, "a", name="np.ndarray.transpose")
def transpose_tangent(out, a, *axes, d_a):
    if len(axes) == 0:
        return np.transpose(d_a)
    if len(axes) == 1:
        return np.transpose(d_a, axes[0])
    return np.transpose(d_a, axes)


@linear(np.ndarray.astype, "a", name="np.ndarray.astype", call="np.asarray",
        keywords=("dtype",), unused=("order", "casting", "subok", "copy"))
def astype(out, d_out, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """The cotangent is cast back to ``a``'s dtype, the tangent stored in the
    output's.  ``order``, ``casting``, ``subok`` and ``copy`` decide the layout,
    which casts are allowed and whether the input may be returned: not the
    numbers, so not the rules (generated code never writes into either)."""
    return np.asarray(d_out, dtype=a.dtype)


@linear(np.astype, "x", name="np.astype", unused=("copy", "device"))
def astype_function(out, d_out, x, dtype, *, copy=True, device=None):
    """NumPy 2's function form of ``x.astype(dtype)``: the same rule."""
    return np.asarray(d_out, dtype=x.dtype)


@adjoint(np.ndarray.item, "a", name="np.ndarray.item")
def item(out, d_out, a, *args):
    """``x.item()`` of a one-element array: its one element as a Python number;
    the cotangent goes back to that element, in ``a``'s shape and dtype.
    ``x.item(i)`` (a flat index) and ``x.item(i, j)`` / ``x.item((i, j))``: the
    element there gets it, the others zero."""
    if not args:
        return np.full(np.shape(a), d_out, dtype=a.dtype if a.dtype.kind in "fc" else None)
    # (the element's flat position is what item(*args) picks of the positions)
    positions = np.reshape(np.arange(np.size(a)), np.shape(a))
    if len(args) == 1:
        return (positions == positions.item(args[0])) * d_out
    return (positions == positions.item(args)) * d_out


@tangent(np.ndarray.item, "a", name="np.ndarray.item")
def item_tangent(out, a, *args, d_a):
    if not args:
        return np.reshape(d_a, -1)[0] if np.ndim(d_a) else d_a
    if len(args) == 1:
        return np.broadcast_to(d_a, np.shape(a)).item(args[0])
    return np.broadcast_to(d_a, np.shape(a)).item(args)


for _attr in ("shape", "ndim", "size", "dtype", "nonzero", "itemsize", "nbytes", "strides"):
    nondifferentiable(getattr(np.ndarray, _attr), name=f"np.ndarray.{_attr}")

# Text has no derivative: a value formatted for printing or logging is only read
# (f-strings become str.format calls, frontend/fstrings.py).
nondifferentiable(str.format, name="str.format")
nondifferentiable(str, name="str")
nondifferentiable(repr, name="repr")
nondifferentiable(format, name="format")
