"""srcgrad: source-to-source automatic differentiation for Python and NumPy.

``srcgrad.grad(f)`` reads ``f``'s source and generates its adjoint as readable
Python (``grad(f).source``).  See README.md for a tour and API.md for the
contract.
"""

__version__ = "0.1.0"

from .api.transforms import checkpoint, export, grad, show, value_and_grad, vjp  # noqa: E402
from .api.checks import gradcheck  # noqa: E402
from .api.higher import hessian, hvp, jacobian, jvp  # noqa: E402
from .errors import (  # noqa: E402
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
from .api.report import saved  # noqa: E402
from .rules.custom import custom_vjp, register_jvp, register_vjp  # noqa: E402
from .runtime import on_grad, stop_gradient  # noqa: E402

__all__ = [
    "AliasedUpdateError", "GradcheckError", "MissingRuleError", "NonDifferentiableError", "RuleError",
    "SourceNotFoundError", "SrcGradError",
    "TranslationError", "UnsupportedSyntaxError", "__version__", "checkpoint", "custom_vjp", "export", "grad", "gradcheck", "hessian", "hvp", "jacobian", "jvp", "on_grad", "register_jvp", "register_vjp", "saved", "show", "stop_gradient",
    "value_and_grad", "vjp",
]
