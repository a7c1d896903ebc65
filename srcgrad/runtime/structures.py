"""Cotangents of containers and objects.

The cotangent of a list, tuple or dict of arrays is a container of the same
shape holding the elements' cotangents, with ``0.0`` where none reached.  The
adjoint sweep accumulates every cotangent with ``+`` (``d_x = d_x + g``), so
these containers add element by element instead of concatenating; ``0.0``
stands for "nothing yet" and is the identity of that addition.  Objects (a
dataclass, a model with array attributes) get an :class:`AttributeCotangent`
keyed by attribute name; a named tuple's fields are its items, so ``p.W`` gives
``p`` a tuple's cotangent, at ``W``'s position (:func:`attribute_grad`).
:func:`gradient_like` finally turns a cotangent back
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
import functools
import inspect
import types

import numpy as np

from .elementwise import match_complex
from .errors import error_at
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


def listed_cotangent(g, a):
    """The cotangent of the array ``a`` in ``a.tolist()``: the nested lists'
    cotangent ``g`` laid out as ``a`` (zeros for a row or an item no cotangent
    reached), in ``a``'s floating dtype.

        >>> listed_cotangent([1.0, 0.0, 2.5], np.zeros(3))
        array([1. , 0. , 2.5])
        >>> listed_cotangent([0.0, [1.0, 2.0]], np.zeros((2, 2), np.float32))
        array([[0., 0.],
               [1., 2.]], dtype=float32)
    """
    kind = np.asarray(a).dtype
    return _laid_out(g, np.shape(a), kind if kind.kind in "fc" else np.float64)


def _laid_out(part, shape, dtype):
    """The nested cotangent ``part`` as an array of ``shape`` (a module-level
    recursion: a nested function calling itself is a reference cycle)."""
    if is_zero(part) and shape:
        return np.zeros(shape, dtype)
    if not shape:
        return np.asarray(part, dtype)
    if not len(part):
        return np.zeros(shape, dtype)
    return np.stack([_laid_out(p, shape[1:], dtype) for p in part])


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


def is_namedtuple(x) -> bool:
    """Whether ``x`` is a named tuple (``collections.namedtuple``,
    ``typing.NamedTuple``, NumPy's ``EighResult``): a tuple whose items are
    also read by name."""
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


#: Attributes of an array (or number) that carry no derivative.
_ARRAY_CONSTANTS = ("shape", "size", "ndim", "dtype", "itemsize", "nbytes", "strides", "flags",
                    "ctypes", "device")


def array_attribute(obj, name) -> bool:
    """Whether ``obj.name`` is NumPy's (or a number's) attribute -- ``x.T`` of an
    array -- rather than a user's field of that name (``th.T`` of a named tuple
    ``Thermo(T, P)``): decided by ``obj``'s type when the code runs, where the
    compiler could not tell it (normalize/attribute_reads.py)."""
    return isinstance(obj, (np.ndarray, np.generic, int, float, complex)) or foreign(obj)


def array_attribute_read(obj, name, message, where=None) -> None:
    """Check ``obj.name`` where the compiler took ``.name`` for an array's
    attribute that carries no derivative (``h.shape`` in a helper, whose
    parameter's type it could not see): a user's object whose field of that
    name holds floating-point numbers would silently get no gradient there, so
    it raises ``message`` at ``where`` instead; an array, a number, a field of
    ints or strings pass."""
    if array_attribute(obj, name):
        return
    value = getattr(obj, name, None)
    if isinstance(value, (float, complex, np.inexact)) or (
            isinstance(value, np.ndarray) and value.dtype.kind in "fc"):
        raise error_at("UnsupportedSyntaxError", message, where)


def array_method_call(obj, name, message, where=None) -> None:
    """Check ``obj.name(...)`` where the compiler took ``.name`` for an array's
    method (``m.dot(x)``, ``q.mean()``) or an operator for NumPy's (``name``
    ``"__add__"``), not seeing ``obj``'s class: an object whose class defines
    ``name`` in Python runs its own method, which the array's rule would
    differentiate wrongly -- refused, ``message`` at ``where``.  An array, a
    number, a list, tuple or dict, a library's object pass."""
    if isinstance(obj, (np.ndarray, np.generic, float, int, complex)) \
            or type(obj) in (list, tuple, dict) or foreign(obj):
        return   # (a Dask or CuPy array: its operators are NumPy's, dispatched)
    if isinstance(getattr(type(obj), name, None), types.FunctionType):
        raise error_at("UnsupportedSyntaxError", message, where)


