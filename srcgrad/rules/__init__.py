"""Derivative rules, one module per family of primitives, both modes side by side.

Each family module holds a primitive's adjoint rule (reverse mode) and its
tangent rule (forward mode) together, written by hand or derived from one
declaration (:mod:`.derive`: ``pointwise``, ``linear``, ``alias``).  Importing
this package registers every rule; :mod:`.registry` holds them.

SciPy's rules (:mod:`.scipy_special`, :mod:`.scipy_stats` and
:mod:`.scipy_stats_location`, :mod:`.scipy_signal`, :mod:`.scipy_linalg`,
:mod:`.scipy_spatial`) are the exception: SciPy is optional, and srcgrad never imports it.  Their
modules import it, so they are registered lazily, the first time a lookup
misses once the user's code has imported that part of SciPy.
"""

import importlib
import sys

from . import (construction, containers, forward_helpers, gradient_control, indexing, linalg, math_module, methods, operators, reductions, shapes, ufuncs)  # noqa: F401 (register)
from . import differences, products, sorting  # noqa: F401 (register)
from . import dict_builders, fft, sequences, statistics  # noqa: F401 (register)
from . import array_api, ufunc_methods  # noqa: F401 (register)
from .derive import alias, linear, pointwise
from .registry import (Rule, TangentRule, adjoint, all_rules, all_tangents, display_name, is_nondifferentiable, lookup, lookup_tangent, nondifferentiable, register_lazily, tangent)


def _family(*names):
    """A loader of the family modules ``names``: imported, or run again after
    ``registry.restore_point()`` put the registry back to before them."""
    def load():
        for name in names:
            module = sys.modules.get(f"{__name__}.{name}")
            if module is None:
                importlib.import_module(f"{__name__}.{name}")
            else:
                importlib.reload(module)
    return load


for _library, _names in (("scipy.special", ("scipy_special",)),
                         ("scipy.stats", ("scipy_stats", "scipy_stats_location")),
                         ("scipy.signal", ("scipy_signal",)), ("scipy.linalg", ("scipy_linalg",)),
                         ("scipy.spatial", ("scipy_spatial",))):
    register_lazily(_library, _family(*_names))

__all__ = ["Rule", "TangentRule", "adjoint", "alias", "all_rules", "all_tangents",
           "display_name", "is_nondifferentiable", "linear", "lookup", "lookup_tangent",
           "nondifferentiable", "pointwise", "tangent"]
