"""Adjoint rules of linear algebra: products, contractions and ``np.linalg``.

Products reduce to matrix products of the cotangent with the other operand
(transposed); the N-d cases go through runtime helpers that build the
transposed contraction (``matmul_grad_a``/``_b`` for broadcast batches and 1-D
operands, ``tensordot_grad_a``/``_b``, ``einsum_grads``).  The ``np.linalg``
rules are the classical matrix-calculus identities and work on stacks of
matrices: ``d inv(A) = -inv(A)^T g inv(A)^T``, ``d det(A) = g det(A) inv(A)^T``.

Multi-output primitives (``np.linalg.slogdet``) receive ``out`` and ``d_out``
as tuples with one entry per output.
"""

import numpy as np

from ..runtime import (
    cotangent_at,
    einsum_grads,
    inv_grad,
    matmul_grad_a,
    matmul_grad_b,
    outer_grads,
    solve_grads,
    tensordot_grad_a,
    tensordot_grad_b,
    trace_grad,
    unbroadcast,
)
from .registry import adjoint


@adjoint(np.matmul)
def matmul(out, d_out, a, b):
    return matmul_grad_a(d_out, a, b), matmul_grad_b(d_out, a, b)


@adjoint(np.dot)
@adjoint(np.ndarray.dot, name="np.ndarray.dot")
def dot(out, d_out, a, b):
    """0-d operands multiply; otherwise dot contracts a's last axis with b's
    second-to-last (its only one when b is 1-D)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(d_out * b, a), unbroadcast(d_out * a, b)
    axes = ([np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)])
    return tensordot_grad_a(d_out, a, b, axes), tensordot_grad_b(d_out, a, b, axes)


@adjoint(np.inner)
def inner(out, d_out, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(d_out * b, a), unbroadcast(d_out * a, b)
    axes = ([np.ndim(a) - 1], [np.ndim(b) - 1])
    return tensordot_grad_a(d_out, a, b, axes), tensordot_grad_b(d_out, a, b, axes)


@adjoint(np.outer)
def outer(out, d_out, a, b):
    return outer_grads(d_out, a, b)


@adjoint(np.tensordot, "a", "b")
def tensordot(out, d_out, a, b, axes=2):
    return tensordot_grad_a(d_out, a, b, axes), tensordot_grad_b(d_out, a, b, axes)


@adjoint(np.einsum, "operands")
def einsum(out, d_out, *operands, optimize=False):
    """``operands`` holds the subscripts string first, then the arrays; the
    cotangents line up with it, ``None`` standing for the string.  Only the
    string form is supported, without an index repeated inside one operand."""
    return einsum_grads(d_out, operands)


@adjoint(np.trace, "a")
@adjoint(np.ndarray.trace, "a", name="np.ndarray.trace")
def trace(out, d_out, a, offset=0, axis1=0, axis2=1):
    return trace_grad(d_out, a, offset, axis1, axis2)


@adjoint(np.linalg.inv, name="np.linalg.inv")
def inv(out, d_out, a):
    return inv_grad(d_out, out)


@adjoint(np.linalg.solve, name="np.linalg.solve")
def solve(out, d_out, a, b):
    """b is a vector (shape (M,)) or a stack of matrices (..., M, K)."""
    return solve_grads(d_out, out, a, b)


@adjoint(np.linalg.det, name="np.linalg.det")
def det(out, d_out, a):
    return (d_out * out)[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)


@adjoint(np.linalg.slogdet, name="np.linalg.slogdet")
def slogdet(out, d_out, a):
    """Multi-output: ``out`` is ``(sign, logabsdet)`` and ``d_out`` is
    ``(d_sign, d_logabsdet)``; the sign is piecewise constant, so only
    ``d_out[1]`` contributes."""
    d_logdet = np.asarray(cotangent_at(d_out, 1), dtype=np.result_type(out[1]))
    return d_logdet[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
