"""``np.add.at`` and ``np.subtract.at`` as values, and their cotangents.

``np.add.at(y, idx, v)`` on an array the code differentiates is written
``y[...] = added_at(y, idx, v)`` (normalize/statements.py ``accumulated_at``):
the same unbuffered adds in the same order, into a copy, then stored back into
``y`` -- bit for bit what the call leaves in ``y`` -- as a whole write
srcgrad follows.  ``added_at`` is linear in ``y`` and ``v`` together: the
cotangent of ``y`` is the output's, that of ``v`` the output's elements
gathered at ``idx`` (repeated indices each take theirs), summed down to ``v``'s
shape where ``v`` was broadcast.

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


def scattered_grad(g, index, v, sign):
    """The cotangent of ``v`` in ``added_at(a, index, v)`` (``sign`` 1) or
    ``subtracted_at`` (-1): ``g[index]``, summed to ``v``'s shape."""
    if no_cotangent(g):
        return 0.0
    picked = np.asarray(g)[index]
    return unbroadcast(picked if sign > 0 else -picked, v)


__all__ = ["added_at", "scattered_grad", "subtracted_at"]
