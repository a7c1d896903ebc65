"""Adjoints of the matrix factorisations and the functions built on them:
``cholesky``, ``eigh``/``eigvalsh``, ``eig``/``eigvals``, ``svd``, ``qr``, ``pinv``, ``lstsq``,
``matrix_power``.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.  Each helper takes the
cotangent of the result (a tuple, one part per output, for a factorisation
with several), the result and the operands, and returns the operands'
cotangents; every one works on stacks of matrices where NumPy does.

``np.linalg.cholesky`` and ``np.linalg.eigh`` read one triangle of their
argument (the lower one by default), so their cotangent lies in that
triangle: with S the symmetric cotangent of the symmetric matrix the
triangle stands for, an off-diagonal element of the triangle gets
``S_ij + S_ji``, a diagonal one ``S_ii``, the other triangle 0.  For a
symmetric matrix built from parameters this gives the parameters the
gradients autograd and JAX give (they return the symmetric S itself).

    >>> import numpy as np
    >>> a = np.array([[4.0, 0.0], [2.0, 5.0]])
    >>> cholesky_grad(np.eye(2), np.linalg.cholesky(a))
    array([[ 0.3125,  0.    ],
           [-0.25  ,  0.25  ]])
"""

from __future__ import annotations

import numpy as np

from .errors import error_at
from .linalg import inv_grad
from .namespaces import as_array
from .structures import cotangent_at, no_cotangent


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _fold(s, lower=True):
    """The cotangent of a matrix of which only one triangle is read, from the
    symmetric cotangent ``s`` of the matrix that triangle stands for.  For a
    complex ``s`` that matrix is Hermitian: the other triangle holds the
    conjugates, so it adds conjugated, and the diagonal's imaginary part is
    not read (LAPACK takes it as real), so it gets none."""
    n = s.shape[-1]
    strict = np.tri(n, k=-1, dtype=bool)
    if not lower:
        strict = strict.T
    if np.iscomplexobj(s):
        return np.where(strict, s + np.conj(_mT(s)),
                        np.where(np.eye(n, dtype=bool), np.real(s), 0))
    return np.where(strict, s + _mT(s), np.where(np.eye(n, dtype=bool), s, 0))


def cholesky_grad(g, out, upper=False):
    """Cotangent of ``a`` in ``out = np.linalg.cholesky(a, upper=upper)``.

    With ``L`` the lower factor and ``phi`` the lower triangle with its diagonal
    halved, the symmetric cotangent is ``L^-T phi(L^T g) L^-1``, symmetrised
    (Murray 2016, "Differentiation of the Cholesky decomposition").  For a
    complex Hermitian ``a`` (``dL = L phi(L^-1 dA L^-H)``), in the convention of
    every complex rule here: ``L^-T phi(L^T g) conj(L)^-1``, folded onto the
    triangle read as a Hermitian matrix's (see _fold).
    """
    if no_cotangent(g):
        return 0.0
    if np.iscomplexobj(out):
        low = np.conj(_mT(out)) if upper else out
        g = np.conj(_mT(g)) if upper else g
        n = low.shape[-1]
        phi = np.tri(n, k=-1) + 0.5 * np.eye(n)
        p = (_mT(low) @ g) * phi
        s = _mT(np.linalg.solve(np.conj(_mT(low)), _mT(np.linalg.solve(_mT(low), p))))
        return _fold(s, lower=not upper)
    low = _mT(out) if upper else out
    g = _mT(g) if upper else g
    n = low.shape[-1]
    phi = np.tri(n, k=-1, dtype=low.dtype) + 0.5 * np.eye(n, dtype=low.dtype)
    p = (_mT(low) @ g) * phi
    s = _mT(np.linalg.solve(_mT(low), _mT(np.linalg.solve(_mT(low), p))))
    return _fold(0.5 * (s + _mT(s)), lower=not upper)


def _gaps(w):
    """``1 / (w_j - w_i)`` off the diagonal, 0 on it and where two values are
    equal (a degenerate pair: see eigh_grad)."""
    diff = w[..., None, :] - w[..., :, None]
    return np.where(diff == 0, 0, 1 / np.where(diff == 0, 1, diff)).astype(diff.dtype)


