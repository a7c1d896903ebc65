"""Adjoint rules, one module per family of primitives.

Importing this package registers every rule; :mod:`.registry` holds them.
"""

from . import operators  # noqa: F401  (registers)
from .registry import Rule, adjoint, all_rules, display_name, is_nondifferentiable, lookup, nondifferentiable

__all__ = ["Rule", "adjoint", "all_rules", "display_name", "is_nondifferentiable", "lookup",
           "nondifferentiable"]
