"""Tangent rules of linear algebra (see srcgrad/rules/linalg.py for the adjoint rules).

Products and contractions are linear in each operand, so an operand's term is
the same product with that operand replaced by its tangent: no transposes or
axis bookkeeping, unlike the adjoint rules, and broadcasting is the primal's.
The ``np.linalg`` rules are the classical differentials, on stacks of
matrices as the primitives are: ``d inv(A) = -inv(A) dA inv(A)``,
``d solve(A, b) = solve(A, db - dA x)``, ``d det(A) = det(A) tr(A^-1 dA)``.
"""

import numpy as np

from ..rules.registry import tangent
from ..runtime import zero_tangent


@tangent(np.matmul)
def matmul(out, a, b, d_a, d_b):
    return np.matmul(d_a, b), np.matmul(a, d_b)


@tangent(np.dot)
@tangent(np.ndarray.dot, name="np.ndarray.dot")
def dot(out, a, b, d_a, d_b):
    return np.dot(d_a, b), np.dot(a, d_b)


@tangent(np.inner)
def inner(out, a, b, d_a, d_b):
    return np.inner(d_a, b), np.inner(a, d_b)


@tangent(np.outer)
def outer(out, a, b, d_a, d_b):
    return np.outer(d_a, b), np.outer(a, d_b)


@tangent(np.tensordot, "a", "b")
def tensordot(out, a, b, axes=2, d_a=None, d_b=None):
    if axes == 2:  # the default
        return np.tensordot(d_a, b), np.tensordot(a, d_b)
    return np.tensordot(d_a, b, axes), np.tensordot(a, d_b, axes)


@tangent(np.einsum, "operands")
def einsum(out, *operands, optimize=False, d_operands):
    """``operands`` holds the subscripts string first, then the arrays (only the
    string form is supported, as in the adjoint rule).  The term is one einsum
    per array, with that array replaced by its tangent (a zero tangent for an
    array that does not move).  Up to three arrays the calls are written out:
    generated code that is differentiated again cannot unpack ``*args``."""
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


@tangent(np.trace, "a")
@tangent(np.ndarray.trace, "a", name="np.ndarray.trace")
def trace(out, a, offset=0, axis1=0, axis2=1, d_a=None):
    if offset == 0 and axis1 == 0 and axis2 == 1:  # the defaults
        return np.trace(d_a)
    return np.trace(d_a, offset, axis1, axis2)


@tangent(np.linalg.inv, name="np.linalg.inv")
def inv(out, a, d_a):
    return -(out @ d_a @ out)


@tangent(np.linalg.solve, name="np.linalg.solve")
def solve(out, a, b, d_a, d_b):
    """b is a vector (shape (M,)) or a stack of matrices (..., M, K); for a
    vector, ``dA`` multiplies ``x`` as a column."""
    x = out[..., None] if np.ndim(b) == 1 else out
    return -np.reshape(np.linalg.solve(a, d_a @ x), np.shape(out)), np.linalg.solve(a, d_b)


@tangent(np.linalg.det, name="np.linalg.det")
def det(out, a, d_a):
    return out * np.trace(np.linalg.solve(a, d_a), axis1=-2, axis2=-1)


@tangent(np.linalg.slogdet, name="np.linalg.slogdet")
def slogdet(out, a, d_a):
    """Multi-output: the term is ``(d_sign, d_logabsdet)``; the sign is
    piecewise constant."""
    return zero_tangent(out[0]), np.trace(np.linalg.solve(a, d_a), axis1=-2, axis2=-1)
