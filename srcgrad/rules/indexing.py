"""Adjoint rule of indexing, ``a[index]`` (``operator.getitem``).

Reading ``a[index]`` copies some elements of ``a``; the adjoint scatters the
cotangent back into zeros shaped like ``a``.  A basic index (ints, slices,
``None``, ``...``) selects each element at most once, so assignment does; an
advanced index (integer arrays, which may repeat an element, or boolean masks)
accumulates with ``np.add.at``.  Indexing a tuple or list (``slogdet(x)[1]``)
gives a tuple or list of cotangents with zeros for the other elements.
"""

import operator

from ..runtime import getitem_grad
from .registry import adjoint


@adjoint(operator.getitem, "a", name="[]")
def getitem(out, d_out, a, index):
    return getitem_grad(d_out, a, index)
