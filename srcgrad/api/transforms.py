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
import sys
from dataclasses import replace

from .. import pipeline as compiler
from ..errors import SrcGradError
from ..pipeline import Options
from ..standalone.module import Unit
from ..standalone.module import write as write_module
from .arguments import check_args, differentiable_value, is_user_object, normalize_wrt
from .compiled import Compiled, compile_function, compiled_with_source
from .second_order import grad_of_gradient
from .validation import enabled as checking
from .validation import private_copies, verify


class Transformed:
    """A generated function: call it like the original; read ``.source``.

    For a bound method (``grad(model.loss)``) the instance is passed as the
    generated function's first argument and ``wrt`` counts the method's own
    arguments, as in the call ``model.loss(x, y)``; calls of the instance's
    other methods inside are resolved by its class.
    """

    def __init__(self, fn, options: Options, bound=None, check=None):
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self._fn = getattr(fn, "__func__", fn)
        self._bound = bound
        self._options = options
        self._check = check       # None: SRCGRAD_CHECK decides, at each call
        self._compiled = None
        self._called = None       # what the last call ran: specialised for its Python floats
        self._kinds = None        # the argument types of the last call

    def _get(self) -> Compiled:
        compiled = self._compiled
        if compiled is None or compiled.stale():
            compiled = self._compiled = compile_function(self._fn, self._options)
        return compiled

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        if self._bound is not None:
            args = (self._bound, *args)
        if self._options.mode in ("grad", "value_and_grad") and checking(self._check):
            return self._checked(args, kwargs)
        if self._bound is None and args and self._options.receiver is None \
                and is_user_object(args[0]):
            # grad(Model.loss)(model, x): resolve model's methods by its class
            options = replace(self._options, receiver=type(args[0]))
            check_args(self._fn, options, args)
            return compile_function(self._fn, options).functions[0](*args, **kwargs)
        # Code is specialised for the arguments that are Python floats (their
        # arithmetic needs no broadcasting bookkeeping); one check per call.
        kinds = tuple(map(type, args))
        compiled = self._called
        if compiled is None or kinds != self._kinds or compiled.stale():
            compiled = self._called = self._specialised(self._options, kinds)
            self._kinds = kinds
        check_args(self._fn, self._options, args)
        return compiled.functions[0](*args, **kwargs)

    def _specialised(self, options, kinds) -> Compiled:
        floats = tuple(i for i, k in enumerate(kinds) if k is float)
        if not floats and options == self._options:
            return self._get()
        return compile_function(self._fn, replace(options, floats=floats))

    def _checked(self, args, kwargs):
        """A call with translation validation: the value and gradient code, its
        value compared bit for bit with the function's own (srcgrad.validation)."""
        options = self._options
        if self._bound is None and args and options.receiver is None and is_user_object(args[0]):
            options = replace(options, receiver=type(args[0]))
        mode = options.mode
        if mode == "grad":
            options = replace(options, mode="value_and_grad")
        compiled = self._specialised(options, tuple(map(type, args)))
        check_args(self._fn, options, args)
        reference = private_copies(args)
        value, grads = compiled.functions[0](*args, **kwargs)
        verify(self._fn, reference, value, "value_and_grad" if mode != "grad" else "gradient")
        return grads if mode == "grad" else (value, grads)

    @property
    def source(self) -> str:
        """The generated Python source (for arguments of any type: a call whose
        arguments include Python floats runs a copy specialised for them, without
        the broadcasting bookkeeping scalars never need)."""
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

    def __get__(self, obj, objtype=None):
        """``@grad`` on a method: ``wrt`` counts ``self``, as in the definition."""
        if obj is None:
            return self
        return Transformed(self._fn, replace(self._options, receiver=type(obj)), bound=obj,
                           check=self._check)


def transform(mode, fn, wrt, policy, optimize, check=None):
    """``fn`` transformed by ``mode`` (a :class:`Transformed`), or a decorator
    that transforms the function it is given when ``fn`` is None."""
    wrt_tuple, single = normalize_wrt(wrt)
    options = Options(mode=mode, wrt=wrt_tuple, single=single, policy=policy, optimize=optimize)
    compiler.validate_options(options)

    def make(f):
        if isinstance(f, Transformed) and mode == "grad":
            # grad(grad(f)): reverse mode over f's generated tangent code
            return grad_of_gradient(f, wrt)
        if inspect.ismethod(f) and hasattr(f.__func__, "__code__"):
            shifted = tuple(w + 1 if w >= 0 else w for w in options.wrt)
            return Transformed(f, replace(options, wrt=shifted, receiver=type(f.__self__)),
                               bound=f.__self__, check=check)
        if not hasattr(f, "__code__"):
            raise SrcGradError(f"srcgrad.{mode} differentiates Python functions written with "
                               f"'def'; got {f!r}")
        return Transformed(f, options, check=check)

    return make if fn is None else make(fn)


