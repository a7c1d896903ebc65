"""``np.r_[...]`` and ``np.c_[...]``: NumPy's concatenation written as indexing.

``np.r_`` and ``np.c_`` are objects whose ``__getitem__`` concatenates what
it is given (``np.r_[x, x ** 2]``, ``np.c_[x, np.sin(x)]``).  Read by its
syntax, ``np.r_[x, y]`` is an indexing read of a constant, whose index
carries no derivative: a zero gradient, silently (review s36 R4-8).  The
subscript becomes a call of the runtime helper ``index_joined(np.r_, key)``,
which returns ``np.r_[key]`` itself -- NumPy's own array, bit for bit,
whatever its items (numbers, which take the arrays' dtype; a name holding a
tuple of items; 3-d items of ``np.c_``) -- and whose rules give each item
its piece of the cotangent, in its shape (runtime ``unjoin``), and join the
items' tangents alike.  A string directive (``np.r_['0,2', a, b]``) in the
brackets is refused, located, with the call to write instead; a slice (``np.r_[0:3, x]``:
``np.arange``'s values) is passed as the ``slice`` object NumPy reads.

    >>> import gast, numpy as np
    >>> class Owner(IndexTricks):
    ...     def callee(self, call):
    ...         return np.r_
    >>> node = gast.parse("np.r_[x, y ** 2]").body[0].value
    >>> print(gast.unparse(Owner().concatenation(node)))
    index_joined(np.r_, (x, y ** 2))
"""

from __future__ import annotations

import gast
import numpy as np

from ..ir.syntax import helper_ref


class IndexTricks:
    """Mixed into the normaliser (module docstring)."""

    def concatenation(self, node):
        """The call ``np.r_[...]`` / ``np.c_[...]`` (``node``, a subscript read)
        stands for, or None for any other subscript."""
        if not isinstance(node, gast.Subscript) or not isinstance(node.ctx, gast.Load) \
                or not isinstance(node.value, (gast.Name, gast.Attribute)):
            return None
        tricks = self.callee(gast.Call(func=node.value, args=[], keywords=[]))
        if tricks is not np.r_ and tricks is not np.c_:
            return None
        name = "np.r_" if tricks is np.r_ else "np.c_"
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        for item in items:
            if isinstance(item, gast.Constant) and isinstance(item.value, str):
                raise self.error(
                    f"{name} with the directive {item.value!r} is not supported: write the "
                    f"np.concatenate (or np.stack) it stands for", item)
        # a slice, np.arange's (or with a complex step np.linspace's) values there: the
        # slice object itself, slice(lo, hi, step), which np.r_ reads the same way
        elts = [_as_slice_object(item) for item in items]
        key = node.slice if not isinstance(node.slice, (gast.Tuple, gast.Slice)) else \
            gast.copy_location(gast.Tuple(elts=elts, ctx=gast.Load()), node.slice) \
            if isinstance(node.slice, gast.Tuple) else elts[0]
        made = gast.Call(func=helper_ref("index_joined"), args=[node.value, key], keywords=[])
        return gast.copy_location(made, node)


def _as_slice_object(item):
    """``lo:hi:step`` (a slice in brackets) as the expression ``slice(lo, hi,
    step)``, which a call can take; any other item as it is."""
    if not isinstance(item, gast.Slice):
        return item
    none = gast.Constant(value=None, kind=None)
    made = gast.Call(func=gast.Name(id="slice", ctx=gast.Load(), annotation=None,
                                    type_comment=None),
                     args=[item.lower or none, item.upper or none, item.step or none],
                     keywords=[])
    return gast.copy_location(made, item)
