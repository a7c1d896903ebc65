"""Adjoint rules of containers and objects: displays, attributes, ``sum``.

A container's cotangent is a container of its elements' cotangents (see
:mod:`srcgrad.structures`), so building ``(a, b)`` hands each element its part
of the tuple's cotangent, and reading ``self.W`` gives the object a cotangent
holding ``W``'s.  ``list.append`` is an in-place update handled by the reverse
pass itself.
"""

import numpy as np

from ..ir import BUILD_DICT, BUILD_LIST, BUILD_TUPLE, CONCAT, GETATTR, REPEAT
from ..runtime import (
    AttributeCotangent,
    ListCotangent,
    cotangent_at,
    cotangent_part,
    elements_cotangent,
    keys_of,
    sequence,
    snapshot,
    unbroadcast,
    unrepeat_sequence,
    unsort,
)
from .registry import adjoint, nondifferentiable


@adjoint(BUILD_TUPLE, "elts", name="tuple display")
def build_tuple(out, d_out, *elts):
    return [cotangent_at(d_out, i) for i in range(len(elts))]


@adjoint(BUILD_LIST, "elts", name="list display")
def build_list(out, d_out, *elts):
    return [cotangent_at(d_out, i) for i in range(len(elts))]


@adjoint(CONCAT, "a", "b", name="sequence +")
def concat_(out, d_out, a, b):
    """Each operand gets its own part of the cotangent (not all of it, as in
    array addition)."""
    return cotangent_part(d_out, 0, len(a)), cotangent_part(d_out, len(a))


@adjoint(REPEAT, "a", name="sequence *")
def repeat_(out, d_out, a, n):
    return unrepeat_sequence(d_out, len(a))


@adjoint(list, "iterable", name="list")
def list_(out, d_out, iterable=()):
    """A new list of the same elements (an array's rows, a dict's keys)."""
    return elements_cotangent(d_out, iterable)


@adjoint(tuple, "iterable", name="tuple")
def tuple_(out, d_out, iterable=()):
    return elements_cotangent(d_out, iterable)


@adjoint(sorted, "iterable", name="sorted")
def sorted_(out, d_out, iterable, *, key=None, reverse=False):
    """A permutation: each element gets the cotangent of its place in the result
    (a dict's keys, which ``sorted(d)`` returns, get none)."""
    return unsort(d_out, iterable, key, reverse)


@adjoint(BUILD_DICT, "values", name="dict display")
def build_dict(out, d_out, keys, *values):
    return [cotangent_at(d_out, key) for key in keys]


@adjoint(GETATTR, "obj", name="attribute")
def getattr_(out, d_out, obj, name):
    return AttributeCotangent({name: d_out})


@adjoint(sequence, "items", name="sequence")
def sequence_(out, d_out, items):
    """A list, tuple or array passes through; a dict's keys carry no cotangent.
    Decided by the type of ``items``, not by ``out is items``: a policy that
    recomputes both makes two objects of one value."""
    return d_out if isinstance(items, (list, tuple, np.ndarray)) else 0.0


nondifferentiable(keys_of, name="keys_of")


@adjoint(snapshot, "value", name="snapshot")
def snapshot_(out, d_out, value):
    """A copy: the cotangent passes through."""
    return d_out


@adjoint(sum, "iterable", "start", name="sum")
def sum_(out, d_out, iterable, start=0):
    """``start`` is added like any element (``sum(xs, x0)``)."""
    return ListCotangent([unbroadcast(d_out, x) for x in iterable]), unbroadcast(d_out, start)
