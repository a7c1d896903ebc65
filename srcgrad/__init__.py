"""srcgrad: source-to-source automatic differentiation for Python and NumPy.

``srcgrad.grad(f)`` reads ``f``'s source and generates its adjoint as readable
Python (``grad(f).source``).  See README.md for a tour and API.md for the
contract.
"""

from .api.checks import gradcheck
from .api.higher import hessian, hvp, jacobian, jvp
from .api.report import saved
from .api.transforms import checkpoint, export, grad, show, value_and_grad, vjp
from .errors import (
    AliasedUpdateError,
    GradcheckError,
    MissingRuleError,
    NonDifferentiableError,
    RuleError,
    SourceNotFoundError,
    SrcGradError,
    TranslationError,
    UnsupportedSyntaxError,
)
from .rules.custom import custom_vjp, register_jvp, register_vjp
from .runtime import on_grad, stop_gradient
from .version import __version__

__all__ = [
    "AliasedUpdateError", "GradcheckError", "MissingRuleError", "NonDifferentiableError", "RuleError",
    "SourceNotFoundError", "SrcGradError",
    "TranslationError", "UnsupportedSyntaxError", "__version__", "checkpoint", "custom_vjp", "export", "grad", "gradcheck", "hessian", "hvp", "jacobian", "jvp", "on_grad", "register_jvp", "register_vjp", "saved", "show", "stop_gradient",
    "value_and_grad", "vjp",
]
