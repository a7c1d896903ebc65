"""Second derivatives: reverse mode over generated tangent code.

The tangent function ``tangent_f(x, d_x)`` that forward mode generates is
ordinary Python made of differentiable primitives, so reverse mode applied to
it gives ``d/dx <grad f(x), d_x>``: the Hessian-vector product, at the cost of
about one gradient and with no tape of tapes.  ``hvp`` and ``hessian``
(:mod:`.higher`) and ``grad(grad(f))`` (:mod:`.transforms`) are all made of
:class:`SecondOrder`; this module sits below both so neither imports the other.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..errors import NonDifferentiableError, SrcGradError
from ..pipeline import Options
from ..runtime.structures import is_differentiable_leaf
from .arguments import is_user_object, normalize_wrt
from .compiled import compile_function


def all_arguments(fn, bound_self, primals) -> tuple:
    """The primals with ``self`` in front (a bound method) and defaults filled in."""
    args = ((bound_self,) if bound_self is not None else ()) + tuple(primals)
    try:
        sig = inspect.signature(fn)
        full = sig.bind(*args)
        full.apply_defaults()
    except TypeError as exc:
        raise SrcGradError(f"cannot call {fn.__name__} with these primals: {exc}") from None
    return tuple(full.args)


def as_tangent(t, primal):
    """A tangent as the generated code reads it: arrays of the primal's float type."""
    if isinstance(primal, np.ndarray) and is_differentiable_leaf(primal):
        t = np.asarray(t)
        if t.shape != primal.shape:
            raise SrcGradError(f"a tangent of shape {t.shape} for an argument of shape "
                               f"{primal.shape}")
        return t.astype(primal.dtype, copy=False)
    return t


def _tangent_code(fn, position, receiver=None):
    """The compiled module of ``fn``'s tangent function for a tangent of argument
    ``position``: ``tangent_f(*args, d_arg)`` returns the tangent alone (a scalar
    for a scalar ``fn``), ready to be differentiated in reverse mode."""
    options = Options(mode="tangent", wrt=(position,), single=False, receiver=receiver)
    return compile_function(fn, options)


class SecondOrder:
    """A derivative of a derivative: reverse mode over generated tangent code.

    ``inner`` is the argument the first derivative is taken with respect to,
    ``outer`` the one the second is.  Calling it with ``fn``'s arguments and a
    direction ``v`` for argument ``inner`` returns the gradient, with respect to
    argument ``outer``, of ``<grad_inner f, v>``: a Hessian-vector product
    (``hvp``) or, for a scalar argument and ``v = 1.0``, ``grad(grad(f))``.
    ``.source`` shows both generated functions.
    """

    def __init__(self, fn, inner: int, outer: int, bound=None):
        self.fn, self.inner, self.outer, self.bound = fn, inner, outer, bound

    def _compiled(self, args):
        """The tangent module and the gradient module of its function, for ``args``."""
        receiver = type(args[0]) if args and (self.bound is not None or is_user_object(args[0])) \
            else None
        tangent = _tangent_code(self.fn, self.inner, receiver)
        code = tangent.functions[0]
        return tangent, compile_function(code, Options(mode="grad", wrt=(self.outer,),
                                                       single=True))

    def __call__(self, *args):
        *args, v = args
        args = all_arguments(self.fn, self.bound, args)
        _, gradient = self._compiled(args)
        return gradient.functions[0](*args, as_tangent(v, args[self.inner]))

    def source_for(self, *args) -> str:
        """Both generated modules, as a call with ``args`` would use them."""
        tangent, gradient = self._compiled(all_arguments(self.fn, self.bound, args))
        return tangent.source + "\n\n" + gradient.source

    @property
    def source(self) -> str:
        return self.source_for(*_placeholders(self.fn, self.bound))


def _placeholders(fn, bound):
    """Arguments that only select the code to show (no call happens)."""
    n = fn.__code__.co_argcount - (1 if bound is not None else 0) - len(fn.__defaults__ or ())
    return [0.0] * n


class Derivative:
    """A callable made of generated functions, with their ``.source``."""

    def __init__(self, call, source, wrapped, kind):
        self._call = call
        self._source = source
        self.__wrapped__ = wrapped
        self.__name__ = f"{kind}_{getattr(wrapped, '__name__', 'f')}"
        self.__doc__ = getattr(call, "__doc__", None)

    def __call__(self, *args):
        return self._call(*args)

    @property
    def source(self) -> str:
        return self._source()

    def __repr__(self):
        return f"<srcgrad {self.__name__}>"


def grad_of_gradient(inner, wrt) -> Derivative:
    """``grad(grad(f, i), j)`` for ``inner = grad(f, i)`` (a
    :class:`.transforms.Transformed`): defined when argument ``i`` is a scalar,
    so that ``grad(f, i)`` is a scalar function; the direction is then ``1.0``."""
    options = inner.options
    if options.mode != "grad" or not options.single:
        raise SrcGradError("grad of a transformed function needs grad(f) with one argument "
                           "position; use srcgrad.hessian or srcgrad.jacobian otherwise")
    outer, single = normalize_wrt(wrt)
    if not single:
        raise SrcGradError("grad(grad(f)) takes one argument position (an int) as wrt")
    shift = 1 if inner.bound is not None else 0
    second = SecondOrder(inner.function, options.wrt[0], outer[0] + shift, inner.bound)

    def call(*args):
        position = second.inner - shift
        x = args[position] if position < len(args) else None
        if not (isinstance(x, float) or (isinstance(x, np.ndarray) and x.ndim == 0)):
            raise NonDifferentiableError(
                "grad(grad(f)) needs grad(f) to return a scalar, so the argument of the "
                "inner grad must be a float; use srcgrad.hessian or srcgrad.hvp for arrays")
        return second(*args, 1.0)

    return Derivative(call, lambda: second.source, inner, "grad")