def array_attribute_grad(g, obj, name):
    """The cotangent of the array ``obj`` in its attribute ``obj.name`` (``.T``,
    ``.mT``, ``.real``, ``.imag``; none through ``.shape`` and the like)."""
    if name in _ARRAY_CONSTANTS or is_zero(g):
        return 0.0
    if name == "T":
        return np.transpose(g)
    if name == "mT":
        return np.swapaxes(g, -1, -2)
    if name == "real":
        return match_complex(g, obj)
    if name == "imag":
        return match_complex(-1j * g, obj)
    raise error_at("MissingRuleError", f"no adjoint rule for the attribute '.{name}' of a "
                   f"{type(obj).__name__}", None)


def attribute_grad(g, obj, name):
    """The cotangent of ``obj`` in ``obj.name``: ``g`` under that name, or, for a
    named tuple's field, ``g`` at the field's position (a tuple's cotangent, so
    that ``p.W`` and ``p[0]`` add up and whatever reads the tuple's cotangent by
    position -- ``eigh``'s adjoint, the gradient handed back -- finds it); an
    array's own attribute (``x.T`` where ``x`` may be an array or an object)
    by the array's rule; none for a named tuple's attribute that is no field
    (``self.C`` with ``NT.C = 3.0`` set on the class: a constant, which a tuple's
    cotangent has no place for)."""
    if is_namedtuple(obj) and name in obj._fields:
        return cotangent_like(obj, obj._fields.index(name), g)
    if array_attribute(obj, name):
        return array_attribute_grad(g, obj, name)
    computed = computed_by(obj, name)
    if computed is not None and not is_zero(g):
        if not holds_floats(getattr(obj, name)):  # a count, a flag: no derivative
            return 0.0
        raise computed_attribute(type(obj), name, computed)
    if is_namedtuple(obj):
        return 0.0  # NT.C = 3.0 after the class: a constant of the class, no field
    return AttributeCotangent({name: g})


def holds_floats(value) -> bool:
    """Whether ``value`` is a float or complex number or array (what carries a
    derivative), not an int, a flag or a shape."""
    return isinstance(value, (float, complex, np.inexact)) or (
        isinstance(value, np.ndarray) and value.dtype.kind in "fc")


def is_computed(attribute) -> bool:
    """Whether a class's ``attribute`` computes its value when read (a
    property, a cached_property): its getter is code srcgrad did not see."""
    return isinstance(attribute, property) or type(attribute).__name__ == "cached_property"


def computed_by(obj, name):
    """What computes ``obj.name`` when it is read, where srcgrad did not
    differentiate it: a property of its class, another descriptor's
    ``__get__`` (``W = ExpParam()``), or the class's ``__getattr__`` for a
    name the object does not hold (review s35 R3-14: the gradient of the
    attributes they read was silently zero); None for a stored attribute."""
    cls = type(obj)
    if is_namedtuple(obj) and name in obj._fields:
        return None   # a field (its class's descriptor reads the tuple's item)
    try:
        found = inspect.getattr_static(cls, name)
    except AttributeError:
        held = getattr(obj, "__dict__", None)
        if (held is None or name not in held) and hasattr(cls, "__getattr__"):
            return cls.__getattr__
        return None
    if isinstance(getattr(obj, "__dict__", None), dict) and name in obj.__dict__ \
            and not hasattr(type(found), "__set__"):
        return None   # the object's own value (a non-data descriptor gives way to it)
    if is_computed(found) or (hasattr(type(found), "__get__") and not isinstance(
            found, (types.FunctionType, staticmethod, classmethod, types.BuiltinFunctionType,
                    types.MemberDescriptorType, types.GetSetDescriptorType))):
        return found   # (a slot or a C type's field holds the object's own value)
    return None


