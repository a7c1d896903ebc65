"""Run-time checks of in-place updates that generated code makes (see aliasing.py).

Where the compiler cannot tell whether two names share memory, the generated
code asks just before the update: is this view still exactly the window it was
taken as (then it is taken again after the update), is this name the very same
array (then it is bound to the updated one), does this list or dict hold the
array (then the updated array is stored back at that key) -- and otherwise,
does the other name see the update at all?  If it does, the update raises
``AliasedUpdateError`` at the user's line: it never goes unseen.

    >>> import numpy as np
    >>> z = np.zeros((3, 4))
    >>> hist = [np.ones(4), z[2]]
    >>> held_at(hist, hist[1], z, None, "never raised")   # hist[1] is a view of z
    1
    >>> same_window(z[2], window(z, 2)), window(z, 7) is None, window_by(z, "reshape", 5)
    (True, True, None)
    >>> held_at([z, z[0]], z, z, None, "z[0] sees z += v")
    Traceback (most recent call last):
    ...
    srcgrad.errors.AliasedUpdateError: z[0] sees z += v
"""

from __future__ import annotations

import random

import numpy as np

from .errors import error_at

__all__ = [
    "apart_from_free",
    "castable",
    "held_at",
    "is_basic_index",
    "is_window",
    "item_once",
    "items_apart",
    "same_object",
    "same_or_untouched",
    "same_window",
    "slot_alone",
    "slot_same",
    "taken_again",
    "untouched",
    "untouched_except",
    "view_index",
    "window",
    "window_by",
]


def same_object(a, b) -> bool:
    """Whether ``a`` and ``b`` are one mutable object (an array, list or dict),
    which an update through either name changes for both."""
    return a is b and isinstance(a, (np.ndarray, list, dict))


def same_window(view, again, holder=None, message=None, where=None) -> bool:
    """Whether the array ``view`` is exactly the window ``again`` -- the same view
    taken afresh from its base: same memory, start, shape and strides.  Not a
    copy (``y[0]`` of a 1-D array, a ``reshape`` that had to copy), and not a view
    of a base that has since been rebound to another window on the same memory.

    ``holder``: the base, where the compiler cannot tell it from a tuple (an
    argument).  ``a = t[0]; a[1] = v`` changes the array the tuple holds, which
    generated code cannot store back into it (``t[0] = a``): refused, located
    (``message``, ``where``), instead of Python's raw TypeError.

        >>> y = np.zeros(2)
        >>> same_window(y, (y, y)[0], holder=[y, y])
        True
        >>> same_window(y, (y, y)[0], holder=(y, y), message="a is t[0]")
        Traceback (most recent call last):
        srcgrad.errors.AliasedUpdateError: a is t[0]
    """
    if not (isinstance(view, np.ndarray) and isinstance(again, np.ndarray)):
        return False
    shared = (view.shape == again.shape and view.strides == again.strides
              and view.dtype == again.dtype
              and view.__array_interface__["data"][0] == again.__array_interface__["data"][0])
    if shared and isinstance(holder, tuple):
        raise error_at("AliasedUpdateError", message, where)
    return shared


def untouched(other, base, index, message, where=None):
    """Check, before ``base[index] = v`` (``index`` None: ``base += v``), that
    ``other`` (a name read after the update that may share ``base``'s memory: a
    view, a list holding it) does not see the update, and raise if it does.

    An array sees it if their elements overlap (``base[0] = v`` leaves
    ``base[1:]`` as it was); a list, tuple or dict if one of its items does.
    ``base += v`` on a number, NumPy scalar or tuple rebinds ``base``: nothing
    sees it (on a list it extends the list in place).
    Setting an item of a list or dict changes that container, which only another
    name for it (or a container holding it) sees.  ``y.flat`` stands for all of
    the array ``y`` (its flat index is not ``y``'s)."""
    if isinstance(other, np.flatiter):
        other = other.base
    if isinstance(base, np.flatiter):
        base, index = base.base, None
    if not isinstance(base, np.ndarray):
        if index is None and not isinstance(base, (list, dict)):
            return  # x += v on a number, a NumPy scalar, a tuple: a new object
        region = base
    else:
        if index is None:
            index = Ellipsis
        if is_basic_index(index):
            parts = index if isinstance(index, tuple) else (index,)
            # with an Ellipsis, indexing gives a view even where it selects one element
            region = base[index] if any(p is Ellipsis for p in parts) \
                else base[(*parts, ...)]
        else:
            region = base  # fancy indexing: a copy, which shares nothing; test the whole
    if _sees(other, base, region):
        error = error_at("AliasedUpdateError", message, where)
        error.verified = True  # seen sharing memory as the code ran: a real alias
        raise error


