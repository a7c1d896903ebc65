"""The public transformations: ``grad``, ``value_and_grad``, ``vjp``, ``show``.

Each returns a thin callable around generated code.  Generation is lazy (on the
first call or the first read of ``.source``), so a decorator at import time
costs nothing and a module may define the globals a function reads after the
function itself.  Compiled code is cached in memory per function and options
(:mod:`.compiled`).

Generated code binds the user's global and closure values when it is
compiled; each call checks, by identity, that those names still refer to the
same objects and regenerates the code when one was rebound, so a rebound
global never gives a stale gradient.
"""

from __future__ import annotations

import functools
import inspect
import operator
import os
import sys
import threading
import types
from dataclasses import replace
from itertools import repeat

import numpy as np

from .. import backends
from .. import pipeline as compiler
from ..errors import SrcGradError
from ..frontend.linker import SPECIALISED, Callee
from ..pipeline import Options
from ..standalone.module import Unit
from ..standalone.module import write as write_module
from .arguments import (
    callee_arguments,
    check_args,
    sparse_positions,
    differentiable_value,
    differentiated_at,
    function_of,
    functions_by_keyword,
    has_keyword_only,
    is_user_object,
    normalize_wrt,
    object_classes,
    object_kind,
    object_positions,
    sequence_positions,
)
from .call_checks import check_call, cotangent_for
from .compiled import Compiled, compile_function, compiled_with_source
from .draws import Draws, may_draw
from .float_errors import holds_floats, on_float_errors
from .gradient_calls import GradientCall
from .ownership import arrays_in, unshared
from .second_order import Derivative, grad_of_gradient
from .validation import enabled as checking
from .validation import private_copies, verify

# What a call's key holds per argument, besides its type: an array's dtype
# (whether it can be differentiated); for a function, its ``__call__`` (a
# method-wrapper equal only to the same function's: code specialised on the
# function passed is looked up by the function); for anything else its class again.
_SHOWN = {np.ndarray: "dtype", types.FunctionType: "__call__", np.ufunc: "__call__",
          types.BuiltinFunctionType: "__call__"}
#: How many globals, closure cells and defaults a Transformed watches before it
#: starts again from the last call's (lambdas made anew at each call add theirs).
_WATCH_MAX = 256
_CLASS = repeat("__class__")
# Calls each watched callable: operator.call (Python 3.11) calls it straight
# away; methodcaller fetches a bound ``__call__`` first, twice the time a call.
_CALL = getattr(operator, "call", None) or operator.methodcaller("__call__")
_READY_MAX = 64  # kinds of calls remembered per function
_NUMBERS = (float, complex, np.floating, np.complexfloating)
_REMEMBERING = threading.Lock()  # one _remember at a time: _ready and _keep change together


def _kinds(args) -> tuple:
    """The part of a call's key that ``args`` decide (``Transformed.__call__``
    computes the same inline)."""
    kinds = (*map(type, args),)
    return (*kinds, *map(getattr, args, map(_SHOWN.get, kinds, _CLASS)))


def _plain(args, wrt) -> bool:
    """Whether the arguments to differentiate are numbers or NumPy arrays, whose
    type and dtype decide whether they can be differentiated (the contents of
    a list or an object may change from one call to the next)."""
    n = len(args)
    return all(-n <= i < n and (type(args[i]) is np.ndarray or isinstance(args[i], _NUMBERS))
               for i in wrt)


