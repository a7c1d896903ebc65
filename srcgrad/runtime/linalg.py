"""Adjoints of linear algebra: products (``@``, ``tensordot``, ``einsum``,
``outer``, ``kron``, ``cross``), ``inv`` and ``solve``.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.  Each helper takes the
cotangent of the result and the operands and returns an operand's cotangent,
with NumPy's promotions of 1-D operands and broadcasting of batch axes undone.

    >>> import numpy as np
    >>> a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    >>> matmul_grad_a(np.ones((2, 2)), a, b)
    array([[2., 2., 2.],
           [2., 2., 2.]])
"""

from __future__ import annotations

import numpy as np

from .elementwise import unbroadcast
from .errors import error_at
from .namespaces import as_array
from .structures import ListCotangent, cotangent_at, no_cotangent


def _matmul_as_2d(g, a, b):
    """Promote 1-D matmul operands (and the cotangent) to matrices."""
    if not (type(a) is type(b) is type(g) is np.ndarray):  # a number, list or Dask array
        a, b, g = as_array(a), as_array(b), as_array(g)
    if b.ndim == 1:
        b, g = b[:, None], g[..., None]
    if a.ndim == 1:
        a, g = a[None, :], g[..., None, :]
    return a, b, g


def sparse(x) -> bool:
    """Whether ``x`` is a SciPy sparse matrix or array: an operator of its own
    ``@`` (a graph Laplacian, a finite-difference stencil), which NumPy would
    make a 0-d object array (review s37 R5-20: ``x @ (L @ x)`` raised a raw
    AxisError from ``np.swapaxes``).  Read from its class's module, so that
    SciPy is not imported here.

        >>> sparse(np.eye(2)), sparse(2.0)
        (False, False)
    """
    return (getattr(type(x), "__module__", None) or "").startswith("scipy.sparse")


def _sparse_grad(g, a, b, of_a):
    """The cotangent of the dense operand of ``a @ b`` where the other is a
    (constant) SciPy sparse matrix: ``g @ b.T`` or ``a.T @ g``, written with
    the sparse operand on the left, whose ``@`` makes a dense NumPy array."""
    if of_a:  # a dense (a vector or a matrix), b sparse
        out = b @ g if np.ndim(a) == 1 else (b @ np.swapaxes(g, -1, -2)).T
    else:
        out = a.T @ g
    return np.asarray(out)


def matmul_grad_a(g, a, b):
    """Cotangent of ``a`` in ``a @ b`` (1-D, 2-D or batched, broadcast operands)."""
    if type(g) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray \
            and g.ndim == 2 and a.ndim == 2 and b.ndim == 2:
        return g @ b.T  # two matrices, the common case: nothing to promote or sum
    if type(a) is np.ndarray and type(b) is np.ndarray:
        if a.ndim == 1 and b.ndim == 1:  # two vectors (a dot product), without np.ndim calls
            return g * b
    elif sparse(b) and not sparse(a):  # L a SciPy operator: x @ L
        return 0.0 if no_cotangent(g) else _sparse_grad(g, a, b, True)
    elif np.ndim(a) == 1 and np.ndim(b) == 1:
        return g * b
    if no_cotangent(g):  # no cotangent reached the product
        return 0.0
    a2, b2, g2 = _matmul_as_2d(g, a, b)
    ga = g2 @ np.swapaxes(b2, -1, -2)
    return unbroadcast(ga[..., 0, :] if np.ndim(a) == 1 else ga, a)


def matmul_grad_b(g, a, b):
    """Cotangent of ``b`` in ``a @ b`` (1-D, 2-D or batched, broadcast operands)."""
    if type(g) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray \
            and g.ndim == 2 and a.ndim == 2 and b.ndim == 2:
        return a.T @ g
    if type(a) is np.ndarray and type(b) is np.ndarray:
        if a.ndim == 1 and b.ndim == 1:  # two vectors (a dot product), without np.ndim calls
            return g * a
    elif sparse(a) and not sparse(b):  # L a SciPy operator: L @ x
        return 0.0 if no_cotangent(g) else _sparse_grad(g, a, b, False)
    elif np.ndim(a) == 1 and np.ndim(b) == 1:
        return g * a
    if no_cotangent(g):
        return 0.0
    a2, b2, g2 = _matmul_as_2d(g, a, b)
    gb = np.swapaxes(a2, -1, -2) @ g2
    return unbroadcast(gb[..., 0] if np.ndim(b) == 1 else gb, b)


