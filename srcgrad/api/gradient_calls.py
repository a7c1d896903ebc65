"""A gradient srcgrad made, called inside a function srcgrad differentiates.

``dHdq = srcgrad.grad(H)`` used in a leapfrog step, MAML's inner
``g = srcgrad.grad(inner_loss)``: the outer function's derivative needs the
derivative of ``dHdq``'s output, a second derivative of ``H``.  The call is
differentiated as a :class:`~srcgrad.rules.custom.custom_vjp` whose rules are
srcgrad's own second-order code (:class:`.second_order.HigherOrder`, reverse
mode over ``H``'s generated tangent code):

- the forward sweep calls the gradient and keeps its arguments;
- the adjoint sweep, given the cotangent ``c`` of ``dHdq(q, p, k)``, needs
  ``d/d(q, p, k) <c, dH/dq>``: the gradient, with respect to every float
  argument, of ``H``'s derivative along ``c`` in ``q`` -- one reverse sweep
  over ``H``'s tangent code (second derivatives commute, so no transpose);
- forward mode needs ``dH/dq``'s tangent along each moving argument ``t_j``:
  ``d/dq <dH/d(arg j), t_j>``, the same code with the roles swapped.

A ``value_and_grad(H)`` called inside returns ``(value, gradient)``: the
value's cotangent adds ``d_value * grad H`` (a pullback of ``H`` itself), and
its tangent is ``H``'s own jvp.

The outer function's generated code calls these rules by name (``dHdq_fwd``,
``dHdq_bwd``), bound to this module's functions: it runs in a process that has
srcgrad, and ``export`` refuses it, saying so.  A third derivative (hvp of the
outer function) is refused where it would differentiate these rules.
"""

from __future__ import annotations

import inspect
import types

import numpy as np

from ..frontend.linker import is_library_module
from ..rules.custom import custom_vjp
from ..runtime.structures import (
    AttributeCotangent,
    DictCotangent,
    ListCotangent,
    TupleCotangent,
    is_differentiable_leaf,
    is_zero,
)
from .second_order import HigherOrder


def _floats(args) -> tuple:
    """The positions of the arguments that carry derivatives (floats, float arrays,
    lists, tuples and dicts holding them)."""
    return tuple(i for i, a in enumerate(args) if _carries(a))


def _carries(a) -> bool:
    """Whether ``a`` is a float or float array, or a list, tuple, dict or user
    object (a dataclass, a plain class's instance) holding one."""
    if isinstance(a, (list, tuple)):
        return any(_carries(v) for v in a)
    if isinstance(a, dict):
        return any(_carries(v) for v in a.values())
    if _user_object(a):
        return any(_carries(v) for v in vars(a).values())
    return isinstance(a, float) or (isinstance(a, np.ndarray) or np.isscalar(a)) \
        and is_differentiable_leaf(a)


def _user_object(a) -> bool:
    """An instance of a user's class, whose fields the generated code differentiates."""
    return hasattr(a, "__dict__") and not isinstance(a, (type, types.ModuleType)) \
        and not callable(a) and not is_library_module(type(a).__module__ or "")


def _kept(value):
    """An argument as the adjoint sweep reads it again: an array the outer
    function may change in place afterwards is copied (a list's, tuple's or
    dict's too, in a container of the same kind)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) in (list, tuple):
        return type(value)(_kept(v) for v in value)
    if type(value) is dict:
        return {k: _kept(v) for k, v in value.items()}
    return value


def _structured(g, like):
    """``g``, a derivative for an argument shaped like ``like``, as the generated
    code adds derivatives: a list's, tuple's or dict's item by item (a plain
    list or tuple would be concatenated)."""
    if isinstance(like, (list, tuple)) and isinstance(g, (list, tuple)):
        kind = ListCotangent if isinstance(like, list) else TupleCotangent  # (named too)
        return kind(_structured(a, b) for a, b in zip(g, like))
    if isinstance(like, dict) and isinstance(g, dict):
        return DictCotangent({k: _structured(v, like.get(k)) for k, v in g.items()})
    if _user_object(like) and (_user_object(g) or isinstance(g, dict)):
        # a dataclass's: by field name, as reading obj.w gives it
        items = g.items() if isinstance(g, dict) else vars(g).items()
        return AttributeCotangent({k: _structured(v, getattr(like, k, None)) for k, v in items})
    return g


def _direction(c, like):
    """A cotangent or tangent as the tangent code's direction: shaped like the argument."""
    if isinstance(like, np.ndarray):
        return np.array(np.broadcast_to(c, like.shape), dtype=like.dtype)
    return float(c) if isinstance(like, float) else c