def rebinding(value, message, where=None):
    """Check, before ``obj.a op= v`` runs as ``obj.a = obj.a op v``, that ``value``
    (``obj.a``) is a number, a NumPy scalar, a string or a tuple, which ``op=``
    rebinds; raise where it is an array, a list or anything else ``op=`` may
    change in place, which the arrays read from ``obj`` before would show.

        >>> rebinding(3, "never raised")
        >>> rebinding(np.ones(2), "self.w -= g changes self.w's array in place")
        Traceback (most recent call last):
        srcgrad.errors.AliasedUpdateError: self.w -= g changes self.w's array in place
    """
    if isinstance(value, (bool, int, float, complex, np.generic, str, bytes, tuple,
                          frozenset)) or value is None:
        return
    raise error_at("AliasedUpdateError", message, where)


def taken_again(view, window, base, index, message, where=None) -> bool:
    """Before ``base[index] = v`` (``index`` None: ``base += v``): whether ``view``
    is still exactly ``window`` (the view taken afresh), so that the generated
    code takes it again after the update; if it is not, it must not see the
    update either (see :func:`untouched`)."""
    if same_window(view, window):
        return True
    untouched(view, base, index, message, where)
    return False


def same_or_untouched(other, base, index, message, where=None) -> bool:
    """Before an update of ``base``: whether ``other`` is the very same mutable
    object (bound to the updated one after it); if not, it must not see the
    update either (see :func:`untouched`)."""
    if same_object(other, base):
        return True
    untouched(other, base, index, message, where)
    return False


def castable(into, value, call, *args, **kwargs) -> None:
    """Before ``into[...] = value``, which generated code writes for
    ``np.copyto(into, v)`` or a ufunc's ``out=into`` (``call(*args, **kwargs)``):
    where NumPy's casting rule for those, ``'same_kind'``, forbids writing
    ``value``'s dtype into ``into``'s (a float into an int array), run the call
    itself, which raises NumPy's own error before it writes anything; the
    element assignment would truncate instead.

        >>> castable(np.zeros(2), np.ones(2, np.float32), np.copyto, None, None)
        >>> castable(np.zeros(2, int), 1.5, np.copyto, np.zeros(2, int), 1.5)
        Traceback (most recent call last):
        TypeError: Cannot cast scalar from dtype('float64') to dtype('int64') according to the rule 'same_kind'
    """
    if isinstance(into, np.ndarray):
        if isinstance(value, (np.ndarray, np.generic)):
            if np.can_cast(value.dtype, into.dtype, "same_kind"):
                return
        else:
            try:  # a Python number or list: NumPy's own check, on a scratch array
                np.copyto(np.empty(np.shape(value), into.dtype), value)
                return
            except (TypeError, ValueError, OverflowError):
                pass
    call(*args, **kwargs)


def window(base, index):
    """``base[index]``, or None where that index does not fit ``base``: the window
    a view would be if it were taken from ``base`` (see :func:`taken_again`)."""
    try:
        return base[index]
    except (IndexError, TypeError, ValueError):
        return None


def window_by(base, how, *args, **kwargs):
    """``base.how(*args)`` (``how`` a method or attribute name: ``'reshape'``,
    ``'T'``) or ``how(base, *args)``, or None where that view does not fit
    ``base``: the view another view would be if taken from ``base`` (see
    :func:`taken_again`)."""
    try:
        if isinstance(how, str):
            view = getattr(base, how)
            return view(*args, **kwargs) if callable(view) else view
        return how(base, *args, **kwargs)
    except (AttributeError, IndexError, TypeError, ValueError):
        return None


