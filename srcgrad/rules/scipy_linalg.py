"""Rules of ``scipy.linalg``, both modes: ``inv``, ``det``, ``solve_triangular``,
``cholesky``, ``cho_factor``, ``cho_solve``, ``expm``, ``sqrtm`` and
``solve_sylvester``.

``expm``'s tangent is its Frechet derivative ``L(a, d_a)``, the upper-right
block of the exponential of ``[[a, d_a], [0, a]]``
(:func:`~srcgrad.runtime.expm_frechet`), and its adjoint ``L(a^H, g)``;
that helper's own rules are the same block trick one size up, so generated
tangent code differentiates again (review s36 R4-13: ``expm`` was refused).

``sqrtm``'s output ``s`` satisfies ``s s = a``, so its tangent ``x`` solves
the Sylvester equation ``s x + x s = d_a``
(:func:`~srcgrad.runtime.sqrtm_frechet`); that map is self-adjoint up to
``s -> s^T``, so the adjoint is ``sqrtm_frechet(s^T, g)`` -- the transpose,
not the conjugate transpose: a complex cotangent here is autograd's, for which
a holomorphic map's adjoint is its transpose (review s37 D-15: with ``s^H``
the gradient of the imaginary part of a complex square root was
sign-flipped).  The helper's own
rules (linear in the direction; in ``s``, ``s dx + dx s = -(ds x + x ds)``)
are written with it again, for any order.

``solve_sylvester(a, b, q)``, the ``x`` with ``a x + x b = q``: ``da x + a dx
+ dx b + x db = dq``, so ``dx`` solves the same equation for ``dq - da x - x
db``, and with ``y`` the solution at ``a^T, b^T`` for ``g``, ``q`` gets ``y``,
``a`` gets ``-y x^T``, ``b`` gets ``-x^T y`` (transposes, as for ``sqrtm``: D-16) (:func:`~srcgrad.runtime.sylvester`,
with the same rules).

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
(:func:`srcgrad.runtime.cholesky_grad`).  ``cho_factor(a, lower)`` returns
``(c, lower)`` with the factor in one triangle of ``c`` and ``a``'s own
entries in the other (SciPy leaves them there), so ``c`` is the factor's
triangle plus the identity on the rest; ``cho_solve((c, lower), b)`` reads
only the factor's triangle of ``c``: with ``A = F F^T`` (``F`` lower, or
``U^T U``), ``d_b = A^-1 g`` and ``d_F = -(d_b x^T + x d_b^T) F`` in the
triangle.  ``solve`` takes ``np.linalg.solve``'s cotangents for the entries of ``a`` its
``assume_a`` reads (one triangle mirrored for ``'pos'``, ``'sym'``, ``'her'``).
``inv`` and ``det`` compute what ``np.linalg.inv`` and
``np.linalg.det`` do and take their rules (``overwrite_a`` and
``check_finite`` change nothing; ``inv``'s ``assume_a`` and ``lower``, which
read one triangle only, are refused as unknown parameters).  All are
written with NumPy operations, so that generated tangent code can be
differentiated again.
"""

import numpy as np
from scipy import linalg

from ..runtime import (
    TupleCotangent,
    cholesky_grad,
    cotangent_at,
    det_cofactor,
    det_grad,
    eigenvalues_only,
    eigvalsh_grad,
    expm_frechet,
    getitem_grad,
    in_dtype_of,
    sqrtm_frechet,
    solve_grads,
    sylvester,
    inv_grad,
    zero_tangent,
)
from .registry import adjoint, nondifferentiable, tangent


@adjoint(linalg.inv, "a", name="scipy.linalg.inv")
def inv(out, d_out, a, overwrite_a=False, check_finite=True):
    """As ``np.linalg.inv``'s: ``-out^T g out^T``."""
    return inv_grad(d_out, out)


@tangent(linalg.inv, "a", name="scipy.linalg.inv")
def inv_tangent(out, a, overwrite_a=False, check_finite=True, *, d_a):
    return -(out @ d_a @ out)