def computed_attribute(cls, name, computed):
    """The error for a property read that the output depends on: its value is
    computed by a getter srcgrad did not differentiate, so the gradient of the
    attributes it reads would be silently missing."""
    if isinstance(computed, types.FunctionType):   # the class's __getattr__
        getter = computed
    else:   # a property's getter, a cached_property's function, a descriptor's __get__
        getter = getattr(computed, "fget", None) or getattr(computed, "func", None) \
            or getattr(type(computed), "__get__", None)
    code = getattr(getter, "__code__", None)
    where = None if code is None else (code.co_filename, code.co_firstlineno, 0)
    if is_computed(computed):
        return error_at(
            "MissingRuleError",
            f"the property {cls.__name__}.{name} is computed by a getter that srcgrad does "
            f"not differentiate, so the gradient through it would be missing: where the "
            f"function reads .{name}, compute it from the attributes the property reads", where)
    kind = "__getattr__ of" if isinstance(computed, types.FunctionType) else "a descriptor of"
    return error_at(
        "MissingRuleError",
        f"{kind} {cls.__name__} computes .{name} when it is read, by code that srcgrad does "
        f"not differentiate, so the gradient through it would be missing: where the "
        f"function reads .{name}, compute it from the attributes that code reads", where)


def replaced(names, obj, *values):
    """``obj._replace(W=v)`` written ``replaced(("W",), obj, v)``: a named tuple
    whose class is only known when the code runs (an argument, a helper's
    return), its fields ``names`` given ``values``, the others kept.  Its
    adjoint is :func:`replaced_cotangents`."""
    return obj._replace(**dict(zip(names, values)))


def replaced_cotangents(g, names, like):
    """The cotangents of the named tuple and of the new values of its fields
    ``names`` in ``obj._replace(W=v)`` (:func:`replaced`), a named tuple of the
    class of ``like`` whose cotangent is ``g``: each new value gets its field's
    item, the old tuple the rest (as a list: the tuple's first)."""
    if not is_namedtuple(like):
        raise error_at("MissingRuleError", (
            f"no adjoint rule for '._replace()' of a {type(like).__name__}: srcgrad "
            f"differentiates that method of named tuples only"), None)
    if is_zero(g):
        return [0.0] * (1 + len(names))
    fields = type(like)._fields
    items = [g.get(f, 0.0) for f in fields] if isinstance(g, dict) else list(g)
    values = [items[fields.index(name)] for name in names]
    for name in names:
        items[fields.index(name)] = 0.0
    return [TupleCotangent(items), *values]


def merged(a, b):
    """``a | b`` written ``merged(a, b)`` by the rules (the statement reads
    ``a | b``): for dicts a new dict, ``b``'s items where ``b`` has the key,
    ``a``'s elsewhere; for ints, bools and their arrays the bitwise or, which
    carries no derivative.  Its adjoint is :func:`merge_cotangent`."""
    return a | b


def merge_cotangent(g, out, b, side):
    """The cotangent of ``a`` (``side`` 0) or ``b`` (``side`` 1) in ``out = a |
    b`` whose cotangent is ``g``: for dicts, the cotangents of the items each
    one gave ``out`` (``b`` every key it has, ``a`` the others); none for a
    bitwise or."""
    if not isinstance(out, dict) or is_zero(g):
        return 0.0
    return DictCotangent((k, cotangent_at(g, k)) for k in out if (k in b) == bool(side))


def field_cotangents(g, obj):
    """The cotangents of the fields of the dataclass ``obj`` that ``Lin(a, b)``
    built, in field order, from the object's cotangent ``g``: an
    :class:`AttributeCotangent` keyed by field name (what reading ``obj.w``
    gives), an object of the same class, or ``0.0`` where none arrived."""
    names = [f.name for f in dataclasses.fields(obj)]
    if is_zero(g):
        return [0.0] * len(names)
    if isinstance(g, dict):
        return [g.get(name, 0.0) for name in names]
    return [getattr(g, name, 0.0) for name in names]


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


