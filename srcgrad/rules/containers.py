"""Rules of containers and objects: displays, attributes, ``sum``, both modes.

A container's cotangent is a container of its elements' cotangents (see
:mod:`srcgrad.runtime.structures`), so building ``(a, b)`` hands each element
its part of the tuple's cotangent, and reading ``self.W`` gives the object a
cotangent holding ``W``'s.  A container's tangent is a container of the same
kind holding its elements' tangents (zeros for elements that do not move):
``(a, b)`` has tangent ``(d_a, d_b)``, a list display a fresh list, which the
tangent code may append to beside the value, a dict display a dict with the
same keys; an object's tangent is an object of the same kind or a dict by
attribute name, so reading ``self.W`` reads ``tangent_attr(d_self, self,
"W")``.  ``list.append`` is an in-place update handled by the passes
themselves.
"""

import collections
import copy

from ..ir import (
    BUILD_DICT,
    BUILD_LIST,
    BUILD_NAMEDTUPLE,
    BUILD_RECORD,
    BUILD_TUPLE,
    CONCAT,
    DICT_COPY,
    GETATTR,
    REPEAT,
)
from ..runtime import (
    ListCotangent,
    attribute_grad,
    cotangent_at,
    cotangent_part,
    dict_cotangent,
    dict_tangent,
    field_cotangents,
    elements_cotangent,
    expand,
    index_of_max,
    index_of_min,
    iterated_as_is,
    keys_of,
    kept_apart,
    merge_cotangent,
    merge_tangent,
    merged,
    private_copy,
    replaced,
    replaced_cotangents,
    replaced_tangent,
    sequence,
    sequence_to_stop,
    sequence_tangent,
    snapshot,
    sorted_order,
    tangent_attr,
    unbroadcast,
    unrepeat_sequence,
    unsort,
    zero_tangent,
)
from .derive import alias, linear
from .registry import adjoint, nondifferentiable, tangent


@adjoint(BUILD_TUPLE, "elts", name="tuple display")
def build_tuple(out, d_out, *elts):
    return [cotangent_at(d_out, i) for i in range(len(elts))]


@tangent(BUILD_TUPLE, "elts", name="tuple display")
def build_tuple_tangent(out, *elts, d_elts):
    return d_elts


@adjoint(BUILD_LIST, "elts", name="list display")
def build_list(out, d_out, *elts):
    return [cotangent_at(d_out, i) for i in range(len(elts))]


@tangent(BUILD_LIST, "elts", name="list display")
def build_list_tangent(out, *elts, d_elts):
    return [t for t in d_elts]


@adjoint(BUILD_NAMEDTUPLE, "elts", name="named tuple")
def build_named_tuple(out, d_out, *elts):
    """``P(a, b)`` for a named tuple class ``P`` (its fields in order): each
    field gets its item of the cotangent, which reads by position whether the
    field was read as ``p.W`` or ``p[0]``."""
    return [cotangent_at(d_out, i) for i in range(len(elts))]


@tangent(BUILD_NAMEDTUPLE, "elts", name="named tuple")
def build_named_tuple_tangent(out, *elts, d_elts):
    """A named tuple of the same class, so that ``p.W`` reads its field's tangent."""
    return type(out)(*d_elts)


@adjoint(BUILD_RECORD, "elts", name="dataclass")
def build_record(out, d_out, *elts):
    """``Lin(a, b)`` for a dataclass ``Lin`` that only stores its fields: each
    field gets the cotangent its attribute reads (``m.w``) gave the object."""
    return field_cotangents(d_out, out)


@tangent(BUILD_RECORD, "elts", name="dataclass")
def build_record_tangent(out, *elts, d_elts):
    """An object of the same class, so that ``m.w`` reads its field's tangent."""
    return type(out)(*d_elts)


@adjoint(replaced, "parts", name="._replace()")
def replaced_(out, d_out, names, *parts):
    """``p._replace(W=v)`` of a named tuple whose class is known when the code
    runs: ``v`` gets the cotangent of field ``W``, ``p`` that of the others."""
    return replaced_cotangents(d_out, names, out)


@tangent(replaced, "parts", name="._replace()")
def replaced_tangent_(out, names, *parts, d_parts):
    """A named tuple of the same class: the new values' tangents in their fields."""
    return replaced_tangent(out, names, parts, d_parts)


@adjoint(replaced_tangent, "tangents", name="replaced_tangent")
def replaced_tangent_adjoint(out, d_out, value, names, parts, tangents):
    """Linear in the tangents: their cotangents are those of ``_replace`` itself."""
    return replaced_cotangents(d_out, names, value)


@tangent(replaced_tangent, "tangents", name="replaced_tangent")
def replaced_tangent_tangent(out, value, names, parts, tangents, d_tangents):
    return replaced_tangent(value, names, parts, d_tangents)


@adjoint(CONCAT, "a", "b", name="sequence +")
def concat_(out, d_out, a, b):
    """Each operand gets its own part of the cotangent (not all of it, as in
    array addition)."""
    return cotangent_part(d_out, 0, len(a)), cotangent_part(d_out, len(a))