@adjoint(linalg.det, "a", name="scipy.linalg.det")
def det(out, d_out, a, overwrite_a=False, check_finite=True):
    """As ``np.linalg.det``'s: ``g det(a) inv(a)^T``, the cofactors at a
    singular matrix; in ``a``'s dtype (SciPy's det of float32 is float64)."""
    return in_dtype_of(det_grad(d_out, out, a), a)


@tangent(linalg.det, "a", name="scipy.linalg.det")
def det_tangent(out, a, overwrite_a=False, check_finite=True, *, d_a):
    return in_dtype_of(np.sum(det_cofactor(a) * d_a, axis=(-2, -1)), out)


@adjoint(linalg.solve, "a", "b", name="scipy.linalg.solve")
def solve(out, d_out, a, b, lower=False, overwrite_a=False, overwrite_b=False,
          check_finite=True, assume_a=None, transposed=False):
    """``scipy.linalg.solve`` (review s37 R5-2: ``solve(K, y, assume_a="pos")`` of GP
    code): ``np.linalg.solve``'s cotangents for the matrix SciPy reads -- all of
    ``a`` (``None``, ``'gen'``, ``'banded'``: a structure SciPy detects from the
    values themselves, so any entry moves the solution), the ``lower`` or upper
    triangle mirrored (``'sym'``, ``'her'``, ``'pos'``: the other triangle's
    entries get the sum of both), the diagonal, the triangle or the band named;
    ``transposed`` solves ``a.T x = b``."""
    n = np.shape(a)[-1]
    eye = np.eye(n, dtype=out.dtype)
    below, band = np.tri(n, dtype=out.dtype), np.tri(n, k=1, dtype=out.dtype)
    sym = assume_a in ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
    keep = (below if lower else below.T) if sym else eye if assume_a == "diagonal" \
        else below.T if assume_a == "upper triangular" else below \
        if assume_a == "lower triangular" else band * band.T \
        if assume_a == "tridiagonal" else np.ones((n, n), dtype=out.dtype)
    part = a * keep
    matrix = part + np.swapaxes(part, -1, -2) * (1 - eye) if sym else part
    op = np.swapaxes(matrix, -1, -2) if transposed else matrix
    d_op, d_b = solve_grads(d_out, out, op, b)
    d_op = np.broadcast_to(d_op, np.shape(op))  # (0.0 where no cotangent reached out)
    d_matrix = np.swapaxes(d_op, -1, -2) if transposed else d_op
    d_a = (d_matrix + np.swapaxes(d_matrix, -1, -2)) * keep - d_matrix * eye if sym \
        else d_matrix * keep
    return d_a, d_b


@tangent(linalg.solve, "a", "b", name="scipy.linalg.solve")
def solve_tangent(out, a, b, lower=False, overwrite_a=False, overwrite_b=False,
                  check_finite=True, assume_a=None, transposed=False, *, d_a, d_b):
    n = np.shape(a)[-1]
    eye = np.eye(n, dtype=out.dtype)
    below, band = np.tri(n, dtype=out.dtype), np.tri(n, k=1, dtype=out.dtype)
    sym = assume_a in ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
    keep = (below if lower else below.T) if sym else eye if assume_a == "diagonal" \
        else below.T if assume_a == "upper triangular" else below \
        if assume_a == "lower triangular" else band * band.T \
        if assume_a == "tridiagonal" else np.ones((n, n), dtype=out.dtype)
    part, d_part = a * keep, d_a * keep
    matrix = part + np.swapaxes(part, -1, -2) * (1 - eye) if sym else part
    d_matrix = d_part + np.swapaxes(d_part, -1, -2) * (1 - eye) if sym else d_part
    op = np.swapaxes(matrix, -1, -2) if transposed else matrix
    d_op = np.swapaxes(d_matrix, -1, -2) if transposed else d_matrix
    x = out[..., None] if np.ndim(b) == 1 else out
    return (-np.reshape(np.linalg.solve(op, d_op @ x), np.shape(out)),
            np.linalg.solve(op, d_b))


nondifferentiable(eigenvalues_only)