def _spectral_inner(w, v, g, adjust):
    """The matrix between ``v`` and ``v^T`` in the eigendecomposition rules:
    ``diag(g_w) + F * adjust(v^T g_v)``, ``F`` the inverse eigenvalue gaps.

    eigh and eig differ only in ``adjust`` (eig keeps each eigenvector of unit
    length); a cotangent that is absent on either output adds nothing.
    """
    g_w, g_v = cotangent_at(g, 0), cotangent_at(g, 1)
    inner = 0
    if not no_cotangent(g_w):
        inner = inner + np.eye(w.shape[-1], dtype=w.dtype) * g_w[..., None, :]
    if not no_cotangent(g_v):
        inner = inner + _gaps(w) * adjust(_mT(v) @ g_v)
    return inner


def eigh_grad(g, out, UPLO="L"):  # noqa: N803 - numpy's name
    """Cotangent of ``a`` in ``w, v = np.linalg.eigh(a, UPLO)``:
    ``v (diag(g_w) + F * (v^T g_v)) v^T`` with ``F_ij = 1 / (w_j - w_i)``,
    symmetrised and folded onto the triangle ``UPLO`` names.

    Eigenvectors of a repeated eigenvalue are not unique: ``F`` is set to 0
    for equal eigenvalues, which is right when the loss does not depend on
    the choice of basis within the degenerate eigenspace (functions of the
    eigenvalues, of projectors), and meaningless otherwise.
    """
    if no_cotangent(g):
        return 0.0
    w, v = out
    if np.iscomplexobj(v):
        # dw = Re(diag(P)), dv = v (F * P) with P = v^H dA v (a loss that does not
        # depend on each eigenvector's phase): the cotangent of the Hermitian
        # matrix is conj(v) (diag(Re g_w) + F * (v^T g_v)) v^T, folded
        g_w, g_v = cotangent_at(g, 0), cotangent_at(g, 1)
        inner = 0
        if not no_cotangent(g_w):
            inner = inner + np.eye(w.shape[-1]) * np.real(g_w)[..., None, :]
        if not no_cotangent(g_v):
            inner = inner + _gaps(w) * (_mT(v) @ g_v)
        if no_cotangent(inner):
            return 0.0
        return _fold(np.conj(v) @ inner @ _mT(v), lower=UPLO.upper() == "L")
    inner = _spectral_inner(w, v, g, lambda vt_g: vt_g)
    if no_cotangent(inner):
        return 0.0
    s = v @ inner @ _mT(v)
    return _fold(0.5 * (s + _mT(s)), lower=UPLO.upper() == "L")


def eig_grad(g, out, a):
    """Cotangent of ``a`` in ``w, v = np.linalg.eig(a)`` (a general matrix).

    With ``M = v^-1 dA v`` the tangents are ``dw = diag(M)`` and ``dv = v (F *
    M) - v diag(c)``, ``F_ij = 1 / (w_j - w_i)`` (0 on the diagonal), where
    ``c_k = Re(v_k^H (v (F * M))_k)`` keeps each eigenvector of unit length,
    as NumPy returns them.  Transposed (holomorphic convention, as for every
    complex rule here): ``v^-T (diag(g_w) + F * (v^T g_v')) v^T`` with ``g_v' =
    g_v - conj(v) diag(Re(diag(v^T g_v)))``; its real part for a real ``a``.

    Each eigenvector is fixed only up to a factor of modulus one (a sign for a
    real one): the result is the gradient of a loss that does not depend on
    that choice, as a loss of the eigenvalues, of ``|v|``, or of projectors
    does.  Equal eigenvalues get ``F = 0`` (see eigh_grad).
    """
    if no_cotangent(g):
        return 0.0
    w, v = out

    def unit_length(vt_g):
        length = np.real(np.diagonal(vt_g, axis1=-2, axis2=-1))
        return vt_g - (_mT(v) @ np.conj(v)) * length[..., None, :]

    inner = _spectral_inner(w, v, g, unit_length)
    if no_cotangent(inner):
        return 0.0
    d_a = np.linalg.solve(_mT(v), inner @ _mT(v))
    return d_a if np.iscomplexobj(a) else np.real(d_a)


