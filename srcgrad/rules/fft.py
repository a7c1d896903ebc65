"""Rules of the discrete Fourier transforms (``np.fft``), both modes.

Every transform is linear in its input, so one ``@linear`` declaration gives
both rules: the tangent is the same transform of the tangent, the adjoint the
transposed transform (:mod:`srcgrad.runtime.signals`), fitted back to the
input's length where ``n`` or ``s`` cut or padded it.

Complex values follow autograd's and JAX's convention: the cotangent of a
complex ``z = x + iy`` is ``dL/dx - i dL/dy`` (so the gradient of a real loss
with respect to a complex input is that conjugate-Wirtinger form, and a
gradient-descent step on ``z`` moves it by ``-conj(gradient)``).  Holomorphic
and complex-linear primitives then need no conjugate: the cotangent of ``a``
in ``np.fft.fft(a)`` is ``np.fft.fft(g)``, the Fourier matrix being symmetric.
``rfft`` (real input) keeps the real part of its transpose; ``irfft`` is only
real-linear (it reads a Hermitian half spectrum and ignores two imaginary
parts), so its adjoint conjugates.  A real argument's gradient is the real
part of its cotangent.
"""

import numpy as np

from ..runtime import (
    fft_grad,
    fftn_grad,
    fftshift_grad,
    irfft_grad,
    irfftn_grad,
    rfft_grad,
    rfftn_grad,
)
from .derive import linear

ONE_D = ("n", "axis", "norm")
N_D = ("s", "axes", "norm")


@linear(np.fft.fft, "a", keywords=ONE_D)
def fft(out, d_out, a, n=None, axis=-1, norm=None):
    return fft_grad(d_out, a, n, axis, norm)


@linear(np.fft.ifft, "a", keywords=ONE_D)
def ifft(out, d_out, a, n=None, axis=-1, norm=None):
    return fft_grad(d_out, a, n, axis, norm, True)


@linear(np.fft.rfft, "a", keywords=ONE_D)
def rfft(out, d_out, a, n=None, axis=-1, norm=None):
    """``a`` is real: its cotangent is the real part of the transpose."""
    return rfft_grad(d_out, a, n, axis, norm)


@linear(np.fft.irfft, "a", keywords=ONE_D)
def irfft(out, d_out, a, n=None, axis=-1, norm=None):
    """Real-linear: the paired coefficients count twice, and the imaginary
    parts of the first (and, for an even ``n``, the last) are ignored."""
    return irfft_grad(d_out, a, n, axis, norm)


@linear(np.fft.fft2, "a", keywords=N_D)
def fft2(out, d_out, a, s=None, axes=(-2, -1), norm=None):
    return fftn_grad(d_out, a, s, axes, norm)


@linear(np.fft.ifft2, "a", keywords=N_D)
def ifft2(out, d_out, a, s=None, axes=(-2, -1), norm=None):
    return fftn_grad(d_out, a, s, axes, norm, True)


@linear(np.fft.fftn, "a", keywords=N_D)
def fftn(out, d_out, a, s=None, axes=None, norm=None):
    return fftn_grad(d_out, a, s, axes, norm)


@linear(np.fft.ifftn, "a", keywords=N_D)
def ifftn(out, d_out, a, s=None, axes=None, norm=None):
    return fftn_grad(d_out, a, s, axes, norm, True)


@linear(np.fft.rfft2, "a", keywords=N_D)
def rfft2(out, d_out, a, s=None, axes=(-2, -1), norm=None):
    return rfftn_grad(d_out, a, s, axes, norm)


@linear(np.fft.irfft2, "a", keywords=N_D)
def irfft2(out, d_out, a, s=None, axes=(-2, -1), norm=None):
    return irfftn_grad(d_out, a, s, axes, norm)


@linear(np.fft.rfftn, "a", keywords=N_D)
def rfftn(out, d_out, a, s=None, axes=None, norm=None):
    return rfftn_grad(d_out, a, s, axes, norm)


@linear(np.fft.irfftn, "a", keywords=N_D)
def irfftn(out, d_out, a, s=None, axes=None, norm=None):
    return irfftn_grad(d_out, a, s, axes, norm)


@linear(np.fft.fftshift, "x", keywords=("axes",))
def fftshift(out, d_out, x, axes=None):
    return fftshift_grad(d_out, axes)


@linear(np.fft.ifftshift, "x", keywords=("axes",))
def ifftshift(out, d_out, x, axes=None):
    return fftshift_grad(d_out, axes, True)