@adjoint(linalg.eigh, "a", name="scipy.linalg.eigh")
def eigh(out, d_out, a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False,
         overwrite_b=False, type=1, check_finite=True, subset_by_index=None,  # noqa: A002
         subset_by_value=None, driver=None):
    """``eigh(a, eigvals_only=True)`` (review s37 R5-21): ``np.linalg.eigvalsh``'s
    rule on the triangle read (``lower``); any other call is refused as the
    code runs (:func:`~srcgrad.runtime.eigenvalues_only`)."""
    eigenvalues_only(b, eigvals_only, type, subset_by_index, subset_by_value)
    return eigvalsh_grad(d_out, a, "L" if lower else "U")


@tangent(linalg.eigh, "a", name="scipy.linalg.eigh")
def eigh_tangent(out, a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False,
                 overwrite_b=False, type=1, check_finite=True, subset_by_index=None,  # noqa: A002
                 subset_by_value=None, driver=None, d_a):
    eigenvalues_only(b, eigvals_only, type, subset_by_index, subset_by_value)
    d = d_a if lower else np.conj(np.swapaxes(d_a, -1, -2))
    v = np.linalg.eigh(a, "L" if lower else "U")[1]
    n = np.shape(out)[-1]
    strict = np.tri(n, k=-1, dtype=out.dtype)
    d_sym = (d * (strict + np.eye(n, dtype=out.dtype))
             + np.conj(np.swapaxes(d * strict, -1, -2)))
    return np.real(np.sum(np.conj(v) * (d_sym @ v), axis=-2))


@adjoint(linalg.toeplitz, "c", "r", name="scipy.linalg.toeplitz")
def toeplitz(out, d_out, c, r=None):
    """``T[..., i, j] = v[..., m - 1 - i + j]`` for ``v`` the reversed first column
    then the first row past its first entry (SciPy's own construction; review s37
    R5-21): the cotangent gathered back along each diagonal; with ``r`` left out
    the row is ``c`` itself, which gets both parts.  Real arrays."""
    m, n = np.shape(out)[-2:]
    g = np.broadcast_to(d_out, np.shape(out))
    row = np.asarray(c if r is None else r)
    vals = np.concatenate([np.flip(np.asarray(c), -1), row[..., 1:]], axis=-1)
    d_vals = getitem_grad(g, vals, (Ellipsis, (m - 1) - np.arange(m)[:, None] + np.arange(n)))
    head = np.flip(d_vals[..., :m], -1)
    tail = np.concatenate([np.zeros(np.shape(d_vals)[:-1] + (1,), dtype=d_vals.dtype),
                           d_vals[..., m:]], axis=-1)
    return (head + tail if r is None else head), tail


@tangent(linalg.toeplitz, "c", "r", name="scipy.linalg.toeplitz")
def toeplitz_tangent(out, c, r=None, *, d_c, d_r):
    m, n = np.shape(out)[-2:]
    picked = (Ellipsis, (m - 1) - np.arange(m)[:, None] + np.arange(n))
    t_c = np.zeros(np.shape(c), dtype=out.dtype) + d_c
    batch = np.shape(out)[:-2]
    after = t_c[..., 1:] if r is None else np.zeros(batch + (n - 1,), dtype=out.dtype)
    from_c = np.concatenate([np.flip(t_c, -1), after], axis=-1)[picked]
    t_r = np.zeros(np.shape(c if r is None else r), dtype=out.dtype) + d_r
    from_r = np.concatenate([np.zeros(batch + (m,), dtype=out.dtype), t_r[..., 1:]],
                            axis=-1)[picked]
    return from_c, from_r


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
    # (a scalar 0.0, no cotangent, is broadcast to out's shape: solve takes arrays)
    d_b = np.linalg.solve(op.T, np.broadcast_to(d_out, np.shape(out)))
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


@adjoint(linalg.cho_factor, "a", name="scipy.linalg.cho_factor")
def cho_factor(out, d_out, a, lower=False, overwrite_a=False, check_finite=True):
    """Multi-output: ``out`` is ``(c, lower)``; only ``c`` has a cotangent."""
    c = out[0]
    n = np.shape(a)[-1]
    keep = np.tri(n, dtype=c.dtype) if lower else np.tri(n, dtype=c.dtype).T
    g = np.broadcast_to(cotangent_at(d_out, 0), np.shape(a))
    return cholesky_grad(g * keep, c * keep, not lower) + g * (1 - keep)


