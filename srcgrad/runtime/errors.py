"""The errors generated code raises, located at the user's code.

Generated code raises through :func:`error_at`.  A module written by
``srcgrad.export`` does not import this one: it carries a copy of
:func:`srcgrad.standalone.exported_errors.error_at` instead, which raises the
module's own ``GradientError``, the same whether or not srcgrad is installed
where it runs.
"""

from __future__ import annotations

from .. import errors

__all__ = ["error_at"]


def error_at(kind: str, message: str, where=None) -> Exception:
    """srcgrad's error class ``kind`` (a name in :mod:`srcgrad.errors`) with
    ``message``; ``where`` is the ``(file, line, column)`` of the user's code the
    error is about, or None."""
    if where is None:
        return getattr(errors, kind)(message)
    filename, lineno, col = where
    return getattr(errors, kind)(message, filename=filename, lineno=lineno, col=col)