@tangent(CONCAT, "parts", name="sequence +")
def concat_tangent(out, *parts, d_parts):
    """One term, the concatenation (the tangent terms of two operands would be
    added, and ``+`` of two tangent tuples concatenates them)."""
    return sequence_tangent(d_parts[0], parts[0]) + sequence_tangent(d_parts[1], parts[1])


@adjoint(REPEAT, "a", name="sequence *")
def repeat_(out, d_out, a, n):
    return unrepeat_sequence(d_out, len(a))


@tangent(REPEAT, "a", name="sequence *")
def repeat_tangent(out, a, n, d_a):
    return sequence_tangent(d_a, a) * n


@adjoint(copy.deepcopy, "x", name="copy.deepcopy")
def deepcopy(out, d_out, x):
    """``copy.deepcopy`` of an array or a dict, list or tuple of them: new
    arrays of the same numbers, so the cotangent passes through as it is."""
    return d_out


@tangent(copy.deepcopy, "x", name="copy.deepcopy")
def deepcopy_tangent(out, x, *, d_x):
    """The tangent copied as deep (every array in it a new one), as the copy is."""
    return kept_apart(d_x)


@adjoint(copy.copy, "x", name="copy.copy")
def shallow_copy(out, d_out, x):
    """``copy.copy`` of an array (a new one of the same numbers) or of a dict,
    list or tuple (a new one holding the same items, which analysis/sharing
    knows it holds): the cotangent passes through as it is."""
    return d_out


@tangent(copy.copy, "x", name="copy.copy")
def shallow_copy_tangent(out, x, *, d_x):
    """The tangent copied apart, as :func:`deepcopy_tangent`'s: the copy's
    values are its operand's, and no update of one reaches the other's tangent."""
    return kept_apart(d_x)


@adjoint(list, "iterable", name="list")
def list_(out, d_out, iterable=()):
    """A new list of the same elements (an array's rows, a dict's keys)."""
    return elements_cotangent(d_out, iterable)


@tangent(list, "iterable", name="list")
def list_tangent(out, iterable=(), *, d_iterable):
    if isinstance(iterable, dict):
        return zero_tangent(out)
    return list(sequence_tangent(d_iterable, iterable))


@adjoint(tuple, "iterable", name="tuple")
def tuple_(out, d_out, iterable=()):
    return elements_cotangent(d_out, iterable)


@tangent(tuple, "iterable", name="tuple")
def tuple_tangent(out, iterable=(), *, d_iterable):
    if isinstance(iterable, dict):
        return zero_tangent(out)
    return tuple(sequence_tangent(d_iterable, iterable))


@adjoint(sorted, "iterable", name="sorted")
def sorted_(out, d_out, iterable, *, key=None, reverse=False):
    """A permutation: each element gets the cotangent of its place in the result
    (a dict's keys, which ``sorted(d)`` returns, get none)."""
    return unsort(d_out, iterable, key, reverse)


@tangent(sorted, "iterable", name="sorted")
def sorted_tangent(out, iterable, *, key=None, reverse=False, d_iterable):
    """The tangents in the order of the values (zeros for a dict's keys)."""
    if isinstance(iterable, dict):
        return zero_tangent(out)
    return [sequence_tangent(d_iterable, iterable)[i]
            for i in sorted_order(iterable, key, reverse)]


@adjoint(BUILD_DICT, "values", name="dict display")
def build_dict(out, d_out, keys, *values):
    return [cotangent_at(d_out, key) for key in keys]


@tangent(BUILD_DICT, "values", name="dict display")
def build_dict_tangent(out, keys, *values, d_values):
    return {keys[i]: d_values[i] for i in range(len(keys))}


@adjoint(DICT_COPY, "mapping", name="dict copy")
def dict_copy(out, d_out, mapping):
    """``d.copy()``, ``dict(d)``, ``copy.copy(d)`` of a dict: a new dict of the
    same items, so the cotangent passes through."""
    return d_out


@tangent(DICT_COPY, "mapping", name="dict copy")
def dict_copy_tangent(out, mapping, *, d_mapping):
    """A new dict of the same tangents, as the value is one of the same items."""
    return snapshot(d_mapping)


@adjoint(dict, "iterable", name="dict")
def dict_(out, d_out, iterable=()):
    """``dict(items)`` where the compiler cannot tell what ``items`` is (a
    parameter, a helper's result; a dict it can see is a ``dict copy``): a
    mapping's copy passes the cotangent through, pairs give each kept pair's
    value its key's, as ``dict`` decides when it runs (runtime/dicts.py)."""
    return dict_cotangent(d_out, iterable)


@tangent(dict, "iterable", name="dict")
def dict_tangent_(out, iterable=(), *, d_iterable):
    return dict_tangent(d_iterable, iterable)


# collections.OrderedDict(items): a dict keeping the order it was given (review s37
# R5-8), differentiated as dict(items) is; OrderedDict(a=x, b=y) comes here as
# OrderedDict({'a': x, 'b': y}) (normalize/sugar.py), the same order
alias(collections.OrderedDict, dict, name="collections.OrderedDict")


