"""Records in checkpointed loops that read what they record into.

``HISTORY.append(float(l))`` runs as written, once per call, and a
checkpointed loop's reruns leave it out (normalize/records_outside.py,
:mod:`.checkpointing`).  A rerun still reads everything else the loop body
reads -- after the first run's records.  Where the body reads a list, dict
or object from outside (``len(STATE['hist'])``, an argument ``hist``) that
may be the recorded list, the rerun would see more entries than the first
run did (review s37 D-22): such a loop is refused, located.

    >>> import gast
    >>> body = gast.parse("n = len(hist)\\nH.append(float(n))").body
    >>> body[1].records = True
    >>> try:
    ...     refuse_records_read_back(body, {"H": []}, {"hist"}, "f.py")
    ... except Exception as error:
    ...     print(type(error).__name__, "reads 'hist'" in str(error))
    UnsupportedSyntaxError True
"""

from __future__ import annotations

import types

import numpy as np

from .. import ir
from ..errors import UnsupportedSyntaxError
from ..ir.syntax import source_of


def _may_hold_a_list(value) -> bool:
    """A value whose contents may be (or hold) a list the function records into:
    a list, dict, tuple or user object (not an array, number, string, function
    or module)."""
    return not isinstance(value, (np.ndarray, np.generic, int, float, complex, str, bytes,
                                  type(None), types.ModuleType, type, types.FunctionType,
                                  types.BuiltinFunctionType)) and not callable(value)


def refuse_records_read_back(stmts, free, params, filename) -> None:
    """Refuse, located, a record (``H.append(float(v))``, normalize/records_outside.py)
    in a checkpointed loop whose body also reads a list, dict or object from
    outside (a global, or a parameter ``params`` holds that is no array or
    number): a rerun from a snapshot reads it after the first run's records,
    as the first run did not (review s37 D-22: ``len(STATE['hist'])``, a
    ``hist`` argument, read while recording into it)."""
    records = [s for s in ir.walk_statements(stmts) if getattr(s, "records", False)]
    if not records:
        return
    # (the recorded lists' own names: the normaliser saw no other read of them)
    own = {n for s in records for n in ir.names_in(s) if n in free}
    for stmt in ir.walk_statements(stmts):
        if getattr(stmt, "records", False):
            continue
        for name in ir.names_in(stmt):
            if name not in own and (
                    name in params or (name in free and _may_hold_a_list(free[name]))):
                node = records[0]
                raise UnsupportedSyntaxError(
                    f"this loop is checkpointed (its iterations run again in the adjoint "
                    f"sweep), and it records with '{source_of(node).strip()}' while it "
                    f"reads '{name}', which may hold that list: a rerun would read it after "
                    f"the records.  Use policy='save' or 'recompute', or read it before the "
                    f"loop", filename=filename, lineno=getattr(node, "lineno", None),
                    col=getattr(node, "col_offset", None))


__all__ = ["refuse_records_read_back"]