def _tangent_call(fn, bound, count, args, kwargs):
    """The arguments of a call ``g(*args, *tangents)`` of jvp's generated function
    as it takes them: ``fn``'s positional arguments, the defaults of those the
    call leaves out (and those it gives by keyword) in their places, then the
    ``count`` tangents -- always the last arguments, as :func:`.higher.hvp`'s
    directions are.  Without this, ``g(x, d)`` for ``f(x, s=2.0)`` passed ``d``
    as ``s`` and missed ``d_x``.  Calls of functions with ``*args``, ``**kw``
    or keyword-only parameters are left as they are."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return args, kwargs
    kinds = {p.kind for p in sig.parameters.values()}
    if kinds - {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD} \
            or len(args) < count:
        return args, kwargs
    names = [p for p in sig.parameters if p in kwargs]
    primals, tangents = args[:len(args) - count], args[len(args) - count:]
    front = () if bound is None else (bound,)
    try:
        full = sig.bind(*front, *primals, **{n: kwargs[n] for n in names})
    except TypeError as exc:
        raise SrcGradError(f"cannot call {fn.__name__} with these arguments (its "
                           f"positional arguments, then {count} tangent(s)): {exc}") from None
    full.apply_defaults()
    rest = {k: v for k, v in kwargs.items() if k not in names}
    return (*full.args[len(front):], *tangents), rest


def _by_position(fn, bound, args, kwargs, count):
    """The arguments of a call of a function with keyword-only parameters
    (``def f(x, *, scale=2.0)``) as its generated function takes them: every
    parameter in order, by position (``grad_f(x, scale)``), its default where
    the call leaves it out, then jvp's ``count`` tangents."""
    sig = inspect.signature(fn)
    front = () if bound is None else (bound,)
    split = len(args) - count
    try:
        full = sig.bind(*front, *args[:split], **kwargs)
    except TypeError as exc:
        raise SrcGradError(f"cannot call {fn.__name__} with these arguments: {exc}") from None
    full.apply_defaults()
    values = [full.arguments[name] for name in sig.parameters][len(front):]
    return (*values, *args[split:]), {}


def _filled(target, slow, given, defaults, *args, **kwargs):
    """``target`` called with ``defaults`` after the first ``given`` arguments:
    the fast path of a jvp call that leaves defaulted parameters out (one
    giving some by keyword takes the ``slow`` path, which places them)."""
    if kwargs:
        return slow(*args, **kwargs)
    return target(*args[:given], *defaults, *args[given:])


def _function_watches(callees) -> dict:
    """What code specialised on the functions passed (``callees``) also depends
    on, beside what :attr:`Compiled.watched` holds (their closure cells and
    globals): each one's code object and defaults, in its form."""
    watched = {}
    for callee in callees:
        fn = callee.obj
        if isinstance(fn, types.FunctionType):
            for key in ("__code__", "__defaults__", "__kwdefaults__"):
                watched[id(fn), key] = functools.partial(getattr, fn, key)
    return watched