def eigvals_grad(g, a):
    """Cotangent of ``a`` in ``np.linalg.eigvals(a)``: ``v^-T diag(g) v^T``,
    with the eigenvectors ``v`` of ``a`` (its real part for a real ``a``)."""
    if no_cotangent(g):
        return 0.0
    _, v = np.linalg.eig(a)
    d_a = np.linalg.solve(_mT(v), g[..., :, None] * _mT(v))
    return d_a if np.iscomplexobj(a) else np.real(d_a)


def eigvalsh_grad(g, a, UPLO="L"):  # noqa: N803
    """Cotangent of ``a`` in ``np.linalg.eigvalsh(a, UPLO)``: ``v diag(g) v^T``,
    folded onto the triangle read.  For a complex Hermitian ``a``, ``dw =
    Re(diag(v^H dA v))``, so (in the convention of every complex rule here, the
    cotangent ``dL/dRe - i dL/dIm``) the cotangent is ``conj(v diag(g) v^H)``."""
    if no_cotangent(g):
        return 0.0
    _, v = np.linalg.eigh(a, UPLO)
    if np.iscomplexobj(v):
        s = np.conj((v * np.real(g)[..., None, :]) @ np.conj(_mT(v)))
        return _fold(s, lower=UPLO.upper() == "L")
    s = (v * g[..., None, :]) @ _mT(v)
    return _fold(s, lower=UPLO.upper() == "L")


def svd_grad(g, out, a, full_matrices=True, compute_uv=True, *, where=None):
    """Cotangent of ``a`` in ``np.linalg.svd(a, full_matrices, compute_uv)``.

    ``out`` is ``(u, s, vh)`` (or ``s`` alone when ``compute_uv`` is false);
    with ``F_ij = 1 / (s_j^2 - s_i^2)`` (0 on the diagonal and for equal
    singular values), ``P = diag(g_s) + (J + J^T) S + S (K + K^T)`` where
    ``J = F * (u^T g_u)`` and ``K = F * (v^T g_v)``, the cotangent is
    ``u P v^T`` plus, for a non-square ``a``, the parts of ``g_u`` and ``g_v``
    outside the span of ``u`` and ``v``: ``(I - u u^T) g_u S^-1 v^T`` and
    ``u S^-1 g_v^T (I - v v^T)``.  Singular vectors of a repeated (or zero)
    singular value are not unique, as for eigh.  The extra singular vectors of
    a non-square ``a``'s full factors are not unique at all: a cotangent of the
    vectors raises there (at ``where``, the user's call), as their tangent does
    in forward mode; one of the singular values alone is the reduced
    factorisation's.
    """
    if no_cotangent(g):
        return 0.0
    m, n = np.shape(a)[-2:]
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        if np.iscomplexobj(u):
            return np.conj((u * np.real(g)[..., None, :]) @ vh)
        return (u * g[..., None, :]) @ vh  # ds = Re(diag(u^H dA v))
    u, s, vh = out
    g_u, g_s, g_vh = cotangent_at(g, 0), cotangent_at(g, 1), cotangent_at(g, 2)
    if np.iscomplexobj(u) and (no_cotangent(g_u) and no_cotangent(g_vh)):
        if no_cotangent(g_s):  # the singular values alone, as for compute_uv=False
            return np.zeros_like(a, dtype=u.dtype)
        k = s.shape[-1]
        return np.conj((u[..., :, :k] * np.real(g_s)[..., None, :]) @ vh[..., :k, :])
    if full_matrices and m != n:  # the singular values alone: the reduced factors'
        if not (no_cotangent(g_u) and no_cotangent(g_vh)):
            raise error_at("MissingRuleError", "np.linalg.svd: the singular vectors of a "
                           "non-square matrix with full_matrices=True are not unique, so "
                           "they have no derivative; pass full_matrices=False (the "
                           "singular values alone have one)", where)
        k = s.shape[-1]
        u, vh = u[..., :, :k], vh[..., :k, :]
    if np.iscomplexobj(u):
        return _svd_complex_grad(g_u, g_s, g_vh, u, s, vh, m, n)
    v = _mT(vh)
    k = s.shape[-1]
    p = 0
    if not no_cotangent(g_s):
        p = p + np.eye(k, dtype=s.dtype) * g_s[..., None, :]
    f = _gaps(s * s)
    safe = np.where(s == 0, 1, s)
    extra = 0
    if not no_cotangent(g_u):
        j = f * (_mT(u) @ g_u)
        p = p + (j + _mT(j)) * s[..., None, :]
        if m > k:
            extra = extra + ((g_u - u @ (_mT(u) @ g_u)) / safe[..., None, :]) @ vh
    if not no_cotangent(g_vh):
        g_v = _mT(g_vh)
        kk = f * (_mT(v) @ g_v)
        p = p + s[..., :, None] * (kk + _mT(kk))
        if n > k:
            extra = extra + (u / safe[..., None, :]) @ (_mT(g_v) - (_mT(g_v) @ v) @ vh)
    if np.ndim(p) == 0:  # no part had a cotangent (a loop's pass that reads none)
        return np.zeros_like(a, dtype=np.result_type(a, s)) + extra
    return u @ p @ vh + extra


