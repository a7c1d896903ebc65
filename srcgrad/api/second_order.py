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
from dataclasses import replace

import numpy as np

from .. import backends
from ..errors import NonDifferentiableError, SrcGradError
from ..pipeline import Options
from ..runtime.structures import is_differentiable_leaf
from .arguments import (
    callee_arguments,
    differentiated_at,
    has_keyword_only,
    is_user_object,
    normalize_wrt,
    object_classes,
    object_positions,
    sequence_positions,
    sparse_positions,
)
from .compiled import compile_function
from .protocols import check_protocols
from .subclasses import check_subclass


def all_arguments(fn, bound_self, primals, how: str = "") -> tuple:
    """The primals with ``self`` in front (a bound method) and defaults filled
    in; then the keyword-only parameters' values (``def f(x, *, scale=2.0)``),
    which generated functions take by position after the others
    (transforms._by_position).  ``how`` ends the message where they do not
    fit: how the caller's function is called (hvp's ``h(*args, v)``)."""
    args = ((bound_self,) if bound_self is not None else ()) + tuple(primals)
    try:
        sig = inspect.signature(fn)
        full = sig.bind(*args)
        full.apply_defaults()
    except TypeError as exc:
        raise SrcGradError(f"cannot call {fn.__name__} with these primals: {exc}{how}") from None
    for index, value in enumerate(full.args):  # np.matrix, a subclass's own __pow__,
        if type(value) is not np.ndarray and not isinstance(  # [M, x], self.m
                value, (float, int, np.generic)):
            check_subclass(fn, index, value)
    check_protocols(fn, full.args)  # a list subclass with its own __iter__ (protocols.py)
    keyword_only = [full.arguments[p.name] for p in sig.parameters.values()
                    if p.kind is inspect.Parameter.KEYWORD_ONLY]
    return (*full.args, *keyword_only)


def as_tangent(t, primal):
    """A tangent as the generated code reads it: arrays of the primal's float
    type; for a dict, list or tuple argument, the same structure, a part left
    out or None a zero tangent (as vjp takes None for a zero cotangent)."""
    if isinstance(primal, dict) and (t is None or isinstance(t, dict)):
        if t is None:
            t = {}
        if not t.keys() <= primal.keys():
            raise SrcGradError(
                f"the tangent of a dict argument is a dict of some of its keys "
                f"({', '.join(map(repr, primal))}); got the keys "
                f"{sorted(map(repr, t.keys() - primal.keys()))} it does not have")
        return {k: _part(t.get(k), v) for k, v in primal.items()}
    if type(primal) in (list, tuple) and (t is None or isinstance(t, (list, tuple))):
        if t is None:
            t = [None] * len(primal)
        if len(t) != len(primal):
            raise SrcGradError(
                f"the tangent of a {type(primal).__name__} argument of {len(primal)} items is "
                f"a list or tuple of as many (None for a zero one); got {len(t)} items")
        return type(primal)(_part(u, v) for u, v in zip(t, primal))
    if type(primal) in (list, tuple) and isinstance(t, np.ndarray) and t.ndim \
            and len(t) == len(primal) and all(
                np.shape(p) == t.shape[1:] for p in primal):
        # one array stacking the items' tangents (np.ones_like([z, z])): item by item
        return type(primal)(_part(u, v) for u, v in zip(t, primal))
    if isinstance(primal, dict) or type(primal) in (list, tuple):  # s37 R5-1: was a raw error
        shape = "a dict of some of its keys" if isinstance(primal, dict) else \
            f"a list or tuple of {len(primal)} items"
        raise SrcGradError(
            f"the tangent of a {type(primal).__name__} argument is {shape}, each part shaped "
            f"as the argument's, or None for a zero tangent; got {_kind(t)}")
    if isinstance(primal, np.ndarray) and is_differentiable_leaf(primal):
        t = np.asarray(t)
        if t.shape != primal.shape:
            raise SrcGradError(f"a tangent of shape {t.shape} for an argument of shape "
                               f"{primal.shape}")
        return t.astype(primal.dtype, copy=False)
    return t


