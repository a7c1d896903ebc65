"""Derivatives of ``dict(items)`` where the compiler cannot see what ``items`` is.

``dict(P)`` of a parameter dict is a shallow copy -- a new dict of the same
arrays -- but ``P`` is an argument, a helper's result or an alias, so the
compiler cannot tell it from ``dict(zip(names, values))``, a dict made of
(key, value) pairs.  Python's ``dict`` decides as it runs (an object with
``keys()`` is copied, anything else is read as pairs, the last pair of a key
winning), and so do these two helpers, the adjoint and the tangent of
``builtins.dict``: a mapping's cotangent is the copy's, as ``d.copy()``'s is;
a pair's value gets the cotangent of its key where it is the pair ``dict``
kept, a key none.

    >>> import numpy as np
    >>> from .structures import DictCotangent
    >>> g = DictCotangent({'a': np.ones(2), 'b': 2.0})
    >>> dict_cotangent(g, {'a': 0.0, 'b': 0.0}) is g
    True
    >>> dict_cotangent(g, [('a', 1.0), ('b', 1.0), ('a', 3.0)])
    ListCotangent([TupleCotangent((0.0, 0.0)), TupleCotangent((0.0, 2.0)), TupleCotangent((0.0, array([1., 1.])))])
    >>> dict_tangent([(0.0, 1.0), (0.0, 2.0), (0.0, 3.0)], [('a', 1.0), ('b', 1.0), ('a', 3.0)])
    {'a': 3.0, 'b': 2.0}
"""

from __future__ import annotations

from .forward import sequence_tangent, zero_tangent
from .structures import TupleCotangent, ListCotangent, cotangent_at, cotangent_like, is_zero


def _kept(items) -> list:
    """The pairs of ``items`` with whether ``dict(items)`` keeps each one's
    value (the last pair of each key)."""
    pairs = list(items)
    last = {key: i for i, (key, _) in enumerate(pairs)}
    return [(pair, last[pair[0]] == i) for i, pair in enumerate(pairs)]


def dict_cotangent(g, items):
    """The cotangent of ``items`` in ``dict(items)``, whose cotangent is ``g``:
    ``g`` itself for a mapping (a copy of the same items); for pairs, each
    kept pair's value the cotangent of its key, keys and overwritten pairs none."""
    if is_zero(g) or hasattr(items, "keys"):
        return g
    parts = [cotangent_like(pair, 1, cotangent_at(g, pair[0]) if kept else 0.0)
             for pair, kept in _kept(items)]
    return TupleCotangent(parts) if isinstance(items, tuple) else ListCotangent(parts)


def dict_tangent(t, items):
    """The tangent of ``dict(items)`` where ``items`` has tangent ``t``: a new
    dict of a mapping's tangents (as the copy is a new dict of its items); for
    pairs, the tangent of the value of each key's last pair."""
    if hasattr(items, "keys"):
        return zero_tangent(dict(items)) if is_zero(t) else dict(t)
    tangents = sequence_tangent(t, items)
    found = {}
    for (pair, _), part in zip(_kept(items), tangents):
        found[pair[0]] = zero_tangent(pair[1]) if is_zero(part) else part[1]
    return found
