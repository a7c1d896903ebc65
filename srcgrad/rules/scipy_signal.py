"""Rules of ``scipy.signal``, both modes: ``convolve`` (N-dimensional).

Registered lazily, like :mod:`.scipy_special`, once the user's code has
imported ``scipy.signal``.  ``convolve`` is linear in each input: one
``@linear`` declaration, whose tangent calls
:func:`srcgrad.runtime.signal_convolve` (SciPy's function, named so that a
rule body can call it), which has the same rules.  ``method`` changes how the
convolution is computed, not what.
"""

from scipy import signal

from ..runtime import signal_convolve, signal_convolve_grads
from .derive import alias, linear


@linear(signal.convolve, "in1", "in2", name="scipy.signal.convolve", call="signal_convolve",
        unused=("method",))
def convolve(out, d_out, in1, in2, mode="full", method="auto"):
    return signal_convolve_grads(d_out, in1, in2, mode)


alias(signal_convolve, signal.convolve, name="signal_convolve")
