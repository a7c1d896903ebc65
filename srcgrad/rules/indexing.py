"""Rules of indexing, ``a[index]`` (``operator.getitem``), both modes.

Reading elements is linear in ``a`` whatever the index, so one ``@linear``
declaration gives both rules.  The tangent is the same elements of ``a``'s
tangent, ``d_a[index]`` (a tuple, list or dict has a tuple, list or dict of
tangents, so the same expression picks an element's tangent there too).  The
adjoint scatters the cotangent back into zeros shaped like ``a``: a basic index
(ints, slices, ``None``, ``...``) selects each element at most once, so
assignment does; an advanced index (integer arrays, which may repeat an
element, or boolean masks) accumulates with ``np.add.at``.  Indexing a tuple or
list (``slogdet(x)[1]``) gives a tuple or list of cotangents with zeros for
the other elements.
"""

import operator

from ..runtime import getitem_grad
from .derive import linear


@linear(operator.getitem, "a", name="[]")
def getitem(out, d_out, a, index):
    return getitem_grad(d_out, a, index)
