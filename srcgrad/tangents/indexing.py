"""Tangent rule of indexing, ``a[index]`` (``operator.getitem``).

Reading elements is linear, so the tangent of ``a[index]`` is the same
elements of ``a``'s tangent, ``d_a[index]``, whatever the index (basic,
integer arrays, masks).  A tuple, list or dict has a tuple, list or dict of
tangents, so the same expression picks the element's tangent there too.
"""

import operator

from ..rules.registry import tangent


@tangent(operator.getitem, "a", name="[]")
def getitem(out, a, index, d_a):
    return d_a[index]
