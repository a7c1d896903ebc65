"""The error class of an exported module: copied into every module ``srcgrad.export`` writes.

Generated code raises through one runtime helper, ``error_at(kind, message,
where)``.  Inside srcgrad that is :func:`srcgrad.runtime.errors.error_at`, which
raises srcgrad's own classes (``AliasedUpdateError``, ``MissingRuleError``,
...).  An exported module must behave the same whether or not srcgrad happens
to be installed where it runs, so :func:`.portable.helpers` copies this
module's :func:`error_at` in its place, and :class:`GradientError` always: the
module raises its own ``GradientError`` (a ``ValueError``), whose ``kind`` is
the name of the class srcgrad raises for the same problem, and whose message
is srcgrad's, with the file, line and column of the user's code it is about.

    >>> error = error_at("AliasedUpdateError", "v is updated", ("/path/to/model.py", 3, 4))
    >>> isinstance(error, ValueError), error.kind, error.lineno
    (True, 'AliasedUpdateError', 3)
    >>> print(error)
    v is updated
      File "/path/to/model.py", line 3, column 5

This module imports nothing of srcgrad, and nothing outside the standard library.
"""

from __future__ import annotations

import linecache


class GradientError(ValueError):
    """Raised by this module's gradient code where srcgrad raises its error class
    ``kind`` (``"AliasedUpdateError"``, ``"MissingRuleError"``, ...).  ``filename``,
    ``lineno`` (1-based) and ``col`` (0-based) locate the user's code it is about,
    or are None."""

    def __init__(self, message, kind="SrcGradError", filename=None, lineno=None, col=None):
        self.message, self.kind = message, kind
        self.filename, self.lineno, self.col = filename, lineno, col
        lines = [message]
        if lineno is not None:
            column = "" if col is None else f", column {col + 1}"
            lines.append(f'  File "{filename}", line {lineno}{column}')
            text = linecache.getline(filename, lineno).rstrip("\n").expandtabs()
            stripped = text.lstrip()
            if stripped:
                lines.append("    " + stripped)
                indent = len(text) - len(stripped)
                if col is not None and col >= indent:
                    lines.append("    " + " " * (col - indent) + "^")
        super().__init__("\n".join(lines))


def error_at(kind: str, message: str, where=None) -> Exception:
    """A :class:`GradientError` of ``kind``; ``where`` is the ``(file, line, column)``
    of the user's code the error is about, or None."""
    return GradientError(message, kind, *(where or (None, None, None)))


__all__ = ["GradientError", "error_at"]
