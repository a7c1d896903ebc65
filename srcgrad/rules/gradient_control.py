"""Primitives that control where gradients flow.

``srcgrad.stop_gradient(x)`` returns ``x`` unchanged in the forward sweep and
blocks its cotangent: its output is never active.
"""

from ..runtime import stop_gradient
from .registry import nondifferentiable

nondifferentiable(stop_gradient, name="stop_gradient")
