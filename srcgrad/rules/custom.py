"""Users' own derivative rules: ``register_vjp``, ``register_jvp``, ``custom_vjp``.

srcgrad differentiates a function by reading its source.  Where there is no
source to read -- a function written in C (``scipy.special.gammaln``), an
opaque callable object -- or where the user knows a better derivative than the
one the source implies (a stable formula, a clipped one, an implicit-function
adjoint), a rule supplies it.  Users' rules are *called by name* from the
generated code, never inlined, so they may use any library; ``g.source`` shows
the call (``d_x = gammaln_vjp(y, d_y, x)``).

    >>> import numpy as np
    >>> from ..api.transforms import grad
    >>> class Softplus:                      # srcgrad cannot read into this object
    ...     def __call__(self, x):
    ...         return np.log1p(np.exp(x))
    >>> softplus = Softplus()
    >>> def softplus_vjp(out, d_out, x):
    ...     return d_out / (1.0 + np.exp(-x))
    >>> register_vjp(softplus, softplus_vjp)
    >>> def f(x):
    ...     return np.sum(softplus(x) * x)
    >>> print(grad(f).source.split("# Adjoint sweep")[1])  # doctest: +NORMALIZE_WHITESPACE
    d_t3 = grad_seed(t3)
    d_t2 = unreduce(d_t3, t2)
    del t2  # read no more
    d_t1 = unbroadcast(d_t2 * x, t1)
    d_x = unbroadcast(d_t2 * t1, x)
    del d_t2  # read no more
    d_x = d_x + softplus_vjp(t1, d_t1, x)
    return grad_like(d_x, x)
"""

from __future__ import annotations

import functools
import inspect

from ..errors import RuleError
from . import registry


def _check_primitive(primitive, what):
    if not callable(primitive):
        raise RuleError(f"{what}: the primitive must be callable, got {primitive!r}")
    try:
        hash(primitive)
    except TypeError:
        raise RuleError(f"{what}: the primitive {primitive!r} is not hashable") from None


def register_vjp(primitive, rule, wrt=(), name=None) -> None:
    """Use ``rule`` as the adjoint (reverse-mode) rule of ``primitive``.

    ``rule(out, d_out, *args)`` receives the primitive's output, the output's
    cotangent and the primitive's arguments (parameters named like the
    primitive's own, where Python can see them), and returns the cotangent of
    each differentiable argument -- a tuple when there are several.  ``wrt``
    names the differentiable parameters (default: those without a default
    value).  Checked here: a rule whose parameters do not line up with the
    primitive's raises :class:`~srcgrad.errors.RuleError` now, not when a
    gradient is first compiled.  A later registration for the same primitive
    replaces the earlier one; compiled gradients are regenerated.
    """
    _check_primitive(primitive, "register_vjp")
    _check_rule_function(rule, ("out", "d_out"), "register_vjp")
    registry.register_user_rule("vjp", primitive, rule, wrt, name)


def register_jvp(primitive, rule, wrt=(), name=None) -> None:
    """Use ``rule`` as the tangent (forward-mode) rule of ``primitive``.

    ``rule(out, *args, *d_args)`` receives the output, the primitive's
    arguments and then one tangent ``d_<name>`` per differentiable parameter,
    and returns each differentiable argument's term of the output's tangent
    (the tangent if only that argument moved; a tuple when there are several).
    Forward mode adds the terms of the arguments that move.
    """
    _check_primitive(primitive, "register_jvp")
    _check_rule_function(rule, ("out",), "register_jvp")
    registry.register_user_rule("jvp", primitive, rule, wrt, name)


def _check_rule_function(rule, leading, what):
    if not callable(rule):
        raise RuleError(f"{what}: the rule must be a function, got {rule!r}")
    try:
        params = list(inspect.signature(rule).parameters)
    except (TypeError, ValueError):
        raise RuleError(f"{what}: cannot read the parameters of {rule!r}") from None
    if tuple(params[:len(leading)]) != leading:
        raise RuleError(f"{what}: the rule must start with the parameters "
                        f"{', '.join(leading)}; {getattr(rule, '__name__', rule)} takes "
                        f"({', '.join(params)})")


class custom_vjp:  # noqa: N801 - used as a decorator, like functools.partial
    """A function with a user-defined reverse-mode derivative, as in JAX::

        @srcgrad.custom_vjp
        def clip_grad(x):
            return x

        def clip_grad_fwd(x):
            return x, None                      # (output, residuals)

        def clip_grad_bwd(res, d_out):
            return (np.clip(d_out, -1, 1),)    # one cotangent per argument

        clip_grad.defvjp(clip_grad_fwd, clip_grad_bwd)

    Called from differentiated code, the forward sweep calls ``fwd`` (which
    returns the output and the residuals the backward function needs) and the
    adjoint sweep calls ``bwd(residuals, d_out)``, both by name.  Called
    directly it is the original function.  Forward mode uses ``defjvp``'s
    rule when one is given (see :func:`register_jvp` for its form), else the
    original function's source.
    """

    def __init__(self, fn):
        if not callable(fn):
            raise RuleError(f"custom_vjp decorates a function, got {fn!r}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.fwd = None
        self.bwd = None

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def defvjp(self, fwd, bwd):
        """Set the forward function (returning ``(output, residuals)``) and the
        backward function (``bwd(residuals, d_out)`` returning a tuple with one
        cotangent per positional argument)."""
        for f, role in ((fwd, "forward"), (bwd, "backward")):
            if not callable(f):
                raise RuleError(f"custom_vjp {self.fn.__name__}: the {role} function must be "
                                f"callable, got {f!r}")
        n = len(inspect.signature(bwd).parameters)
        if n != 2:
            raise RuleError(f"custom_vjp {self.fn.__name__}: the backward function takes "
                            f"(residuals, d_out), not {n} parameters")
        self.fwd, self.bwd = fwd, bwd
        registry.record_user_rule("custom_vjp", self.fn.__qualname__, fwd, bwd)
        return self

    def defjvp(self, rule):
        """Set the forward-mode rule: ``rule(out, *args, *d_args)`` (see
        :func:`register_jvp`)."""
        register_jvp(self, rule)
        return self

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __repr__(self):
        return f"<srcgrad.custom_vjp {self.fn.__qualname__}>"


__all__ = ["custom_vjp", "register_jvp", "register_vjp"]