class Transformed:
    """A generated function: call it like the original; read ``.source``.

    For a bound method (``grad(model.loss)``) the instance is passed as the
    generated function's first argument and ``wrt`` counts the method's own
    arguments, as in the call ``model.loss(x, y)``; calls of the instance's
    other methods inside are resolved by its class.

    A call is one short frame: pdb's ``s`` on ``g(x)`` stops in ``__call__``,
    and two more land in the generated code.  ``__call__`` looks the call up in
    ``_ready`` -- generated functions keyed by the identity of everything the
    code was generated from (``Compiled.watched``) and the types of the
    arguments (and the dtypes of the arrays; a function passed by identity,
    its code, defaults, closure cells and the globals it reads watched too:
    code specialised on it runs as fast as a plain call) -- with C functions only, so no
    srcgrad line runs in between; every other call (the first one, a new kind
    of argument, a rebound global, ``check=True``, an argument to differentiate
    that is not a float or an array) goes through :meth:`_call`, which
    compiles, checks the arguments and fills ``_ready``.  Both frames carry
    ``__tracebackhide__`` (pytest leaves them out of tracebacks).
    """

    def __init__(self, fn, options: Options, bound=None, check=None):
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self._fn = getattr(fn, "__func__", fn)
        self._bound = bound
        self._options = options
        self._check = checking(check)  # SRCGRAD_CHECK is read when the function is made
        self._compiled = None
        self._watch = {}      # Compiled.watched of every module in _ready, merged
        self._deps = ()       # their callables: a key starts with what they return
        self._ready = {}      # key -> generated function, for calls that need no checks
        self._keep = []       # the modules in _ready: the objects whose ids are in keys live on
        self._shown = None    # the last call's code, where it differs from _get()'s
        self._gradient_call = None  # its rules when called in differentiated code
        # def f(x, *, scale=2.0): every call binds its arguments by position (_by_position)
        self._keyword_only = has_keyword_only(self._fn)

    def __call__(self, *args, __tracebackhide__=True, **kw):
        # Two lines (one each: a debugger steps through each physical line), C
        # functions only (a Python function called here is one more frame to
        # step through); the key is the deps' ids and _kinds(args), inlined.
        # Every read costs: between two calls of a long gradient the CPU's
        # caches forget this path, so each type is read once and the bound
        # method self._call is made only on a miss.
        kinds = (*(k := (*map(type, args),)), *map(getattr, args, map(_SHOWN.get, k, _CLASS)))
        return (self._ready.get((*map(id, map(_CALL, self._deps)), *kinds)) or self._call)(*args, **kw)

    def _call(self, *args, **kwargs):
        """A call the lookup in ``__call__`` did not find: compile (or fetch) the
        code for these arguments, check them, remember the code when the next
        call of the same kind may skip the checks, and run it."""
        __tracebackhide__ = True
        if self._options.mode in ("grad", "value_and_grad"):  # (jvp's call adds tangents)
            check_call(self._fn, args if self._bound is None else (self._bound, *args), kwargs,
                       self._options.mode)  # a missing argument names f, not grad_f
        given, keywords = args, bool(kwargs)
        if self._keyword_only:  # f(x, *, scale=2.0): g(x, scale) with scale filled in
            args, kwargs = _by_position(self._fn, self._bound, args, kwargs, len(
                self._options.wrt) if self._options.mode == "jvp" else 0)
        elif self._options.mode == "jvp":  # g(x, d_x) for f(x, s=2.0): s's default filled in
            args, kwargs = _tangent_call(self._fn, self._bound, len(self._options.wrt), args,
                                         kwargs)
        if kwargs:  # g(fn=np.tanh, x=x): specialised as g(np.tanh, x) is
            bound = () if self._bound is None else (self._bound,)
            args, kwargs = functions_by_keyword(self._fn, (*bound, *args), kwargs)
            args = args[len(bound):]
        full = args if self._bound is None else (self._bound, *args)
        options = self._options
        callees = callee_arguments(self._fn, options.wrt, full,
                                   int(self._bound is not None or options.receiver is not None))
        if callees:  # functions passed as arguments: code specialised on each (by identity)
            options = replace(options, callees=callees)
        receiver = self._bound is None and full and options.receiver is None \
            and is_user_object(full[0], differentiated_at(0, options.wrt, len(full)))
        if receiver:
            # grad(Model.loss)(model, x): resolve model's methods by its class
            options = replace(options, receiver=type(full[0]))
        sparse = sparse_positions(full)
        if sparse:  # x * L, L sparse (passed, self.L): refused (analysis/sparse_operands)
            options = replace(options, sparse=sparse)
        if self._check and options.mode in ("grad", "value_and_grad"):
            return self._checked(full, kwargs, options)
        if receiver:  # its attributes, and those of the other objects passed, are fields
            compiled = compile_function(self._fn, replace(
                options, objects=object_positions(full), sequences=sequence_positions(full),
                object_classes=object_classes(tuple(map(type, full)))))
            self._shown = compiled  # .source and export show it, not _get()'s (no receiver)
        else:
            # Code is specialised for the arguments that are Python floats (their
            # arithmetic needs no broadcasting bookkeeping).
            compiled = self._specialised(options, tuple(map(type, full)))
        check_args(self._fn, options, full)
        if options.backend != "numpy":
            compiled = self._settled(compiled, full, kwargs)
        target = compiled.functions[0]
        if self._bound is not None:
            target = functools.partial(target, self._bound)
        if options.mode in ("grad", "value_and_grad") and any(map(holds_floats, args)):
            # Python's float arithmetic raising where NumPy's gives inf (float_errors.py)
            shift = len(full) - len(args)  # wrt counts a bound receiver
            target = on_float_errors(target, self.__wrapped__,
                                     tuple(p - shift for p in options.wrt), options.single,
                                     options.mode == "value_and_grad", vjp)
        if self._keyword_only:
            pass  # each call binds its keywords (_by_position): none runs the code directly
        elif callees and SPECIALISED in compiled.source:
            self._shown = compiled
            if _plain(full, options.wrt) and all(
                    isinstance(c, Callee) and _SHOWN.get(type(c.obj)) == "__call__"
                    for c in callees):
                # the key holds each function passed (by identity); what the
                # code read of it -- its code, defaults, closure cells and
                # globals (Compiled.watched) -- is watched like the function's own
                self._remember(args, compiled, target, _function_watches(callees))
        elif _plain(full, options.wrt):
            if len(given) == len(args):
                self._remember(args, compiled, target)
            elif not keywords:  # the same defaults are filled in for every call of these kinds
                self._remember(given, compiled, functools.partial(
                    _filled, target, self._call, len(given) - len(self._options.wrt),
                    args[len(given) - len(self._options.wrt):-len(self._options.wrt)]))
        return target(*args, **kwargs)

    def _remember(self, args, compiled: Compiled, target, extra=None) -> None:
        """Let calls with arguments of ``args``'s kinds run ``target`` directly
        while nothing ``compiled`` was generated from changes (nor ``extra``,
        more of what it depends on, as :attr:`Compiled.watched` says it)."""
        watched = compiled.watched if not extra else {**compiled.watched, **extra}
        with _REMEMBERING:
            if not watched.keys() <= self._watch.keys():
                # A key starts with one id per callable in _deps, which only ever
                # grows at its end: a key made with fewer callables never matches
                # one made with more (a call reading the old _ready with the new
                # _deps, or the other way round, misses and comes here).
                self._ready, self._keep = {}, []
                self._watch = {**self._watch, **watched} \
                    if len(self._watch) + len(watched) <= _WATCH_MAX else dict(watched)
                self._deps = tuple(self._watch.values())
            elif len(self._ready) >= _READY_MAX:
                self._ready, self._keep = {}, []
            self._keep.append(compiled)
            self._ready[(*map(id, map(_CALL, self._deps)), *_kinds(args))] = target

    def _get(self) -> Compiled:
        compiled = self._compiled
        if compiled is None or compiled.stale():
            compiled = self._compiled = compile_function(self._fn, self._options)
        return compiled

    def _specialised(self, options, kinds) -> Compiled:
        floats = tuple(i for i, k in enumerate(kinds) if k is float)
        # Python ints (a step count, a divisor): scalars too, for the shape analysis
        ints = tuple(i for i, k in enumerate(kinds) if k is int)
        # the user objects passed: their attributes are fields (p.T, p.shape, p.mean)
        objects = tuple(i for i, k in enumerate(kinds) if object_kind(k))
        # lists and tuples passed: ws * 2 repeats, ws + ws concatenates
        sequences = tuple(i for i, k in enumerate(kinds) if k is list or k is tuple)
        if not floats and not ints and not objects and not sequences \
                and options == self._options:
            return self._get()
        compiled = compile_function(self._fn, replace(options, floats=floats, ints=ints,
                                                      objects=objects,
                                                      sequences=sequences,
                                                      object_classes=object_classes(kinds)))
        if objects:  # the code that ran is not _get()'s: .source and export show it
            self._shown = compiled
        return compiled

    def _settled(self, compiled, args, kwargs) -> Compiled:
        """``compiled``, with what runs it on a backend decided for the call
        ``(args, kwargs)`` before any of it runs (:func:`..backends.settle`):
        numba's compiled code, or the NumPy code with the reason in ``.source``.
        Later calls of the same kind keep the decision.  ``.source`` shows it."""
        def numpy():  # the same code on NumPy: the fallback, compiled when first needed
            return compile_function(self._fn, replace(compiled.options, backend="numpy"))
        backends.settle(compiled, args, kwargs, numpy)
        self._shown = compiled
        return compiled

    def _checked(self, args, kwargs, options):
        """A call with translation validation: the value and gradient code, its
        value compared bit for bit with the function's own (srcgrad.validation)."""
        __tracebackhide__ = True
        mode = options.mode
        if mode == "grad":
            options = replace(options, mode="value_and_grad")
        compiled = self._specialised(options, tuple(map(type, args)))
        check_args(self._fn, options, args)
        if options.backend != "numpy":
            compiled = self._settled(compiled, args, kwargs)
        reference = private_copies(args)
        keywords = dict(zip(kwargs, private_copies(tuple(kwargs.values()))))
        # the function itself draws what the generated code drew
        held = (self._fn.__self__,) if inspect.ismethod(self._fn) else ()  # self.rng
        draws = Draws((*held, *args, *kwargs.values()), self._fn, may_draw(compiled.source))
        value, grads = compiled.functions[0](*args, **kwargs)
        verify(self._fn, reference, value, "value_and_grad" if mode != "grad" else "gradient",
               keywords, draws)
        return grads if mode == "grad" else (value, grads)

    @property
    def source(self) -> str:
        """The generated Python source (for arguments of any type: a call whose
        arguments include Python floats runs a copy specialised for them, without
        the broadcasting bookkeeping scalars never need).  With a backend, once
        called: the code the last new kind of call ran.  A function that calls a
        function it receives as an argument has code specialised for each one
        passed (its header says which): the last new function's (a call with
        one passed before runs its code without looking); before any call,
        reading it raises SrcGradError saying it needs one."""
        shown = self._shown
        if shown is not None and not shown.stale():
            return shown.source
        return self._get().source

    @property
    def options(self) -> Options:
        """What it was made with: mode, ``wrt`` positions, policy, receiver."""
        return self._options

    @property
    def function(self):
        """The differentiated function (a method's plain function)."""
        return self._fn

    @property
    def bound(self):
        """The instance of a bound method, passed as the first argument; or None."""
        return self._bound

    def __repr__(self):
        return f"<srcgrad {self._options.mode} of {self._fn.__qualname__}>"

    def __srcgrad_custom_vjp__(self):
        """This gradient called inside a function srcgrad differentiates
        (``p - dt * dHdq(q)``): a custom_vjp whose rules are srcgrad's second-order
        code (:mod:`.gradient_calls`); None for another transform or a bound method."""
        if self._options.mode not in ("grad", "value_and_grad") or self._bound is not None:
            return None
        if self._gradient_call is None:
            self._gradient_call = GradientCall(
                self, vjp, lambda fn, j: transform("jvp", fn, j, "save", True))
        return self._gradient_call.as_custom_vjp()

    def __get__(self, obj, objtype=None):
        """``@grad`` on a method: ``wrt`` counts ``self``, as in the definition."""
        if obj is None:
            return self
        return Transformed(self._fn, replace(self._options, receiver=type(obj)), bound=obj,
                           check=self._check)