@tangent(linalg.cho_factor, "a", name="scipy.linalg.cho_factor")
def cho_factor_tangent(out, a, lower=False, overwrite_a=False, check_finite=True, *, d_a):
    c = out[0]
    n = np.shape(a)[-1]
    strict = np.tri(n, k=-1, dtype=c.dtype)
    eye = np.eye(n, dtype=c.dtype)
    keep = strict + eye if lower else (strict + eye).T
    if lower:
        low = c * keep
        d = d_a
    else:
        low = (c * keep).T
        d = d_a.T
    d_sym = d * (strict + eye) + np.swapaxes(d * strict, -1, -2)
    half = np.linalg.solve(low, d_sym)
    inner = np.swapaxes(np.linalg.solve(low, np.swapaxes(half, -1, -2)), -1, -2)
    d_low = low @ (inner * (strict + 0.5 * eye))
    d_factor = d_low if lower else d_low.T
    return d_factor + d_a * (1 - keep), zero_tangent(out[1])


@adjoint(linalg.cho_solve, "c_and_lower", "b", name="scipy.linalg.cho_solve")
def cho_solve(out, d_out, c_and_lower, b, overwrite_b=False, check_finite=True):
    c = c_and_lower[0]
    lower = c_and_lower[1]
    n = np.shape(c)[-1]
    keep = np.tri(n, dtype=out.dtype) if lower else np.tri(n, dtype=out.dtype).T
    factor = c * keep
    full = factor @ factor.T if lower else factor.T @ factor
    d_b = np.linalg.solve(full, np.broadcast_to(d_out, np.shape(out)))
    x = out[:, None] if np.ndim(out) == 1 else out
    g = d_b[:, None] if np.ndim(out) == 1 else d_b
    d_full = -(g @ x.T + x @ g.T)
    d_c = (d_full @ factor if lower else factor @ d_full) * keep
    return TupleCotangent([d_c, 0.0]), d_b


@tangent(linalg.cho_solve, "c_and_lower", "b", name="scipy.linalg.cho_solve")
def cho_solve_tangent(out, c_and_lower, b, overwrite_b=False, check_finite=True, *,
                      d_c_and_lower, d_b):
    c = c_and_lower[0]
    lower = c_and_lower[1]
    n = np.shape(c)[-1]
    keep = np.tri(n, dtype=out.dtype) if lower else np.tri(n, dtype=out.dtype).T
    factor = c * keep
    full = factor @ factor.T if lower else factor.T @ factor
    d_factor = d_c_and_lower[0] * keep
    d_full = d_factor @ factor.T + factor @ d_factor.T if lower \
        else d_factor.T @ factor + factor.T @ d_factor
    x = out[:, None] if np.ndim(out) == 1 else out
    return (-np.reshape(np.linalg.solve(full, d_full @ x), np.shape(out)),
            np.linalg.solve(full, d_b))


@adjoint(linalg.expm, "A", name="scipy.linalg.expm")
def expm(out, d_out, A):
    """``<g, L(A, dA)> = <L(A^H, g), dA>``."""
    return in_dtype_of(expm_frechet(np.conj(np.swapaxes(A, -1, -2)), d_out), A)


@tangent(linalg.expm, "A", name="scipy.linalg.expm")
def expm_tangent(out, A, d_A):
    return expm_frechet(A, d_A)


@adjoint(expm_frechet, "a", "e", name="expm_frechet")
def expm_frechet_adjoint(out, d_out, a, e):
    """Linear in ``e`` (``expm``'s adjoint again); in ``a``, the upper-right block
    of ``L(M, dM)`` for ``M = [[a, e], [0, a]]``, ``dM = [[da, 0], [0, da]]``,
    whose adjoint is ``K = L(M^H, [[0, g], [0, 0]])``: ``a`` gets ``K``'s two
    diagonal blocks."""
    n = np.shape(a)[-1]
    g = np.broadcast_to(d_out, np.shape(out))
    zero = np.zeros_like(g)
    big = np.concatenate([np.concatenate([a, e], -1),
                          np.concatenate([np.zeros_like(a), a], -1)], -2)
    k = expm_frechet(np.conj(np.swapaxes(big, -1, -2)),
                     np.concatenate([np.concatenate([zero, g], -1),
                                     np.concatenate([zero, zero], -1)], -2))
    return (k[..., :n, :n] + k[..., n:, n:],
            expm_frechet(np.conj(np.swapaxes(a, -1, -2)), g))