def held_at(container, item, base, index, message, where=None):
    """Before ``base[index] = v`` (``index`` None: ``base += v``) changes the array
    ``base``: the key at which the list or dict ``container`` holds ``item`` --
    ``base`` itself, or a view of it the generated code takes again after the
    update -- where the generated code stores the updated array (or the view
    taken again) after the update, as NumPy's container would show it; None if
    it does not hold it.  No other item of the container may see the update
    either way: an update it cannot follow raises (see :func:`untouched`)."""
    if isinstance(item, np.ndarray) and isinstance(container, (list, dict)):
        pairs = list(container.items() if isinstance(container, dict) else enumerate(container))
        keys = [k for k, v in pairs if v is item]
        if len(keys) == 1:
            untouched([v for k, v in pairs if k != keys[0]], base, index, message, where)
            return keys[0]
    untouched(container, base, index, message, where)
    return None


def untouched_except(container, key, item, message, where=None):
    """Check, before ``container[key] op= v`` changes the array ``item`` that
    ``container[key]`` holds in place, that no other item of ``container`` sees
    it (``xs = [y, y[1:]]; xs[0] += v`` changes ``xs[1]`` too).  A negative
    position of a list is its slot counted from the end (``hs[-1] += v``).

        >>> y = np.ones(2)
        >>> untouched_except([y * 2, y], -1, y, "never raised")
        >>> untouched_except([y, y], -1, y, "hs[0] is hs[-1]")
        Traceback (most recent call last):
        srcgrad.errors.AliasedUpdateError: hs[0] is hs[-1]
    """
    if not isinstance(item, np.ndarray) or isinstance(container, np.ndarray):
        return  # (an array's Q[k] op= v writes into Q: its other names see it, as in Python)
    if isinstance(container, (list, tuple)) and isinstance(key, (int, np.integer)) \
            and not isinstance(key, bool) and key < 0:
        key += len(container)
    others = [v for k, v in (container.items() if isinstance(container, dict)
                             else enumerate(container)) if k != key]
    if _sees(others, item, item):
        error = error_at("AliasedUpdateError", message, where)
        error.verified = True
        raise error


def is_window(value) -> bool:
    """Whether ``value`` is an array, which ``value *= v`` changes in place (a
    NumPy scalar read from a 1-D array is rebound instead)."""
    return isinstance(value, np.ndarray)


def slot_alone(container, key, item, index, message, where=None, rebuilt=False) -> bool:
    """Check, before ``container[key][index] = v`` -- which generated code writes
    into a copy of ``item`` (``container[key]``) stored back at ``key`` -- that no
    other item of the list, tuple or dict ``container`` is that object or sees
    the elements written (``bufs = [np.zeros(2)] * 3``: Python changes every
    item), and raise if one does.  A tuple it cannot store into raises too,
    located, unless the generated code builds it again (``rebuilt``: True is
    returned, which that code tests)."""
    if isinstance(container, tuple) and not rebuilt:
        raise error_at("UnsupportedSyntaxError", (
            f"an element of an array held by a tuple is assigned ({message.split(' changes')[0]}),"
            " where srcgrad cannot tell which tuple holds it: build the tuple in this "
            "function from a display, (a, b), index it by a constant, or hold the arrays "
            "in a list"), where)
    if not isinstance(container, (list, tuple, dict)):
        return True
    if isinstance(container, dict):
        pairs = container.items()
    else:
        pairs = enumerate(container)
        if isinstance(key, (int, np.integer)) and key < 0:
            key += len(container)
    # (any memory shared counts, not only the elements written: generated code
    # writes a copy, which a view of the old item never sees again)
    region = item
    for k, v in pairs:
        if k != key and (v is item or (
                v is not container and _sees_except(v, item, region, container))):
            error = error_at("AliasedUpdateError", message, where)
            error.verified = True
            raise error
    return True


