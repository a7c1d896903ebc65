"""Cotangents of containers and objects.

The cotangent of a list, tuple or dict of arrays is a container of the same
shape holding the elements' cotangents, with ``0.0`` where none reached.  The
adjoint sweep accumulates every cotangent with ``+`` (``d_x = d_x + g``), so
these containers add element by element instead of concatenating; ``0.0``
stands for "nothing yet" and is the identity of that addition.  Objects (a
dataclass, a model with array attributes) get an :class:`AttributeCotangent`
keyed by attribute name.  :func:`gradient_like` finally turns a cotangent back
into the structure of the argument it belongs to.

    >>> import numpy as np
    >>> a = ListCotangent([np.ones(2), 0.0])
    >>> b = ListCotangent([0.0, 2.0])
    >>> a + b
    ListCotangent([array([1., 1.]), 2.0])
    >>> 0.0 + a is a
    True
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from .namespaces import foreign, fresh_like


def is_zero(g) -> bool:
    """``0.0`` (or any number zero) means: no cotangent has arrived."""
    return isinstance(g, (int, float)) and not isinstance(g, bool) and g == 0


def no_cotangent(g) -> bool:
    """Whether ``g`` is a scalar zero standing for a whole array of zeros: the 0.0
    of no cotangent (:func:`is_zero`), perhaps moved on the way by an adjoint
    (``np.transpose(0.0)`` is a 0-d array, ``0.0 * s`` a NumPy float).  The
    adjoints of shape operations check it before reshaping a cotangent."""
    if isinstance(g, np.ndarray):
        return g.ndim == 0 and not g
    return isinstance(g, (int, float, np.number)) and not isinstance(g, bool) and g == 0


def add(a, b):
    """Structured sum of two cotangents."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if isinstance(a, dict):
        out = dict(a)
        for key, value in b.items():
            out[key] = add(out[key], value) if key in out else value
        return type(a)(out)
    if isinstance(a, (list, tuple)):
        return type(a)(add(x, y) for x, y in zip(a, b))
    return a + b


class _Structured:
    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __repr__(self):
        return f"{type(self).__name__}({super().__repr__()})"


class ListCotangent(_Structured, list):
    """The cotangent of a list."""


class TupleCotangent(_Structured, tuple):
    """The cotangent of a tuple."""


class DictCotangent(_Structured, dict):
    """The cotangent of a dict (missing keys: no cotangent)."""


class AttributeCotangent(_Structured, dict):
    """The cotangent of an object, by attribute name."""


def cotangent_like(container, index, g):
    """A cotangent of ``container`` that is ``g`` at ``index`` and zero elsewhere."""
    if isinstance(container, dict):
        return DictCotangent({index: g})
    n = len(container)
    parts = [0.0] * n
    if is_zero(g):  # nothing reached the item (a loop over an empty slice)
        pass
    elif isinstance(index, slice):
        for k, gk in zip(range(n)[index], g):
            parts[k] = gk
    else:
        parts[index] = g
    return TupleCotangent(parts) if isinstance(container, tuple) else ListCotangent(parts)


def cotangent_at(g, key):
    """Element ``key`` of a structured cotangent (``0.0`` if none arrived)."""
    if is_zero(g):
        return 0.0
    if isinstance(g, dict):
        return g.get(key, 0.0)
    return g[key]


def cotangent_part(g, start, stop=None):
    """Elements ``start:stop`` of a sequence's cotangent, as a cotangent (so that
    adding two of them adds element by element); ``0.0`` if none arrived."""
    if is_zero(g):
        return 0.0
    part = g[start:stop]
    return TupleCotangent(part) if isinstance(g, tuple) else ListCotangent(part)


def unrepeat_sequence(g, n):
    """The cotangent of ``a`` in ``a * k``: the sum of the ``k`` copies' parts."""
    if is_zero(g) or n == 0:
        return 0.0
    total = 0.0
    for start in range(0, len(g), n):
        total = add(total, cotangent_part(g, start, start + n))
    return total


def elements_cotangent(g, x):
    """The cotangent of ``x`` in ``list(x)`` or ``tuple(x)``: a sequence's as it
    is (in ``x``'s kind), an array's rows stacked back into an array."""
    if is_zero(g):
        return 0.0
    if isinstance(x, np.ndarray) or foreign(x):
        rows = [np.zeros(x.shape[1:], like=x) if is_zero(r) else r for r in g]
        return np.stack(rows) if rows else np.zeros(x.shape, like=x)
    if isinstance(x, dict):
        return 0.0  # list(d): the keys
    return TupleCotangent(g) if isinstance(x, tuple) else ListCotangent(g)