def _tensordot_axes(a, b, axes):
    """``np.tensordot``'s ``axes`` as two lists of non-negative axes."""
    if isinstance(axes, (int, np.integer)):
        return list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes))
    ax_a, ax_b = axes
    ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
    ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    return [k % np.ndim(a) for k in ax_a], [k % np.ndim(b) for k in ax_b]


def tensordot_grad_a(g, a, b, axes=2):
    """Cotangent of ``a`` in ``np.tensordot(a, b, axes)``."""
    if no_cotangent(g):
        return 0.0
    ax_a, ax_b = _tensordot_axes(a, b, axes)
    free_a = [k for k in range(np.ndim(a)) if k not in ax_a]
    free_b = [k for k in range(np.ndim(b)) if k not in ax_b]
    ga = np.tensordot(g, b, axes=(list(range(len(free_a), np.ndim(g))), free_b))
    order = free_a + [ax_a[ax_b.index(k)] for k in sorted(ax_b)]
    return np.transpose(ga, [int(k) for k in np.argsort(order)])


def tensordot_grad_b(g, a, b, axes=2):
    """Cotangent of ``b`` in ``np.tensordot(a, b, axes)``."""
    if no_cotangent(g):
        return 0.0
    ax_a, ax_b = _tensordot_axes(a, b, axes)
    free_a = [k for k in range(np.ndim(a)) if k not in ax_a]
    free_b = [k for k in range(np.ndim(b)) if k not in ax_b]
    gb = np.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    order = [ax_b[ax_a.index(k)] for k in sorted(ax_a)] + free_b
    return np.transpose(gb, [int(k) for k in np.argsort(order)])


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(subscripts, arrays):
    """Explicit per-operand and output subscripts, with ``...`` spelt out."""
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, rhs = subscripts.partition("->")
    ins = lhs.split(",")
    spare = [c for c in _LETTERS if c not in subscripts]
    extra = [np.ndim(a) - len(s.replace("...", "")) for s, a in zip(ins, arrays)]
    ell = "".join(spare[:max([n for s, n in zip(ins, extra) if "..." in s] + [0])])
    ins = [s.replace("...", ell[len(ell) - n:] if n else "") for s, n in zip(ins, extra)]
    if arrow:
        return ins, rhs.replace("...", ell)
    once = sorted(c for c in set("".join(ins)) if c not in ell and "".join(ins).count(c) == 1)
    return ins, ell + "".join(once)


def einsum_grads(g, operands):
    """Cotangents of ``np.einsum(subscripts, *arrays)``: ``[None, d_array1, ...]``.

    Each operand's cotangent is the einsum of the cotangent with the other
    operands, contracted back to that operand's subscripts (an index repeated
    in one operand, a diagonal, puts it back on that diagonal).  The first
    entry stands for the subscripts string, which has no cotangent.
    """
    subscripts, arrays = operands[0], list(operands[1:])
    if not isinstance(subscripts, str):
        raise error_at("MissingRuleError", "einsum's sublist form einsum(x, [0, 1], ...) has no "
                     "adjoint; write the subscripts as a string")
    if no_cotangent(g):
        return [None] + [0.0] * len(arrays)
    ins, outs = _einsum_parse(subscripts, arrays)
    grads = [None]
    for i, a in enumerate(arrays):
        sub = ins[i]
        if len(set(sub)) != len(sub):  # a diagonal: 'ii->i', 'ii', 'iij->j'
            grads.append(_einsum_diagonal_grad(g, ins, outs, arrays, i))
            continue
        others = ins[:i] + ins[i + 1:] + [outs]
        kept = "".join(c for c in sub if c in "".join(others))
        gi = np.einsum(",".join(others) + "->" + kept, *(arrays[:i] + arrays[i + 1:]), g)
        gi = np.expand_dims(gi, tuple(k for k, c in enumerate(sub) if c not in kept))
        grads.append(np.broadcast_to(unbroadcast(gi, a), np.shape(a)))
    return grads