def slot_same(other, container, item, index, message, where=None) -> bool:
    """Before ``container[key][index] = v`` (``item`` is ``container[key]``, which
    generated code copies, writes and stores back): whether ``other`` -- a name
    read afterwards that may refer to ``item`` (``state = [pos, vel]``) -- is
    that very object, to be bound to the written copy after it.  If it is not,
    it must not share its memory either (a view of ``item``, a list holding
    it: the copy written is one it never sees again, even where the elements
    written now lie outside it), else this raises; what it sees through
    ``container`` itself is the written copy, as in Python."""
    if isinstance(container, np.ndarray):
        return False  # item is a view of the array written: the alias check follows it
    if same_object(other, item):
        return True
    # (a tuple is built again: another name for the old one sees the old item)
    kept = container if isinstance(container, (list, dict)) else None
    if other is not kept and _sees_except(other, item, item, kept):
        error = error_at("AliasedUpdateError", message, where)
        error.verified = True
        raise error
    return False


def _sees_except(other, base, region, skipped) -> bool:
    """:func:`_sees`, not looking inside the container ``skipped``.  A list
    or dict that is ``base`` itself sees it (``xs`` holding the list ``ys[0]``
    appended to through ``ys = list(xs)``: review s37 R5-22, the append was
    lost there)."""
    if other is skipped:
        return False
    if other is base:
        return True
    if isinstance(other, (list, tuple)):
        return any(_sees_except(v, base, region, skipped) for v in other)
    if isinstance(other, dict):
        return any(_sees_except(v, base, region, skipped) for v in other.values())
    return _sees(other, base, region)


def _sees(other, base, region) -> bool:
    """Whether ``other`` is, or holds, ``base`` or memory of ``region``."""
    if other is base:
        return True
    if isinstance(other, np.ndarray):
        if not isinstance(region, np.ndarray):
            return False
        try:
            return bool(np.shares_memory(other, region, max_work=10_000))
        except RuntimeError:  # numpy.exceptions.TooHardError: assume the worst
            return True
    if other is None or isinstance(other, (np.generic, int, float, complex, str, bool)):
        return False  # immutable: a NumPy scalar read from base is a copy
    if _dask(other) and _dask(base):
        # a Dask array is a graph over immutable chunks: base[i] = v gives the object
        # base a new graph, and another Dask array (base[0], base[1:], base.T, made
        # before) keeps computing from the old one; only base itself sees it
        return False
    if isinstance(other, (np.random.Generator, np.random.RandomState, np.random.BitGenerator,
                          random.Random)):
        return False  # a generator holds its state, never an array it drew (review r1)
    if isinstance(other, (list, tuple)):
        return any(_sees(item, base, region) for item in other)
    if isinstance(other, dict):
        return any(_sees(item, base, region) for item in other.values())
    return True  # an object: it may hold anything


def _dask(x) -> bool:
    """Whether ``x`` is a Dask array (looked up by its type's module: nothing imported)."""
    return type(x).__module__.startswith("dask.") and hasattr(x, "dask")


def held_arrays(value, path, arrays, boxes, depth=0):
    """The arrays ``value`` is or holds (in lists, tuples, dicts and the
    attributes of plain objects), each with its path from ``path``
    (``ps[0]``, ``d['w']``, ``p.W``), and the lists and dicts among them."""
    if isinstance(value, np.ndarray):
        arrays.append((path, value))
    elif depth >= _DEPTH or value is None or isinstance(
            value, (np.generic, int, float, complex, str, bytes, type)):
        return
    elif isinstance(value, (list, tuple)):
        if isinstance(value, list):
            boxes.append((path, value))
        fields = getattr(type(value), "_fields", None)  # a named tuple: p.W
        for k, v in enumerate(value):
            held_arrays(v, f"{path}.{fields[k]}" if fields and k < len(fields)
                        else f"{path}[{k}]", arrays, boxes, depth + 1)
    elif isinstance(value, dict):
        boxes.append((path, value))
        for k, v in value.items():
            held_arrays(v, f"{path}[{k!r}]", arrays, boxes, depth + 1)
    elif type(value).__dict__.get("__dict__") is not None and hasattr(value, "__dict__") \
            and not callable(value):
        for k, v in vars(value).items():  # an object's attributes: p.W, p.V
            held_arrays(v, f"{path}.{k}", arrays, boxes, depth + 1)


