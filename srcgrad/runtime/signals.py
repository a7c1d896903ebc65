"""Adjoints of Fourier transforms (``np.fft``), convolution and interpolation.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.

Complex values follow the convention of autograd and JAX: the cotangent of a
complex value ``z = x + iy`` is ``dL/dx - i dL/dy``, so a holomorphic
primitive multiplies it by its derivative without a conjugate, and a linear
one by its plain transpose.  The discrete Fourier matrix is symmetric, so the
cotangent of ``a`` in ``np.fft.fft(a)`` is ``np.fft.fft(g)`` (the same
normalisation), cut or zero-padded back to ``a``'s length; a real ``a`` keeps
the real part.  ``rfft`` and ``irfft`` are real-linear, not complex-linear:
their rules say so below.

    >>> import numpy as np
    >>> fft_grad(np.array([1.0, 0.0, 0.0, 0.0]), np.ones(4))
    array([1., 1., 1., 1.])
    >>> convolve_grads(np.ones(4), np.array([1.0, 2.0]), np.array([1.0, 0.0, 1.0]))
    (array([2., 2.]), array([3., 3., 3.]))
"""

from __future__ import annotations

import numpy as np

from .namespaces import as_array
from .structures import no_cotangent


def _fit(x, n, axis):
    """``x`` cut or zero-padded at the end to length ``n`` along ``axis``."""
    length = x.shape[axis]
    if n == length:
        return x
    if n < length:
        return np.moveaxis(np.moveaxis(x, axis, -1)[..., :n], -1, axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - length)
    return np.pad(x, pad)


def _like(g, a):
    """A real argument takes the real part of its cotangent."""
    return g if np.iscomplexobj(a) else np.real(g)


def _axes(a, s, axes, default=None):
    """The axes ``np.fft.fftn(a, s, axes)`` transforms (``default`` for fft2's)."""
    if axes is not None:
        return [k % np.ndim(a) for k in axes]
    if default is not None:
        return [k % np.ndim(a) for k in default]
    if s is not None:
        return list(range(np.ndim(a) - len(s), np.ndim(a)))
    return list(range(np.ndim(a)))


def fft_grad(g, a, n=None, axis=-1, norm=None, inverse=False):
    """Cotangent of ``a`` in ``np.fft.fft(a, n, axis, norm)`` (``ifft`` when
    ``inverse``): the same transform of ``g``, fitted back to ``a``'s length."""
    if no_cotangent(g):
        return 0.0
    transform = np.fft.ifft if inverse else np.fft.fft
    a = as_array(a)
    return _like(_fit(transform(g, axis=axis, norm=norm), a.shape[axis], axis), a)


def fftn_grad(g, a, s=None, axes=None, norm=None, inverse=False, default=None):
    """Cotangent of ``a`` in ``np.fft.fftn(a, s, axes, norm)`` (``ifftn`` when
    ``inverse``; ``default`` the axes of ``fft2`` when ``axes`` is None)."""
    if no_cotangent(g):
        return 0.0
    a = as_array(a)
    axes = _axes(a, s, axes, default)
    transform = np.fft.ifftn if inverse else np.fft.fftn
    out = transform(g, axes=axes, norm=norm)
    for axis in axes:
        out = _fit(out, a.shape[axis], axis)
    return _like(out, a)


def _rfft_transposed(g, length, size, axis, norm):
    """The transpose of ``rfft`` of length ``length`` applied to ``g``: the real
    part of ``np.fft.fft`` of ``g`` zero-padded to ``length``, fitted to ``size``."""
    return np.real(_fit(np.fft.fft(g, n=length, axis=axis, norm=norm), size, axis))


def rfft_grad(g, a, n=None, axis=-1, norm=None):
    """Cotangent of (real) ``a`` in ``np.fft.rfft(a, n, axis, norm)``."""
    if no_cotangent(g):
        return 0.0
    size = np.shape(a)[axis]
    return _rfft_transposed(g, size if n is None else n, size, axis, norm)


_OPPOSITE = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _irfft_transposed(g, length, size, axis, norm):
    """The cotangent of the half spectrum (of ``size`` coefficients) that
    ``irfft`` turns into ``length`` real values: ``w * conj(rfft(g))`` with the
    normalisation of the other direction, fitted to ``size``."""
    c = np.conj(np.fft.rfft(np.real(g), n=length, axis=axis, norm=_OPPOSITE[norm]))
    half = c.shape[axis]
    weight = np.full(half, 2.0, dtype=np.real(c).dtype)
    weight[0] = 1.0
    if length % 2 == 0:
        weight[-1] = 1.0
    shape = [1] * c.ndim
    shape[axis] = half
    return _fit(c * weight.reshape(shape), size, axis)


def irfft_grad(g, a, n=None, axis=-1, norm=None):
    """Cotangent of ``a`` in ``np.fft.irfft(a, n, axis, norm)``.

    ``irfft`` reads ``a`` as half of a Hermitian spectrum: every coefficient
    but the first (and, for an even ``n``, the last) stands for itself and its
    conjugate, and the imaginary parts of those two are ignored.  So the
    cotangent is ``w * conj(rfft(g))`` with the normalisation of the other
    direction and ``w`` 2 for the paired coefficients, 1 for the others
    (real-linear, not complex-linear: hence the conjugate).
    """
    if no_cotangent(g):
        return 0.0
    size = np.shape(a)[axis]
    return _like(_irfft_transposed(g, 2 * (size - 1) if n is None else n, size, axis, norm), a)