@tangent(expm_frechet, "a", "e", name="expm_frechet")
def expm_frechet_tangent(out, a, e, d_a, d_e):
    n = np.shape(a)[-1]
    big = np.concatenate([np.concatenate([a, e], -1),
                          np.concatenate([np.zeros_like(a), a], -1)], -2)
    move = np.concatenate([np.concatenate([d_a, np.zeros_like(d_a)], -1),
                           np.concatenate([np.zeros_like(d_a), d_a], -1)], -2)
    return expm_frechet(big, move)[..., :n, n:], expm_frechet(a, d_e)


@adjoint(linalg.sqrtm, "A", name="scipy.linalg.sqrtm")
def sqrtm(out, d_out, A):
    """``<g, L^-1(dA)> = <L^T^-1(g), dA>`` with ``L(x) = s x + x s``, ``L^T`` the
    same at ``s^T``."""
    return in_dtype_of(sqrtm_frechet(np.swapaxes(out, -1, -2),
                                     np.broadcast_to(d_out, np.shape(out))), A)


@tangent(linalg.sqrtm, "A", name="scipy.linalg.sqrtm")
def sqrtm_tangent(out, A, d_A):
    return sqrtm_frechet(out, d_A)


@adjoint(sqrtm_frechet, "s", "e", name="sqrtm_frechet")
def sqrtm_frechet_adjoint(out, d_out, s, e):
    """``x = L_s^-1(e)``: ``e`` gets ``y = L_{s^T}^-1(g)``; ``s``, through ``dx =
    -L_s^-1(ds x + x ds)``, gets ``-(y x^T + x^T y)``."""
    y = sqrtm_frechet(np.swapaxes(s, -1, -2), np.broadcast_to(d_out, np.shape(out)))
    x_t = np.swapaxes(out, -1, -2)
    return -(y @ x_t + x_t @ y), y


@tangent(sqrtm_frechet, "s", "e", name="sqrtm_frechet")
def sqrtm_frechet_tangent(out, s, e, d_s, d_e):
    return -sqrtm_frechet(s, d_s @ out + out @ d_s), sqrtm_frechet(s, d_e)


@adjoint(linalg.solve_sylvester, "a", "b", "q", name="scipy.linalg.solve_sylvester")
def solve_sylvester(out, d_out, a, b, q):
    y = sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2),
                  np.broadcast_to(d_out, np.shape(out)))
    x_t = np.swapaxes(out, -1, -2)
    return in_dtype_of(-(y @ x_t), a), in_dtype_of(-(x_t @ y), b), in_dtype_of(y, q)


@tangent(linalg.solve_sylvester, "a", "b", "q", name="scipy.linalg.solve_sylvester")
def solve_sylvester_tangent(out, a, b, q, d_a, d_b, d_q):
    return (-sylvester(a, b, d_a @ out), -sylvester(a, b, out @ d_b), sylvester(a, b, d_q))


@adjoint(sylvester, "a", "b", "q", name="sylvester")
def sylvester_adjoint(out, d_out, a, b, q):
    """As ``scipy.linalg.solve_sylvester``'s."""
    y = sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2),
                  np.broadcast_to(d_out, np.shape(out)))
    x_t = np.swapaxes(out, -1, -2)
    return -(y @ x_t), -(x_t @ y), y


@tangent(sylvester, "a", "b", "q", name="sylvester")
def sylvester_tangent(out, a, b, q, d_a, d_b, d_q):
    return -sylvester(a, b, d_a @ out), -sylvester(a, b, out @ d_b), sylvester(a, b, d_q)
