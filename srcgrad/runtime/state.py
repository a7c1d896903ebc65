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

__all__ = ["item_or_missing", "restore_item", "restored_into", "snapshot", "snapshot_state"]


def snapshot(value):
    """A copy of ``value`` that later in-place updates cannot change (what the
    forward sweep saves before ``x[i] = v`` overwrites ``x[i]``)."""
    return value.copy() if isinstance(value, (np.ndarray, list, dict)) else value


def kept_apart(value):
    """``value`` with every array in it copied, containers rebuilt: what a
    generated function returns when its adjoint sweep later restores arrays in
    place (``x[i] = v`` undone), so that the value the caller holds is the
    one the function computed, whatever the sweep does afterwards."""
    if isinstance(value, np.ndarray):
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
    def root(v):
        while isinstance(v.base, np.ndarray):
            v = v.base
        return v

    def items(v):
        if isinstance(v, (list, tuple)):
            return v
        return v.values() if isinstance(v, dict) else ()

    count: dict = {}
    top = {id(root(v)) for v in values if isinstance(v, np.ndarray)}

    def tally(v, depth=0):
        if isinstance(v, np.ndarray):
            count[id(root(v))] = count.get(id(root(v)), 0) + 1
        elif depth < _NESTING:
            for item in items(v):
                tally(item, depth + 1)

    for v in values:
        tally(v)
    del tally  # it refers to itself: a cycle that would keep count until the gc ran
    copies: dict = {}
    memo: dict = {}

    def array(v, held):
        r = root(v)
        if held and id(r) not in top:
            return v  # an item only a list holds: shared with the original list
        if id(v) in memo:
            return memo[id(v)]
        out = None
        if count[id(r)] > 1:
            rc = copies.setdefault(id(r), r.copy(order="K"))
            if v is r:
                out = rc
            elif rc.strides == r.strides:
                offset = v.__array_interface__["data"][0] - r.__array_interface__["data"][0]
                out = np.ndarray(v.shape, v.dtype, buffer=rc, offset=offset, strides=v.strides)
        memo[id(v)] = out = v.copy() if out is None else out
        return out

    def container(v, depth):
        if type(v) is dict:
            return {k: copy(x, True, depth + 1) for k, x in v.items()}
        if type(v) in (list, tuple):
            return type(v)(copy(x, True, depth + 1) for x in v)
        return v if isinstance(v, tuple) else v.copy()  # a named tuple; a list subclass

    def copy(v, held=False, depth=0):
        if isinstance(v, np.ndarray):
            return array(v, held)
        if isinstance(v, (list, tuple, dict)) and depth < _NESTING:
            if id(v) not in memo:
                memo[id(v)] = container(v, depth)
            return memo[id(v)]
        return v.copy() if hasattr(v, "copy") and not isinstance(v, (int, float)) else v

    out = tuple(copy(v) for v in values)
    # copy and container refer to each other: a cycle that would keep memo (the
    # copies, freed snapshots among them) alive until the gc ran -- memory that
    # grew with a checkpointed loop's length
    del copy, container
    return out


def item_or_missing(mapping, key):
    """What the forward sweep saves before ``mapping[key] = v``: ``(True, a copy of
    the old item)``, or ``(False, None)`` where the key is new."""
    if key in mapping:
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
