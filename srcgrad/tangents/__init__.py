"""Tangent (forward-mode) rules, one module per family, mirroring :mod:`srcgrad.rules`.

A tangent rule returns, for each differentiable argument, that argument's term
of the output's tangent (see :class:`srcgrad.rules.registry.TangentRule`).
Rule bodies use only differentiable primitives (NumPy calls and operators, and
runtime helpers that have rules of their own), so generated tangent code can
itself be differentiated again.  Importing this package registers every rule.
"""

from . import (construction, forward_helpers, containers, indexing, linalg, math_module, methods, operators, reductions, shapes, ufuncs)  # noqa: F401 (register)
