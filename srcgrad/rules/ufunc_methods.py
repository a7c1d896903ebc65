"""Rules of the ufunc methods ``reduce``, ``accumulate`` and ``outer``, both modes.

``np.add.reduce(x)`` is ``np.sum(x, axis=0)``, ``np.multiply.accumulate(x)``
is ``np.cumprod(x, axis=0)``, ``np.subtract.outer(a, b)`` is ``a[:, None] -
b`` for vectors: each method's rules are those of the function it computes,
written out here because the defaults differ (a ufunc method reduces the first
axis, not all of them) and because generated code calls the method itself, so
the value stays the method's, bit for bit.  The methods are bound to their
ufunc (``np.add.reduce``), so each is its own primitive, named as the code
spells it.

* ``reduce`` of ``add``, ``multiply``, ``maximum``, ``minimum`` and
  ``logaddexp``: the rules of ``np.sum``, ``np.prod`` (the product of the
  other elements, exact at zeros), ``np.max``/``np.min`` (ties share) and of
  log-sum-exp (the weights ``exp(x - out)``);
* ``accumulate`` of ``add`` and ``multiply``: those of ``np.cumsum`` and
  ``np.cumprod``;
* ``outer`` of ``add``, ``subtract``, ``multiply`` and ``divide``: a
  ``tensordot`` with ``axes=0`` carries each operand's cotangent back, summed
  over the other operand's axes.
"""

from __future__ import annotations

import numpy as np

from ..runtime import (
    added_at,
    cumprod_grad,
    extremum_grad,
    multiplied_at,
    multiplied_at_grad,
    multiplied_at_tangent,
    prod_except,
    reverse_cumsum,
    running_extremum_grad,
    running_extremum_tangent,
    scattered_grad,
    subtracted_at,
    tensordot_grad_a,
    tensordot_grad_b,
    unreduce,
)
from .derive import linear
from .registry import adjoint, tangent

# -- reduce ------------------------------------------------------------------------------


@linear(np.add.reduce, "array", name="np.add.reduce", keywords=("axis",))
def add_reduce(out, d_out, array, axis=0, *, keepdims=False):
    return unreduce(d_out, array, axis, keepdims)


@adjoint(np.multiply.reduce, "array", name="np.multiply.reduce")
def multiply_reduce(out, d_out, array, axis=0, *, keepdims=False):
    return unreduce(d_out, array, axis, keepdims) * prod_except(array, axis)


@tangent(np.multiply.reduce, "array", name="np.multiply.reduce")
def multiply_reduce_tangent(out, array, axis=0, *, keepdims=False, d_array):
    """As ``np.prod``'s: the product of the other elements, written so that
    the terms that are 0 at a zero element move when differentiated again."""
    zero = np.equal(array, 0)
    nonzero = np.where(zero, 1, array)
    at_zeros = np.where(zero, array, 0)
    zeros_left = np.sum(zero, axis=axis, keepdims=True) - zero
    zero_left = np.sum(at_zeros, axis=axis, keepdims=True) - at_zeros
    others = (np.prod(nonzero, axis=axis, keepdims=True) / nonzero
              * ((zeros_left == 0) + zero_left * (zeros_left == 1)))
    return np.sum(d_array * others, axis=axis, keepdims=keepdims)


@adjoint(np.maximum.reduce, "array", name="np.maximum.reduce")
@adjoint(np.minimum.reduce, "array", name="np.minimum.reduce")
def extremum_reduce(out, d_out, array, axis=0, *, keepdims=False):
    """Tied extrema share the cotangent equally, as in ``np.max``."""
    return extremum_grad(d_out, out, array, axis, keepdims)


@tangent(np.maximum.reduce, "array", name="np.maximum.reduce")
@tangent(np.minimum.reduce, "array", name="np.minimum.reduce")
def extremum_reduce_tangent(out, array, axis=0, *, keepdims=False, d_array):
    """The mean of the tangents of the tied extrema."""
    if axis is None or keepdims:
        hit = array == out
    else:
        hit = array == np.expand_dims(out, axis)
    return (np.sum(d_array * hit, axis=axis, keepdims=keepdims)
            / np.sum(hit, axis=axis, keepdims=keepdims, dtype=out.dtype))