def _einsum_diagonal_grad(g, ins, outs, arrays, i):
    """The cotangent of operand ``i``, whose subscripts repeat an index (it reads
    a diagonal): the cotangent of that diagonal, with each index once, written
    back on the diagonal of zeros (a product with identity matrices)."""
    a, sub = arrays[i], ins[i]
    once = "".join(dict.fromkeys(sub))
    sizes = dict(zip(sub, np.shape(a)))
    others = ins[:i] + ins[i + 1:] + [outs]
    kept = "".join(c for c in once if c in "".join(others))
    gi = np.einsum(",".join(others) + "->" + kept, *(arrays[:i] + arrays[i + 1:]), g)
    gi = np.expand_dims(gi, tuple(k for k, c in enumerate(once) if c not in kept))
    stretched = tuple(k for k, c in enumerate(once) if sizes[c] == 1 and gi.shape[k] != 1)
    gi = np.broadcast_to(np.sum(gi, axis=stretched, keepdims=True), [sizes[c] for c in once])
    spare = iter(c for c in _LETTERS if c not in sub + "".join(others))
    full, eyes = "", []
    for k, c in enumerate(sub):
        if c in sub[:k]:  # a repeat: a new index, tied to the first by an identity
            new = next(spare)
            eyes.append(c + new)
            c = new
        full += c
    return np.einsum(",".join([once, *eyes]) + "->" + full, gi,
                     *[np.eye(sizes[e[0]], dtype=gi.dtype) for e in eyes])


def outer_grads(g, a, b):
    """Cotangents of ``a`` and ``b`` in ``np.outer(a, b)`` (both flattened there)."""
    if no_cotangent(g):
        return 0.0, 0.0
    return np.reshape(g @ np.ravel(b), np.shape(a)), np.reshape(np.ravel(a) @ g, np.shape(b))


def inv_grad(g, out):
    """Cotangent of ``a`` in ``out = np.linalg.inv(a)``: ``-out.T @ g @ out.T``."""
    if no_cotangent(g):
        return 0.0
    out_t = np.swapaxes(out, -1, -2)
    return -(out_t @ g @ out_t)