class GradientCall:
    """The rules of calls of one gradient ``g = grad(fn, wrt)`` (see the module
    docstring); :meth:`as_custom_vjp` is what the outer function's code calls."""

    def __init__(self, gradient, vjp, tangent_function):
        self.gradient = gradient
        # transforms.vjp and the tangent function of fn along one argument
        # (its jvp transform), handed in: transforms imports this module
        self.vjp, self.tangent_function = vjp, tangent_function
        self.fn = gradient.__wrapped__
        self.wrt = gradient.options.wrt
        self.single = gradient.options.single
        # value_and_grad(fn): the output is (value, gradient), the value's
        # derivative a first derivative of fn (vjp and jvp of fn itself)
        self.with_value = gradient.options.mode == "value_and_grad"
        self._levels = {}
        self._custom = None

    def _level(self, inner: int, outer: tuple, single: bool) -> HigherOrder:
        key = (inner, outer, single)
        if key not in self._levels:
            self._levels[key] = HigherOrder(self.fn, (inner,), outer, single=single)
        return self._levels[key]

    def forward(self, *args):
        """The gradient's value and the arguments, kept for the adjoint sweep."""
        return self.gradient(*args), tuple(_kept(a) for a in args)

    def backward(self, args, d_out):
        """One cotangent per argument: ``d/d(args) <d_out, grad fn(args)>``
        (for value_and_grad, ``d_out`` is ``(d_value, d_gradient)``, and
        ``d_value * grad fn(args)`` is added)."""
        floats = _floats(args)
        total = [0.0] * len(args)
        if self.with_value:
            d_value, d_out = (0.0, 0.0) if is_zero(d_out) else d_out
            if not is_zero(d_value) and floats:
                _, pullback = self.vjp(self.fn, *args, wrt=floats)
                for p, g in zip(floats, pullback(d_value)):
                    total[p] = _structured(g, args[p])
        parts = [d_out] if self.single else (
            [0.0] * len(self.wrt) if is_zero(d_out) else list(d_out))
        for w, c in zip(self.wrt, parts):
            if is_zero(c) or not floats:
                continue
            position = w % len(args)
            found = self._level(position, floats, False)(*args, _direction(c, args[position]))
            for p, g in zip(floats, found):
                g = _structured(g, args[p])
                total[p] = g if is_zero(total[p]) else total[p] + g
        return tuple(total)

    def tangent(self, out, *args):
        """Each moving argument's term of the output's tangent (the arguments,
        then one tangent per argument, as a tangent rule receives them)."""
        n = len(args) // 2
        primals, tangents = args[:n], args[n:]
        terms = []
        for j, t in enumerate(tangents):
            if is_zero(t) or j not in _floats(primals):
                terms.append(0.0)
                continue
            outs = tuple(w % n for w in self.wrt)
            term = self._level(j, outs, self.single)(*primals, _direction(t, primals[j]))
            # a tuple wrt, a list argument: forward mode adds the terms item by
            # item, not by concatenation
            term = _structured(term, primals[outs[0]]) if self.single else TupleCotangent(
                _structured(part, primals[w]) for part, w in zip(term, outs))
            if self.with_value:  # the value's tangent along t: fn's own jvp
                value_term = self.tangent_function(self.fn, j)(*primals, t)[1]
                term = TupleCotangent((value_term, term))
            terms.append(term)
        return tuple(terms) if n > 1 else terms[0]

    def as_custom_vjp(self) -> custom_vjp:
        """The call as a custom_vjp (made once): forward, backward and tangent
        rules above, with the parameters of ``fn`` for the tangent rule."""
        if self._custom is None:
            custom = custom_vjp(self.gradient)
            params = [p for p in inspect.signature(self.fn).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            name = getattr(self.fn, "__name__", "f")
            name = name if name.isidentifier() else "lambda"  # grad(lambda t: ...)

            def forward(*args):
                return self.forward(*args)

            def backward(res, d_out):
                return self.backward(res, d_out)

            def tangent(*args):
                return self.tangent(*args)

            for rule, role in ((forward, "fwd"), (backward, "bwd"), (tangent, "jvp")):
                rule.__name__ = rule.__qualname__ = f"grad_{name}_{role}"
            custom.defvjp(forward, backward)
            out = inspect.Parameter("out", inspect.Parameter.POSITIONAL_OR_KEYWORD)
            plain = [p.replace(default=inspect.Parameter.empty,
                               kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
            tangent.__signature__ = inspect.Signature(
                [out, *plain, *(p.replace(name=f"d_{p.name}") for p in plain)])
            custom.defjvp(tangent)
            self._custom = custom
        return self._custom