def keys_of(mapping, view=None, where=None):
    """The keys of a dict, as a list (what ``for k in d`` runs over).

    ``view`` (``"items"``, ``"values"``, ``"keys"``): the code reads
    ``mapping.items()`` as a dict's, the compiler not knowing ``mapping``'s
    class (a helper's parameter, a helper's result); an object whose class has
    its own such method (a store giving ``np.exp`` of what it holds) would get
    the dict's value and derivative, silently, so it is refused, located at
    ``where``."""
    if view is not None and type(mapping) is not dict:
        own = getattr(type(mapping), view, None)
        if isinstance(own, types.FunctionType):  # written in Python (an OrderedDict's is not)
            kind = type(mapping).__qualname__
            raise error_at("UnsupportedSyntaxError", (
                f"'.{view}()' of a {kind} here is {kind}.{view}, its class's own, but srcgrad "
                f"took it for a dict's: it could not see the object's class when it compiled "
                f"this code (a helper's parameter or result, an item of a container); pass "
                f"the object to the function you differentiate, whose arguments' classes are "
                f"known (its {view}() is then followed), or pass a plain dict"), where)
    return list(mapping)


def sequence(items):
    """What ``for x in items`` runs over, indexable by position: a list, tuple or
    array as it is; any other iterable (a dict: its keys) as a list."""
    return items if iterated_as_is(items) else list(items)


def sequence_to_stop(items, where=None):
    """What a loop that may stop early (``break``, ``return``) runs over, where
    it is what a helper returned: a list, tuple or array as it is; any other
    iterable -- a generator, ``map``, ``itertools.count()``, which may never
    end -- is refused, located, rather than listed first (which would not
    end for an endless one)."""
    if iterated_as_is(items):
        return items
    raise error_at("UnsupportedSyntaxError", (
        f"this loop may stop early (break, return) and runs over a "
        f"{type(items).__name__}, which srcgrad would list first (an endless one never "
        f"ends): return a list from the helper, or loop over a range and read the items "
        f"by position"), where)


def iterated_as_is(items) -> bool:
    """Whether :func:`sequence` runs over ``items`` itself -- a list, a tuple, a
    NumPy array or a Dask or CuPy one -- so that the cotangent of what the loop
    reads is ``items``'s own (a dict's keys carry none)."""
    return isinstance(items, (list, tuple, np.ndarray)) or foreign(items)


def index_of_max(items, key=None, empty_ok=False) -> int:
    """The position of the item ``max(items, key=key)`` returns, found by
    Python's own rule: the first item, replaced by each later one whose key
    compares greater.  So a tie keeps the first, and a NaN, which compares
    neither way, is kept when it comes first and never taken after
    (``max([1, nan, 2])`` is the 2, ``max([nan, 1, 2])`` the nan).  No items:
    -1 where ``empty_ok`` (``max``'s ``default=``), else max's ValueError."""
    return _index_of_extreme(items, key, empty_ok, True)


def index_of_min(items, key=None, empty_ok=False) -> int:
    """The position of the item ``min(items, key=key)`` returns: as
    :func:`index_of_max`, replaced by each later item whose key compares less."""
    return _index_of_extreme(items, key, empty_ok, False)


def _index_of_extreme(items, key, empty_ok, largest) -> int:
    found, best = -1, None
    for i, item in enumerate(items):
        rank = item if key is None else key(item)
        if found < 0 or (rank > best if largest else rank < best):
            found, best = i, rank
    if found < 0 and not empty_ok:
        raise ValueError(f"{'max' if largest else 'min'}() iterable argument is empty")
    return found


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
        if is_namedtuple(x) and isinstance(g, dict):  # by field name (a tangent turned back)
            g = [g.get(name, 0.0) for name in x._fields]
        parts = [gradient_like(cotangent_at(g, i), v, leaf) for i, v in enumerate(x)]
        if is_namedtuple(x):
            return type(x)(*parts)
        return type(x)(parts)
    if is_differentiable_leaf(x):
        return leaf(0.0 if is_zero(g) else g, x)
    if inspect.isroutine(x) or isinstance(x, (np.ufunc, types.ModuleType, functools.partial)):
        return None  # (W, b, np.tanh): a function has no gradient (diff review s37 D-20)
    fields = object_fields(x)
    if fields is not None:
        grads = {k: gradient_like(attribute_cotangent(g, k), v, leaf)
                 for k, v in fields.items() if has_differentiable_leaves(v)}
        if dataclasses.is_dataclass(x):
            return dataclasses.replace(x, **{k: v for k, v in grads.items()
                                             if k in {f.name for f in dataclasses.fields(x)}})
        out = copy.copy(x)
        for k, v in grads.items():
            setattr(out, k, v)
        return out
    return None