@adjoint(np.logaddexp.reduce, "array", name="np.logaddexp.reduce")
def logaddexp_reduce(out, d_out, array, axis=0, *, keepdims=False):
    """``log(sum(exp(x)))``: each element weighs ``exp(x - out)``."""
    return unreduce(d_out, array, axis, keepdims) * np.exp(
        array - unreduce(out, array, axis, keepdims))


@tangent(np.logaddexp.reduce, "array", name="np.logaddexp.reduce")
def logaddexp_reduce_tangent(out, array, axis=0, *, keepdims=False, d_array):
    if axis is None or keepdims:
        weight = np.exp(array - out)
    else:
        weight = np.exp(array - np.expand_dims(out, axis))
    return np.sum(d_array * weight, axis=axis, keepdims=keepdims)


# -- accumulate --------------------------------------------------------------------------


@linear(np.add.accumulate, "array", name="np.add.accumulate", keywords=("axis",))
def add_accumulate(out, d_out, array, axis=0):
    return reverse_cumsum(d_out, array, axis)


@linear(np.add.reduceat, "array", name="np.add.reduceat", keywords=("axis",))
def add_reduceat(out, d_out, array, indices, axis=0):
    """Sums of the segments ``indices`` starts (review s37 R5-2): ``out = S @ x``
    along ``axis`` with ``S`` the segments' membership, which ``np.add.reduceat`` of
    the identity's rows gives (a segment that does not move forward being its first
    element, as NumPy has it); the cotangent is ``S^T`` times ``out``'s."""
    g = np.broadcast_to(d_out, np.shape(out))
    n = np.shape(array)[axis]
    segments = np.add.reduceat(np.eye(n, dtype=g.dtype), indices, axis=0)
    return np.moveaxis(np.tensordot(np.swapaxes(segments, 0, 1), np.moveaxis(g, axis, 0),
                                    axes=1), 0, axis)


@adjoint(np.multiply.accumulate, "array", name="np.multiply.accumulate")
def multiply_accumulate(out, d_out, array, axis=0):
    """Exact where some elements are zero (see cumprod_grad)."""
    return cumprod_grad(d_out, out, array, axis)


@tangent(np.multiply.accumulate, "array", name="np.multiply.accumulate")
def multiply_accumulate_tangent(out, array, axis=0, *, d_array):
    """As ``np.cumprod``'s: ``out * cumsum(d / x)`` before the first zero,
    the tangent of the one zero times the product of the others after it."""
    zero = np.equal(array, 0)
    nonzero = np.where(zero, 1, array)
    zeros = np.cumsum(zero, axis=axis)
    kept = np.cumprod(nonzero, axis=axis)
    ratios = np.cumsum(np.where(zero, 0, d_array) / nonzero, axis=axis)
    d_zero = np.cumsum(np.where(zero, d_array, 0), axis=axis)
    at_zero = np.cumsum(np.where(zero, array, 0), axis=axis)
    both = np.cumsum(np.where(zero, d_array * array, 0), axis=axis)
    return kept * ((zeros == 0) * ratios + (zeros == 1) * (d_zero + at_zero * ratios)
                   + (zeros == 2) * (d_zero * at_zero - both))


@adjoint(np.maximum.accumulate, "array", name="np.maximum.accumulate")
@adjoint(np.minimum.accumulate, "array", name="np.minimum.accumulate")
@adjoint(np.fmax.accumulate, "array", name="np.fmax.accumulate")
@adjoint(np.fmin.accumulate, "array", name="np.fmin.accumulate")
def extremum_accumulate(out, d_out, array, axis=0):
    """Each step is a ``np.maximum`` (``minimum``, ...): the cotangent runs back
    to the element that set the running value, ties splitting it 0.5/0.5."""
    return running_extremum_grad(d_out, array, out, axis)


@tangent(np.maximum.accumulate, "array", name="np.maximum.accumulate")
@tangent(np.minimum.accumulate, "array", name="np.minimum.accumulate")
@tangent(np.fmax.accumulate, "array", name="np.fmax.accumulate")
@tangent(np.fmin.accumulate, "array", name="np.fmin.accumulate")
def extremum_accumulate_tangent(out, array, axis=0, *, d_array):
    return running_extremum_tangent(d_array, array, out, axis)


@linear(running_extremum_tangent, "t", name="running_extremum_tangent")
def running_extremum_tangent_(out, d_out, t, a, running, axis=0):
    """Linear in the tangent ``t`` (the steps fixed): its transpose is the
    adjoint's helper, so forward-over-reverse code differentiates again."""
    return running_extremum_grad(d_out, a, running, axis)