_DEPTH = 8  # how deep the checks below look into containers inside containers


def _bounds(array):
    """The first and one-past-last byte addresses of ``array``'s elements."""
    low = high = array.__array_interface__["data"][0]
    for n, stride in zip(array.shape, array.strides):
        if stride < 0:
            low += (n - 1) * stride
        else:
            high += (n - 1) * stride
    return low, high + array.itemsize


def _overlapping(arrays):
    """A pair of paths (first, second) of ``arrays`` ((path, array) pairs)
    whose memory overlaps, or None: sorted by address, so that only arrays
    whose byte ranges meet are compared element by element."""
    spans = sorted(((*_bounds(a), i) for i, (_, a) in enumerate(arrays) if a.size),
                   key=lambda s: s[0])
    active = []
    for low, high, i in spans:
        active = [s for s in active if s[1] > low]
        for _, _, j in active:
            try:
                shared = np.shares_memory(arrays[j][1], arrays[i][1], max_work=10_000)
            except RuntimeError:  # numpy.exceptions.TooHardError: assume the worst
                shared = True
            if shared:
                return arrays[min(i, j)][0], arrays[max(i, j)][0]
        active.append((low, high, i))
    return None


_EVERY = "<every item>"  # items_apart without a key: any two items (a literal: exports copy it)


def items_apart(value, name, how, where=None, key=_EVERY):
    """Raise :class:`AliasedUpdateError` where two items of the argument
    ``value`` (called ``name``) are the same array, list or dict, or share
    memory (``f([w, w])``, tied weights; ``f([y[:2], y[1:]])``), when the
    function updates an item in place (``how`` says through which name):
    Python shows the other item the update, while the generated code works on
    a copy of each item.  Distinct arrays pass, at the cost of a sort of their
    addresses.  ``key``: the item updated, where the compiler knows it (``a, b,
    c = ps``, ``ps[2][0] = v``): only that one must not share the others'
    memory (``[w, w, b]`` with ``b`` updated runs).

        >>> w = np.ones(3)
        >>> items_apart([w, w.copy(), 2.0], "ps", "'a'")
        >>> items_apart({"a": w, "b": w[1:]}, "ps", "'a'")
        Traceback (most recent call last):
        ...
        srcgrad.errors.AliasedUpdateError: the argument 'ps' is updated in place here (through 'a', part of it), and its items ps['a'] and ps['b'] ...
    """
    if isinstance(value, np.ndarray) or value is None or isinstance(value, (int, float)):
        return
    if key != _EVERY and isinstance(value, (list, tuple, dict)):
        pairs = list(value.items() if isinstance(value, dict) else enumerate(value))
        if isinstance(key, int) and not isinstance(value, dict) and key < 0:
            key += len(value)
        if any(k == key for k, _ in pairs):
            mine, my_boxes = [], []
            held_arrays(value[key], f"{name}[{key!r}]", mine, my_boxes)
            for k, item in pairs:
                theirs, their_boxes = [], []
                if k != key:
                    held_arrays(item, f"{name}[{k!r}]", theirs, their_boxes)
                hit = next(((p, q) for p, b in my_boxes for q, t in their_boxes if b is t),
                           None) or next(((p, q) for p, a in mine for q, t in theirs
                                          if _sees(a, t, t)), None)
                if hit is not None:
                    _items_shared(name, how, *hit, where)
            return
    arrays, boxes = [], []
    held_arrays(value, name, arrays, boxes)
    pair = _held_twice(boxes)
    if pair is None and len(arrays) > 1:
        pair = _held_twice(arrays) or _overlapping(arrays)
    if pair is not None:
        _items_shared(name, how, *pair, where)


