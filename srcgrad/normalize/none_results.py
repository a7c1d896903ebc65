"""``t = hs.append(v)``: a call made for what it does, whose result is None,
bound to a name -- the body of a lambda (``add = lambda v: hs.append(v)``) or
a local function's ``return hs.append(v)``, whose value the inlined call
(:meth:`.inlining.Inlining.inline_local`) stands for.

The call changes ``hs`` (or ``y`` in ``np.copyto(y, v)``, ``np.putmask(y, m,
v)``) in place and returns None.  As a statement of its own, srcgrad follows
that change (an append, an element write) or refuses it, located; bound to a
name it was taken for a pure call whose unused result could be dropped, so
the change was lost: a wrong value (``hs.extend``: 1.79 where Python gives
8.27), a raw ValueError from ``np.stack([])``, or a gradient that read ``y``
as it was (outside tester T2, session 30, #9 and #10).  So the call is made
the statement it is, and the inlined call's value is None, as in Python.

    >>> import gast
    >>> call = gast.parse("hs.append(v)").body[0].value
    >>> returns_none_in_place(call, lambda c: None, {"hs", "v"})
    True
    >>> returns_none_in_place(gast.parse("hs.pop()").body[0].value, lambda c: None, {"hs"})
    False
"""

from __future__ import annotations

import gast
import numpy as np

#: Methods that change their object in place and return None (list, dict,
#: ndarray).  (``pop`` returns the item: it is no statement only.)
_METHODS = frozenset({"append", "extend", "insert", "remove", "clear", "sort", "reverse",
                      "fill", "put", "itemset", "update", "__setitem__"})

#: NumPy functions that write into their first argument and return None.
_NUMPY = (np.copyto, np.putmask, np.place, np.fill_diagonal, np.put, np.put_along_axis)


def returns_none_in_place(call, callee, local_names) -> bool:
    """Whether ``call`` changes something in place and returns None: a
    method above of a local name (``callee(call)`` tells a user's method,
    which is left alone), a NumPy function above, or a ufunc's ``at``."""
    if not isinstance(call, gast.Call):
        return False
    func = call.func
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and func.value.id in local_names and func.attr in _METHODS:
        return True
    return writes_into_argument(callee(call))


def writes_into_argument(fn) -> bool:
    """Whether the function ``fn`` is a NumPy function above or a ufunc's
    ``at``: it writes into its first argument and returns None.  A call of one
    inside an expression (``t = np.putmask(y, m, v)``, ``p(m, v)`` for ``p =
    functools.partial(np.putmask, y)``) is made the statement it is, its value
    None (:meth:`.calls.Calls.call`), so that the change is followed or refused
    as the statement's is, never lost with an unused result."""
    if any(fn is f for f in _NUMPY):
        return True
    return isinstance(getattr(fn, "__self__", None), np.ufunc) \
        and getattr(fn, "__name__", "") == "at"
