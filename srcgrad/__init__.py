"""srcgrad: source-to-source automatic differentiation for Python and NumPy.

``srcgrad.grad(f)`` reads ``f``'s source and generates its adjoint as readable
Python (``grad(f).source``).  See README.md for a tour and docs/api.md for
every public name: its signature, what it returns and what it raises.

``import srcgrad`` loads only the error classes and the version.  Every other
public name is imported the first time it is used (a module ``__getattr__``,
PEP 562), so a script pays for the compiler -- and for NumPy and gast --
when it first asks for ``srcgrad.grad`` or another transformation, not when it
imports the package.  ``srcgrad.__all__``, ``dir(srcgrad)`` and
``from srcgrad import *`` see every name as before.
"""

from __future__ import annotations

import importlib

from .errors import (
    AliasedUpdateError,
    BackendUnavailableError,
    GradcheckError,
    MissingRuleError,
    NonDifferentiableError,
    NonFiniteGradientError,
    GradientHookError,
    RuleError,
    SourceNotFoundError,
    SrcGradError,
    SrcGradWarning,
    TranslationError,
    UnsupportedSyntaxError,
    ZeroGradientWarning,
)
from .version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (8 ms)
if TYPE_CHECKING:  # the lazy names, for readers, editors and type checkers
    from .api.checks import gradcheck
    from .api.explain import explain
    from .api.higher import hessian, hvp, jacobian, jvp
    from .api.report import saved
    from .api.transforms import checkpoint, export, grad, show, value_and_grad, vjp
    from .rules.custom import custom_vjp, register_jvp, register_vjp
    from .runtime import on_grad, stop_gradient

# Each lazy public name and the module (relative to this package) defining it.
_LAZY = {
    "gradcheck": "api.checks", "explain": "api.explain",
    "hessian": "api.higher", "hvp": "api.higher", "jacobian": "api.higher", "jvp": "api.higher",
    "saved": "api.report",
    "checkpoint": "api.transforms", "export": "api.transforms", "grad": "api.transforms",
    "show": "api.transforms", "value_and_grad": "api.transforms", "vjp": "api.transforms",
    "custom_vjp": "rules.custom", "register_jvp": "rules.custom", "register_vjp": "rules.custom",
    "on_grad": "runtime", "stop_gradient": "runtime",
}

__all__ = [
    "AliasedUpdateError", "BackendUnavailableError", "GradcheckError", "GradientHookError", "MissingRuleError",
    "NonDifferentiableError", "NonFiniteGradientError", "RuleError", "SourceNotFoundError", "SrcGradError",
    "TranslationError",
    "SrcGradWarning", "UnsupportedSyntaxError", "ZeroGradientWarning", "__version__",
    "checkpoint", "custom_vjp", "explain", "export", "grad",
    "gradcheck", "hessian", "hvp", "jacobian", "jvp", "on_grad", "register_jvp", "register_vjp",
    "saved", "show", "stop_gradient", "value_and_grad", "vjp",
]


def __getattr__(name: str):
    """A lazy public name (imported now, then kept in the package's namespace),
    or a submodule not imported yet (``srcgrad.pipeline``)."""
    home = _LAZY.get(name)
    if home is not None:
        value = getattr(importlib.import_module(f".{home}", __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("__"):
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
