"""Rules of ``scipy.linalg``, both modes: ``solve_triangular`` and ``cholesky``.

Registered lazily, like :mod:`.scipy_special`, once the user's code has
imported ``scipy.linalg`` (Gaussian-process code writes
``alpha = solve_triangular(L, y, lower=True)`` after a Cholesky factor).

``solve_triangular(a, b, trans, lower, unit_diagonal)`` reads one triangle of
``a`` (and not its diagonal when ``unit_diagonal``), so ``a``'s cotangent
lies in the entries read and its tangent counts only them; with ``T`` that
triangle (ones on the diagonal when ``unit_diagonal``) and ``op(T)`` it or its
transpose (``trans``), ``x = op(T)^-1 b`` gives ``d_b = op(T)^-T g`` and
``d_op(T) = -d_b x^T``.  ``cholesky(a, lower)`` is ``np.linalg.cholesky(a,
upper=not lower)``: the same triangle read, the same rules
(:func:`srcgrad.runtime.cholesky_grad`).  Both are written with NumPy
operations, so that generated tangent code can be differentiated again.
"""

import numpy as np
from scipy import linalg

from ..runtime import cholesky_grad
from .registry import adjoint, tangent


@adjoint(linalg.solve_triangular, "a", "b", name="scipy.linalg.solve_triangular")
def solve_triangular(out, d_out, a, b, trans=0, lower=False, unit_diagonal=False,
                     overwrite_b=False, check_finite=True):
    transposed = trans in (1, 2, "T", "C")
    n = np.shape(a)[-1]
    eye = np.eye(n, dtype=out.dtype)
    keep = np.tri(n, dtype=out.dtype) if lower else np.tri(n, dtype=out.dtype).T
    keep = keep - eye if unit_diagonal else keep
    tri = a * keep + eye if unit_diagonal else a * keep
    op = tri.T if transposed else tri
    d_b = np.linalg.solve(op.T, d_out)
    x = out[:, None] if np.ndim(out) == 1 else out
    g = d_b[:, None] if np.ndim(out) == 1 else d_b
    d_op = -(g @ x.T)
    return (d_op.T if transposed else d_op) * keep, d_b


@tangent(linalg.solve_triangular, "a", "b", name="scipy.linalg.solve_triangular")
def solve_triangular_tangent(out, a, b, trans=0, lower=False, unit_diagonal=False,
                             overwrite_b=False, check_finite=True, *, d_a, d_b):
    transposed = trans in (1, 2, "T", "C")
    n = np.shape(a)[-1]
    eye = np.eye(n, dtype=out.dtype)
    keep = np.tri(n, dtype=out.dtype) if lower else np.tri(n, dtype=out.dtype).T
    keep = keep - eye if unit_diagonal else keep
    tri = a * keep + eye if unit_diagonal else a * keep
    op = tri.T if transposed else tri
    d_tri = d_a * keep
    d_op = d_tri.T if transposed else d_tri
    x = out[:, None] if np.ndim(out) == 1 else out
    return (-np.reshape(np.linalg.solve(op, d_op @ x), np.shape(out)),
            np.linalg.solve(op, d_b))


@adjoint(linalg.cholesky, "a", name="scipy.linalg.cholesky")
def cholesky(out, d_out, a, lower=False, overwrite_a=False, check_finite=True):
    return cholesky_grad(d_out, out, not lower)


@tangent(linalg.cholesky, "a", name="scipy.linalg.cholesky")
def cholesky_tangent(out, a, lower=False, overwrite_a=False, check_finite=True, *, d_a):
    """As ``np.linalg.cholesky``'s: ``dL = L phi(L^-1 dA L^-T)``, ``dA`` the
    symmetric matrix of the triangle read, for the lower factor."""
    if lower:
        low = out
        d = d_a
    else:
        low = np.swapaxes(out, -1, -2)
        d = np.swapaxes(d_a, -1, -2)
    n = np.shape(out)[-1]
    strict = np.tri(n, k=-1, dtype=out.dtype)
    eye = np.eye(n, dtype=out.dtype)
    d_sym = d * (strict + eye) + np.swapaxes(d * strict, -1, -2)
    half = np.linalg.solve(low, d_sym)
    inner = np.swapaxes(np.linalg.solve(low, np.swapaxes(half, -1, -2)), -1, -2)
    d_low = low @ (inner * (strict + 0.5 * eye))
    if lower:
        return d_low
    return np.swapaxes(d_low, -1, -2)
