"""Rules of ``scipy.signal``, both modes: ``convolve`` (N-dimensional),
``fftconvolve``, ``oaconvolve`` and ``convolve2d``.

Registered lazily, like :mod:`.scipy_special`, once the user's code has
imported ``scipy.signal``.  ``convolve`` is linear in each input: one
``@linear`` declaration, whose tangent calls
:func:`srcgrad.runtime.signal_convolve` (SciPy's function, named so that a
rule body can call it), which has the same rules.  ``method`` changes how the
convolution is computed, not what; so do ``fftconvolve`` and ``oaconvolve``
(over all axes: ``axes`` is refused) and ``convolve2d`` (with its default
zero-filled ``boundary``: another boundary is refused), which take the same
rules.
"""

from scipy import signal

from ..runtime import signal_convolve, signal_convolve_grads
from .derive import alias, linear


@linear(signal.convolve, "in1", "in2", name="scipy.signal.convolve", call="signal_convolve",
        unused=("method",))
def convolve(out, d_out, in1, in2, mode="full", method="auto"):
    return signal_convolve_grads(d_out, in1, in2, mode)


alias(signal_convolve, signal.convolve, name="signal_convolve")


@linear(signal.fftconvolve, "in1", "in2", name="scipy.signal.fftconvolve",
        call="signal_convolve")
def fftconvolve(out, d_out, in1, in2, mode="full"):
    return signal_convolve_grads(d_out, in1, in2, mode)


@linear(signal.oaconvolve, "in1", "in2", name="scipy.signal.oaconvolve",
        call="signal_convolve")
def oaconvolve(out, d_out, in1, in2, mode="full"):
    return signal_convolve_grads(d_out, in1, in2, mode)


@linear(signal.convolve2d, "in1", "in2", name="scipy.signal.convolve2d",
        call="signal_convolve")
def convolve2d(out, d_out, in1, in2, mode="full"):
    return signal_convolve_grads(d_out, in1, in2, mode)
