"""Exceptions raised by srcgrad.

Every error srcgrad raises derives from :class:`SrcGradError`.  Errors about a
user's code carry the location of the offending construct and render it the way
the Python interpreter renders a syntax error, so that an editor can jump to it::

    File "model.py", line 12, column 8
        try:
        ^
    UnsupportedSyntaxError: 'try' statements are not supported

The location is optional because some errors (a bad option, a failed
gradcheck) are not about a particular line.
"""

from __future__ import annotations

import linecache


class SrcGradError(Exception):
    """Base class of everything srcgrad raises.

    ``filename``, ``lineno`` (1-based) and ``col`` (0-based) locate the construct
    in the user's file when the error is about user code; they are ``None``
    otherwise.
    """

    def __init__(self, message: str, *, filename: str | None = None,
                 lineno: int | None = None, col: int | None = None,
                 source_line: str | None = None):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.col = col
        if source_line is None and filename and lineno:
            source_line = linecache.getline(filename, lineno).rstrip("\n") or None
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        if self.lineno is None:
            return self.message
        where = f'File "{self.filename}", line {self.lineno}'
        if self.col is not None:
            where += f", column {self.col + 1}"
        lines = [self.message, "  " + where]
        if self.source_line:
            text = self.source_line.expandtabs()
            stripped = text.lstrip()
            indent = len(text) - len(stripped)
            lines.append("    " + stripped)
            if self.col is not None and self.col >= indent:
                lines.append("    " + " " * (self.col - indent) + "^")
        return "\n".join(lines)


class UnsupportedSyntaxError(SrcGradError):
    """A construct srcgrad does not differentiate (the fence rejected it)."""


class AliasedUpdateError(UnsupportedSyntaxError):
    """An in-place update another name for the same memory would see (srcgrad
    refuses it rather than differentiate what Python does not compute)."""


class NonDifferentiableError(SrcGradError):
    """A gradient was requested through something that has none (an int
    argument, a non-scalar output of ``grad``)."""


class TranslationError(SrcGradError):
    """The generated code computed another value than the function itself
    (found by ``check=True`` / ``SRCGRAD_CHECK=1``): a srcgrad bug, reported
    instead of a silently wrong gradient."""


class NonFiniteGradientError(SrcGradError):
    """Anomaly mode (``check_finite=True`` / ``SRCGRAD_ANOMALY=1``) found a NaN or
    an Inf in the adjoint sweep: located at the user's expression whose adjoint
    made it first, with the forward values that adjoint read."""


class MissingRuleError(SrcGradError):
    """An active value flows into a function that has no adjoint rule."""


class GradcheckError(SrcGradError):
    """``gradcheck`` found the generated gradient disagreeing with finite
    differences."""


class SourceNotFoundError(SrcGradError):
    """The function's source code cannot be found (typed into a plain REPL,
    built with ``exec`` without a file, a C function)."""


class RuleError(SrcGradError):
    """A rule failed validation when it was registered."""


class GradientHookError(SrcGradError):
    """A gradient hook (``srcgrad.on_grad(x, hook)``) returned no cotangent
    (``None``: a hook that only logs must still ``return g``) or one of
    another shape; raised where the gradient runs, located at the ``on_grad``
    call."""


class BackendUnavailableError(SrcGradError):
    """A backend whose engine is not installed: ``backend="numba"`` without
    numba (``pip install numba``)."""


class SrcGradWarning(UserWarning):
    """Base class of the warnings srcgrad issues."""


class ZeroGradientWarning(SrcGradWarning):
    """``grad`` or ``value_and_grad`` was asked for an argument whose gradient is
    always zero (no differentiable path leads from it to the returned value);
    issued once per function and argument.  ``srcgrad.explain`` says where the
    flow is cut."""
