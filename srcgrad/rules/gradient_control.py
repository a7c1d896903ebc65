"""Primitives that control where and how gradients flow, both modes.

``srcgrad.stop_gradient(x)`` returns ``x`` unchanged in the forward sweep and
blocks its cotangent: its output is never active.  ``srcgrad.on_grad(x, hook)``
returns ``x`` too, and in the adjoint sweep passes ``x``'s cotangent through
``hook`` -- the user's own code, called by name, the way PyTorch's
``register_hook`` and Tangent's ``insert_grad_of`` run code on a gradient.  A
hook acts on cotangents only: in forward mode the tangent passes through.
"""

from ..runtime import GradSite, hook_result, on_grad, stop_gradient
from .registry import adjoint, nondifferentiable, tangent

nondifferentiable(stop_gradient, name="stop_gradient")


@adjoint(on_grad, "x", name="on_grad")
def on_grad_(out, d_out, x, hook, where=None):
    """The hook called as written, its result checked
    (:func:`~srcgrad.runtime.hook_result`): a hook that returns None is
    refused at its ``on_grad`` line.  ``where`` is that line's ``(file, line,
    column)``, with the watched expression after them for a hook that takes
    the site as a second argument."""
    if where is None or len(where) == 3:
        return hook_result(hook(d_out), d_out, hook, where)
    return hook_result(hook(d_out, GradSite(where)), d_out, hook, where)


@tangent(on_grad, "x", name="on_grad")
def on_grad_tangent(out, x, hook, where=None, d_x=None):
    return d_x
