"""Rules of NumPy 2's array-API names, both modes.

NumPy 2 adds functions under the names of the array API standard:
``np.linalg.matmul``, ``outer``, ``tensordot``, ``cross``, ``trace``,
``diagonal``, ``vecdot`` and ``matrix_transpose`` (and ``np.vecdot``,
``np.matrix_transpose``).  Each is its own function object, not the older
NumPy function, and some differ from it: ``np.linalg.trace`` and
``np.linalg.diagonal`` work on the last two axes (``np.trace`` on the first
two), ``np.linalg.outer`` takes vectors only, and ``tensordot``'s ``axes``,
``cross``'s ``axis`` and ``trace``'s ``offset`` are keyword-only.  So each
gets rules of its own here, written with the runtime helpers of the older
function's rules; all are linear in each operand (the tangent is the function
of the tangent, :func:`.derive.linear`), but for ``vecdot``, which
conjugates its first operand (``sum(conj(x1) * x2)``).
"""

from __future__ import annotations

import numpy as np

from ..runtime import (
    cross_grads,
    diagonal_grad,
    matmul_grad_a,
    matmul_grad_b,
    move_cotangent,
    outer_grads,
    tensordot_grad_a,
    tensordot_grad_b,
    trace_grad,
    unbroadcast,
)
from .derive import linear
from .registry import adjoint, tangent

_LINALG = [name for name in ("matmul", "outer", "tensordot", "cross", "trace", "diagonal",
                             "vecdot", "matrix_transpose") if hasattr(np.linalg, name)]

if "matmul" in _LINALG:
    @linear(np.linalg.matmul, "x1", "x2", name="np.linalg.matmul")
    def linalg_matmul(out, d_out, x1, x2):
        return matmul_grad_a(d_out, x1, x2), matmul_grad_b(d_out, x1, x2)

if "outer" in _LINALG:
    @linear(np.linalg.outer, "x1", "x2", name="np.linalg.outer")
    def linalg_outer(out, d_out, x1, x2):
        return outer_grads(d_out, x1, x2)

if "tensordot" in _LINALG:
    @linear(np.linalg.tensordot, "x1", "x2", name="np.linalg.tensordot")
    def linalg_tensordot(out, d_out, x1, x2, *, axes=2):
        return tensordot_grad_a(d_out, x1, x2, axes), tensordot_grad_b(d_out, x1, x2, axes)

if "cross" in _LINALG:
    @linear(np.linalg.cross, "x1", "x2", name="np.linalg.cross")
    def linalg_cross(out, d_out, x1, x2, *, axis=-1):
        return cross_grads(d_out, x1, x2, -1, -1, -1, axis)

if "trace" in _LINALG:
    @linear(np.linalg.trace, "x", name="np.linalg.trace")
    def linalg_trace(out, d_out, x, *, offset=0, dtype=None):
        """The trace of the last two axes."""
        return trace_grad(d_out, x, offset, -2, -1)

if "diagonal" in _LINALG:
    @linear(np.linalg.diagonal, "x", name="np.linalg.diagonal")
    def linalg_diagonal(out, d_out, x, *, offset=0):
        """The diagonal of the last two axes."""
        return diagonal_grad(d_out, x, offset, -2, -1)

for _primitive, _name in ((getattr(np.linalg, "matrix_transpose", None),
                           "np.linalg.matrix_transpose"),
                          (getattr(np, "matrix_transpose", None), "np.matrix_transpose")):
    if _primitive is None:
        continue

    @linear(_primitive, "x", name=_name)
    def matrix_transpose(out, d_out, x):
        return move_cotangent(d_out, np.swapaxes, -1, -2)

for _primitive, _name in ((getattr(np.linalg, "vecdot", None), "np.linalg.vecdot"),
                          (getattr(np, "vecdot", None), "np.vecdot")):
    if _primitive is None:
        continue

    @adjoint(_primitive, "x1", "x2", name=_name)
    def vecdot(out, d_out, x1, x2, *, axis=-1):
        """``sum(conj(x1) * x2, axis)``: the cotangent spread back along ``axis``
        (its conjugate for ``x1``, as autograd's convention has it)."""
        g = np.expand_dims(d_out, axis)
        return unbroadcast(np.conj(g * x2), x1), unbroadcast(g * np.conj(x1), x2)

    @tangent(_primitive, "x1", "x2", name=_name)
    def vecdot_tangent(out, x1, x2, *, axis=-1, d_x1, d_x2):
        return (np.sum(np.conj(d_x1) * x2, axis=axis), np.sum(np.conj(x1) * d_x2, axis=axis))
