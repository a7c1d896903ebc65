"""``np.r_[...]`` and ``np.c_[...]``: NumPy's concatenation written as indexing.

``np.r_`` and ``np.c_`` are objects whose ``__getitem__`` concatenates what
it is given (``np.r_[x, x ** 2]``, ``np.c_[x, np.sin(x)]``).  Read by its
syntax, ``np.r_[x, y]`` is an indexing read of a constant, whose index
carries no derivative: a zero gradient, silently (review s36 R4-8).  The
subscript is the call it stands for, differentiated by the rules of those
functions, its value the same array bit for bit:

- ``np.r_[a, b, ...]`` is ``np.concatenate([np.atleast_1d(a), ...])`` (the
  items joined along the first axis, a scalar as a one-item array), a slice
  ``lo:hi:step`` the ``np.arange(lo, hi, step)`` it stands for and a slice
  with a complex constant step ``lo:hi:nj`` the ``np.linspace(lo, hi, n)``;
- ``np.c_[a, b, ...]`` is ``np.column_stack([a, b, ...])`` (1-d items as
  columns, 2-d ones joined along their last axis).

A string directive (``np.r_['0,2', a, b]``) is refused, located, with the
call to write instead.

    >>> import gast, numpy as np
    >>> class Owner(IndexTricks):
    ...     def callee(self, call):
    ...         return np.r_
    ...     def static_reference(self, value):
    ...         return gast.Attribute(value=gast.Name(id="np", ctx=gast.Load(),
    ...             annotation=None, type_comment=None), attr=value.__name__, ctx=gast.Load())
    >>> node = gast.parse("np.r_[x, 0:3, y ** 2]").body[0].value
    >>> print(gast.unparse(Owner().concatenation(node)))
    np.concatenate([np.atleast_1d(x), np.arange(0, 3, 1), np.atleast_1d(y ** 2)])
"""

from __future__ import annotations

import gast
import numpy as np



def _call(func, args):
    return gast.Call(func=func, args=list(args), keywords=[])


def _zero():
    return gast.Constant(value=0, kind=None)


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
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        for item in items:
            if isinstance(item, gast.Constant) and isinstance(item.value, str):
                raise self.error(
                    f"np.{'r' if tricks is np.r_ else 'c'}_ with the directive "
                    f"{item.value!r} is not supported: write the np.concatenate (or "
                    f"np.stack) it stands for", item)
        def ref(fn):  # np.concatenate, or a name bound to it (from numpy import r_)
            return self.static_reference(fn) or self.bound_value(fn, node)

        if tricks is np.c_:
            for item in items:
                if isinstance(item, gast.Slice):
                    raise self.error(
                        "a slice in np.c_[...] is not supported: write the np.arange or "
                        "np.linspace it stands for", item)
            made = _call(ref(np.column_stack), [gast.List(elts=items, ctx=gast.Load())])
        else:
            made = _call(ref(np.concatenate), [gast.List(elts=[
                self._range(item) if isinstance(item, gast.Slice)
                else _call(ref(np.atleast_1d), [item]) for item in items], ctx=gast.Load())])
        return gast.copy_location(made, node)

    def _range(self, item):
        """``lo:hi:step`` of ``np.r_``: ``np.arange(lo, hi, step)``, or for a
        complex constant step ``nj``, ``np.linspace(lo, hi, n)``."""
        lower = item.lower or _zero()
        step = item.step
        if isinstance(step, gast.Constant) and isinstance(step.value, complex):
            count = gast.Constant(value=int(abs(step.value)), kind=None)
            return _call(self.static_reference(np.linspace) or self.bound_value(
                np.linspace, item), [lower, item.upper, count])
        if item.upper is None or (step is not None and not isinstance(step, gast.Constant)):
            raise self.error(
                "this slice in np.r_[...] is not supported: write the np.arange or "
                "np.linspace it stands for", item)
        return _call(self.static_reference(np.arange) or self.bound_value(np.arange, item),
                     [lower, item.upper, step or gast.Constant(value=1, kind=None)])