def object_fields(x):
    """The attributes an object holds itself, by name: its ``__dict__``, or
    for a dataclass with ``slots=True`` (no ``__dict__``) its fields that are
    set; None for anything else (a class, a number, an array).

        >>> import dataclasses
        >>> @dataclasses.dataclass(slots=True)
        ... class P:
        ...     w: float
        ...     b: float = 0.5
        >>> object_fields(P(2.0))
        {'w': 2.0, 'b': 0.5}
    """
    if isinstance(x, type):
        return None
    held = getattr(x, "__dict__", None)
    if isinstance(held, dict):
        return held
    if dataclasses.is_dataclass(x):
        return {f.name: getattr(x, f.name) for f in dataclasses.fields(x) if hasattr(x, f.name)}
    return None


def has_differentiable_leaves(x) -> bool:
    """Whether ``x`` is, or holds, a float or a float array."""
    if is_differentiable_leaf(x):
        return True
    if isinstance(x, dict):
        return any(has_differentiable_leaves(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(has_differentiable_leaves(v) for v in x)
    fields = object_fields(x)
    if fields is not None and (not callable(x) or is_callable_object(x)):
        return any(has_differentiable_leaves(v) for v in fields.values())
    return False


def is_callable_object(x) -> bool:
    """Whether ``x`` is an instance of a class that defines ``__call__`` in
    Python (a layer, a model, whose fields may be its numbers), not a function
    (a function's, a method's or a partial's class has no Python ``__call__``)."""
    return not isinstance(x, type) and isinstance(
        inspect.getattr_static(type(x), "__call__", None), types.FunctionType)


def private_copy(value):
    """A copy of an argument that the function changes in place through another
    name (``h = x; h[0] = v``, ``a = xs[0]; a[0] = v``): arrays copied, lists,
    tuples (named ones too) and dicts rebuilt around copies of what they hold,
    anything else as it is -- so that the generated code works on its own
    arrays and the caller's never change."""
    if isinstance(value, np.ndarray) or (type(value) is not float and foreign(value)):
        return value.copy()
    if isinstance(value, list):
        return type(value)(private_copy(v) for v in value) if type(value) is list \
            else copy.copy(value)
    if isinstance(value, dict):
        return {k: private_copy(v) for k, v in value.items()} if type(value) is dict \
            else copy.copy(value)
    if type(value) is tuple:
        return tuple(private_copy(v) for v in value)
    if is_namedtuple(value):
        return type(value)(*(private_copy(v) for v in value))
    return value


def unshared(value, others, names, deep, where):
    """Raise :class:`AliasedUpdateError` if an argument in ``others`` is the
    argument ``value``, which the function updates in place at ``where``, holds
    it, or shares its memory (``f(x, x)``, ``f(x, x[1:])``, ``f(xs, xs[0])``).

    The generated code updates a private copy of ``value`` (or, for ``x += v``,
    a new array), so another argument for the same memory would not see the
    update that Python shows it: a wrong value, refused instead.  ``names``:
    the parameters' names, ``value``'s first; ``deep``: the function changes
    the arrays ``value`` holds too (through an element, a view), not only
    ``value`` itself.  Cheap where nothing is shared: an identity test per
    container, ``np.may_share_memory`` per pair of arrays."""
    if type(value) is np.ndarray:  # the common case: an array, and arrays or numbers
        arrays, boxes = [value], ()
    else:
        arrays, boxes = [], []
        _parts(value, arrays, boxes, deep, 0)
        if not arrays and not boxes:
            return
    for other, other_name in zip(others, names[1:]):
        if other is None or isinstance(other, (float, int, complex, str)):
            continue  # a number shares nothing
        if type(other) is np.ndarray and not boxes and len(arrays) == 1:
            shared = np.may_share_memory(arrays[0], other) \
                and np.shares_memory(arrays[0], other)
        else:
            their_arrays, their_boxes = [], []
            _parts(other, their_arrays, their_boxes, True, 0)
            shared = any(b is t for b in boxes for t in their_boxes) or any(
                np.may_share_memory(a, t) and np.shares_memory(a, t)
                for a in arrays for t in their_arrays)
        if shared:
            raise error_at("AliasedUpdateError", (
                f"the argument '{names[0]}' is updated in place here, and the argument "
                f"'{other_name}' is the same array or list, holds it or shares its memory: "
                f"Python would show '{other_name}' the update, but srcgrad's generated code "
                f"works on a copy of '{names[0]}' (it never changes the caller's arrays), so "
                f"the values would differ; pass a copy (x.copy()) as one of them"), where)


_DEPTH = 8  # how deep unshared looks into containers inside containers


def _parts(value, arrays, boxes, deep, depth):
    """The NumPy arrays and the mutable containers ``value`` is or holds (those
    inside only where ``deep``)."""
    if isinstance(value, np.ndarray):
        arrays.append(value)
    elif isinstance(value, (list, dict)):
        boxes.append(value)
        if deep and depth < _DEPTH:
            for v in (value.values() if isinstance(value, dict) else value):
                _parts(v, arrays, boxes, deep, depth + 1)
    elif isinstance(value, tuple) and depth < _DEPTH:
        for v in value:
            _parts(v, arrays, boxes, deep, depth + 1)
    elif deep and depth < _DEPTH and not callable(value) and not isinstance(
            value, type(copy)) and isinstance(getattr(value, "__dict__", None), dict):
        for v in vars(value).values():  # an object's attributes: f(p.W, p) reading p.W
            _parts(v, arrays, boxes, deep, depth + 1)


def not_a_container(value, message: str, where=None) -> None:
    """Check the operand of ``ks = hs.copy()`` (``copy.copy(hs)``, ``hs[:]``)
    whose type the compiler could not see, where ``ks``'s items are updated
    below: an array's copy shares nothing, but a list's or dict's holds the same
    arrays, which an update of ``ks[0]`` in place changes for ``hs`` too -- a
    change srcgrad's code, taking the copy for an array's, would not see.

        >>> not_a_container(np.ones(2), "never raised")
        >>> not_a_container([np.ones(2)], "a list")
        Traceback (most recent call last):
        srcgrad.errors.AliasedUpdateError: a list
    """
    if isinstance(value, (list, dict)):
        raise error_at("AliasedUpdateError", message, where)


def star_items(value, count: int, name: str, star: str, where=None) -> None:
    """Check ``P(*t)`` (a named tuple's class ``name`` called with a tuple or
    list ``star`` whose length the compiler could not see: an argument, a
    loop's item) before it is built from ``t[0]``, ..., ``t[count - 1]``: the
    only length the class's fields leave it.  Python raises a TypeError for
    any other, and so must the generated code -- indexing alone would take
    the first items of a longer one.

        >>> star_items((1, 2), 2, "Pair", "p")
        >>> star_items([1, 2, 3], 2, "Pair", "p", ("f.py", 3, 8))
        Traceback (most recent call last):
        TypeError: Pair() takes 2 items from *p here, but p holds 3 (f.py, line 3, column 8)
    """
    if not isinstance(value, (list, tuple, np.ndarray)):
        # a dict or set: Python's *q runs over its keys, srcgrad's q[0], q[1] would not
        raise error_at("UnsupportedSyntaxError", (
            f"{name}(*{star}) with {star} a {type(value).__name__}: srcgrad takes the items "
            f"of *{star} by position ({star}[0], {star}[1], ...), which a "
            f"{type(value).__name__} does not give; pass a tuple or list "
            f"({name}(*tuple({star})))"), where)
    n = len(value)
    if n == count:
        return
    message = f"{name}() takes {count} items from *{star} here, but {star} holds {n}"
    if where is not None:
        message += f" ({where[0]}, line {where[1]}, column {where[2]})"
    raise TypeError(message)
