"""Forward mode and the transformations composed from it: ``jvp``, ``hvp``,
``jacobian``, ``hessian``, and ``grad`` of a gradient.

``jvp`` runs generated tangent code (:mod:`.forward`).  Second derivatives come
from differentiating generated code once more: the tangent function
``jvp_f(x, d_x)`` is ordinary Python made of differentiable primitives, so
reverse mode applied to its tangent output gives ``d/dx <grad f(x), d_x>``, the
Hessian-vector product, at the cost of about one gradient -- reverse over
forward, the combination with no tape of tapes.
"""

from __future__ import annotations

import inspect

import numpy as np

from .. import pipeline as compiler
from ..errors import NonDifferentiableError, SrcGradError
from ..pipeline import Options
from ..runtime.structures import is_differentiable_leaf
from .transforms import (
    Transformed,
    _compile,
    _is_object,
    _normalize_wrt,
    _transform,
    differentiable_value,
    vjp,
)


def _function(fn, mode):
    if inspect.ismethod(fn) and hasattr(fn.__func__, "__code__"):
        return fn.__func__, fn.__self__
    if not hasattr(fn, "__code__"):
        raise SrcGradError(f"srcgrad.{mode} differentiates Python functions written with "
                           f"'def'; got {fn!r}")
    return fn, None


def _all_arguments(fn, bound_self, primals):
    """The primals with ``self`` in front (a bound method) and defaults filled in."""
    args = ((bound_self,) if bound_self is not None else ()) + tuple(primals)
    try:
        sig = inspect.signature(fn)
        full = sig.bind(*args)
        full.apply_defaults()
    except TypeError as exc:
        raise SrcGradError(f"cannot call {fn.__name__} with these primals: {exc}") from None
    return tuple(full.args)


def tangent_function(fn, wrt=0, *, optimize=True) -> Transformed:
    """The generated forward-mode function of ``fn``: it takes ``fn``'s
    positional arguments followed by one tangent per ``wrt`` argument and
    returns ``(value, tangent)``.  ``.source`` shows the tangent code."""
    return _transform("jvp", fn, wrt, "save", optimize)


def jvp(fn, primals=None, tangents=None, *, wrt=None, optimize=True):
    """Forward mode: ``(fn(*primals), J @ tangents)``.

    ``tangents`` has one entry per primal: a float or array shaped like it (or a
    list, tuple, dict or object of them, for a structured argument), or None for
    an argument held constant (integers, flags, shapes must get None).  The
    tangent code is generated source like the adjoint code; see it with
    ``srcgrad.jvp(fn, wrt=...).source``.

    Called as ``jvp(fn, wrt=0)`` (no primals), returns that generated function
    itself: ``g(*args, *tangents) -> (value, tangent)``.
    """
    if primals is None:
        return tangent_function(fn, 0 if wrt is None else wrt, optimize=optimize)
    primals, tangents = tuple(primals), tuple(tangents if tangents is not None else ())
    if len(tangents) != len(primals):
        raise SrcGradError(f"jvp needs one tangent per primal (None for a constant one): "
                           f"got {len(primals)} primals and {len(tangents)} tangents")
    func, bound_self = _function(fn, "jvp")
    positions = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if t is None:
            continue
        if not differentiable_value(p):
            raise NonDifferentiableError(
                f"argument {i} of {func.__name__} is {type(p).__name__}, not a float or "
                f"float array: pass None as its tangent")
        positions.append(i)
    args = _all_arguments(func, bound_self, primals)
    shift = 1 if bound_self is not None else 0
    wrt_positions = tuple(p + shift for p in positions)
    receiver = type(args[0]) if args and (bound_self is not None or _is_object(args[0])) \
        else None
    options = Options(mode="jvp", wrt=wrt_positions, single=False, optimize=optimize,
                      receiver=receiver)
    compiler.validate_options(options)
    compiled = _compile(func, options)
    moving = [_as_tangent(tangents[p], primals[p]) for p in positions]
    return compiled.functions[0](*args, *moving)