@linear(dict_cotangent, "g", name="dict_cotangent")
def dict_cotangent_(out, d_out, g, items):
    """Linear in ``g``: its transpose takes a cotangent of ``items`` to one of
    the dict, as the tangent rule of ``dict`` does (second order)."""
    return dict_tangent(d_out, items)


@linear(dict_tangent, "t", name="dict_tangent")
def dict_tangent__(out, d_out, t, items):
    return dict_cotangent(d_out, items)


@adjoint(merged, "a", "b", name="dict merge")
def merged_(out, d_out, a, b):
    """``a | b`` of dicts: each item's cotangent goes back to the dict it came
    from (``b`` where it has the key); a bitwise or gets none (decided by the
    result's type as the code runs: normalize/dict_merges.py)."""
    return merge_cotangent(d_out, out, b, 0), merge_cotangent(d_out, out, b, 1)


@tangent(merged, "a", "b", name="dict merge")
def merged_tangent(out, a, b, d_a, d_b):
    return merge_tangent(out, b, d_a, 0), merge_tangent(out, b, d_b, 1)


@linear(merge_tangent, "t", name="merge_tangent")
def merge_tangent_(out, d_out, value, b, t, side):
    """The items of ``t`` at one side's keys: the cotangent goes back to them."""
    return merge_cotangent(d_out, value, b, side)


@adjoint(GETATTR, "obj", name="attribute")
def getattr_(out, d_out, obj, name):
    """A named tuple's field is an item: its cotangent goes by position."""
    return attribute_grad(d_out, obj, name)


@tangent(GETATTR, "obj", name="attribute")
def getattr_tangent(out, obj, name, d_obj):
    return tangent_attr(d_obj, obj, name)


@adjoint(sequence, "items", name="sequence")
def sequence_(out, d_out, items):
    """A list, tuple or array passes through; a dict's keys carry no cotangent.
    Decided by the type of ``items``, not by ``out is items``: a policy that
    recomputes both makes two objects of one value; a Dask or CuPy array passes
    through too."""
    return d_out if iterated_as_is(items) else 0.0


@tangent(sequence, "items", name="sequence")
def sequence_tangent_(out, items, d_items):
    """With its tangent, or none for a dict's keys (what a loop over a dict
    runs over)."""
    return d_items if out is items else zero_tangent(out)


@adjoint(sequence_to_stop, "items", name="sequence_to_stop")
def sequence_to_stop_(out, d_out, items, where=None):
    """A list, tuple or array passes through (anything else was refused)."""
    return d_out


@tangent(sequence_to_stop, "items", name="sequence_to_stop")
def sequence_to_stop_tangent(out, items, where=None, *, d_items):
    return d_items


nondifferentiable(keys_of, name="keys_of")
# the position of the item max(xs) / min(xs) returns: ``max(xs, key=k, default=d)``
# runs as ``i = index_of_max(xs, key=k, empty_ok=True); xs[i] if i >= 0 else d``
nondifferentiable(index_of_max, name="index_of_max")
nondifferentiable(index_of_min, name="index_of_min")
# xs.index(v), xs.count(v) of a list or tuple: positions and counts (integers), found
# by equality, piecewise constant in the items (normalize/calls.py: the receiver
# certainly a list or tuple; either's method, which the code calls by name)
nondifferentiable(list.index, name="list.index")
nondifferentiable(list.count, name="list.count")


@linear(snapshot, "value", name="snapshot")
def snapshot_(out, d_out, value):
    """A copy: the cotangent passes through, the tangent is copied too."""
    return d_out


@linear(kept_apart, "value", name="kept_apart")
def kept_apart_(out, d_out, value):
    """Arrays copied, containers rebuilt (copy.deepcopy's tangent, differentiated
    again by hvp): the cotangent passes through, the tangent is copied too."""
    return d_out


@linear(private_copy, "value", name="private_copy")
def private_copy_(out, d_out, value):
    """A copy of an argument, arrays inside it too: the cotangent passes through,
    the tangent is copied too."""
    return d_out


@adjoint(sum, "iterable", "start", name="sum")
def sum_(out, d_out, iterable, start=0):
    """``start`` is added like any element (``sum(xs, x0)``); ``sum(d)`` of a dict
    adds its keys, which carry no derivative (findings R1-9)."""
    if isinstance(iterable, dict):
        return 0.0, unbroadcast(d_out, start)
    return ListCotangent([unbroadcast(d_out, x) for x in iterable]), unbroadcast(d_out, start)


@tangent(sum, "iterable", "start", name="sum")
def sum_tangent(out, iterable, start=0, *, d_iterable, d_start):
    """The tangents broadcast against each other as the elements do; only a
    ``start`` other than the default 0 may widen the output further, and may
    move itself (``sum(xs, x0)``).  A dict's keys carry none."""
    if isinstance(iterable, dict):
        return zero_tangent(out), expand(d_start, out)
    if isinstance(start, int) and start == 0:
        return sum(d_iterable), d_start
    return expand(sum(d_iterable), out), expand(d_start, out)
