"""What a user function whose source cannot be read may change, from its code.

A helper made by ``exec`` or ``compile`` (a generated helper, a cell run
through ``exec``) has code but no source srcgrad can read, so
:mod:`.helper_state` cannot look for its writes.  Taking it as pure let a
helper that scales a module's array in place between two reads of it give a
silently wrong gradient; taking every such helper as changing everything
refused the ordinary case, a pure helper (``def twice(s): return 2.0 * s``).
Its instructions settle most cases: code that stores no subscript or
attribute, rebinds no global or closed-over name, applies no in-place
operator and calls nothing changes nothing outside itself (:func:`changes_nothing`).
Anything else may change whatever it reaches: the module-level and
closed-over objects it names (:func:`reachable`) and what it is given.

    >>> ns = {}
    >>> exec("def twice(s):\\n    return 2.0 * s\\n"
    ...      "def decay():\\n    W[...] *= 0.8\\n", ns)
    >>> changes_nothing(ns["twice"].__code__), changes_nothing(ns["decay"].__code__)
    (True, False)
"""

from __future__ import annotations

import dis
import types

__all__ = ["changes_nothing", "rebound", "reachable"]

#: Instructions that change state outside the frame, or run other code that may.
_WRITES = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_ATTR", "DELETE_ATTR",
                     "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_SLICE", "IMPORT_NAME",
                     "CALL", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_FUNCTION_EX",
                     "CALL_METHOD", "CALL_KW", "YIELD_VALUE", "SEND"})


def _codes(code):
    """``code`` and the code of every function or comprehension defined in it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def changes_nothing(code) -> bool:
    """Whether running ``code`` can change nothing outside its own frame."""
    for part in _codes(code):
        for instr in dis.get_instructions(part):
            name = instr.opname
            if name in _WRITES or name.startswith("INPLACE_") \
                    or name == "BINARY_OP" and instr.argrepr.endswith("=") \
                    or name in ("STORE_DEREF", "DELETE_DEREF") \
                    and instr.argval in part.co_freevars:
                return False
    return True


def rebound(code) -> frozenset:
    """The global and closed-over names ``code`` may rebind."""
    return frozenset(instr.argval for part in _codes(code)
                     for instr in dis.get_instructions(part)
                     if instr.opname in ("STORE_GLOBAL", "DELETE_GLOBAL")
                     or instr.opname in ("STORE_DEREF", "DELETE_DEREF")
                     and instr.argval in part.co_freevars)


def reachable(fn) -> list:
    """The module-level and closed-over values the function ``fn`` names, as
    ``(name, value)``."""
    out = []
    names = {n for part in _codes(fn.__code__) for n in part.co_names}
    for name in sorted(names):
        if name in fn.__globals__:
            out.append((name, fn.__globals__[name]))
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out.append((name, cell.cell_contents))
        except ValueError:
            pass
    return out