#: The transformations that take a functools.partial (their result is called
#: with the partial's remaining arguments, as the partial is).
_PARTIAL_MODES = ("grad", "value_and_grad")


class PartialTransformed:
    """``grad(functools.partial(f, *fixed, **keywords))``: ``f``'s transformation,
    called with the partial's fixed arguments first and its keywords merged
    into the call's, as the partial calls ``f``.  ``wrt`` counts the partial's
    own arguments (those of the call ``p(x, y)``); the fixed ones are
    constants.  ``.source`` and the other attributes are ``f``'s
    transformation's (its ``wrt`` counts ``f``'s arguments).

        >>> import functools, srcgrad
        >>> def scaled(x, scale):
        ...     return scale * x * x
        >>> srcgrad.grad(functools.partial(scaled, scale=3.0))(2.0)
        12.0
    """

    def __init__(self, partial, inner):
        functools.update_wrapper(self, partial.func, updated=())
        self._fixed = partial.args
        self._keywords = dict(partial.keywords)
        self._inner = inner

    def __call__(self, *args, __tracebackhide__=True, **kw):
        return self._inner(*self._fixed, *args, **(self._keywords | kw))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __repr__(self):
        return f"<srcgrad {self._inner!r} of a functools.partial>"


def anomaly(check_finite) -> bool:
    """``check_finite`` as given, or (None) whether ``SRCGRAD_ANOMALY`` is set to 1."""
    if check_finite is not None:
        return bool(check_finite)
    return os.environ.get("SRCGRAD_ANOMALY", "") not in ("", "0")


