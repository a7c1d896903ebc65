"""Derivative rules, one module per family of primitives, both modes side by side.

Each family module holds a primitive's adjoint rule (reverse mode) and its
tangent rule (forward mode) together, written by hand or derived from one
declaration (:mod:`.derive`: ``pointwise``, ``linear``, ``alias``).  Importing
this package registers every rule; :mod:`.registry` holds them.
"""

from . import (construction, containers, forward_helpers, gradient_control, indexing, linalg, math_module, methods, operators, reductions, shapes, ufuncs)  # noqa: F401 (register)
from . import differences, products, sorting  # noqa: F401 (register)
from .derive import alias, linear, pointwise
from .registry import (Rule, TangentRule, adjoint, all_rules, all_tangents, display_name, is_nondifferentiable, lookup, lookup_tangent, nondifferentiable, tangent)

__all__ = ["Rule", "TangentRule", "adjoint", "alias", "all_rules", "all_tangents",
           "display_name", "is_nondifferentiable", "linear", "lookup", "lookup_tangent",
           "nondifferentiable", "pointwise", "tangent"]
