"""Copies of values the generated code keeps and puts back: what a tape saves
before an overwrite (``snapshot``, ``item_or_missing``), what a checkpointed loop
keeps of its state (``snapshot_state``) and puts back when its adjoint ends
(``restored_into``).  Each keeps the sharing the original run saw, so that what
is rerun or restored from it computes what the first run computed.

    >>> import numpy as np
    >>> z = np.arange(4.0)
    >>> v = z[1:]
    >>> zc, vc, hc = snapshot_state(z, v, [v])
    >>> zc[1] = 9.0
    >>> vc[0], hc[0] is vc, z[1]
    (np.float64(9.0), True, np.float64(1.0))
"""

from __future__ import annotations

import numpy as np

from .namespaces import foreign

__all__ = ["Unbound", "item_or_missing", "restore_item", "restored_into", "snapshot",
           "snapshot_state"]


class Unbound:
    """What a variable holds, in the forward sweep, before the function binds
    it, where a tape saves it before that (memory/unbound_reads.py): the class
    itself is the marker, which no value of the program's is, and a read of
    the function's that may find it is checked for it first, raising
    UnboundLocalError as the function does."""


def snapshot(value):
    """A copy of ``value`` that later in-place updates cannot change (what the
    forward sweep saves before ``x[i] = v`` overwrites ``x[i]``)."""
    if isinstance(value, (np.ndarray, list, dict)):
        return value.copy()
    if type(value) is not float and foreign(value):
        return value.copy()  # a CuPy array is updated in place, a Dask one by x[i] = v too
    return value


def kept_apart(value):
    """``value`` with every array in it copied, containers rebuilt: what a
    generated function returns when its adjoint sweep later restores arrays in
    place (``x[i] = v`` undone), so that the value the caller holds is the
    one the function computed, whatever the sweep does afterwards."""
    if isinstance(value, np.ndarray) or foreign(value):
        return value.copy()
    if type(value) in (list, tuple):
        return type(value)(kept_apart(v) for v in value)
    if type(value) is dict:
        return {k: kept_apart(v) for k, v in value.items()}
    return value


#: How deep snapshot_state follows containers inside containers (a loop's state
#: is a few names; deeper structures are copied as snapshot() would).
_NESTING = 8


def snapshot_state(*values):
    """Copies of a checkpointed loop's state ``values`` (as :func:`snapshot`, and
    also a tuple, NumPy scalar...) that keep the memory they share: two names
    for one array stay one array, a view stays a view of its copied base, and a
    list or dict holding one of those arrays holds its copy -- so an iteration
    rerun from the copies sees the aliasing the original run saw (``same_window``,
    ``held_at``).  A list's other items are not copied: a list the loop appends
    to costs one list, not its arrays, per snapshot."""
    count: dict = {}
    for v in values:
        _tally(v, count, 0)
    # module-level helpers, not closures: nested functions that call each other
    # form a reference cycle that keeps the copies alive until the gc runs
    state = {"count": count, "top": {id(_root(v)) for v in values if isinstance(v, np.ndarray)},
             "copies": {}, "memo": {}}
    return tuple(_copied(v, state, False, 0) for v in values)


def _root(v):
    """The array whose memory the view ``v`` shares (``v`` itself if it owns it)."""
    while isinstance(v.base, np.ndarray):
        v = v.base
    return v


def _items(v):
    if isinstance(v, (list, tuple)):
        return v
    return v.values() if isinstance(v, dict) else ()


def _tally(v, count, depth):
    """Count, in ``count``, the names and container items that reach each array's memory."""
    if isinstance(v, np.ndarray):
        count[id(_root(v))] = count.get(id(_root(v)), 0) + 1
    elif depth < _NESTING:
        for item in _items(v):
            _tally(item, count, depth + 1)


def _copied(v, state, held, depth):
    """``v`` copied for :func:`snapshot_state` (``held``: an item of a container)."""
    if isinstance(v, np.ndarray):
        return _copied_array(v, state, held)
    memo = state["memo"]
    if isinstance(v, (list, tuple, dict)) and depth < _NESTING:
        if id(v) not in memo:
            if type(v) is dict:
                memo[id(v)] = {k: _copied(x, state, True, depth + 1) for k, x in v.items()}
            elif type(v) in (list, tuple):
                memo[id(v)] = type(v)(_copied(x, state, True, depth + 1) for x in v)
            else:  # a named tuple is kept; a list subclass copied
                memo[id(v)] = v if isinstance(v, tuple) else v.copy()
        return memo[id(v)]
    return v.copy() if hasattr(v, "copy") and not isinstance(v, (int, float)) else v


def _copied_array(v, state, held):
    r, memo = _root(v), state["memo"]
    if held and id(r) not in state["top"]:
        return v  # an item only a list holds: shared with the original list
    if id(v) in memo:
        return memo[id(v)]
    out = None
    if state["count"][id(r)] > 1:
        rc = state["copies"].setdefault(id(r), r.copy(order="K"))
        if v is r:
            out = rc
        elif rc.strides == r.strides:
            offset = v.__array_interface__["data"][0] - r.__array_interface__["data"][0]
            out = np.ndarray(v.shape, v.dtype, buffer=rc, offset=offset, strides=v.strides)
    memo[id(v)] = out = v.copy() if out is None else out
    return out


def item_or_missing(mapping, key):
    """What the forward sweep saves before ``mapping[key] = v``: ``(True, a copy of
    the old item)``, or ``(False, None)`` where the key of a dict is new (a list
    or an array has the element: where the compiler could not tell a dict)."""
    if not isinstance(mapping, dict) or key in mapping:
        return True, snapshot(mapping[key])
    return False, None


def restore_item(mapping, key, saved):
    """Undo ``mapping[key] = v`` from what :func:`item_or_missing` saved: put the
    old item back, or remove a key the assignment added."""
    present, value = saved
    if present:
        mapping[key] = value
    else:
        del mapping[key]


def restored_into(originals, values):
    """``values`` (a checkpointed loop's state, as it was before the loop) put back
    into the ``originals``, the arrays the loop changed in place, where they
    still fit: views taken of them before the loop read that memory."""
    out = []
    for original, value in zip(originals, values):
        if isinstance(original, np.ndarray) and isinstance(value, np.ndarray) \
                and original is not value and original.shape == value.shape \
                and original.dtype == value.dtype and original.flags.writeable:
            np.copyto(original, value)
            out.append(original)
        else:
            out.append(value)
    return tuple(out)