def _held_twice(held):
    """The paths of the first object that ``held``, ``(path, object)`` pairs in
    the order met, holds twice (the same list, or the same array, by identity),
    or None: the same check for the lists and for the arrays an argument holds,
    so one definition."""
    seen = {}
    for path, obj in held:
        if id(obj) in seen:
            return seen[id(obj)], path
        seen[id(obj)] = path
    return None


def _items_shared(name, how, first, second, where):
    raise error_at("AliasedUpdateError", (
        f"the argument '{name}' is updated in place here (through {how}, part of it), "
        f"and its items {first} and {second} are the same array or list, or share "
        f"memory: Python would show one the update of the other, but srcgrad's "
        f"generated code works on a copy of each item (it never changes the caller's "
        f"arrays), so the values would differ; pass a copy as one of them (for tied "
        f"weights, [w, w.copy()]), or copy the item in the function before updating "
        f"it (a = a.copy())"), where)


def item_once(value, name, base, target, where=None):
    """Before ``target op= v`` changes the array ``base`` (an item of the
    argument ``value``, called ``name``, or a view of one) in place: raise
    :class:`AliasedUpdateError` where another item of ``value`` shares that
    memory too (the generated code makes a new array for ``target``); a number
    (``t = ps[0][2]``) changes nothing in place and passes."""
    if not isinstance(base, np.ndarray) or base.size == 0:
        return
    arrays, boxes = [], []
    held_arrays(value, name, arrays, boxes)
    hits = [path for path, a in arrays if _sees(a, base, base)]
    if len(hits) > 1:
        raise error_at("AliasedUpdateError", (
            f"'{target} op= ...' updates the array '{target}' in place, part of the "
            f"argument '{name}', and its items {hits[0]} and {hits[1]} both share that "
            f"memory: Python would show both the update, but srcgrad's generated code "
            f"makes a new array for '{target}', so the values would differ; pass a copy "
            f"as one of them (for tied weights, [w, w.copy()]), or write "
            f"'{target} = {target} op ...'"),
            where)


def apart_from_free(value, others, names, deep, where=None):
    """Raise :class:`AliasedUpdateError` where the argument ``value`` (called
    ``names[0]``), which the function updates in place, is, holds or shares
    memory with one of ``others`` -- arrays (or containers of arrays) the
    function reads from its globals or closure afterwards, called
    ``names[1:]``: Python changes them too, the generated code works on a copy
    of the argument.  ``deep``: the arrays the argument holds are updated too.

        >>> W = np.ones(3)
        >>> apart_from_free(W.copy(), (W,), ("x", "W"), False)
        >>> apart_from_free([W[1:]], ([W],), ("xs", "W"), True)
        Traceback (most recent call last):
        ...
        srcgrad.errors.AliasedUpdateError: the argument 'xs' is updated in place here, and 'W', ...
    """
    if value is None or isinstance(value, (int, float, complex, np.generic)):
        return
    mine, my_boxes = [], []
    if deep:
        held_arrays(value, names[0], mine, my_boxes)
    elif isinstance(value, np.ndarray):
        mine.append((names[0], value))
    elif isinstance(value, (list, dict)):
        my_boxes.append((names[0], value))
    for other, other_name in zip(others, names[1:]):
        theirs, their_boxes = [], []
        held_arrays(other, other_name, theirs, their_boxes)
        shared = any(b is t for _, b in my_boxes for _, t in their_boxes) or any(
            _sees(a, t, t) for _, a in mine for _, t in theirs)
        if shared:
            raise error_at("AliasedUpdateError", (
                f"the argument '{names[0]}' is updated in place here, and '{other_name}', "
                f"which this function reads from its globals or closure afterwards, is the "
                f"same array or list, holds it or shares its memory: Python would show "
                f"'{other_name}' the update, but srcgrad's generated code works on a copy "
                f"of '{names[0]}' (it never changes the caller's arrays), so the values "
                f"would differ; pass a copy ({other_name}.copy()) as the argument, or make "
                f"'{other_name}' an argument too"), where)


