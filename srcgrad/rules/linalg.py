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

Multi-output primitives (``np.linalg.slogdet``, ``eig``, ``eigh``, ``svd``, ``qr``,
``lstsq``) receive ``out`` and ``d_out`` as tuples with one entry per output,
and their tangent is a tuple too.

The factorisations (``cholesky``, ``eigh``, ``eigvalsh``, ``svd``, ``qr``) and
what is built on them (``pinv``, ``lstsq``, ``matrix_power``) have their
adjoints in :mod:`srcgrad.runtime.decompositions`, with the caveats there:
``cholesky`` and ``eigh`` read one triangle, so their cotangent lies in it;
the vectors of repeated eigenvalues or singular values are not unique, and
their terms are dropped; ``pinv`` and ``lstsq`` assume a constant rank.
Their tangents are written here with NumPy operations only, so that
generated tangent code can be differentiated again.
"""

import numpy as np

from ..runtime import (
    cholesky_grad,
    det_cofactor,
    det_cofactor_grad,
    det_grad,
    eig_grad,
    eigh_grad,
    eigvals_grad,
    eigvalsh_grad,
    einsum_grads,
    inv_grad,
    lstsq_grads,
    matmul_grad_a,
    match_complex,
    matmul_grad_b,
    matrix_power_grad,
    missing_tangent,
    outer_grads,
    pinv_grad,
    qr_grad,
    slogdet_grad,
    slogdet_tangent_part,
    solve_grads,
    svd_grad,
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


@linear(np.vdot)
def vdot(out, d_out, a, b):
    """``np.vdot(a, b) = sum(conj(a).ravel() * b.ravel())``: ``b`` gets ``conj(a)``
    (a holomorphic product), ``a`` the conjugate of what ``conj(a)`` gets (as
    ``np.conjugate``'s rule), each in its own shape; the tangent ``vdot(d_a, b)
    + vdot(a, d_b)`` conjugates ``d_a`` as the function does."""
    return (match_complex(np.reshape(np.conjugate(d_out * np.ravel(b)), np.shape(a)), a),
            match_complex(np.reshape(d_out * np.conjugate(np.ravel(a)), np.shape(b)), b))


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
    """``g det(a) inv(a)^T``; at a singular matrix the cofactors (det_grad)."""
    return det_grad(d_out, out, a)


@tangent(np.linalg.det, name="np.linalg.det")
def det_tangent(out, a, d_a):
    """``tr(adj(a) da)``: the cofactors contracted with the direction, singular
    matrices included (``det(a) tr(inv(a) da)`` raised there)."""
    return np.sum(det_cofactor(a) * d_a, axis=(-2, -1))


@adjoint(det_cofactor, name="det_cofactor")
def det_cofactor_adjoint(out, d_out, a):
    """det's tangent differentiated again (hvp): ``C = det(a) inv(a)^T`` varies
    as ``tr(inv da) C - inv^T da^T C``; at an invertible matrix."""
    return det_cofactor_grad(d_out, out, a)


@tangent(det_cofactor, name="det_cofactor")
def det_cofactor_tangent(out, a, d_a):
    inv = np.linalg.inv(a)
    trace = np.trace(inv @ d_a, axis1=-2, axis2=-1)
    return trace[..., None, None] * out - np.swapaxes(inv, -1, -2) @ np.swapaxes(d_a, -1, -2) @ out


@adjoint(np.linalg.slogdet, name="np.linalg.slogdet")
def slogdet(out, d_out, a):
    """Multi-output: ``out`` is ``(sign, logabsdet)`` and ``d_out`` is
    ``(d_sign, d_logabsdet)``; the sign is piecewise constant, so only
    ``d_out[1]`` contributes."""
    return slogdet_grad(d_out, out, a)


@tangent(np.linalg.slogdet, name="np.linalg.slogdet")
def slogdet_tangent(out, a, d_a):
    """``tr(solve(a, d_a))``, inf or nan at a singular matrix, as NumPy divides
    (solve raised LinAlgError there: slogdet_tangent_part)."""
    return zero_tangent(out[0]), slogdet_tangent_part(a, d_a)


@adjoint(slogdet_tangent_part, name="slogdet_tangent_part")
def slogdet_tangent_part_adjoint(out, d_out, a, t):
    """slogdet's tangent differentiated again: ``out = tr(inv(a) t)``; at an
    invertible matrix."""
    inv_t = np.swapaxes(np.linalg.inv(a), -1, -2)
    g = np.asarray(d_out)[..., None, None]
    return -g * (inv_t @ np.swapaxes(t, -1, -2) @ inv_t), g * inv_t


@tangent(slogdet_tangent_part, name="slogdet_tangent_part")
def slogdet_tangent_part_tangent(out, a, t, d_a, d_t):
    return (-np.trace(np.linalg.solve(a, d_a @ np.linalg.solve(a, t)), axis1=-2, axis2=-1),
            np.trace(np.linalg.solve(a, d_t), axis1=-2, axis2=-1))


# -- factorisations -----------------------------------------------------------------
#
# cholesky and eigh read one triangle of their argument (the lower one unless
# ``upper=True`` or ``UPLO="U"``), so their tangents use the symmetric matrix
# that triangle stands for, and their cotangents lie in that triangle (see
# srcgrad.runtime.linalg).  The tangents are written with NumPy operations
# only, so that generated tangent code can be differentiated again; the
# triangles are products with constant masks (``np.tri``).


@adjoint(np.linalg.cholesky, "a", name="np.linalg.cholesky")
def cholesky(out, d_out, a, *, upper=False):
    return cholesky_grad(d_out, out, upper)


@tangent(np.linalg.cholesky, "a", name="np.linalg.cholesky")
def cholesky_tangent(out, a, *, upper=False, d_a):
    """``dL = L phi(L^-1 dA L^-T)``, ``phi`` the lower triangle with its diagonal
    halved, ``dA`` the symmetric matrix of the triangle read.  A complex ``a``
    is Hermitian: ``L^-1 dA L^-H``, ``dA`` Hermitian, and the upper factor
    ``L^H``; the diagonal's imaginary part is not read."""
    if upper:
        low = np.conj(np.swapaxes(out, -1, -2))
        d = np.conj(np.swapaxes(d_a, -1, -2))
    else:
        low = out
        d = d_a
    n = np.shape(out)[-1]
    strict = np.tri(n, k=-1, dtype=out.dtype)
    eye = np.eye(n, dtype=out.dtype)
    d_sym = np.real(d * eye) + d * strict + np.conj(np.swapaxes(d * strict, -1, -2))
    half = np.linalg.solve(low, d_sym)
    inner = np.conj(np.swapaxes(np.linalg.solve(low, np.conj(np.swapaxes(half, -1, -2))),
                                -1, -2))
    d_low = low @ (inner * (strict + 0.5 * eye))
    if upper:
        return np.conj(np.swapaxes(d_low, -1, -2))
    return d_low


@adjoint(np.linalg.eigh, "a", name="np.linalg.eigh")
def eigh(out, d_out, a, UPLO="L"):  # noqa: N803 - numpy's name
    """Multi-output: ``out`` is ``(eigenvalues, eigenvectors)``.  Eigenvectors
    of a repeated eigenvalue are not unique; their part of the cotangent is
    dropped there (right when the loss does not depend on the choice)."""
    return eigh_grad(d_out, out, UPLO)


@tangent(np.linalg.eigh, "a", name="np.linalg.eigh")
def eigh_tangent(out, a, UPLO="L", *, d_a):  # noqa: N803
    """``dw = diag(v^T dA v)``, ``dv = v (F * (v^T dA v))`` with
    ``F_ij = 1 / (w_j - w_i)`` (0 for equal eigenvalues).  A complex Hermitian
    ``a``: ``dw = Re(diag(v^H dA v))`` (the diagonal's imaginary part is not
    read), ``dv = v (F * (v^H dA v))``: each eigenvector is fixed only up to a
    phase, and this is the derivative of a loss that does not depend on it
    (``|v|``, projectors ``v v^H``), as for eig."""
    w = out[0]
    v = out[1]
    if UPLO == "U":  # the lower triangle of the (Hermitian) matrix the upper one stands for
        d = np.conj(np.swapaxes(d_a, -1, -2))
    else:
        d = d_a
    n = np.shape(w)[-1]
    strict = np.tri(n, k=-1, dtype=w.dtype)
    eye = np.eye(n, dtype=w.dtype)
    d_sym = np.real(d * eye) + d * strict + np.conj(np.swapaxes(d * strict, -1, -2))
    p = np.conj(np.swapaxes(v, -1, -2)) @ d_sym @ v
    d_w = np.real(np.sum(p * eye, axis=-1))
    diff = w[..., None, :] - w[..., :, None]
    gaps = np.where(diff == 0, 0, 1 / np.where(diff == 0, 1, diff))
    return d_w, v @ (gaps * p)


@adjoint(np.linalg.eig, "a", name="np.linalg.eig")
def eig(out, d_out, a):
    """Multi-output ``(eigenvalues, eigenvectors)`` of a general matrix.  Each
    eigenvector is fixed only up to a factor of modulus one: the cotangent is
    that of a loss that does not depend on the choice (see eig_grad)."""
    return eig_grad(d_out, out, a)


@tangent(np.linalg.eig, "a", name="np.linalg.eig")
def eig_tangent(out, a, *, d_a):
    """``M = v^-1 dA v``; ``dw = diag(M)``, ``dv = v (F * M)`` with ``F_ij = 1 /
    (w_j - w_i)``, less each column's part along itself that would change its
    length (NumPy's eigenvectors have length one)."""
    w = out[0]
    v = out[1]
    m = np.linalg.solve(v, d_a @ v)
    n = np.shape(w)[-1]
    eye = np.eye(n, dtype=w.dtype)
    diff = w[..., None, :] - w[..., :, None]
    gaps = np.where(diff == 0, 0, 1 / np.where(diff == 0, 1, diff))
    d_v = v @ (gaps * m)
    length = np.real(np.sum(np.conj(v) * d_v, axis=-2))
    return np.sum(m * eye, axis=-1), d_v - v * length[..., None, :]


@adjoint(np.linalg.eigvals, "a", name="np.linalg.eigvals")
def eigvals(out, d_out, a):
    return eigvals_grad(d_out, a)


@tangent(np.linalg.eigvals, "a", name="np.linalg.eigvals")
def eigvals_tangent(out, a, *, d_a):
    """``diag(v^-1 dA v)``, with the eigenvectors ``v`` of ``a``."""
    v = np.linalg.eig(a)[1]
    return np.sum(np.linalg.solve(v, d_a @ v) * np.eye(np.shape(out)[-1], dtype=out.dtype), axis=-1)


@adjoint(np.linalg.eigvalsh, "a", name="np.linalg.eigvalsh")
def eigvalsh(out, d_out, a, UPLO="L"):  # noqa: N803
    return eigvalsh_grad(d_out, a, UPLO)


@tangent(np.linalg.eigvalsh, "a", name="np.linalg.eigvalsh")
def eigvalsh_tangent(out, a, UPLO="L", *, d_a):  # noqa: N803
    """``Re(diag(v^H dA v))``, with the eigenvectors ``v`` of ``a`` (``v^T`` for a
    real ``a``; for a complex one, ``dA`` Hermitian, its diagonal taken real)."""
    if UPLO == "U":  # the lower triangle of the (Hermitian) matrix the upper one stands for
        d = np.conj(np.swapaxes(d_a, -1, -2))
    else:
        d = d_a
    v = np.linalg.eigh(a, UPLO)[1]
    n = np.shape(out)[-1]
    strict = np.tri(n, k=-1, dtype=out.dtype)
    d_sym = (d * (strict + np.eye(n, dtype=out.dtype))
             + np.conj(np.swapaxes(d * strict, -1, -2)))
    return np.real(np.sum(np.conj(v) * (d_sym @ v), axis=-2))


@adjoint(np.linalg.svd, "a", name="np.linalg.svd")
def svd(out, d_out, a, full_matrices=True, compute_uv=True):
    """Multi-output ``(u, s, vh)`` unless ``compute_uv`` is false.  A
    non-square ``a`` needs ``full_matrices=False`` for its singular vectors
    (the extra ones are not unique); singular vectors of repeated singular
    values are not unique either (see eigh)."""
    return svd_grad(d_out, out, a, full_matrices, compute_uv)


@tangent(np.linalg.svd, "a", name="np.linalg.svd")
def svd_tangent(out, a, full_matrices=True, compute_uv=True, *, d_a):
    """``dP = u^T dA v``; ``ds = diag(dP)``, ``du = u (F * (dP S + S dP^T))``,
    ``dv = v (F * (S dP + dP^T S))`` with ``F_ij = 1 / (s_j^2 - s_i^2)``, plus
    the parts outside the span of ``u`` or ``v`` for a non-square ``a``.  The
    full factors of a non-square ``a`` have extra singular vectors, which are
    not unique: only the singular values get a tangent there (from the reduced
    factors, so that a second derivative differentiates those), and the
    vectors' raises MissingRuleError where it is used (unused, as in
    ``svd(a).S``, it costs nothing), as their cotangent does in reverse mode.
    For a complex ``a``, ``ds = Re(diag(u^H dA v))``; its singular vectors have
    no derivative in srcgrad yet."""
    if not compute_uv:
        factors = np.linalg.svd(a, full_matrices=False)
        return np.real(np.sum(np.conj(factors[0])
                              * (d_a @ np.conj(np.swapaxes(factors[2], -1, -2))), axis=-2))
    u = out[0]
    s = out[1]
    vh = out[2]
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    k = np.shape(s)[-1]
    if full_matrices:
        if m != n:
            lost = missing_tangent("np.linalg.svd: the singular vectors of a non-square "
                                   "matrix with full_matrices=True are not unique, so they "
                                   "have no derivative; pass full_matrices=False (the "
                                   "singular values alone have one)")
            reduced = np.linalg.svd(a, full_matrices=False)  # differentiable again
            return (lost, np.real(np.sum(np.conj(reduced[0]) * (
                d_a @ np.conj(np.swapaxes(reduced[2], -1, -2))), axis=-2)), lost)
    if np.iscomplexobj(u):
        # P = u^H dA v; each pair of singular vectors shares one phase, put in du
        vc = np.conj(np.swapaxes(vh, -1, -2))
        uh = np.conj(np.swapaxes(u, -1, -2))
        d_avc = d_a @ vc
        pc = uh @ d_avc
        sc2 = s * s
        diffc = sc2[..., None, :] - sc2[..., :, None]
        gapsc = np.where(diffc == 0, 0, 1 / np.where(diffc == 0, 1, diffc))
        safec = np.where(s == 0, 1, s)
        psc = pc * s[..., None, :]
        spc = s[..., :, None] * pc
        eyec = np.eye(k)
        phase = 1j * np.imag(np.sum(pc * eyec, axis=-1)) / safec
        d_uc = u @ (gapsc * (psc + np.conj(np.swapaxes(psc, -1, -2))) + eyec * phase[..., None, :])
        d_vc = vc @ (gapsc * (spc + np.conj(np.swapaxes(spc, -1, -2))))
        if m > k:
            d_uc = d_uc + (d_avc - u @ pc) / safec[..., None, :]
        if n > k:
            d_ahu = np.conj(np.swapaxes(d_a, -1, -2)) @ u
            d_vc = d_vc + (d_ahu - vc @ (vh @ d_ahu)) / safec[..., None, :]
        return (d_uc, np.real(np.sum(pc * eyec, axis=-1)),
                np.conj(np.swapaxes(d_vc, -1, -2)))
    v = np.swapaxes(vh, -1, -2)
    ut = np.swapaxes(u, -1, -2)
    d_av = d_a @ v
    p = ut @ d_av
    s2 = s * s
    diff = s2[..., None, :] - s2[..., :, None]
    gaps = np.where(diff == 0, 0, 1 / np.where(diff == 0, 1, diff))
    ps = p * s[..., None, :]
    sp = s[..., :, None] * p
    d_u = u @ (gaps * (ps + np.swapaxes(ps, -1, -2)))
    d_v = v @ (gaps * (sp + np.swapaxes(sp, -1, -2)))
    safe = np.where(s == 0, 1, s)
    if m > k:
        d_u = d_u + (d_av - u @ p) / safe[..., None, :]
    if n > k:
        d_atu = np.swapaxes(d_a, -1, -2) @ u
        d_v = d_v + (d_atu - v @ (vh @ d_atu)) / safe[..., None, :]
    return d_u, np.sum(p * np.eye(k, dtype=s.dtype), axis=-1), np.swapaxes(d_v, -1, -2)


if hasattr(np.linalg, "svdvals"):  # NumPy 2
    @adjoint(np.linalg.svdvals, name="np.linalg.svdvals")
    def svdvals(out, d_out, x):
        return svd_grad(d_out, out, x, False, False)

    @tangent(np.linalg.svdvals, name="np.linalg.svdvals")
    def svdvals_tangent(out, x, d_x):
        """``Re(diag(u^H dX v))`` (``u^T dX v`` for a real ``x``)."""
        factors = np.linalg.svd(x, full_matrices=False)
        return np.real(np.sum(np.conj(factors[0])
                              * (d_x @ np.conj(np.swapaxes(factors[2], -1, -2))), axis=-2))


@adjoint(np.linalg.qr, "a", name="np.linalg.qr")
def qr(out, d_out, a, mode="reduced"):
    """The reduced factorisation ``(q, r)``, of a tall, square or wide ``a``."""
    return qr_grad(d_out, out, a, mode)


@tangent(np.linalg.qr, "a", name="np.linalg.qr")
def qr_tangent(out, a, mode="reduced", *, d_a):
    """With ``C = q^T dA r^-1``, ``Omega`` its strictly lower part minus that
    part's transpose: ``dr = (C - Omega) r``, ``dq = q Omega + (I - q q^T) dA r^-1``.
    A wide ``a = [x | y]`` factors as ``q [r1 | q^T y]``.  For a complex ``a``,
    ``q^H`` for ``q^T``, and Omega skew-Hermitian with the imaginary part of
    C's diagonal on its own (r's diagonal is real)."""
    assert mode == "reduced", "np.linalg.qr: only mode='reduced' has a derivative"
    q = out[0]
    r = out[1]
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    if m < n:
        d_x = d_a[..., :, :m]
        r1 = r[..., :, :m]
    else:
        d_x = d_a
        r1 = r
    r1t = np.swapaxes(r1, -1, -2)
    if np.iscomplexobj(q):
        # q^H, and Omega = q^H dq skew-Hermitian: its diagonal is the imaginary part
        # of C's (r's diagonal stays real, so the real part is dr's)
        qt = np.conj(np.swapaxes(q, -1, -2))
        c = np.swapaxes(np.linalg.solve(r1t, np.swapaxes(qt @ d_x, -1, -2)), -1, -2)
        k = np.shape(r1)[-1]
        lower = c * np.tri(k, k=-1)
        omega = lower - np.conj(np.swapaxes(lower, -1, -2)) + 1j * np.imag(c) * np.eye(k)
    else:
        qt = np.swapaxes(q, -1, -2)
        c = np.swapaxes(np.linalg.solve(r1t, np.swapaxes(qt @ d_x, -1, -2)), -1, -2)
        lower = c * np.tri(np.shape(r1)[-1], k=-1, dtype=r.dtype)
        omega = lower - np.swapaxes(lower, -1, -2)
    d_r = (c - omega) @ r1
    d_q = q @ omega + np.swapaxes(
        np.linalg.solve(r1t, np.swapaxes(d_x - q @ (qt @ d_x), -1, -2)), -1, -2)
    if m < n:
        d_r = np.concatenate([d_r, np.conj(np.swapaxes(d_q, -1, -2)) @ a[..., :, m:]
                              + qt @ d_a[..., :, m:]], axis=-1)
    return d_q, d_r


@adjoint(np.linalg.pinv, "a", name="np.linalg.pinv")
def pinv(out, d_out, a, rcond=None):
    """Assumes the rank is constant near ``a`` (full rank, or a gap below
    ``rcond`` that the change does not cross)."""
    return pinv_grad(d_out, out, a)


@tangent(np.linalg.pinv, "a", name="np.linalg.pinv")
def pinv_tangent(out, a, rcond=None, *, d_a):
    """``-p dA p + p p^H dA^H (I - a p) + (I - p a) dA^H p^H p`` (``^H`` the
    conjugate transpose, ``^T`` for a real ``a``)."""
    pt = np.conj(np.swapaxes(out, -1, -2))
    d_at = np.conj(np.swapaxes(d_a, -1, -2))
    return (-(out @ d_a @ out) + (out @ pt) @ (d_at - d_at @ (a @ out))
            + (d_at - (out @ a) @ d_at) @ (pt @ out))


@adjoint(np.linalg.lstsq, "a", "b", name="np.linalg.lstsq")
def lstsq(out, d_out, a, b, rcond=None):
    """Multi-output ``(x, residuals, rank, s)``: ``x = pinv(a) b`` (of constant
    rank near ``a``), the residuals where NumPy returns them, the singular
    values of ``a``; the rank has no derivative."""
    return lstsq_grads(d_out, out, a, b, rcond)


@tangent(np.linalg.lstsq, "a", "b", name="np.linalg.lstsq")
def lstsq_tangent(out, a, b, rcond=None, *, d_a, d_b):
    """``dx = d(pinv(a)) b + pinv(a) db``; ``d|r|^2 = 2 r^T (db - dA x)`` (the
    term ``a dx`` is orthogonal to ``r``); ``ds = diag(u^T dA v)``."""
    x = out[0]
    res = out[1]
    p = np.linalg.pinv(a)
    pt = np.conj(np.swapaxes(p, -1, -2))
    d_at = np.conj(np.swapaxes(d_a, -1, -2))
    d_p = -(p @ d_a @ p) + (p @ pt) @ (d_at - d_at @ (a @ p)) + (d_at - (p @ a) @ d_at) @ (pt @ p)
    factors = np.linalg.svd(a, full_matrices=False)
    d_s = np.real(np.sum(np.conj(factors[0])
                         * (d_a @ np.conj(np.swapaxes(factors[2], -1, -2))), axis=-2))
    if np.size(res) == 0:
        d_res_a = np.zeros_like(res)
        d_res_b = np.zeros_like(res)
    else:
        r = b - a @ x
        d_res_a = np.reshape(-2 * np.real(np.sum(np.conj(r) * (d_a @ x), axis=0)),
                             np.shape(res))
        d_res_b = np.reshape(2 * np.real(np.sum(np.conj(r) * d_b, axis=0)), np.shape(res))
    return ((d_p @ b, d_res_a, zero_tangent(out[2]), d_s),
            (p @ d_b, d_res_b, zero_tangent(out[2]), zero_tangent(out[3])))


@adjoint(np.linalg.matrix_power, "a", name="np.linalg.matrix_power")
def matrix_power(out, d_out, a, n):
    return matrix_power_grad(d_out, a, n)


@tangent(np.linalg.matrix_power, "a", name="np.linalg.matrix_power")
def matrix_power_tangent(out, a, n, d_a):
    """The sum over ``k < |n|`` of ``b^k db b^(|n|-1-k)``, ``b`` being ``a`` or,
    for ``n < 0``, ``inv(a)``."""
    if n == 0:
        return np.zeros_like(out)
    if n < 0:
        base = np.linalg.inv(a)
        d_base = -(base @ d_a @ base)
    else:
        base = a
        d_base = d_a
    total = d_base @ np.linalg.matrix_power(base, abs(n) - 1)
    for k in range(1, abs(n)):
        total = total + (np.linalg.matrix_power(base, k) @ d_base
                         @ np.linalg.matrix_power(base, abs(n) - 1 - k))
    return total