def rfftn_grad(g, a, s=None, axes=None, norm=None, default=None):
    """Cotangent of (real) ``a`` in ``np.fft.rfftn(a, s, axes, norm)``, which is
    ``rfft`` over the last axis, then ``fft`` over the others (``default``: the
    axes of ``rfft2``)."""
    if no_cotangent(g):
        return 0.0
    a = as_array(a)
    axes = _axes(a, s, axes, default)
    last = axes[-1]
    inner = np.fft.fftn(g, axes=axes[:-1], norm=norm) if len(axes) > 1 else g
    part = _rfft_transposed(inner, a.shape[last] if s is None else s[-1], a.shape[last],
                            last, norm)
    for axis in axes[:-1]:
        part = _fit(part, a.shape[axis], axis)
    return part


def irfftn_grad(g, a, s=None, axes=None, norm=None, default=None):
    """Cotangent of ``a`` in ``np.fft.irfftn(a, s, axes, norm)``, which is
    ``ifft`` over all but the last axis, then ``irfft`` over the last."""
    if no_cotangent(g):
        return 0.0
    a = as_array(a)
    axes = _axes(a, s, axes, default)
    last = axes[-1]
    length = 2 * (a.shape[last] - 1) if s is None else s[-1]
    c = _irfft_transposed(g, length, a.shape[last], last, norm)
    if len(axes) > 1:
        c = np.fft.ifftn(c, axes=axes[:-1], norm=norm)
    for axis in axes[:-1]:
        c = _fit(c, a.shape[axis], axis)
    return _like(c, a)


def fftshift_grad(g, axes=None, inverse=False):
    """Cotangent of ``x`` in ``np.fft.fftshift(x, axes)`` (``ifftshift`` when
    ``inverse``): the opposite shift of ``g``."""
    if no_cotangent(g):
        return 0.0
    return np.fft.fftshift(g, axes) if inverse else np.fft.ifftshift(g, axes)


def convolve_grads(g, a, v, mode="full"):
    """Cotangents of ``a`` and ``v`` in ``np.convolve(a, v, mode)``: ``g`` placed
    in the full output (``'same'`` and ``'valid'`` are windows of it), then
    correlated with the other operand (a convolution with it reversed: no
    conjugate, as the convention for complex values wants)."""
    if no_cotangent(g):
        return 0.0, 0.0
    a, v = np.ravel(a), np.ravel(v)
    n, m = len(a), len(v)
    if mode == "full":
        start = 0
    elif mode == "same":
        start = (min(n, m) - 1) // 2
    else:
        start = min(n, m) - 1
    full = np.zeros(n + m - 1, np.result_type(g, a, v))
    full[start:start + np.size(g)] = g
    return np.convolve(full, v[::-1], "valid"), np.convolve(full, a[::-1], "valid")


def periodic_knots(xp, period):
    """The knots ``np.interp(x, xp, fp, period=period)`` interpolates between,
    laid out as NumPy does (``xp % |period|`` sorted, the last knot one period
    down before them, the first one period up after them), and the position in
    ``xp`` (and ``fp``) each one comes from."""
    period = abs(period)
    wrapped = np.asarray(xp, dtype=np.float64) % period
    order = np.argsort(wrapped)
    places = np.concatenate((order[-1:], order, order[:1]))
    knots = wrapped[places]
    knots[0] -= period
    knots[-1] += period
    return knots, places


def interp_grads(g, x, xp, fp, left=None, right=None):
    """Cotangents of ``x`` and ``fp`` in ``np.interp(x, xp, fp, left, right)``:
    ``x`` gets the slope of its interval (0 outside ``xp``'s range; at a knot,
    the interval to its right), each value of ``fp`` the weights of the points
    interpolated from it (outside the range, the end values unless ``left`` or
    ``right`` replace them)."""
    if no_cotangent(g):
        return 0.0, 0.0
    x, xp, fp = as_array(x), as_array(xp), as_array(fp)
    g = np.broadcast_to(g, x.shape)
    i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)
    width = xp[i + 1] - xp[i]
    t = np.clip((x - xp[i]) / width, 0, 1)
    g_x = g * (fp[i + 1] - fp[i]) / width * ((x >= xp[0]) & (x <= xp[-1]))
    low, high = g * (1 - t), g * t
    if left is not None:
        low, high = low * (x >= xp[0]), high * (x >= xp[0])
    if right is not None:
        low, high = low * (x <= xp[-1]), high * (x <= xp[-1])
    g_fp = np.zeros(fp.shape, np.result_type(g, fp))
    np.add.at(g_fp, i, low)
    np.add.at(g_fp, i + 1, high)
    if x.dtype.kind == "f":  # np.interp computes in float64: a float32 x keeps its dtype
        g_x = g_x.astype(x.dtype, copy=False)
    if fp.dtype.kind == "f":
        g_fp = g_fp.astype(fp.dtype, copy=False)
    return g_x[()] if g_x.ndim == 0 else g_x, g_fp