def det_grad(g, out, a):
    """Cotangent of ``a`` in ``out = np.linalg.det(a)``: ``g det(a) inv(a)^T``,
    or ``g`` times the cofactor matrix (:func:`det_cofactor`) where a matrix
    of the stack is singular -- the derivative exists there (the adjugate),
    while ``inv`` raised LinAlgError (outside tester T1, session 30, #6)."""
    if no_cotangent(g):
        return 0.0
    if np.all(np.asarray(out) != 0):
        try:
            return (g * out)[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
        except np.linalg.LinAlgError:
            pass
    return np.asarray(g)[..., None, None] * det_cofactor(a)


def slogdet_grad(g, out, a):
    """Cotangent of ``a`` in ``sign, logabsdet = np.linalg.slogdet(a)``: the sign
    is piecewise constant, so only ``logabsdet``'s cotangent counts,
    ``g inv(a)^T``; none where none reached it (only the sign read: ``inv``
    raised at a singular matrix, where the sign's derivative is zero)."""
    part = cotangent_at(g, 1)
    if no_cotangent(part):
        return 0.0
    part = np.asarray(part, dtype=np.result_type(out[1]))
    return part[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)


def det_cofactor(a):
    """The cofactor matrix of ``a`` (``adj(a)^T``, stacks too): the derivative
    of ``np.linalg.det(a)``, which the tangent of ``det`` contracts with the
    direction.  ``det(a) inv(a)^T`` where ``a`` is invertible; otherwise from
    the singular value decomposition ``a = u diag(s) vh``: ``adj(a) =
    det(u) det(vh) vh^H diag(p) u^H`` with ``p_i`` the product of the other
    singular values (zero at rank below n - 1, as the adjugate is).

        >>> det_cofactor(np.array([[1.0, 2.0], [2.0, 4.0]]))
        array([[ 4., -2.],
               [-2.,  1.]])
    """
    a = np.asarray(a)
    out = np.linalg.det(a)
    if np.all(out != 0):
        try:
            return out[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
        except np.linalg.LinAlgError:
            pass
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.where(np.eye(n, dtype=bool), 1.0, s[..., None, :])  # row i: s with s_i as 1
    p = np.prod(others, axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    cof = sign[..., None, None] * ((np.conj(u) * p[..., None, :]) @ np.conj(vh))
    return np.real(cof) if not np.iscomplexobj(a) else cof


def det_cofactor_grad(g, out, a):
    """Cotangent of ``a`` in ``out = det_cofactor(a)`` (det's tangent code
    differentiated again, hvp): ``C = det(a) inv(a)^T`` varies as ``tr(inv da) C
    - inv^T da^T C``; at an invertible matrix."""
    if no_cotangent(g):
        return 0.0
    if np.all(np.linalg.det(a) != 0):
        try:
            inv_t = np.swapaxes(np.linalg.inv(a), -1, -2)
            trace = np.sum(g * out, axis=(-2, -1))
            return trace[..., None, None] * inv_t - inv_t @ np.swapaxes(g, -1, -2) @ out
        except np.linalg.LinAlgError:
            pass
    # a singular matrix (hvp of det there raised LinAlgError): the cofactors are
    # polynomials in a's elements, their derivatives the second minors
    return np.einsum("...ij,...ijkl->...kl", g, _cofactor_derivative(np.asarray(a)))


def _cofactor_derivative(a):
    """``d C[i, j] / d a[k, l]`` for ``C = det_cofactor(a)`` (stacks too), shape
    ``(..., n, n, n, n)``: ``C[i, j] = (-1)^(i+j) det(a without row i, column j)``,
    whose derivative by ``a[k, l]`` (k != i, l != j) is the cofactor of that
    element in the minor: a second minor of ``a`` with its sign.  Exact at a
    singular matrix, where ``inv`` has none; n^4 determinants of size n - 2.

        >>> _cofactor_derivative(np.array([[1.0, 2.0], [2.0, 4.0]]))[0, 0]
        array([[0., 0.],
               [0., 1.]])
    """
    n = a.shape[-1]
    out = np.zeros((*a.shape[:-2], n, n, n, n), dtype=np.result_type(a, 1.0))
    rows = range(n)
    for i in rows:
        for j in rows:
            minor = np.delete(np.delete(a, i, axis=-2), j, axis=-1)
            for k in (r for r in rows if r != i):
                for m in (c for c in rows if c != j):
                    k2, m2 = k - (k > i), m - (m > j)  # the element's place in the minor
                    second = np.delete(np.delete(minor, k2, axis=-2), m2, axis=-1)
                    sign = (-1.0) ** (i + j + k2 + m2)
                    out[..., i, j, k, m] = sign * np.linalg.det(second)
    return out


def slogdet_tangent_part(a, t):
    """``tr(solve(a, t))``, the tangent of ``slogdet(a)[1]`` in direction ``t``;
    at a singular matrix, where ``solve`` raised LinAlgError, ``tr(adj(a) t) / det(a)`` as
    NumPy divides: inf, -inf or nan with its RuntimeWarning (jvp of the sign,
    whose own tangent is zero, raised there too)."""
    try:
        return np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)
    except np.linalg.LinAlgError:
        return np.true_divide(np.sum(det_cofactor(a) * t, axis=(-2, -1)), np.linalg.det(a))


def distance_metric(metric):
    """``metric`` where ``scipy.spatial.distance.cdist``'s rules know it
    (``'euclidean'``, ``'sqeuclidean'``: review s37 R5-21), else a
    :class:`~srcgrad.MissingRuleError` naming it: the rules read no other.

        >>> distance_metric("sqeuclidean")
        'sqeuclidean'
    """
    if isinstance(metric, str) and metric in ("euclidean", "sqeuclidean"):
        return metric
    raise error_at("MissingRuleError", f"scipy.spatial.distance.cdist: the metric {metric!r} "
                   f"has no derivative rule ('euclidean' and 'sqeuclidean' have); write the "
                   f"distances with NumPy (np.sum((X[:, None] - Y[None]) ** 2, axis=-1))")


def eigenvalues_only(b, eigvals_only, type, subset_by_index, subset_by_value):  # noqa: A002
    """True where ``scipy.linalg.eigh``'s call is the one its rules know: every
    eigenvalue of one symmetric matrix, alone (``eigvals_only=True``, no ``b``,
    no subset; review s37 R5-21); else a :class:`~srcgrad.MissingRuleError`
    saying what to write.

        >>> eigenvalues_only(None, True, 1, None, None)
        True
    """
    if b is None and eigvals_only is True and subset_by_index is None \
            and subset_by_value is None:
        return True
    raise error_at("MissingRuleError", "scipy.linalg.eigh: srcgrad differentiates all the "
                   "eigenvalues of one symmetric matrix, eigh(a, eigvals_only=True) (no b, "
                   "no subset); for eigenvectors use np.linalg.eigh, whose rules have them")


def solve_grads(g, out, a, b):
    """Cotangents of ``a`` and ``b`` in ``out = np.linalg.solve(a, b)``, where ``b``
    is a vector (shape (M,)) or a stack of matrices (..., M, K)."""
    if no_cotangent(g):
        return 0.0, 0.0
    if np.ndim(b) == 1:
        gb = np.linalg.solve(np.swapaxes(a, -1, -2), g[..., None])
        return -(gb * out[..., None, :]), unbroadcast(gb[..., 0], b)
    gb = np.linalg.solve(np.swapaxes(a, -1, -2), g)
    return unbroadcast(-(gb @ np.swapaxes(out, -1, -2)), a), unbroadcast(gb, b)


def kron_grads(g, a, b):
    """Cotangents of ``a`` and ``b`` in ``np.kron(a, b)``: seen with each axis split
    in two, the result is the outer product ``a[i, j] * b[k, l]`` at
    ``(i, k, j, l)``, so each cotangent contracts ``g`` with the other operand."""
    if no_cotangent(g):
        return 0.0, 0.0
    nd = max(np.ndim(a), np.ndim(b), 1)
    shape_a = (1,) * (nd - np.ndim(a)) + np.shape(a)
    shape_b = (1,) * (nd - np.ndim(b)) + np.shape(b)
    g = np.reshape(g, [n for pair in zip(shape_a, shape_b) for n in pair])
    axes_a, axes_b = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2))
    ga = np.einsum(g, list(range(2 * nd)), np.reshape(b, shape_b), axes_b, axes_a)
    gb = np.einsum(g, list(range(2 * nd)), np.reshape(a, shape_a), axes_a, axes_b)
    return np.reshape(ga, np.shape(a)), np.reshape(gb, np.shape(b))