def transform(mode, fn, wrt, policy, optimize, check=None, check_finite=None, backend="numpy"):
    """``fn`` transformed by ``mode`` (a :class:`Transformed`), or a decorator
    that transforms the function it is given when ``fn`` is None."""
    wrt_tuple, single = normalize_wrt(wrt)
    options = Options(mode=mode, wrt=wrt_tuple, single=single, policy=policy, optimize=optimize,
                      check_finite=anomaly(check_finite), backend=backend)
    compiler.validate_options(options)
    backends.require(backend)  # a missing engine is reported now, not at the first call

    def make(f, options=options):
        if mode == "grad" and (isinstance(f, Transformed)
                               or (isinstance(f, Derivative) and f.chain is not None)):
            # grad(grad(f)), grad(grad(grad(f))): reverse mode over f's generated tangent code
            return grad_of_gradient(f, wrt)
        if isinstance(f, functools.partial) and mode in _PARTIAL_MODES:
            if any(w < 0 for w in options.wrt):
                raise SrcGradError(f"srcgrad.{mode} of a functools.partial counts wrt from "
                                   f"the partial's first argument: give it as a position "
                                   f">= 0, not {options.wrt}")
            shifted = tuple(w + len(f.args) for w in options.wrt)
            return PartialTransformed(f, make(f.func, replace(options, wrt=shifted)))
        f = function_of(f, mode)  # grad(model) is grad(model.__call__)
        if inspect.ismethod(f):
            shifted = tuple(w + 1 if w >= 0 else w for w in options.wrt)
            return Transformed(f, replace(options, wrt=shifted, receiver=type(f.__self__)),
                               bound=f.__self__, check=check)
        return Transformed(f, options, check=check)

    return make if fn is None else make(fn)


