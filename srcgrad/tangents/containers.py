"""Tangent rules of containers and objects: displays, attributes, ``sum``.

A container's tangent is a container of the same kind holding its elements'
tangents (zeros for elements that do not move): ``(a, b)`` has tangent
``(d_a, d_b)``; a list display a fresh list, which the tangent code may append
to beside the value; a dict display a dict with the same keys.  An object's
tangent is an object of the same kind or a dict by attribute name, so reading
``self.W`` reads ``tangent_attr(d_self, self, "W")``.  ``list.append`` is an
in-place update handled by forward mode itself.
"""

from ..ir import BUILD_DICT, BUILD_LIST, BUILD_TUPLE, CONCAT, GETATTR, REPEAT
from ..rules.registry import tangent
from ..runtime import (
    expand,
    sequence,
    sequence_tangent,
    snapshot,
    sorted_order,
    tangent_attr,
    zero_tangent,
)


@tangent(BUILD_TUPLE, "elts", name="tuple display")
def build_tuple(out, *elts, d_elts):
    return d_elts


@tangent(BUILD_LIST, "elts", name="list display")
def build_list(out, *elts, d_elts):
    return [t for t in d_elts]


@tangent(CONCAT, "parts", name="sequence +")
def concat_(out, *parts, d_parts):
    """One term, the concatenation (the tangent terms of two operands would be
    added, and ``+`` of two tangent tuples concatenates them)."""
    return sequence_tangent(d_parts[0], parts[0]) + sequence_tangent(d_parts[1], parts[1])


@tangent(REPEAT, "a", name="sequence *")
def repeat_(out, a, n, d_a):
    return sequence_tangent(d_a, a) * n


@tangent(list, "iterable", name="list")
def list_(out, iterable=(), *, d_iterable):
    if isinstance(iterable, dict):
        return zero_tangent(out)
    return list(sequence_tangent(d_iterable, iterable))


@tangent(tuple, "iterable", name="tuple")
def tuple_(out, iterable=(), *, d_iterable):
    if isinstance(iterable, dict):
        return zero_tangent(out)
    return tuple(sequence_tangent(d_iterable, iterable))


@tangent(sorted, "iterable", name="sorted")
def sorted_(out, iterable, *, key=None, reverse=False, d_iterable):
    """The tangents in the order of the values (zeros for a dict's keys)."""
    if isinstance(iterable, dict):
        return zero_tangent(out)
    return [sequence_tangent(d_iterable, iterable)[i]
            for i in sorted_order(iterable, key, reverse)]


@tangent(BUILD_DICT, "values", name="dict display")
def build_dict(out, keys, *values, d_values):
    return {keys[i]: d_values[i] for i in range(len(keys))}


@tangent(GETATTR, "obj", name="attribute")
def getattr_(out, obj, name, d_obj):
    return tangent_attr(d_obj, obj, name)


@tangent(sequence, "items", name="sequence")
def sequence_(out, items, d_items):
    """A list, tuple or array passes through with its tangent; a dict's keys
    (what a loop over a dict runs over) carry none."""
    return d_items if out is items else zero_tangent(out)


@tangent(snapshot, "value", name="snapshot")
def snapshot_(out, value, d_value):
    """A copy of the value, so a copy of its tangent."""
    return snapshot(d_value)


@tangent(sum, "iterable", "start", name="sum")
def sum_(out, iterable, start=0, *, d_iterable, d_start):
    """The tangents broadcast against each other as the elements do; only a
    ``start`` other than the default 0 may widen the output further, and may
    move itself (``sum(xs, x0)``)."""
    if isinstance(start, int) and start == 0:
        return sum(d_iterable), d_start
    return expand(sum(d_iterable), out), expand(d_start, out)
