"""Adjoint rules, one module per family of primitives.

Importing this package registers every rule; :mod:`.registry` holds them.
"""

from . import (construction, containers, forward_helpers, gradient_control, indexing, linalg, math_module, methods, operators, reductions, shapes, ufuncs)  # noqa: F401 (register)
from .registry import (Rule, adjoint, all_rules, display_name, is_nondifferentiable, lookup, nondifferentiable)

__all__ = ["Rule", "adjoint", "all_rules", "display_name", "is_nondifferentiable", "lookup",
           "nondifferentiable"]