def grad(fn=None, wrt=0, *, policy="save", optimize=True, check=None):
    """The gradient of the scalar function ``fn`` with respect to argument(s) ``wrt``.

    Use it as ``grad(f)``, ``grad(f, wrt=(0, 1))``, ``@grad`` or
    ``@grad(wrt=(0, 1))``.  The result takes ``fn``'s positional arguments and
    returns one gradient (``wrt`` an int) or a tuple of them (``wrt`` a tuple),
    each shaped and typed like its argument.

    ``check=True`` (or the environment variable ``SRCGRAD_CHECK=1`` when
    ``check`` is None) validates every call: the generated code's value must
    equal ``fn``'s own bit for bit, or :class:`TranslationError` is raised.
    """
    return transform("grad", fn, wrt, policy, optimize, check)


def value_and_grad(fn=None, wrt=0, *, policy="save", optimize=True, check=None):
    """Like :func:`grad`, but the result returns ``(value, gradient)``."""
    return transform("value_and_grad", fn, wrt, policy, optimize, check)


def vjp(fn, *primals, wrt=None, policy="save", optimize=True, check=None):
    """Evaluate ``fn(*primals)`` and return ``(value, pullback)``.

    ``pullback(cotangent)`` returns a tuple of cotangents, one per ``wrt``
    argument (every positional argument when ``wrt`` is None; those that are
    not floats get None).  Works for any output: an array, a scalar or a tuple
    of them (then the cotangent is a tuple too).  The generated code runs in
    split mode: a forward function returns its residuals explicitly and the
    backward function takes them; ``pullback.source`` shows both.
    """
    if wrt is None:
        positions = tuple(i for i, a in enumerate(primals) if differentiable_value(a))
        expand = len(primals)
    else:
        positions, _ = normalize_wrt(wrt)
        expand = None
    options = Options(mode="vjp", wrt=positions, single=False, policy=policy, optimize=optimize)
    compiled = compile_function(fn, options)
    check_args(fn, options, primals)
    forward, backward = compiled.functions
    reference = private_copies(primals) if checking(check) else None
    value, residuals = forward(*primals)
    if reference is not None:
        verify(fn, reference, value, "vjp")

    state = {"residuals": residuals, "fresh": True}
    consumed = _consumed_by_backward(residuals)

    def pullback(cotangent):
        # The adjoint sweep pops tapes, frees snapshots and restores updated
        # elements: the residuals serve one call.  A later call reruns the forward
        # function for a fresh set (copying them would cut views from their bases).
        if consumed and not state["fresh"]:
            state["residuals"] = forward(*primals)[1]
        state["fresh"] = False
        grads = backward(state["residuals"], cotangent)
        if expand is None:
            return grads
        full = [None] * expand
        for i, g in zip(positions, grads):
            full[i] = g
        return tuple(full)

    pullback.source = compiled.source
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
        if isinstance(g, Transformed):
            compiled, mode = g._get(), g._options.mode
        else:
            compiled = compiled_with_source(getattr(g, "__wrapped__", None),
                                            getattr(g, "source", None))
            if compiled is None:
                raise SrcGradError(f"srcgrad.export takes functions made by grad, "
                                   f"value_and_grad, jvp(fn, wrt=...) or vjp's pullback; "
                                   f"got {g!r}")
            mode = "vjp"
        gen = compiled.generated
        units.append(Unit(gen.source, tuple(gen.entries), dict(gen.bindings), compiled.fn, mode,
                          list(gen.wrt_names)))
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
        source = g.source
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
    residuals.  Returns ``fn`` itself (usable as a decorator)."""
    if not hasattr(fn, "__code__"):
        raise SrcGradError(f"srcgrad.checkpoint marks Python functions; got {fn!r}")
    fn.__srcgrad_checkpoint__ = True
    return fn
