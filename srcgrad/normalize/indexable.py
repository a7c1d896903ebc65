"""Which local variables a loop may index by position.

The normaliser runs every loop over a range (``for k in range(len(xs)): x =
xs[k]``).  That reads a list, tuple or array as Python's loop does, but a
dict by position reads its values where Python's loop gives its keys, and a
set cannot be indexed at all.  A local variable srcgrad cannot show is a list,
tuple or array -- bound by a helper's return value (``params = init(x)``), an
alias (``b = a``), ``d.copy()``, a tuple target, a loop's item -- is listed
first (``sequence(params)``: a dict's keys, a list as it is), in loops,
``reversed`` and the itertools forms (findings R1-1: a raw KeyError, or with
int keys a wrong value and gradient).  An argument the call passed as a list or
tuple is one: the code is specialised on it.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import ir
from ..ir.syntax import walk


def maybe_unindexable(normaliser, name, seen=None) -> bool:
    """Whether the variable ``name`` of the function ``normaliser`` reads may hold
    something a loop cannot index by position (see the module docstring)."""
    seen = set() if seen is None else seen
    if name in getattr(normaliser, "held_params", ()) \
            or name in getattr(normaliser, "sequence_params", ()) or name in seen:
        return False  # (a list or tuple passed: the call's specialisation knows)
    seen.add(name)
    if name in normaliser.params:
        return True
    for node in walk(normaliser.func):
        if isinstance(node, gast.For) and name in ir.stored_names(node.target):
            return True  # a loop's item
        if isinstance(node, (gast.Assign, gast.AnnAssign)) and name in _stored(node) \
                and not _certainly_indexable(normaliser, node, name, seen):
            return True
    return False


def _stored(assignment) -> list[str]:
    targets = [assignment.target] if isinstance(assignment, gast.AnnAssign) \
        else assignment.targets
    return [n for target in targets for n in ir.stored_names(target)]


def _certainly_indexable(normaliser, binding, name, seen) -> bool:
    """Whether ``binding`` (an assignment) binds ``name`` to a list, tuple or array."""
    targets = [binding.target] if isinstance(binding, gast.AnnAssign) else binding.targets
    if not any(isinstance(t, gast.Name) and t.id == name for t in targets):
        return False  # (a, n = ...: an item of something)
    value = binding.value
    if isinstance(value, gast.Name):  # b = a (an inlined helper's parameter): as a is
        return not maybe_unindexable(normaliser, value.id, seen)
    if isinstance(value, (gast.List, gast.Tuple, gast.ListComp, gast.UnaryOp)):
        return True
    if isinstance(value, gast.BinOp):
        return not isinstance(value.op, gast.BitOr)  # (d | e merges dicts)
    if isinstance(value, gast.Subscript):
        return isinstance(value.slice, gast.Slice)
    if isinstance(value, gast.Call):
        callee = normaliser.callee(value)
        return callee in (list, tuple, sorted, range) or isinstance(callee, np.ufunc) \
            or (getattr(callee, "__module__", None) or "").startswith("numpy")
    return False