def _svd_complex_grad(g_u, g_s, g_vh, u, s, vh, m, n):
    """svd_grad for a complex ``a`` (reduced factors): the adjoint of ``ds =
    Re(diag(P))``, ``du = u (F * (P S + S P^H) + i Im(diag(P)) / S) + (I - u u^H)
    dA v S^-1``, ``dv = v (F * (S P + P^H S)) + (I - v v^H) dA^H u S^-1`` with ``P =
    u^H dA v``: each pair of singular vectors is fixed only up to one phase,
    and this is the derivative of a loss that does not depend on it."""
    k = s.shape[-1]
    f = _gaps(s * s)
    safe = np.where(s == 0, 1, s)
    g_p = 0
    extra = 0
    if not no_cotangent(g_s):
        g_p = g_p + np.eye(k) * np.real(g_s)[..., None, :]
    if not no_cotangent(g_u):
        a_u = _mT(u) @ g_u
        kk = f * a_u
        g_p = g_p + (kk + np.conj(_mT(kk))) * s[..., None, :]
        g_p = g_p + np.eye(k) * (1j * np.imag(np.diagonal(a_u, axis1=-2, axis2=-1))
                                 / safe)[..., None, :]
        if m > k:
            extra = extra + ((g_u - np.conj(u) @ (_mT(u) @ g_u)) / safe[..., None, :]) \
                @ np.conj(vh)
    if not no_cotangent(g_vh):
        g_v = np.conj(_mT(g_vh))
        v = np.conj(_mT(vh))
        mm = f * (_mT(v) @ g_v)
        g_p = g_p + s[..., :, None] * (mm + np.conj(_mT(mm)))
        if n > k:
            extra = extra + np.conj((u / safe[..., None, :])
                                    @ (_mT(g_v) - (_mT(g_v) @ v) @ vh))
    if np.ndim(g_p) == 0:
        return np.zeros((*u.shape[:-1], vh.shape[-1]), dtype=u.dtype) + extra
    return np.conj(u @ np.conj(g_p) @ vh) + extra


