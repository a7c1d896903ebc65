"""A list's cotangent that the adjoint sweep owns, popped in place.

The adjoint of ``xs.append(v)`` gives ``v`` the last element of ``xs``'s
cotangent and leaves ``xs``'s cotangent the rest: :func:`.structures.drop_last`
returns a new list of all but the last element, as it must where another name
may hold the list.  In a loop of ``n`` appends that is ``n**2 / 2`` element
copies: 39 times the function's time at ``n = 32000`` (issue 16, scope 5).

:func:`drop_last_in_place` copies the list once, into an
:class:`OwnedListCotangent`, and pops from that copy in place from then on.
The compiler writes it (optimize/owned_lists.py) only for a cotangent name
whose every read is ``cotangent_at(d, k)``, ``d = drop_last_in_place(d)`` or
``d = d + e``: an owned list then never reaches another name, so no one else
sees it shrink.  The elements are the same objects either way, so the
gradient is bit for bit the same.

    >>> import numpy as np
    >>> d = ListCotangent([np.ones(1), 2.0, 3.0])
    >>> e = drop_last_in_place(d)         # the first time: a copy
    >>> e, d
    (OwnedListCotangent([array([1.]), 2.0]), ListCotangent([array([1.]), 2.0, 3.0]))
    >>> drop_last_in_place(e) is e        # then: popped in place
    True
    >>> e
    OwnedListCotangent([array([1.])])
    >>> drop_last_in_place(0.0)           # no cotangent reached the list
    0.0

A read of one item, ``ys[k]``, adds its cotangent to the list's: ``d_ys = d_ys
+ getitem_grad(g, ys, k)`` builds a list as long as ``ys`` of zeros but one
and adds it element by element.  :func:`item_added_in_place` adds ``g`` at
``k`` of an owned list instead (the same sums, in the same order).

    >>> item_added_in_place(e, np.ones(1), [np.zeros(1)], -1) is e
    True
    >>> e
    OwnedListCotangent([array([2.])])
"""

from __future__ import annotations

from .indexing import getitem_grad
from .structures import ListCotangent, add, is_zero


class OwnedListCotangent(ListCotangent):
    """A list's cotangent that :func:`drop_last_in_place` made, which only the
    one cotangent name that received it holds (optimize/owned_lists.py)."""


def drop_last_in_place(g):
    """The cotangent of a list before ``append``: ``g`` without its last element,
    popped from ``g`` itself where ``g`` is an :class:`OwnedListCotangent`
    (made by an earlier call, held by no other name), else copied into one."""
    if is_zero(g):
        return g
    if type(g) is OwnedListCotangent:
        g.pop()
        return g
    return OwnedListCotangent(g[:-1])


def item_added_in_place(g, d_item, items, index):
    """``g + getitem_grad(d_item, items, index)``: the cotangent of the list
    ``items`` after its item ``index`` was read, where that read's is
    ``d_item``.  Added at ``index`` of ``g`` itself where ``g`` is an
    :class:`OwnedListCotangent` as long as the list and ``index`` an int, else
    as written.  Element by element the same sum: every other element of the
    sum is ``g``'s own (``add(x, 0.0)`` is ``x``)."""
    if type(g) is OwnedListCotangent and type(items) is list and type(index) is int \
            and len(g) == len(items):
        g[index] = add(g[index], d_item)
        return g
    return g + getitem_grad(d_item, items, index)
