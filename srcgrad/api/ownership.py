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

import numpy as np


def arrays_in(value) -> list:
    """The NumPy arrays in ``value`` and the tuples, lists and dicts it holds."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for item in value for a in arrays_in(item)]
    if isinstance(value, dict):
        return [a for item in value.values() for a in arrays_in(item)]
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
    if type(value) is dict:
        return {key: unshared(item, others) for key, item in value.items()}
    return value