def qr_grad(g, out, a, mode="reduced"):
    """Cotangent of ``a`` in ``q, r = np.linalg.qr(a)`` (the reduced
    factorisation).  For ``m >= n``: ``(g_q + q copyltu(M)) r^-T`` with
    ``M = r g_r^T - g_q^T q`` and ``copyltu`` the lower triangle mirrored onto
    the upper one (Walter and Lehmann 2018; Liao et al. 2019).  A wide ``a =
    [x | y]`` factors as ``q [r1 | q^T y]``: ``y`` gets ``q g_r2`` and ``x`` the
    square rule with ``g_q + y g_r2^T``.
    """
    if mode != "reduced":
        raise error_at("MissingRuleError", f"np.linalg.qr: mode={mode!r} has no adjoint; "
                       f"only mode='reduced' has")
    if no_cotangent(g):
        return 0.0
    q, r = out
    g_q, g_r = cotangent_at(g, 0), cotangent_at(g, 1)
    g_q = np.zeros_like(q) if no_cotangent(g_q) else g_q
    g_r = np.zeros_like(r) if no_cotangent(g_r) else g_r
    m, n = np.shape(a)[-2:]
    if np.iscomplexobj(q):
        if m < n:
            y = a[..., :, m:]
            g_q = g_q + np.conj(y @ _mT(g_r[..., :, m:]))
            g_x = _qr_complex_square_grad(g_q, g_r[..., :, :m], q, r[..., :, :m])
            return np.concatenate([g_x, np.conj(q) @ g_r[..., :, m:]], axis=-1)
        return _qr_complex_square_grad(g_q, g_r, q, r)
    if m < n:
        y = a[..., :, m:]
        g_q = g_q + y @ _mT(g_r[..., :, m:])
        g_x = _qr_square_grad(g_q, g_r[..., :, :m], q, r[..., :, :m])
        return np.concatenate([g_x, q @ g_r[..., :, m:]], axis=-1)
    return _qr_square_grad(g_q, g_r, q, r)


def _qr_complex_square_grad(g_q, g_r, q, r):
    """The square rule for a complex ``a`` (``r``'s diagonal real): the adjoint,
    in the convention of every complex rule here, of ``dr = (C - Omega) r``, ``dq
    = q Omega + (I - q q^H) dA r^-1`` with ``C = q^H dA r^-1`` and ``Omega`` the
    skew-Hermitian ``tril(C, -1) - tril(C, -1)^H + i Im(diag(C))``."""
    k = r.shape[-1]
    g_c = g_r @ _mT(r)
    g_omega = _mT(q) @ g_q - g_c
    skew = (g_omega - np.conj(_mT(g_omega))) * np.tri(k, k=-1)
    g_c = g_c + skew + 1j * np.imag(g_omega) * np.eye(k)
    b = g_q + np.conj(q) @ (g_c - _mT(q) @ g_q)
    return _mT(np.linalg.solve(r, _mT(b)))


def _qr_square_grad(g_q, g_r, q, r):
    k = r.shape[-1]
    m = r @ _mT(g_r) - _mT(g_q) @ q
    low = np.tri(k, dtype=r.dtype)
    copyltu = m * low + _mT(m * np.tri(k, k=-1, dtype=r.dtype))
    b = g_q + q @ copyltu
    return _mT(np.linalg.solve(r, _mT(b)))


def pinv_grad(g, out, a):
    """Cotangent of ``a`` in ``p = np.linalg.pinv(a)`` (of constant rank near
    ``a``): ``-p^T g p^T + (I - a p) g^T p p^T + p^T p g^T (I - p a)``."""
    if no_cotangent(g):
        return 0.0
    p, pt, gt = out, _mT(out), _mT(g)
    ap = a @ p
    pa = p @ a
    if np.iscomplexobj(p):  # the last two terms hold dA^H: their cotangents conjugate
        ph = np.conj(pt)
        return (-(pt @ g @ pt) + np.conj((gt - ap @ gt) @ (p @ ph))
                + np.conj((ph @ p) @ (gt - gt @ pa)))
    return (-(pt @ g @ pt) + (gt - ap @ gt) @ (p @ pt)
            + (pt @ p) @ (gt - gt @ pa))