def is_basic_index(index):
    """True for an index made of ints, slices, ``None`` and ``...`` only: it
    selects each element at most once, so its adjoint may assign."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
               and not isinstance(p, (bool, np.bool_)) for p in parts)


def view_index(base, index, shown: str, where=None) -> None:
    """Check, before ``y[a][b] = v`` with ``a`` a name, that ``y[a]`` (``shown``)
    is a part of ``y`` the write changes: an item of a list or dict, or a view
    of an array (a basic index).  With a mask or an integer array, NumPy's
    ``y[a]`` is a copy and Python's write is lost; srcgrad's code, which writes
    the part back, would change ``y`` -- so it raises instead.

        >>> view_index(np.zeros(3), slice(0, 2), "y[s]")
        >>> view_index([np.zeros(2)], 0, "ys[i]")
        >>> view_index(np.zeros(3), np.array([True, False, True]), "y[m]")
        Traceback (most recent call last):
        srcgrad.errors.UnsupportedSyntaxError: 'y[m]' is a copy here: its index is a mask or an integer array (NumPy's advanced indexing), so Python's assignment into it changes nothing; write into the array itself with one index, or copy the part first (part = y[m]; part[...] = v)
    """
    if isinstance(base, (list, tuple, dict)) or is_basic_index(index):
        return
    raise error_at("UnsupportedSyntaxError", (
        f"'{shown}' is a copy here: its index is a mask or an integer array (NumPy's "
        f"advanced indexing), so Python's assignment into it changes nothing; write into "
        f"the array itself with one index, or copy the part first (part = {shown}; "
        f"part[...] = v)"), where)


def sequence_operand(value, count: bool, message: str, where=None) -> None:
    """Check an operand of ``+`` or ``*`` whose other operand is a tuple or
    list, where the compiler could not see its type: for ``seq + value`` it
    must be a tuple or list too (concatenation), for ``seq * value`` an int
    (repetition) -- an array there makes NumPy's elementwise arithmetic of the
    sequence as an array, which the sequence rules would differentiate wrongly.

        >>> sequence_operand(3, True, "never raised")
        >>> sequence_operand(np.ones(2), True, "'*' of a list and an array")
        Traceback (most recent call last):
        srcgrad.errors.UnsupportedSyntaxError: '*' of a list and an array
    """
    if count:
        if isinstance(value, (int, np.integer)):
            return
    elif isinstance(value, (list, tuple)):
        return
    raise error_at("UnsupportedSyntaxError", message, where)


def unpacked(value, count: int, starred: bool = False, where=None) -> None:
    """Check ``a, b = value`` (``starred``: ``a, *rest = value``) before it is
    unpacked item by item (``a = value[0]``, ...): Python raises when the
    counts differ, and so must the generated code -- indexing alone would
    silently take the first items of a longer sequence.  The error is
    Python's own ``ValueError``, with the place in the source.

        >>> unpacked((1, 2), 2)
        >>> unpacked([1, 2, 3], 2, where=("f.py", 3, 4))
        Traceback (most recent call last):
        ValueError: too many values to unpack (expected 2) (f.py, line 3, column 4)
    """
    if isinstance(value, (dict, set, frozenset)):  # (unpacked by position below: R1-10)
        kind = type(value).__name__
        raise error_at("UnsupportedSyntaxError", f"unpacking a {kind} gives its "
                       f"{'keys' if kind == 'dict' else 'elements'}, which srcgrad reads by "
                       f"position: unpack list(...) of it", where)
    n = len(value)
    if n == count or (starred and n >= count):
        return
    if starred:
        message = f"not enough values to unpack (expected at least {count}, got {n})"
    elif n > count:
        message = f"too many values to unpack (expected {count})"
    else:
        message = f"not enough values to unpack (expected {count}, got {n})"
    if where is not None:
        message += f" ({where[0]}, line {where[1]}, column {where[2]})"
    raise ValueError(message)

