"""Runtime helpers of generated forward-mode (tangent) code.

Kept apart from :mod:`srcgrad.runtime` (which re-exports them, so generated code and
``srcgrad.export`` find every helper by the same names): a tangent is shaped
like its value, so these helpers widen a term to its output's shape
(``expand``), make the zeros of a value that does not move (``zero_tangent``),
give an updated array a private tangent (``fresh_tangent``), shape the tangent
handed back to the caller (``tangent_like``), read an object's tangent
attribute (``tangent_attr``) and add the terms of a value that is an array or a
tuple of arrays, as only the run shows (``add_parts``).  ``missing_tangent``
stands for a tangent that does not exist and raises where it is used.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from .errors import error_at
from .namespaces import foreign, fresh_like
from .structures import (
    AttributeCotangent,
    DictCotangent,
    array_attribute,
    computed_attribute,
    computed_by,
    cotangent_at,
    gradient_like,
    holds_floats,
    is_namedtuple,
    is_zero,
    object_fields,
)


def expand(t, like):
    """The tangent term ``t`` of an operand, broadcast to the shape of the output
    ``like`` (``x + b`` with a scalar ``b`` moving only: its term has ``b``'s shape)."""
    shape = np.shape(like)
    if np.shape(t) == shape:
        return t
    return np.broadcast_to(t, shape)


def add_parts(a, b):
    """``a + b`` for two tangent terms of a value that is an array or a tuple of
    arrays (``np.gradient`` with one spacing: a tuple for an array of two or more
    dimensions): arrays add, tuples add part by part, as ``+`` would not."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if isinstance(a, (tuple, list)):
        return tuple(add_parts(x, y) for x, y in zip(a, b))
    return a + b


class MissingTangent:
    """A tangent that does not exist (the extra singular vectors of a non-square
    matrix's full SVD are not unique): generated code may hold it, as a part of
    an output whose other parts have tangents, and any use of it raises
    :class:`~srcgrad.MissingRuleError` with ``message``.  Unused, it costs nothing."""

    __slots__ = ("message", "where")

    def __init__(self, message, where=None):
        self.message, self.where = message, where

    def _refuse(self, *args, **kwargs):
        raise error_at("MissingRuleError", self.message, self.where)

    __array__ = __array_ufunc__ = __array_function__ = _refuse
    __getitem__ = __iter__ = __len__ = __bool__ = __float__ = __complex__ = __index__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __pow__ = __rpow__ = _refuse
    __neg__ = __pos__ = __abs__ = _refuse

    def __repr__(self):
        return f"MissingTangent({self.message!r})"


def missing_tangent(message, *, where=None):
    """The tangent of a value that has none: :class:`MissingTangent`, which
    raises at ``where`` (the user's call that made the value) where it is used."""
    return MissingTangent(message, where)


def zero_tangent(x):
    """The tangent of a value that does not depend on the inputs: zeros shaped and
    structured like ``x`` (floating point even for an integer ``x``)."""
    if isinstance(x, (bool, np.bool_)) or x is None or isinstance(x, str):
        return 0.0
    if isinstance(x, np.inexact):
        return x.dtype.type(0)
    if isinstance(x, (int, float, complex, np.number)):
        return 0j if isinstance(x, complex) else 0.0
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, x.dtype if x.dtype.kind in "fc" else np.float64)
    if foreign(x):  # a Dask or CuPy array: zeros of its library
        return np.zeros_like(x, dtype=x.dtype if np.dtype(x.dtype).kind in "fc" else np.float64)
    if isinstance(x, collections.defaultdict):  # its missing keys' tangents: zeros too
        factory = x.default_factory
        return collections.defaultdict(
            None if factory is None else lambda: zero_tangent(factory()),
            ((k, zero_tangent(v)) for k, v in x.items()))
    if isinstance(x, dict):
        return type(x)((k, zero_tangent(v)) for k, v in x.items())
    if isinstance(x, collections.deque):  # followed as a list (without a maxlen)
        return [zero_tangent(v) for v in x]
    if isinstance(x, (list, tuple)):
        parts = [zero_tangent(v) for v in x]
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*parts)
        return type(x)(parts)
    return gradient_like(0.0, x, lambda g, v: zero_tangent(v))


def sequence_tangent(t, x):
    """The tangent of the tuple or list ``x`` as a sequence of the same kind and
    length (zeros where ``t`` is the scalar zero of "does not move"), so that
    ``+`` and ``*`` on it concatenate and repeat as they do on ``x``."""
    if is_zero(t):
        return zero_tangent(x)
    return tuple(t) if isinstance(x, tuple) else list(t)


def fresh_tangent(t, x):
    """A private, writable copy of the tangent ``t`` of ``x``, shaped like ``x``:
    what an in-place update of ``x`` (``x[i] = v``, ``xs.append(v)``) updates
    alongside ``d_x`` -- never an array another name or the caller can see."""
    if isinstance(x, (list, collections.deque)):  # (a deque's tangent: a list)
        return list(t) if isinstance(t, (list, tuple)) else zero_tangent(x)
    if isinstance(x, dict):
        if isinstance(t, collections.defaultdict):  # (zero_tangent's, of a defaultdict)
            return collections.defaultdict(t.default_factory, t)
        return dict(t) if isinstance(t, dict) else zero_tangent(x)
    if isinstance(x, tuple):  # u = state of a tuple: its own items' tangents
        return tuple(t) if isinstance(t, (list, tuple)) else zero_tangent(x)
    if foreign(t) or foreign(x):
        dtype = np.result_type(x) if np.issubdtype(np.result_type(x), np.inexact) \
            else np.float64
        return fresh_like(t, x, dtype)
    # np.asarray, not np.result_type: an array.array or a memoryview is a buffer NumPy
    # reads, but np.result_type refuses it (review s36 R4-20)
    values = np.asarray(x)
    dtype = values.dtype if np.issubdtype(values.dtype, np.inexact) else np.float64
    return np.array(np.broadcast_to(t, values.shape), dtype=dtype)


def tangent_like(t, x):
    """The output tangent ``t`` as returned to the caller: shaped, typed and
    structured like the output ``x``, and a fresh copy."""
    def leaf(g, v):
        if isinstance(v, float):
            return float(g)
        dtype = np.result_type(v) if np.issubdtype(np.result_type(v), np.inexact) \
            else np.float64
        if foreign(g) or foreign(v):
            return fresh_like(g, v, dtype)
        out = np.array(np.broadcast_to(g, np.shape(v)), dtype=dtype)
        return out if np.ndim(v) else out[()]
    if isinstance(x, (float, np.ndarray, np.generic)) or foreign(x):
        return leaf(t, x)
    return _zeros_for_constants(gradient_like(_as_cotangent(t), x, leaf), x)


def _zeros_for_constants(t, x):
    """``t`` with the zero tangent where a part of a tuple, list or dict ``x`` has none
    (an integer: ``v, i`` returned from a loop), as a display returned gives
    (``zero_tangent(i)``), so a caller unpacking it computes with numbers."""
    if t is None:
        return zero_tangent(x)
    if isinstance(x, (list, tuple)) and isinstance(t, (list, tuple)) and len(t) == len(x):
        parts = [_zeros_for_constants(a, b) for a, b in zip(t, x)]
        return type(t)(*parts) if is_namedtuple(t) else type(t)(parts)
    if isinstance(x, dict) and isinstance(t, dict) and t.keys() == x.keys():
        # {'t': t} returned, t an int step counter: a caller's loop carries it back in,
        # and t + 1 there computes with its tangent (Adam's 1 - b1 ** t, T1 #19)
        out = t.copy()
        for k in t:
            out[k] = _zeros_for_constants(t[k], x[k])
        return out
    return t


def _as_cotangent(t):
    """A tangent structure as the cotangent structure :func:`gradient_like` reads."""
    if isinstance(t, dict):
        return {k: _as_cotangent(v) for k, v in t.items()}
    if isinstance(t, (list, tuple)):
        return [_as_cotangent(v) for v in t]
    fields = None if isinstance(t, np.ndarray) else object_fields(t)
    if fields is not None:
        return AttributeCotangent({k: _as_cotangent(v) for k, v in fields.items()})
    return t


def tangent_attr(t, obj, name):
    """The tangent of attribute ``name`` of ``obj``, whose tangent is ``t`` (an
    object of the same kind, or a dict by attribute name); zeros shaped like the
    attribute where ``t`` has none for it.  A named tuple's fields are its items
    (``np.linalg.svd(a).S``): its tangent, a plain tuple from a rule, is read at
    the field's position.  An array's own attribute (``x.T`` where ``x`` may be
    an array or an object) moves its tangent as the attribute moves the array."""
    if array_attribute(obj, name):
        return array_attribute_tangent(t, obj, name)
    computed = computed_by(obj, name)
    if computed is not None and not is_zero(t):
        # m.energy, a property (a descriptor, __getattr__): its getter's reads are not
        # followed (as grad refuses it); one giving no float (a count, a flag) has no
        # tangent to miss
        value = getattr(obj, name)
        if holds_floats(value):
            raise computed_attribute(type(obj), name, computed)
        return zero_tangent(value)
    if isinstance(t, dict):
        found = t.get(name)
    elif isinstance(t, (tuple, list)) and is_namedtuple(obj) and not is_namedtuple(t) \
            and name in type(obj)._fields:
        found = t[type(obj)._fields.index(name)]
    else:
        found = None if is_zero(t) else held_attribute(t, name)
    return zero_tangent(getattr(obj, name)) if found is None else found


def held_attribute(t, name):
    """``t.name`` where the tangent object ``t`` holds it itself (in its
    ``__dict__``, a named tuple's or dataclass's field, or a slot); None for an attribute of its
    class (a constant ``scale = 5.0``, a ``ClassVar``), whose tangent is zero --
    the class's value read from the tangent object would be taken for one."""
    if is_namedtuple(t):  # its fields are its items
        return getattr(t, name) if name in type(t)._fields else None
    held = getattr(t, "__dict__", None)
    if held is not None and name in held:
        return held[name]
    if dataclasses.is_dataclass(t) and name in {f.name for f in dataclasses.fields(t)}:
        return getattr(t, name, None)
    if any(name in getattr(c, "__slots__", ()) for c in type(t).__mro__):
        return getattr(t, name, None)
    return None


def array_attribute_tangent(t, obj, name):
    """The tangent of ``obj.name``, NumPy's attribute of the array ``obj`` whose
    tangent is ``t`` (:func:`tangent_attr`)."""
    if name in ("T", "mT", "real", "imag") and not is_zero(t):
        if name == "T":
            return np.transpose(t)
        if name == "mT":
            return np.swapaxes(t, -1, -2)
        return np.real(t) if name == "real" else np.imag(t)
    if name in ("T", "mT", "real", "imag", "shape", "size", "ndim", "itemsize", "nbytes",
                "strides"):
        return zero_tangent(getattr(obj, name))
    if name in ("dtype", "flags", "ctypes", "device"):
        return 0.0
    raise error_at("MissingRuleError", f"no tangent rule for the attribute '.{name}' of a "
                   f"{type(obj).__name__}", None)


def merge_tangent(value, b, t, side):
    """The part of the tangent of ``value = a | b`` that comes from ``a``'s
    tangent ``t`` (``side`` 0) or ``b``'s (``side`` 1): for dicts, ``t``'s items
    at the keys that side gave ``value`` and none at the others (the two parts
    add up, item by item); none for a bitwise or.  Linear in ``t``, with rules
    of its own (a second derivative)."""
    if not isinstance(value, dict):
        return zero_tangent(value)
    if is_zero(t):
        return 0.0
    return DictCotangent((k, cotangent_at(t, k) if (k in b) == bool(side) else 0.0)
                         for k in value)


def replaced_tangent(value, names, parts, tangents):
    """The tangent of ``value = replaced(names, *parts)`` (``obj._replace(W=v)``),
    given the tangents ``tangents`` of ``parts``: a named tuple of ``value``'s
    class, the new values' tangents in the fields ``names``, the old tuple's in
    the others.  Linear in ``tangents``, with rules of its own (a tangent
    differentiated again, hvp)."""
    if not is_namedtuple(value):
        raise error_at("MissingRuleError", (
            f"no tangent rule for '._replace()' of a {type(value).__name__}: srcgrad "
            f"differentiates that method of named tuples only"))
    given = dict(zip(names, tangents[1:]))
    return type(value)(*[given[f] if f in given else tangent_attr(tangents[0], parts[0], f)
                         for f in type(value)._fields])
