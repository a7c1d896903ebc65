"""``np.add.at``, ``np.subtract.at``, ``np.multiply.at`` as values, and their cotangents.

``np.add.at(y, idx, v)`` on an array the code differentiates is written
``y[...] = added_at(y, idx, v)`` (normalize/statements.py ``accumulated_at``):
the same unbuffered adds in the same order, into a copy, then stored back into
``y`` -- bit for bit what the call leaves in ``y`` -- as a whole write
srcgrad follows.  ``added_at`` is linear in ``y`` and ``v`` together: the
cotangent of ``y`` is the output's, that of ``v`` the output's elements
gathered at ``idx`` (repeated indices each take theirs), summed down to ``v``'s
shape where ``v`` was broadcast.  ``multiplied_at`` is ``np.multiply.at``'s,
each factor's cotangent the product of ``a`` and the other factors at its
place (computed without dividing: a factor may be zero).

    >>> multiplied_at_grad(np.ones(2), np.array([2.0, 3.0]), [0, 0, 1], np.array([0.0, 5.0, 7.0]))
    array([10.,  0.,  3.])
    >>> y = np.zeros(3)
    >>> added_at(y, np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0])), y
    (array([4., 0., 2.]), array([0., 0., 0.]))
    >>> scattered_grad(np.array([1.0, 10.0, 100.0]), np.array([0, 2, 0]), np.ones(3), 1)
    array([  1., 100.,   1.])
"""

from __future__ import annotations

import numpy as np

from .elementwise import unbroadcast
from .structures import no_cotangent


def added_at(a, index, v):
    """A copy of ``a`` after ``np.add.at(copy, index, v)``; ``a`` is left alone."""
    out = np.array(a, copy=True)
    np.add.at(out, index, v)
    return out


def subtracted_at(a, index, v):
    """A copy of ``a`` after ``np.subtract.at(copy, index, v)``."""
    out = np.array(a, copy=True)
    np.subtract.at(out, index, v)
    return out


def multiplied_at(a, index, v):
    """A copy of ``a`` after ``np.multiply.at(copy, index, v)``."""
    out = np.array(a, copy=True)
    np.multiply.at(out, index, v)
    return out


def _factors_at(a, index, v):
    """Where each factor of ``np.multiply.at(a, index, v)`` goes: the flat
    positions of ``a`` (``ids``, in NumPy's order), the factors (``v``
    broadcast to the shape of ``a[index]``), and each factor's cofactor -- the
    product of the other factors at its position (no division: a zero factor
    keeps the others' product)."""
    ids = np.arange(np.size(a)).reshape(np.shape(a))[index]
    factors = np.broadcast_to(v, np.shape(ids)).ravel()
    flat = ids.ravel()
    kind = np.result_type(a, v, 1.0)
    before, after = np.empty(flat.size, kind), np.empty(flat.size, kind)
    running = np.ones(np.size(a), kind)
    for e, p in enumerate(flat):
        before[e] = running[p]
        running[p] *= factors[e]
    running[:] = 1.0
    for e in range(flat.size - 1, -1, -1):
        after[e] = running[flat[e]]
        running[flat[e]] *= factors[e]
    return flat, np.shape(ids), before * after


def multiplied_at_grad(g, a, index, v):
    """The cotangent of ``v`` in ``multiplied_at(a, index, v)``: each factor
    gets the output's cotangent at its place times ``a`` there and the other
    factors there, summed to ``v``'s shape where ``v`` was broadcast."""
    if no_cotangent(g):
        return 0.0
    flat, shape, cofactors = _factors_at(a, index, v)
    part = np.ravel(g)[flat] * np.ravel(a)[flat] * cofactors
    return unbroadcast(part.reshape(shape), v)


def multiplied_at_tangent(a, index, v, d_v):
    """The term of ``v``'s tangent ``d_v`` in the tangent of
    ``multiplied_at(a, index, v)``: each factor's tangent times ``a`` and the
    other factors at its place, added there."""
    flat, shape, cofactors = _factors_at(a, index, v)
    d_factors = np.broadcast_to(d_v, shape).ravel()
    out = np.zeros(np.size(a), np.result_type(a, v, d_v, 1.0))
    np.add.at(out, flat, np.ravel(a)[flat] * d_factors * cofactors)
    return out.reshape(np.shape(a))


def scattered_grad(g, index, v, sign):
    """The cotangent of ``v`` in ``added_at(a, index, v)`` (``sign`` 1) or
    ``subtracted_at`` (-1): ``g[index]``, summed to ``v``'s shape."""
    if no_cotangent(g):
        return 0.0
    picked = np.asarray(g)[index]
    return unbroadcast(picked if sign > 0 else -picked, v)


__all__ = ["added_at", "multiplied_at", "multiplied_at_grad",
           "multiplied_at_tangent", "scattered_grad", "subtracted_at"]
