"""Rules of the products that are not contractions: ``np.kron`` and
``np.cross``, both modes.

Each is linear in each operand, the other fixed, so one ``@linear``
declaration gives both rules: the tangent is the same product with one operand
replaced by its tangent, the adjoint contracts the cotangent with the other
operand (:func:`~srcgrad.runtime.kron_grads`; for the cross product
``<g, a x b> = <b x g, a> = <g x a, b>``, :func:`~srcgrad.runtime.cross_grads`).
"""

import numpy as np

from ..runtime import cross_grads, kron_grads
from .derive import linear


@linear(np.kron)
def kron(out, d_out, a, b):
    return kron_grads(d_out, a, b)


@linear(np.cross, "a", "b")
def cross(out, d_out, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Vectors of 2 or 3 components along ``axisa``/``axisb`` (or ``axis``)."""
    return cross_grads(d_out, a, b, axisa, axisb, axisc, axis)
