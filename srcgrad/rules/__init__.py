"""Adjoint rules, one module per family of primitives.

Importing this package registers every rule; :mod:`.registry` holds them.
"""

from . import containers, gradient_control  # noqa: F401 (register)
from . import (construction, indexing, linalg, math_module, methods,  # noqa: F401 (register)
               operators, reductions, shapes, ufuncs)
from .registry import Rule, adjoint, all_rules, display_name, is_nondifferentiable, lookup, nondifferentiable

__all__ = ["Rule", "adjoint", "all_rules", "display_name", "is_nondifferentiable", "lookup",
           "nondifferentiable"]