def _as_tangent(t, primal):
    """A tangent as the generated code reads it: arrays of the primal's float type."""
    if isinstance(primal, np.ndarray) and is_differentiable_leaf(primal):
        t = np.asarray(t)
        if t.shape != primal.shape:
            raise SrcGradError(f"a tangent of shape {t.shape} for an argument of shape "
                               f"{primal.shape}")
        return t.astype(primal.dtype, copy=False)
    return t


# -- second derivatives: reverse mode over generated tangent code -----------------------

def _tangent_code(fn, position, receiver=None):
    """The compiled module of ``fn``'s tangent function for a tangent of argument
    ``position``: ``tangent_f(*args, d_arg)`` returns the tangent alone (a scalar
    for a scalar ``fn``), ready to be differentiated in reverse mode."""
    options = Options(mode="tangent", wrt=(position,), single=False, receiver=receiver)
    return _compile(fn, options)


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
        receiver = type(args[0]) if args and (self.bound is not None or _is_object(args[0])) \
            else None
        tangent = _tangent_code(self.fn, self.inner, receiver)
        code = tangent.functions[0]
        return tangent, _compile(code, Options(mode="grad", wrt=(self.outer,), single=True))

    def __call__(self, *args):
        *args, v = args
        args = _all_arguments(self.fn, self.bound, args)
        _, gradient = self._compiled(args)
        return gradient.functions[0](*args, _as_tangent(v, args[self.inner]))

    def source_for(self, *args) -> str:
        """Both generated modules, as a call with ``args`` would use them."""
        tangent, gradient = self._compiled(_all_arguments(self.fn, self.bound, args))
        return tangent.source + "\n\n" + gradient.source

    @property
    def source(self) -> str:
        return self.source_for(*_placeholders(self.fn, self.bound))


def _placeholders(fn, bound):
    """Arguments that only select the code to show (no call happens)."""
    n = fn.__code__.co_argcount - (1 if bound is not None else 0) - len(fn.__defaults__ or ())
    return [0.0] * n


def hvp(fn, wrt=0):
    """The Hessian-vector product of the scalar function ``fn``: returns
    ``h(*args, v)`` computing ``(d^2 fn / d arg^2) @ v`` for argument ``wrt``.

    Runs reverse mode over generated forward-mode code: the cost of about one
    gradient, with no Hessian formed.
    """
    position, single = _normalize_wrt(wrt)
    if not single:
        raise SrcGradError("hvp takes one argument position (an int) as wrt")
    func, bound_self = _function(fn, "hvp")
    shift = 1 if bound_self is not None else 0
    second = SecondOrder(func, position[0] + shift, position[0] + shift, bound_self)
    return Derivative(second, lambda: second.source, fn, "hvp")


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


def grad_of_gradient(inner: Transformed, wrt) -> Derivative:
    """``grad(grad(f, i), j)``: defined when argument ``i`` is a scalar, so that
    ``grad(f, i)`` is a scalar function; the direction is then ``1.0``."""
    options = inner._options
    if options.mode != "grad" or not options.single:
        raise SrcGradError("grad of a transformed function needs grad(f) with one argument "
                           "position; use srcgrad.hessian or srcgrad.jacobian otherwise")
    outer, single = _normalize_wrt(wrt)
    if not single:
        raise SrcGradError("grad(grad(f)) takes one argument position (an int) as wrt")
    shift = 1 if inner._bound is not None else 0
    second = SecondOrder(inner._fn, options.wrt[0], outer[0] + shift, inner._bound)

    def call(*args):
        position = second.inner - shift
        x = args[position] if position < len(args) else None
        if not (isinstance(x, float) or (isinstance(x, np.ndarray) and x.ndim == 0)):
            raise NonDifferentiableError(
                "grad(grad(f)) needs grad(f) to return a scalar, so the argument of the "
                "inner grad must be a float; use srcgrad.hessian or srcgrad.hvp for arrays")
        return second(*args, 1.0)

    return Derivative(call, lambda: second.source, inner, "grad")


