"""Rules of linear algebra: products, contractions and ``np.linalg``, both modes.

Products and contractions are linear in each operand, so one ``@linear``
declaration gives both rules: the tangent is the same product with one operand
replaced by its tangent, the adjoint a product of the cotangent with the other
operand, transposed.  The N-d adjoints go through runtime helpers that build
the transposed contraction (``matmul_grad_a``/``_b`` for broadcast batches and
1-D operands, ``tensordot_grad_a``/``_b``, ``einsum_grads``).  The
``np.linalg`` rules are the classical matrix-calculus identities and work on
stacks of matrices: ``d inv(A) = -inv(A) dA inv(A)`` and its transpose
``-inv(A)^T g inv(A)^T``, ``d det(A) = det(A) tr(A^-1 dA)`` and
``g det(A) inv(A)^T``.

Multi-output primitives (``np.linalg.slogdet``) receive ``out`` and ``d_out``
as tuples with one entry per output, and their tangent is a tuple too.
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
    zero_tangent,
)
from .derive import alias, linear
from .registry import adjoint, tangent


@linear(np.matmul)
def matmul(out, d_out, a, b):
    return matmul_grad_a(d_out, a, b), matmul_grad_b(d_out, a, b)


@linear(np.dot)
def dot(out, d_out, a, b):
    """0-d operands multiply; otherwise dot contracts a's last axis with b's
    second-to-last (its only one when b is 1-D)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(d_out * b, a), unbroadcast(d_out * a, b)
    axes = ([np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)])
    return tensordot_grad_a(d_out, a, b, axes), tensordot_grad_b(d_out, a, b, axes)


@linear(np.inner)
def inner(out, d_out, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(d_out * b, a), unbroadcast(d_out * a, b)
    axes = ([np.ndim(a) - 1], [np.ndim(b) - 1])
    return tensordot_grad_a(d_out, a, b, axes), tensordot_grad_b(d_out, a, b, axes)


@linear(np.outer)
def outer(out, d_out, a, b):
    return outer_grads(d_out, a, b)


@linear(np.tensordot, "a", "b")
def tensordot(out, d_out, a, b, axes=2):
    return tensordot_grad_a(d_out, a, b, axes), tensordot_grad_b(d_out, a, b, axes)


@adjoint(np.einsum, "operands")
def einsum(out, d_out, *operands, optimize=False):
    """``operands`` holds the subscripts string first, then the arrays; the
    cotangents line up with it, ``None`` standing for the string.  Only the
    string form is supported, without an index repeated inside one operand."""
    return einsum_grads(d_out, operands)


@tangent(np.einsum, "operands")
def einsum_tangent(out, *operands, optimize=False, d_operands):
    """One einsum per array, with that array replaced by its tangent (a zero
    tangent for an array that does not move).  Up to three arrays the calls are
    written out: generated code that is differentiated again cannot unpack
    ``*args``."""
    if len(operands) == 2:
        return np.einsum(operands[0], d_operands[1], optimize=optimize)
    if len(operands) == 3:
        return (np.einsum(operands[0], d_operands[1], operands[2], optimize=optimize)
                + np.einsum(operands[0], operands[1], d_operands[2], optimize=optimize))
    if len(operands) == 4:
        return (np.einsum(operands[0], d_operands[1], operands[2], operands[3],
                          optimize=optimize)
                + np.einsum(operands[0], operands[1], d_operands[2], operands[3],
                            optimize=optimize)
                + np.einsum(operands[0], operands[1], operands[2], d_operands[3],
                            optimize=optimize))
    return sum([np.einsum(*[d_operands[j] if j == i else operands[j]
                            for j in range(len(operands))], optimize=optimize)
                for i in range(1, len(operands))])


@linear(np.trace, "a")
def trace(out, d_out, a, offset=0, axis1=0, axis2=1):
    return trace_grad(d_out, a, offset, axis1, axis2)


alias(np.ndarray.dot, np.dot, name="np.ndarray.dot")
alias(np.ndarray.trace, np.trace, name="np.ndarray.trace")


@adjoint(np.linalg.inv, name="np.linalg.inv")
def inv(out, d_out, a):
    return inv_grad(d_out, out)


@tangent(np.linalg.inv, name="np.linalg.inv")
def inv_tangent(out, a, d_a):
    return -(out @ d_a @ out)


@adjoint(np.linalg.solve, name="np.linalg.solve")
def solve(out, d_out, a, b):
    """b is a vector (shape (M,)) or a stack of matrices (..., M, K)."""
    return solve_grads(d_out, out, a, b)


@tangent(np.linalg.solve, name="np.linalg.solve")
def solve_tangent(out, a, b, d_a, d_b):
    """For a vector b, ``dA`` multiplies ``x`` as a column."""
    x = out[..., None] if np.ndim(b) == 1 else out
    return -np.reshape(np.linalg.solve(a, d_a @ x), np.shape(out)), np.linalg.solve(a, d_b)


@adjoint(np.linalg.det, name="np.linalg.det")
def det(out, d_out, a):
    return (d_out * out)[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)


@tangent(np.linalg.det, name="np.linalg.det")
def det_tangent(out, a, d_a):
    return out * np.trace(np.linalg.solve(a, d_a), axis1=-2, axis2=-1)


@adjoint(np.linalg.slogdet, name="np.linalg.slogdet")
def slogdet(out, d_out, a):
    """Multi-output: ``out`` is ``(sign, logabsdet)`` and ``d_out`` is
    ``(d_sign, d_logabsdet)``; the sign is piecewise constant, so only
    ``d_out[1]`` contributes."""
    d_logdet = np.asarray(cotangent_at(d_out, 1), dtype=np.result_type(out[1]))
    return d_logdet[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)


@tangent(np.linalg.slogdet, name="np.linalg.slogdet")
def slogdet_tangent(out, a, d_a):
    return zero_tangent(out[0]), np.trace(np.linalg.solve(a, d_a), axis1=-2, axis2=-1)