def _kind(value) -> str:
    """How a message names what was passed: ``a float``, ``an array of shape (2, 3)``."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _part(t, primal):
    """A part of a structured argument's tangent: None a zero tangent (an array
    of zeros, 0.0), a structure taken part by part, anything else as given."""
    if t is None:
        if isinstance(primal, np.ndarray) and is_differentiable_leaf(primal):
            return np.zeros_like(primal)
        if isinstance(primal, (dict, list, tuple)):
            return as_tangent(None, primal)
        return 0.0 if isinstance(primal, (float, np.floating)) else None
    if isinstance(primal, (dict, list, tuple)) or (
            isinstance(primal, np.ndarray) and np.ndim(t)):  # (an array's shape checked;
        return as_tangent(t, primal)                        # a number stands for zeros)
    return t


def tangent_code(fn, position, receiver=None, callees=(), floats=(), objects=(),
                  specialised=None):
    """The compiled module of ``fn``'s tangent function for a tangent of argument
    ``position``: ``tangent_f(*args, d_arg)`` returns the tangent alone (a scalar
    for a scalar ``fn``), ready to be differentiated in reverse mode.  ``floats``:
    the positions of arguments that are Python floats, as grad specialises;
    ``specialised``: the rest of what grad specialises on (:func:`specialised_on`)."""
    options = Options(mode="tangent", wrt=(position,), single=False, receiver=receiver,
                      callees=callees,  # functions passed as arguments (arguments.Callee)
                      floats=floats, objects=objects,  # user objects passed (their fields)
                      **(specialised or {}))
    return compile_function(fn, options)


def specialised_on(args) -> dict:
    """The list and tuple arguments and the classes of the user objects among
    ``args``, which every level's code is specialised on as grad's and jvp's
    are (``ws * 2`` repetition; ``opt.update(w, g)`` resolved by ``opt``'s class)."""
    return dict(sequences=sequence_positions(args),
                object_classes=object_classes(tuple(map(type, args))),
                sparse=sparse_positions(args))


def _generated_file(function) -> str | None:
    code = getattr(function, "__code__", None)
    return code.co_filename if code is not None else None


def at_user_code(error: SrcGradError, fn, generated: set) -> SrcGradError:
    """``error``, raised about one of the ``generated`` files (tangent code being
    differentiated again), located in ``fn``'s own source instead: at the line
    of ``fn`` that reads as the generated statement does (a statement of the
    user's copied into the tangent code, ``e[0, 1] = 7.0``), else at ``fn``'s
    ``def`` line.  The user never wrote the generated file; a place in it is
    no help.  Any other error is returned as it is."""
    if error.filename not in generated:
        return error
    try:
        lines, first = inspect.getsourcelines(inspect.unwrap(fn))
        filename = inspect.getsourcefile(inspect.unwrap(fn))
    except (OSError, TypeError):
        return error
    wanted = (error.source_line or "").strip()
    hits = [k for k, line in enumerate(lines) if wanted and line.strip() == wanted]
    target = _updated_target(wanted)
    if not hits and target:  # `row[:] = t3`: the user's `row[:] = x * (t + 1)`
        hits = [k for k, line in enumerate(lines) if _updated_target(line.strip()) == target]
    if hits:
        offset, col = hits[0], error.col
    else:
        offset = next((k for k, line in enumerate(lines) if line.lstrip().startswith(
            ("def ", "async def "))), 0)
        col = None
    message = (f"{error.message} (found while differentiating srcgrad's tangent code of "
               f"{getattr(fn, '__name__', 'the function')} once more, for a second "
               f"derivative; at line {error.lineno} of that generated code)")
    try:
        moved = type(error)(message, filename=filename, lineno=first + offset, col=col)
    except TypeError:
        return error
    moved.__cause__ = error
    return moved


def _updated_target(line: str) -> str | None:
    """``row[:]`` of ``row[:] = t3``, ``h`` of ``h += v``: what a statement
    assigns to, the part the generated code keeps as the user wrote it."""
    for sign in (" = ", " += ", " -= ", " *= ", " /= "):
        left, found, _ = line.partition(sign)
        if found and left and "=" not in left and not left.startswith(("def ", "return")):
            return left
    return None


class HigherOrder:
    """A derivative of any order: reverse mode over levels of generated tangent code.

    ``inners`` are the argument positions of the forward-mode levels, innermost
    first: level ``k`` is the tangent function of level ``k - 1`` (level 0 is
    ``fn``) along a direction for argument ``inners[k]``, which it takes as a new
    last argument.  Generated tangent code is plain differentiable source, so
    each level is made like the first, and reverse mode over the last level
    with respect to ``outer`` (a tuple of positions; one gradient when
    ``single``) gives the gradient of ``D^m f(x)[v_1, ..., v_m]``.  Called with
    ``fn``'s arguments followed by one direction per inner level.  Positions
    count ``self`` for a bound method.

    One level with ``v = 1.0`` for a float argument is ``grad(grad(f))``; two
    levels are ``grad(grad(grad(f)))``; one level along ``v`` is ``hvp``.

    ``backend`` runs the last module, the one called (the tangent levels are
    only differentiated): ``"numba"`` compiles it for the first call's
    arguments where numba can (:func:`..backends.settle`).
    """

    def __init__(self, fn, inners: tuple, outer: tuple, single: bool = True, bound=None,
                 backend: str = "numpy"):
        self.fn, self.inners, self.outer, self.single, self.bound = \
            fn, tuple(inners), tuple(outer), single, bound
        self.backend = backend

    def _compiled(self, args, specialise=True) -> list:
        """The generated module of each tangent level, then the gradient's module
        (specialised for the arguments that are Python floats, as grad's are)."""
        receiver = type(args[0]) if args and (self.bound is not None or is_user_object(
            args[0], differentiated_at(0, self.outer, len(args)))) \
            else None
        modules, code = [], self.fn
        floats = () if receiver is not None or not specialise else tuple(
            i for i, a in enumerate(args) if type(a) is float)
        objects = object_positions(args)  # whose attributes are fields: never a guess
        specialised = {} if receiver is not None else specialised_on(args)
        try:
            for level, position in enumerate(self.inners):
                modules.append(tangent_code(code, position, receiver if level == 0 else None,
                                             () if level else callee_arguments(
                                                 self.fn, (position, *self.outer), args,
                                                 int(receiver is not None)), floats,
                                             objects, specialised))
                code = modules[-1].functions[0]
            options = Options(mode="grad", wrt=self.outer, single=self.single,
                              backend=self.backend, floats=floats, objects=objects,
                              **specialised)
            modules.append(compile_function(code, options))
        except SrcGradError as error:
            moved = at_user_code(error, self.fn, self._generated(modules))
            if moved is error:
                raise
            raise moved from None
        return modules

    def _how_called(self, count: int) -> str:
        """What a message about arguments that do not fit ``fn`` adds: none here,
        where the directions are srcgrad's own (grad(grad(f)), jacobian)."""
        return ""

    @staticmethod
    def _generated(modules) -> set:
        return {_generated_file(m.functions[0]) for m in modules}

    def __call__(self, *args):
        count = len(self.inners)
        args, directions = args[:len(args) - count], args[len(args) - count:]
        args = all_arguments(self.fn, self.bound, args, self._how_called(count))
        moving = [as_tangent(v, args[p]) for v, p in zip(directions, self.inners)]
        modules = self._compiled(args)
        if self.backend != "numpy":  # once per module: later calls keep the decision
            code, options = modules[-2].functions[0], modules[-1].options
            backends.settle(modules[-1], (*args, *moving), {}, lambda: compile_function(
                code, replace(options, backend="numpy")))
        try:
            return modules[-1].functions[0](*args, *moving)
        except SrcGradError as error:  # a run-time refusal placed in tangent code
            moved = at_user_code(error, self.fn, self._generated(modules[:-1]))
            if moved is error:
                raise
            raise moved from None

    def source_for(self, *args, specialise=True) -> str:
        """Every generated module, as a call with ``args`` would use them."""
        modules = self._compiled(all_arguments(self.fn, self.bound, args), specialise)
        return "\n\n".join(module.source for module in modules)

    @property
    def source(self) -> str:  # the placeholders select code, not a specialisation
        return self.source_for(*_placeholders(self.fn, self.bound), specialise=False)


class SecondOrder(HigherOrder):
    """A derivative of a derivative: reverse mode over generated tangent code.

    ``inner`` is the argument the first derivative is taken with respect to,
    ``outer`` the one the second is.  Calling it with ``fn``'s arguments and a
    direction ``v`` for argument ``inner`` returns the gradient, with respect to
    argument ``outer``, of ``<grad_inner f, v>``: a Hessian-vector product
    (``hvp``) or, for a scalar argument and ``v = 1.0``, ``grad(grad(f))``.
    ``.source`` shows both generated functions.
    """

    def __init__(self, fn, inner: int, outer: int, bound=None, backend: str = "numpy"):
        super().__init__(fn, (inner,), (outer,), True, bound, backend)
        self.inner, self.outer_position = inner, outer

    def _how_called(self, count: int) -> str:
        """hvp's function takes ``fn``'s arguments and then the vector: with the
        vector forgotten, the last argument was taken for it (review s37
        R5-12: 'missing x' where x was passed)."""
        return (f" (the Hessian-vector product takes {self.fn.__name__}'s arguments and "
                f"then the vector v: h(*args, v); the last argument given is taken as v)")


def _placeholders(fn, bound):
    """Arguments that only select the code to show (no call happens)."""
    n = fn.__code__.co_argcount - (1 if bound is not None else 0) - len(fn.__defaults__ or ())
    return [0.0] * n


class Derivative:
    """A callable made of generated functions, with their ``.source``.

    ``chain`` is the :class:`HigherOrder` a ``grad(grad(...))`` is made of (its
    directions all ``1.0``), so that one more ``grad`` adds a level to it;
    ``dense`` is ``(function, bound, position, order)`` for a dense derivative
    tensor (``hessian``: order 2), so that ``jacobian`` of it is the next one.
    """

    def __init__(self, call, source, wrapped, kind, *, chain=None, dense=None):
        self._call = call
        self._source = source
        self.__wrapped__ = wrapped
        self.__name__ = f"{kind}_{getattr(wrapped, '__name__', 'f')}"
        self.__doc__ = getattr(call, "__doc__", None)
        self.chain, self.dense = chain, dense
        self.jacobian_of = None  # (fn, position) of a plain jacobian (higher.jacobian)
        fn = wrapped
        while hasattr(fn, "__wrapped__"):  # grad(grad(f)): f itself
            fn = fn.__wrapped__
        # f(x, *, scale=2.0): its name where the generated code would miss the defaults
        self._keyword_only = fn.__name__ if kind != "jacobian" and has_keyword_only(
            getattr(fn, "__func__", fn)) else None

    def __call__(self, *args, **kwargs):
        if self._keyword_only is not None:
            name = self._keyword_only
            raise SrcGradError(
                f"{self.__name__}: {name} has keyword-only parameters, which the "
                f"second-order transformations do not fill in (grad, value_and_grad, vjp, "
                f"jvp and jacobian do); differentiate functools.partial({name}, ...=...) "
                f"with them given")
        if kwargs:  # a raw TypeError about this method until session 31 (T3, F3-11)
            raise SrcGradError(
                f"{self.__name__} takes the arguments of the function by position only "
                f"(given by keyword: {', '.join(map(repr, kwargs))}): pass them in order, "
                f"or differentiate functools.partial(f, {next(iter(kwargs))}=...)")
        return self._call(*args)

    @property
    def source(self) -> str:
        return self._source()

    def __repr__(self):
        return f"<srcgrad {self.__name__}>"


def _scalar_argument(x) -> bool:
    return isinstance(x, float) or (isinstance(x, np.ndarray) and x.ndim == 0
                                    and x.dtype.kind in "fc")


def grad_of_gradient(inner, wrt) -> Derivative:
    """``grad(grad(f, i), j)`` for ``inner = grad(f, i)`` (a
    :class:`.transforms.Transformed`), and one order more for each further
    ``grad`` around a :class:`Derivative` made here: ``grad(grad(grad(f)))``.

    Defined when every inner argument is a float (or a 0-d float array), so
    that each inner derivative is a scalar function; its direction is then
    ``1.0``.  The outermost ``wrt`` may name any argument, or a tuple of them
    (a tuple of gradients, which no further ``grad`` takes)."""
    if isinstance(inner, Derivative):
        if inner.chain is None:
            raise SrcGradError(
                f"grad of {inner.__name__}: srcgrad differentiates again grad(f) and "
                f"grad(grad(...)) with one argument position; {inner.__name__} does not "
                f"return a scalar (use srcgrad.jacobian of srcgrad.hessian for a dense "
                f"third derivative)")
        base = inner.chain
        fn, bound, inners = base.fn, base.bound, base.inners + base.outer
    else:
        options = inner.options
        if options.mode != "grad" or not options.single:
            raise SrcGradError("grad of a transformed function needs grad(f) with one "
                               "argument position; use srcgrad.hessian or srcgrad.jacobian "
                               "otherwise")
        fn, bound, inners = inner.function, inner.bound, options.wrt[:1]
    outer, single = normalize_wrt(wrt)
    shift = 1 if bound is not None else 0
    chain = HigherOrder(fn, inners, tuple(w + shift for w in outer), single, bound)
    order = len(inners) + 1
    what = "grad(" * order + "f" + ")" * order

    def call(*args):
        for position in inners:
            position -= shift
            x = args[position] if position < len(args) else None
            if not _scalar_argument(x):
                raise NonDifferentiableError(
                    f"{what} needs each inner derivative to return a scalar, so the "
                    f"arguments of the inner grads must be floats (argument {position} is "
                    f"{type(x).__name__}); use srcgrad.hessian or srcgrad.hvp for arrays")
        return chain(*args, *([1.0] * len(inners)))

    return Derivative(call, lambda: chain.source, inner, "grad", chain=chain if single else None)