def grad(fn=None, wrt=0, *, policy="save", optimize=True, check=None, check_finite=None,
         backend="numpy"):
    """The gradient of the scalar function ``fn`` with respect to argument(s) ``wrt``.

    Use it as ``grad(f)``, ``grad(f, wrt=(0, 1))``, ``@grad`` or
    ``@grad(wrt=(0, 1))``.  The result takes ``fn``'s positional arguments and
    returns one gradient (``wrt`` an int) or a tuple of them (``wrt`` a tuple),
    each shaped and typed like its argument.

    ``check=True`` (or the environment variable ``SRCGRAD_CHECK=1`` when
    ``check`` is None) validates every call: the generated code's value must
    equal ``fn``'s own bit for bit, or :class:`TranslationError` is raised.

    ``check_finite=True`` (or ``SRCGRAD_ANOMALY=1`` when ``check_finite`` is
    None) is anomaly mode: the generated code checks each cotangent where it
    is made, and the first NaN or Inf raises :class:`NonFiniteGradientError`
    naming the file, line and expression whose adjoint made it, with the
    forward values that adjoint read.  Off, the code has no checks at all.

    ``backend="numba"`` compiles the generated code with ``numba.njit`` where
    numba can (functions of Python floats and ints: scalar loops, ODE steppers,
    recurrences) and runs the NumPy code elsewhere, ``.source`` saying why
    (docs/backends.md).  numba is an optional dependency, imported only then.
    """
    return transform("grad", fn, wrt, policy, optimize, check, check_finite, backend)


def value_and_grad(fn=None, wrt=0, *, policy="save", optimize=True, check=None,
                   check_finite=None, backend="numpy"):
    """Like :func:`grad`, but the result returns ``(value, gradient)``."""
    return transform("value_and_grad", fn, wrt, policy, optimize, check, check_finite, backend)


