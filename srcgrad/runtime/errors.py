"""The errors generated code raises, located at the user's code.

A module written by ``srcgrad.export`` carries a copy of this helper and runs on
NumPy alone: it raises srcgrad's own error classes where srcgrad is installed,
and ValueError where it is not.
"""

from __future__ import annotations

__all__ = ["error_at"]


def error_at(kind: str, message: str, where=None) -> Exception:
    """srcgrad's error class ``kind`` -- or ValueError where srcgrad is not installed
    (a module written by srcgrad.export runs on NumPy alone).  ``where`` is the
    ``(file, line, column)`` of the user's code the error is about."""
    try:
        from srcgrad import errors  # noqa: PLC0415 - optional at run time, by design
    except ImportError:
        return ValueError(message if where is None else
                          f"{message}\n  File \"{where[0]}\", line {where[1]}")
    if where is None:
        return getattr(errors, kind)(message)
    filename, lineno, col = where
    return getattr(errors, kind)(message, filename=filename, lineno=lineno, col=col)
