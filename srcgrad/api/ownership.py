"""What a caller is handed is the caller's own: arrays that may share memory
with what srcgrad keeps (a pullback's residuals, the cotangent passed) are
copied, so changing them in place (``pred -= y``) changes nothing srcgrad
reads (:func:`srcgrad.vjp`).

    >>> import numpy as np
    >>> kept = np.ones(3)
    >>> given = unshared((kept, np.zeros(2)), arrays_in([kept]))
    >>> given[0] is kept, np.shares_memory(given[0], kept)
    (False, False)
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np


def arrays_in(value) -> list:
    """The NumPy arrays in ``value`` and the tuples (named ones too), lists,
    dicts and dataclass objects it holds."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for item in value for a in arrays_in(item)]
    if isinstance(value, dict):
        return [a for item in value.values() for a in arrays_in(item)]
    if _is_record(value):
        return [a for f in dataclasses.fields(value) for a in arrays_in(getattr(value, f.name))]
    return []


def unshared(value, others):
    """``value`` with each array that may share memory with one of ``others``
    copied (tuples and lists rebuilt around the copies)."""
    if not others:
        return value
    if isinstance(value, np.ndarray):
        return value.copy() if any(np.may_share_memory(value, o) for o in others) else value
    if type(value) in (tuple, list):
        return type(value)(unshared(item, others) for item in value)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # a named tuple
        return type(value)(*(unshared(item, others) for item in value))
    if type(value) is dict:
        return {key: unshared(item, others) for key, item in value.items()}
    if _is_record(value):   # a dataclass object: a shallow copy holding the copies
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        changed = {k: unshared(v, others) for k, v in fields.items()}
        if all(changed[k] is v for k, v in fields.items()):
            return value
        made = copy.copy(value)
        for k, v in changed.items():
            object.__setattr__(made, k, v)   # (a frozen dataclass's fields too)
        return made
    return value


def _is_record(value) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)