def vjp(fn, *primals, wrt=None, policy="save", optimize=True, check=None, check_finite=None,
        backend="numpy", **keywords):
    """Evaluate ``fn(*primals)`` and return ``(value, pullback)``.

    ``pullback(cotangent)`` returns a tuple of cotangents, one per ``wrt``
    argument (every positional argument when ``wrt`` is None; those that are
    not floats get None).  Works for any output: an array, a scalar or a tuple
    of them (then the cotangent is a tuple too).  The generated code runs in
    split mode: a forward function returns its residuals explicitly and the
    backward function takes them; ``pullback.source`` shows both.
    ``check_finite`` (anomaly mode) and ``backend`` are as for :func:`grad`.
    Keywords after those are ``fn``'s own (``vjp(f, x, n=2)``): ``fn`` is
    differentiated as ``functools.partial(fn, n=2)``.
    """
    if keywords:  # a raw TypeError until session 31 (T3, F3-11)
        fn = functools.partial(fn, **keywords)
    fn = function_of(fn, "vjp")
    if wrt is None:
        positions = tuple(i for i, a in enumerate(primals) if differentiable_value(a))
        expand = len(primals)
        if not positions:
            raise SrcGradError(
                f"vjp({getattr(fn, '__name__', 'fn')}, *primals) differentiates at the point "
                f"it is given: pass the arguments after the function (vjp(f, x, y)); "
                + ("none was given" if not primals else
                   "none of them is a float or an array of floats"))
    else:
        positions, _ = normalize_wrt(wrt)
        expand = None
    func, args, receiver = fn, primals, None
    if inspect.ismethod(fn):  # the instance is the generated function's first argument
        func, args, receiver = fn.__func__, (fn.__self__, *primals), type(fn.__self__)
    shifted = tuple(p + 1 if receiver is not None and p >= 0 else p for p in positions)
    options = Options(mode="vjp", wrt=shifted, single=False, policy=policy, optimize=optimize,
                      receiver=receiver, check_finite=anomaly(check_finite), backend=backend,
                      callees=callee_arguments(func, shifted, args, int(receiver is not None)),
                      objects=object_positions(args),  # user objects passed: fields
                      sequences=sequence_positions(args),
                      object_classes=object_classes(tuple(map(type, args))),
                      sparse=sparse_positions(args))
    compiler.validate_options(options)
    backends.require(backend)
    check_call(func, args, {}, "vjp")
    compiled = compile_function(func, options)
    check_args(func, options, args)
    forward, backward = compiled.functions
    if backend != "numpy":  # compiled for these primals, or the NumPy code (backends.split)
        forward, backward = backends.split(
            compiled, args, lambda: compile_function(func, replace(options, backend="numpy")))
    reference = private_copies(primals) if checking(check) else None
    draws = Draws(args, func, may_draw(compiled.source))  # a rerun draws what this run drew
    value, residuals = forward(*args)
    # the value is the caller's to change (pred -= y): not an array the pullback reads
    value = unshared(value, arrays_in(residuals))
    if reference is not None:
        verify(fn, reference, value, "vjp", draws=draws)

    state = {"residuals": residuals, "fresh": True}
    consumed = _consumed_by_backward(residuals)

    def pullback(cotangent):
        # The adjoint sweep pops tapes, frees snapshots and restores updated
        # elements: the residuals serve one call.  A later call reruns the forward
        # function for a fresh set (copying them would cut views from their bases).
        if consumed and not state["fresh"]:
            draws.rewind()
            state["residuals"] = forward(*args)[1]
            draws.finish()
        state["fresh"] = False
        cotangent = cotangent_for(cotangent, value, fn)  # checked, as jvp checks its tangents
        # each gradient an array of its own, not the cotangent passed (x + 0.0's)
        grads = unshared(backward(state["residuals"], cotangent), arrays_in(cotangent))
        if expand is None:
            return grads
        full = [None] * expand
        for i, g in zip(positions, grads):
            full[i] = g
        return tuple(full)

    pullback.source = compiled.source
    pullback.draws = draws  # (jacobian's tangents rerun the function too)
    pullback.__wrapped__ = fn
    return value, pullback


