"""Rules of sorting: ``np.sort`` and ``np.partition``, both modes.

Sorting rearranges the elements of ``a`` along an axis, so it is linear in
``a`` once the arrangement is known: the output is ``np.take_along_axis(a, p,
axis)`` for a permutation ``p`` of the positions (``np.argsort(a)`` for a sort;
for a partition, :func:`~srcgrad.runtime.permutation_of` reads it off the
output).  The tangent takes the tangent's elements in that order; the adjoint
sends each cotangent back to the place its element came from.  Tied elements
are equal, so any order among them gives the same output; the derivative
takes the one a stable sort gives.  The indices themselves
(``np.argpartition``, like ``np.argsort``) carry no derivative.
"""

import numpy as np

from ..runtime import permutation_of, take_along_axis_grad
from .registry import adjoint, nondifferentiable, tangent


@adjoint(np.sort, "a")
def sort(out, d_out, a, axis=-1, kind=None, order=None):
    return take_along_axis_grad(d_out, a, np.argsort(a, axis=axis, kind="stable"), axis)


@tangent(np.sort, "a")
def sort_tangent(out, a, axis=-1, kind=None, order=None, *, d_a):
    return np.take_along_axis(d_a, np.argsort(a, axis=axis, kind="stable"), axis=axis)


@adjoint(np.partition, "a")
def partition(out, d_out, a, kth, axis=-1, kind="introselect", order=None):
    return take_along_axis_grad(d_out, a, permutation_of(out, a, axis), axis)


@tangent(np.partition, "a")
def partition_tangent(out, a, kth, axis=-1, kind="introselect", order=None, *, d_a):
    return np.take_along_axis(d_a, permutation_of(out, a, axis), axis=axis)


nondifferentiable(np.argpartition, permutation_of)
nondifferentiable(np.ndarray.argpartition, name="np.ndarray.argpartition")