def lstsq_grads(g, out, a, b, rcond=None):
    """Cotangents of ``a`` and ``b`` in ``x, residuals, rank, s =
    np.linalg.lstsq(a, b, rcond)``: ``x = pinv(a) b`` (``a`` of constant rank
    near the point), the residuals ``|b - a x|^2`` (where NumPy returns them)
    and the singular values of ``a``."""
    if no_cotangent(g):
        return 0.0, 0.0
    x, residuals = out[0], out[1]
    g_x, g_res, g_s = cotangent_at(g, 0), cotangent_at(g, 1), cotangent_at(g, 3)
    vector = np.ndim(b) == 1
    x2 = x[:, None] if vector else x
    b2 = as_array(b)[:, None] if vector else as_array(b)
    g_a, g_b = 0, 0
    if not no_cotangent(g_x):
        g_x2 = g_x[:, None] if vector else g_x
        p = np.linalg.pinv(a)
        g_a = g_a + pinv_grad(g_x2 @ _mT(b2), p, a)
        g_b = g_b + _mT(p) @ g_x2
    if not no_cotangent(g_res) and np.size(residuals):
        r = np.conj(b2 - a @ x2)  # |r|^2 changes by 2 Re(conj(r) dr)
        g_a = g_a - 2 * (r * np.real(g_res)) @ _mT(x2)
        g_b = g_b + 2 * r * np.real(g_res)
    if not no_cotangent(g_s):
        g_a = g_a + svd_grad(g_s, None, a, False, False)
    g_a = np.zeros_like(np.asarray(a, dtype=np.result_type(x))) if no_cotangent(g_a) else g_a
    g_b = np.zeros_like(b2, dtype=np.result_type(x)) if no_cotangent(g_b) else g_b
    return g_a, (g_b[:, 0] if vector else g_b)


def matrix_power_grad(g, a, n):
    """Cotangent of ``a`` in ``np.linalg.matrix_power(a, n)``: the sum over
    ``k < n`` of ``(a^T)^k g (a^T)^(n-1-k)``; for ``n < 0``, through ``inv(a)``."""
    if no_cotangent(g) or n == 0:
        return np.zeros_like(a) if n == 0 else 0.0
    base = np.linalg.inv(a) if n < 0 else a
    bt = _mT(base)
    powers = [np.broadcast_to(np.eye(a.shape[-1], dtype=base.dtype), base.shape)]
    for _ in range(abs(n) - 1):
        powers.append(powers[-1] @ bt)
    total = sum(powers[k] @ g @ powers[abs(n) - 1 - k] for k in range(abs(n)))
    return inv_grad(total, base) if n < 0 else total


def matrix_norm_grad(g, out, x, ord, axis=None, keepdims=False):  # noqa: A002 - numpy's name
    """Cotangent of ``x`` in the matrix norm ``np.linalg.norm(x, ord, axis)``
    (``axis`` None for a 2-D ``x``, else the two axes of the matrices) for
    ``ord`` 2, -2 and ``'nuc'`` (through the singular vectors: ``u_1 v_1^T``,
    ``u_k v_k^T``, ``u v^T``), 1 and -1 (the extreme column sums of ``|x|``) and
    inf and -inf (the extreme row sums); tied extreme sums share ``g``."""
    if no_cotangent(g):
        return 0.0
    x = as_array(x)
    rows, cols = (0, 1) if axis is None else (axis[0] % x.ndim, axis[1] % x.ndim)
    xm = np.moveaxis(x, (rows, cols), (-2, -1))
    if keepdims:
        g = np.squeeze(g, (rows, cols))
        out = np.squeeze(out, (rows, cols))
    g = as_array(g)[..., None, None]
    if ord in (2, -2, "nuc"):
        u, _, vh = np.linalg.svd(xm, full_matrices=False)
        if np.iscomplexobj(u):
            g = np.real(g)
        if ord == "nuc":
            gm = g * (u @ vh)
        else:
            i = 0 if ord == 2 else -1
            gm = g * (u[..., :, i, None] * vh[..., i, None, :])
        if np.iscomplexobj(gm):  # d s = Re(u^H dX v): conjugated (see svd_grad)
            gm = np.conj(gm)
    elif ord in (1, -1, np.inf, -np.inf):
        over = -2 if ord in (1, -1) else -1
        sums = np.sum(np.abs(xm), axis=over, keepdims=True)
        hit = sums == np.expand_dims(out, (-2, -1))
        gm = g * np.sign(xm) * hit / np.sum(hit, axis=(-2, -1), keepdims=True).astype(xm.dtype)
    else:
        raise error_at("MissingRuleError", f"np.linalg.norm: the matrix norm ord={ord!r} has "
                       f"no adjoint")
    return np.moveaxis(gm, (-2, -1), (rows, cols))