def export(path, *functions) -> list[str]:
    """Write ``functions`` (made by :func:`grad`, :func:`value_and_grad`, or the
    pullback of :func:`vjp`) to ``path`` as one standalone module that imports
    only NumPy and the standard library.  Returns its entry point names.

    Raises :class:`SrcGradError` naming every value the generated code uses
    that such a module cannot reproduce (a user function called without
    differentiation, an arbitrary object); numbers, strings, containers of
    them and small arrays are written as literals.
    """
    units = []
    for g in functions:
        fixed, keywords = (), {}  # what the call passes first: written into the module
        if isinstance(g, PartialTransformed):
            fixed, keywords, g = g._fixed, g._keywords, g._inner
        if getattr(g, "_bound", None) is not None:
            fixed = (g._bound, *fixed)
        elif inspect.ismethod(getattr(g, "__wrapped__", None)):  # vjp's pullback of a method
            fixed = (g.__wrapped__.__self__, *fixed)
        if isinstance(g, Transformed):  # the NumPy code, whatever the backend
            shown, mode = g._shown, g._options.mode  # specialised on functions passed: the last
            compiled = shown if shown is not None and (
                shown.options.callees or shown.options.objects) else g._get()
            if g._options.backend != "numpy":
                compiled = compile_function(g._fn, replace(compiled.options, backend="numpy"))
        else:
            wrapped = getattr(g, "__wrapped__", None)
            compiled = compiled_with_source(getattr(wrapped, "__func__", wrapped),
                                            getattr(g, "source", None))
            if compiled is None:
                raise SrcGradError(f"srcgrad.export takes functions made by grad, "
                                   f"value_and_grad, jvp(fn, wrt=...) or vjp's pullback; "
                                   f"got {g!r}")
            mode = "vjp"
        gen = compiled.generated
        code = getattr(compiled.fn, "__code__", None)
        names = code.co_varnames[:code.co_argcount] if code is not None else ()
        units.append(Unit(gen.source, tuple(gen.entries), dict(gen.bindings), compiled.fn, mode,
                          list(gen.wrt_names), tuple(fixed), names[:len(fixed)], keywords))
    return write_module(path, units)


def _consumed_by_backward(residuals) -> bool:
    """Whether the residuals hold tapes or snapshots the adjoint sweep uses up."""
    if isinstance(residuals, (list, dict)):
        return True
    if isinstance(residuals, tuple):
        return any(_consumed_by_backward(r) for r in residuals)
    return False


def show(g, file=None, *, after=None) -> None:
    """Print ``g.source``, highlighted when Pygments is installed and the output
    is a terminal.

    ``after`` names a compiler pass (``srcgrad.pipeline.PASSES``): then print
    the code of ``g``'s function as it stands after that pass, to see what the
    pass does; ``g`` is then a function made by ``grad``, ``value_and_grad``
    or ``jvp``.  An unknown name raises :class:`SrcGradError` listing them."""
    if after is not None:
        if not isinstance(g, Transformed):
            raise SrcGradError(f"srcgrad.show(..., after=...) takes a function made by grad, "
                               f"value_and_grad or jvp; got {g!r}")
        source = compiler.generate(g._fn, g._options, dump_after=after)
    else:
        source = getattr(g, "source", None)
        if not isinstance(source, str):
            name = getattr(g, "__name__", None)
            hint = f"srcgrad.show(srcgrad.grad({name})) prints the gradient of {name}; " \
                if name and callable(g) else ""
            raise SrcGradError(f"srcgrad.show takes a function made by srcgrad (grad, "
                               f"value_and_grad, jvp, hvp, ...): {hint}got {g!r}")
    out = file or sys.stdout
    if getattr(out, "isatty", lambda: False)():
        try:
            from pygments import highlight  # noqa: PLC0415 - optional dependency
            from pygments.formatters import TerminalFormatter  # noqa: PLC0415
            from pygments.lexers import PythonLexer  # noqa: PLC0415
        except ImportError:
            pass
        else:
            source = highlight(source, PythonLexer(), TerminalFormatter())
    print(source, file=out, end="" if source.endswith("\n") else "\n")


def checkpoint(fn):
    """Mark ``fn`` so that, called from differentiated code, its internals are
    recomputed in the adjoint sweep instead of saved: the caller keeps only
    ``fn``'s arguments and reruns ``fn``'s forward function when it needs the
    residuals.  Returns ``fn`` itself (usable as a decorator).

    A function that draws random numbers (``rng.random(h.shape) > p``, a
    dropout mask), calls ``next`` or anything with effects would compute
    something else when rerun: its result and residuals are saved instead, as
    for an unmarked function (srcgrad/memory/effects.py decides)."""
    if not hasattr(fn, "__code__"):
        raise SrcGradError(f"srcgrad.checkpoint marks Python functions; got {fn!r}")
    fn.__srcgrad_checkpoint__ = True
    return fn