def cross_grads(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cotangents of ``a`` and ``b`` in ``np.cross(a, b, ...)``: with ``c = a x b``,
    ``<g, a x b> = <b x g, a> = <g x a, b>``.  Vectors of two components are
    padded to three (their cross product is the third component alone)."""
    if no_cotangent(g):
        return 0.0, 0.0
    if axis is not None:
        axisa = axisb = axisc = axis
    a2, b2 = np.moveaxis(as_array(a), axisa, -1), np.moveaxis(as_array(b), axisb, -1)
    na, nb = a2.shape[-1], b2.shape[-1]
    g = as_array(g)
    if na == 2 and nb == 2:
        g3 = np.stack([np.zeros_like(g), np.zeros_like(g), g], -1)
    else:
        g3 = np.moveaxis(g, axisc, -1)
    a3 = np.concatenate([a2, np.zeros(a2.shape[:-1] + (3 - na,), a2.dtype, like=a2)], -1)
    b3 = np.concatenate([b2, np.zeros(b2.shape[:-1] + (3 - nb,), b2.dtype, like=b2)], -1)
    ga = unbroadcast(np.cross(b3, g3)[..., :na], a2)
    gb = unbroadcast(np.cross(g3, a3)[..., :nb], b2)
    return np.moveaxis(ga, -1, axisa), np.moveaxis(gb, -1, axisb)


def _chain(mats):
    """The product of a list of matrices, or None for none."""
    if not mats:
        return None
    return mats[0] if len(mats) == 1 else np.linalg.multi_dot(mats)


def _as_matrices(arrays):
    """``np.linalg.multi_dot``'s operands as matrices: a 1-D first operand is
    a row, a 1-D last one a column."""
    mats = [np.asarray(a) for a in arrays]
    if mats[0].ndim == 1:
        mats[0] = mats[0][np.newaxis, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, np.newaxis]
    return mats


def multi_dot_grads(g, arrays):
    """The cotangents of the operands of ``np.linalg.multi_dot(arrays)``: the
    i-th gets ``L^T G R^T`` for the products ``L`` of the operands before it
    and ``R`` of those after."""
    if no_cotangent(g):
        return ListCotangent([0.0] * len(arrays))
    mats = _as_matrices(arrays)
    g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    found = []
    for i, a in enumerate(arrays):
        d, left, right = g, _chain(mats[:i]), _chain(mats[i + 1:])
        if left is not None:
            d = left.T @ d
        if right is not None:
            d = d @ right.T
        found.append(np.reshape(d, np.shape(a)))
    return ListCotangent(found)


def multi_dot_jvp(arrays, tangents, out):
    """The tangent of ``out = np.linalg.multi_dot(arrays)``: one product per
    operand, with that operand replaced by its tangent."""
    mats, moved = _as_matrices(arrays), _as_matrices(
        [np.broadcast_to(t, np.shape(a)) for t, a in zip(tangents, arrays)])
    total = np.zeros((mats[0].shape[0], mats[-1].shape[1]), np.result_type(out, *moved))
    for i in range(len(mats)):
        total = total + _chain(mats[:i] + [moved[i]] + mats[i + 1:])
    return np.reshape(total, np.shape(out))