def sorted_order(items, key=None, reverse=False) -> list:
    """The positions of ``items`` in the order ``sorted`` puts them (stable, like
    ``sorted``); a dict's keys carry no derivative, so an empty list for one."""
    if isinstance(items, dict):
        return []
    items = list(items)
    rank = items.__getitem__ if key is None else (lambda i: key(items[i]))
    return sorted(range(len(items)), key=rank, reverse=reverse)


def unsort(g, items, key=None, reverse=False):
    """The cotangent of ``items`` in ``sorted(items)``: each element gets the
    cotangent of the place it was sorted to (none for a dict's keys)."""
    if is_zero(g) or isinstance(items, dict):
        return 0.0
    parts = [0.0] * len(g)
    for place, i in enumerate(sorted_order(items, key, reverse)):
        parts[i] = g[place]
    return TupleCotangent(parts) if isinstance(items, tuple) else ListCotangent(parts)


def attribute_cotangent(g, name):
    """The cotangent of attribute ``name`` (``0.0`` if none arrived)."""
    return 0.0 if is_zero(g) else g.get(name, 0.0)


def drop_last(g):
    """The cotangent of a list before ``append``: ``g`` without its last element."""
    return g if is_zero(g) else ListCotangent(g[:-1])


def item_cotangent(g, x, index):
    """The part of ``x``'s cotangent ``g`` that belongs to ``x[index]``."""
    if isinstance(x, (list, dict)):
        if isinstance(index, slice):
            return 0.0 if is_zero(g) else ListCotangent(list(g)[index])
        return cotangent_at(g, index)
    return np.broadcast_to(g, np.shape(x))[index]


def without_item(g, x, index):
    """``x``'s cotangent ``g`` with ``x[index]`` zeroed: after ``x[index] = v``,
    the old elements there no longer reach the output."""
    if isinstance(x, (list, dict)):
        if is_zero(g):
            return g
        if isinstance(g, dict):
            return DictCotangent((k, v) for k, v in g.items() if k != index)
        parts = list(g)
        for k in (range(len(parts))[index] if isinstance(index, slice) else [index]):
            parts[k] = 0.0
        return ListCotangent(parts)
    g = fresh_like(g, x) if foreign(g) or foreign(x) else np.array(np.broadcast_to(g, np.shape(x)))
    g[index] = 0
    return g


def keys_of(mapping):
    """The keys of a dict, as a list (what ``for k in d`` runs over)."""
    return list(mapping)


def sequence(items):
    """What ``for x in items`` runs over, indexable by position: a list, tuple or
    array as it is; any other iterable (a dict: its keys) as a list."""
    return items if iterated_as_is(items) else list(items)


def iterated_as_is(items) -> bool:
    """Whether :func:`sequence` runs over ``items`` itself -- a list, a tuple, a
    NumPy array or a Dask or CuPy one -- so that the cotangent of what the loop
    reads is ``items``'s own (a dict's keys carry none)."""
    return isinstance(items, (list, tuple, np.ndarray)) or foreign(items)


def is_differentiable_leaf(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    return foreign(value) and np.dtype(value.dtype).kind in "fc"  # a Dask or CuPy array


def gradient_like(g, x, leaf):
    """``g`` in the structure of ``x``; ``leaf(g, x)`` converts each array or float."""
    if isinstance(x, dict):
        return type(x)((k, gradient_like(cotangent_at(g, k), v, leaf)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        parts = [gradient_like(cotangent_at(g, i), v, leaf) for i, v in enumerate(x)]
        if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple
            return type(x)(*parts)
        return type(x)(parts)
    if is_differentiable_leaf(x):
        return leaf(0.0 if is_zero(g) else g, x)
    if hasattr(x, "__dict__") and not isinstance(x, type):
        grads = {k: gradient_like(attribute_cotangent(g, k), v, leaf)
                 for k, v in vars(x).items() if has_differentiable_leaves(v)}
        if dataclasses.is_dataclass(x):
            return dataclasses.replace(x, **{k: v for k, v in grads.items()
                                             if k in {f.name for f in dataclasses.fields(x)}})
        out = copy.copy(x)
        for k, v in grads.items():
            setattr(out, k, v)
        return out
    return None


def has_differentiable_leaves(x) -> bool:
    """Whether ``x`` is, or holds, a float or a float array."""
    if is_differentiable_leaf(x):
        return True
    if isinstance(x, dict):
        return any(has_differentiable_leaves(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(has_differentiable_leaves(v) for v in x)
    if hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x):
        return any(has_differentiable_leaves(v) for v in vars(x).values())
    return False
