"""What code calling functions held in lists and dicts depends on.

``for f in TRANSFORMS: x = f(x)`` and ``ACTS[name](h)`` compile to one branch
per function the list or dict held when srcgrad compiled them
(normalize/function_values.py), behind a guard refusing any other.  A
notebook that appends to ``TRANSFORMS`` or adds ``ACTS["gelu"]`` afterwards
must get new code at the next call, as rebinding a global gives, not that
guard's error: the code depends on each item and on the length of every
list or dict it read that holds functions.

A dependency is ``(container, key, value)`` as in :class:`.compiled.Compiled`:
``(xs, i, xs[i])`` for a list's item, ``(d, k, d[k])`` for a dict's, and
``(c, LENGTH, len(c))``.

    >>> import numpy as np
    >>> table = [np.sin, np.cos]
    >>> deps = held_function_dependencies([({"T": table}, "T", table)])
    >>> [(key, value) for _, key, value in deps]
    [(0, <ufunc 'sin'>), (1, <ufunc 'cos'>), (<length>, 2)]
    >>> table.append(np.exp)
    >>> [changed(*dep) for dep in deps]
    [False, False, True]
"""

from __future__ import annotations

from ..frontend.function_tables import is_function_value


class _Length:
    """The key of a container's length among the dependencies."""

    def __repr__(self):
        return "<length>"


LENGTH = _Length()
_GONE = object()

#: Containers longer than this are not watched item by item: a call compares
#: what the watches return by identity, and CPython shares the int objects of
#: lengths up to 256 only (a longer function table is rare; the generated
#: code's guard still refuses a function it was not made for).
_MAX_WATCHED = 256


def _function_item(item) -> bool:
    """A function, or a tuple holding one (``(np.sin, 1.0)``: a tuple never
    changes, so the item itself is watched)."""
    return is_function_value(item) or (
        type(item) is tuple and any(is_function_value(i) for i in item))


def held_function_dependencies(deps) -> list:
    """The items and lengths of the lists and dicts among the values of
    ``deps`` that hold functions (module docstring), or tuples of them
    (``PAIRS = [(np.sin, 1.0), ...]``, review s37 D-24)."""
    out, seen = [], set()
    for _, _, obj in deps:
        if type(obj) not in (list, dict) or id(obj) in seen or len(obj) > _MAX_WATCHED:
            continue
        items = obj.items() if type(obj) is dict else enumerate(obj)
        pairs = [(key, item) for key, item in items]
        if not any(_function_item(item) for _, item in pairs):
            continue
        seen.add(id(obj))
        out += [(obj, key, item) for key, item in pairs if _function_item(item)]
        out.append((obj, LENGTH, len(obj)))
    return out


def list_item(container, index):
    """``container[index]``, or a marker where the list is shorter now."""
    return container[index] if index < len(container) else _GONE


def changed(container, key, value) -> bool:
    """Whether the dependency ``(container, key, value)`` no longer holds."""
    if key is LENGTH:
        return len(container) != value
    if type(container) is list:
        return list_item(container, key) is not value
    return container.get(key, _GONE) is not value