@linear(running_extremum_grad, "g", name="running_extremum_grad")
def running_extremum_grad_(out, d_out, g, a, running, axis=0):
    return running_extremum_tangent(d_out, a, running, axis)


# -- outer -------------------------------------------------------------------------------


@linear(np.multiply.outer, name="np.multiply.outer")
def multiply_outer(out, d_out, A, B):
    return tensordot_grad_a(d_out, A, B, 0), tensordot_grad_b(d_out, A, B, 0)


@adjoint(np.add.outer, name="np.add.outer")
def add_outer(out, d_out, A, B):
    """Each operand's cotangent sums the output's over the other's axes."""
    return (tensordot_grad_a(d_out, A, np.ones_like(B), 0),
            tensordot_grad_b(d_out, np.ones_like(A), B, 0))


@tangent(np.add.outer, name="np.add.outer")
def add_outer_tangent(out, A, B, d_A, d_B):
    return np.add.outer(d_A, np.zeros_like(B)), np.add.outer(np.zeros_like(A), d_B)


@adjoint(np.subtract.outer, name="np.subtract.outer")
def subtract_outer(out, d_out, A, B):
    return (tensordot_grad_a(d_out, A, np.ones_like(B), 0),
            -tensordot_grad_b(d_out, np.ones_like(A), B, 0))


@tangent(np.subtract.outer, name="np.subtract.outer")
def subtract_outer_tangent(out, A, B, d_A, d_B):
    return (np.subtract.outer(d_A, np.zeros_like(B)),
            np.subtract.outer(np.zeros_like(A), d_B))


@adjoint(np.divide.outer, name="np.divide.outer")
def divide_outer(out, d_out, A, B):
    """``A_i / B_j``: ``1 / B_j`` for ``A_i``, ``-A_i / B_j ** 2`` for ``B_j``."""
    return (tensordot_grad_a(d_out, A, 1 / B, 0),
            -tensordot_grad_b(d_out, A, B, 0) / (B * B))


@tangent(np.divide.outer, name="np.divide.outer")
def divide_outer_tangent(out, A, B, d_A, d_B):
    return np.divide.outer(d_A, B), -np.multiply.outer(A, d_B / (B * B))


# -- at: np.add.at(y, idx, v) as y[...] = added_at(y, idx, v) ----------------------------

@adjoint(added_at, "a", "v", name="added_at")
def added_at_(out, d_out, a, index, v):
    """``y`` keeps its cotangent; ``v`` gets the output's at ``index`` (repeated
    indices each take theirs)."""
    return d_out, scattered_grad(d_out, index, v, 1)


@tangent(added_at, "a", "v", name="added_at")
def added_at_tangent(out, a, index, v, *, d_a, d_v):
    """Linear in ``a`` and ``v`` together: the two terms add up to
    ``added_at(d_a, index, d_v)``."""
    return d_a, added_at(np.zeros_like(out), index, d_v)


@adjoint(subtracted_at, "a", "v", name="subtracted_at")
def subtracted_at_(out, d_out, a, index, v):
    """As :func:`added_at_`, ``v``'s cotangent negated."""
    return d_out, scattered_grad(d_out, index, v, -1)


@tangent(subtracted_at, "a", "v", name="subtracted_at")
def subtracted_at_tangent(out, a, index, v, *, d_a, d_v):
    return d_a, subtracted_at(np.zeros_like(out), index, d_v)


@adjoint(multiplied_at, "a", "v", name="multiplied_at")
def multiplied_at_(out, d_out, a, index, v):
    """np.multiply.at(y, idx, v) as y[...] = multiplied_at(y, idx, v): ``y``'s
    cotangent is the output's times the factors put at each place; each factor
    of ``v`` gets the output's at its place times ``y`` and the other factors
    there (runtime/scatter.py)."""
    return d_out * multiplied_at(np.ones_like(out), index, v), multiplied_at_grad(d_out, a, index, v)


@tangent(multiplied_at, "a", "v", name="multiplied_at")
def multiplied_at_tangent_(out, a, index, v, *, d_a, d_v):
    return d_a * multiplied_at(np.ones_like(out), index, v), multiplied_at_tangent(a, index, v, d_v)