def _flat_size(x) -> int:
    if isinstance(x, float):
        return 1
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        return x.size
    raise NonDifferentiableError(f"jacobian and hessian take float or float array arguments, "
                                 f"not {type(x).__name__}")


def _basis(x, k):
    if isinstance(x, float):
        return 1.0
    e = np.zeros(x.size, dtype=x.dtype)
    e[k] = 1
    return e.reshape(x.shape)


def hessian(fn, wrt=0):
    """The dense Hessian of the scalar function ``fn`` with respect to argument
    ``wrt``: ``H(*args)`` has shape ``x.shape + x.shape``; one Hessian-vector
    product per element of ``x``."""
    product = hvp(fn, wrt)
    position = _normalize_wrt(wrt)[0][0]

    def hess(*args):
        x = args[position]
        n = _flat_size(x)
        columns = [np.ravel(product(*args, _basis(x, k))) for k in range(n)]
        return np.stack(columns, axis=-1).reshape(np.shape(x) + np.shape(x)) \
            if n else np.zeros(np.shape(x) * 2)

    return Derivative(hess, lambda: product.source, fn, "hessian")


def jacobian(fn, wrt=0):
    """The dense Jacobian of ``fn`` with respect to argument ``wrt``: ``J(*args)``
    has shape ``out.shape + x.shape``.  It takes one reverse-mode pullback per
    output element or one forward-mode tangent per input element, whichever is
    fewer.  ``jacobian(grad(f))`` is the Hessian (reverse over forward)."""
    position, single = _normalize_wrt(wrt)
    if not single:
        raise SrcGradError("jacobian takes one argument position (an int) as wrt")
    i = position[0]
    if isinstance(fn, Derivative):
        raise SrcGradError(f"jacobian of {fn.__name__} would be a third derivative: srcgrad "
                           f"composes second derivatives only (see docs/limitations.md)")
    if isinstance(fn, Transformed) and fn._options.mode == "grad" and fn._options.single:
        if fn._options.wrt[0] != i or fn._bound is not None:
            raise SrcGradError("jacobian(grad(f)) is supported with the same argument "
                               "position for both, on plain functions")
        return hessian(fn.__wrapped__, i)

    def jac(*args):
        x = args[i]
        n = _flat_size(x)
        value, pullback = vjp(fn, *args, wrt=i)
        if isinstance(value, tuple):
            raise SrcGradError("jacobian takes functions returning one array or float")
        m = int(np.size(value))
        if m <= n:
            rows = []
            for k in range(m):
                u = _basis(np.asarray(value, dtype=np.result_type(value, np.float64)), k) \
                    if np.ndim(value) else 1.0
                rows.append(np.ravel(pullback(u)[0]))
            flat = np.stack(rows) if rows else np.zeros((0, n))
        else:
            tangents = [None] * len(args)
            cols = []
            for k in range(n):
                tangents[i] = _basis(x, k)
                cols.append(np.ravel(jvp(fn, args, tangents)[1]))
            flat = np.stack(cols, axis=-1)
        return flat.reshape(np.shape(value) + np.shape(x))

    return Derivative(jac, lambda: _jacobian_source(fn, i), fn, "jacobian")


def _jacobian_source(fn, i) -> str:
    """Both generated functions a Jacobian may run: the pullback and the tangent."""
    vjp_source = _compile(getattr(fn, "__func__", fn),
                          Options(mode="vjp", wrt=(i,), single=False)).source
    return vjp_source + "\n\n" + tangent_function(fn, i).source


__all__ = ["Derivative", "SecondOrder", "grad_of_gradient", "hessian", "hvp", "jacobian", "jvp",
           "tangent_function"]
