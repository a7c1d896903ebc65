"""The compiled entry points the api calls, each falling back to the NumPy code.

Once :func:`.numba_compile.compile_for` has compiled a module, each of its
functions is called through :func:`guarded` (``vjp``'s pair through
:func:`split` and :func:`pullback`): a call numba cannot type, one that
raises, or one whose result is a NaN or an Inf runs the NumPy module's
function instead, so the caller gets what Python raises or returns.  Kept
apart from the compiling because these run at every call, not once: they
are the wrappers, and the compiled helpers around the generated functions
(``_value_of``, ``_joined``) that keep ``vjp``'s residuals inside numba.
"""

from __future__ import annotations

import weakref

import numba
from numba.core.errors import NumbaError

from .numba_compile import checked, summary

_INT_LIMIT = 1 << 31        # an int argument beyond it may overflow in a sum or product


def guarded(dispatcher, index, numpy):
    """``dispatcher`` as an entry point: a call numba cannot compile (arguments
    of a new type: this call and every later one), that raises, or whose
    result is not finite runs the NumPy
    module's ``index``-th function instead (``numpy()`` makes the module), so
    the call raises what Python raises, or returns the same NaN or Inf.
    (numba's ``math.log(0.0)`` is -Inf where Python raises ValueError; the
    compiled code may then raise a later ZeroDivisionError instead.)  The
    generated code of floats has no effects but its result, and numba compiles
    before it runs anything: the second run is the first one that counts."""
    settled = []  # the NumPy function, once numba failed to compile a call's types

    def run(*args, **kwargs):
        __tracebackhide__ = True
        if settled:
            return settled[0](*args, **kwargs)
        values = (*args, *kwargs.values())
        # (the common call, floats only, pays one C-level membership test)
        if int in map(type, values) and any(
                type(a) is int and not -_INT_LIMIT < a < _INT_LIMIT for a in values):
            return numpy().functions[index](*args, **kwargs)  # Python's unbounded int
        try:
            result = dispatcher(*args, **kwargs)
        except NumbaError:  # typing failed (before anything ran): not again for each call
            settled.append(numpy().functions[index])
            return settled[0](*args, **kwargs)
        except Exception:  # noqa: BLE001 - Python's own run decides what is raised
            return numpy().functions[index](*args, **kwargs)
        if not finite(result):
            return numpy().functions[index](*args, **kwargs)
        return result
    run.dispatcher = dispatcher
    run.__name__ = run.__qualname__ = dispatcher.py_func.__name__
    return run


def split(forward, backward, args, numpy):
    """``vjp``'s forward and backward functions for the primals ``args``:
    ``forward`` is the module's guarded forward function (:func:`guarded`),
    ``backward`` its backward function's dispatcher.

    The forward function returned gives the value alone, with None for the
    residuals: one compiled call that keeps them inside numba (boxing tapes of
    floats into Python lists costs more than the sweep), and the backward
    function (:func:`pullback`) does not read them.  Where numba cannot
    compile that call, or it raises or gives a NaN or Inf, ``forward`` runs
    (the NumPy code where it must)."""
    dispatcher = forward.dispatcher
    value_of = _value_of(dispatcher)
    try:
        value_of.compile((numba.typeof(tuple(args)),))  # once per kind of arguments
    except Exception:  # noqa: BLE001 - numba's typing, or a crash inside numba
        value_of = None

    def first(*call_args):
        __tracebackhide__ = True
        if value_of is not None:
            try:
                value = value_of(call_args)
            except Exception:  # noqa: BLE001 - Python's own run decides what is raised
                value = None
            if value is not None and finite(value):
                return value, None
        return forward(*call_args)
    first.dispatcher = dispatcher
    first.__name__ = first.__qualname__ = dispatcher.py_func.__name__
    return first, pullback(dispatcher, backward, args, numpy)


def _value_of(forward):
    """``value_of(args)``: ``forward(*args)[0]``, compiled (one per forward
    function: each vjp call of the same kind of arguments reuses its code)."""
    made = _MADE.get(forward)
    if made is None:
        @numba.njit
        def value_of(args):
            return forward(*args)[0]
        made = _MADE[forward] = value_of
    return made


#: The functions compiled around the generated ones, kept while they live:
#: ``_value_of``'s per forward function, ``_joined``'s per pair.
_MADE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Per ``_joined`` function, per signature: why it cannot run, or "".
_VERDICTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pullback(forward, backward, args, numpy):
    """``vjp``'s backward function for the primals ``args``, given the compiled
    ``forward`` and ``backward`` (dispatchers of one module in split mode).

    The residuals do not cross into Python and back: numba boxes a tape that
    starts with None (``t_tape.append(t)`` before ``t`` has a value) as a
    Python list, and types a list from its first element when it unboxes it,
    so a list ``[None, 0.5, ...]`` would come back as a list of None -- wrong
    values, or a crash.  Each call runs one compiled function instead, the
    forward sweep then the backward one, with the residuals kept in numba's
    own types; the residuals it is handed are not read.  It is compiled (and
    its integers checked, as :func:`.numba_compile.compile_for` does) at the first call,
    before any of it runs; where numba cannot compile it for the cotangent,
    or a call raises or gives a NaN or Inf, the NumPy module's forward and
    backward functions (``numpy()``) run instead, which raise what Python
    raises, or give the same value."""
    run = _joined(forward, backward)
    settled = []  # why the compiled pullback cannot run: "" once it can

    def call(residuals, cotangent):
        __tracebackhide__ = True
        if not settled:
            settled.append(_compile_joined(run, backward, cotangent, args))
        if settled[0] == "":
            try:
                result = run(cotangent, args)
            except Exception:  # noqa: BLE001 - Python's own run decides what is raised
                result = None
            if result is not None and finite(result):
                return result
        code = numpy().functions
        return code[1](code[0](*args)[1], cotangent)
    call.dispatcher = backward
    call.reason = settled
    call.__name__ = call.__qualname__ = backward.py_func.__name__
    return call


def _joined(forward, backward):
    """``run(cotangent, args)``: ``backward(forward(*args)[1], cotangent)``,
    compiled (one per backward function)."""
    made = _MADE.get(backward)
    if made is None:
        @numba.njit
        def run(cotangent, args):
            return backward(forward(*args)[1], cotangent)
        made = _MADE[backward] = run
    return made


def _compile_joined(run, backward, cotangent, args) -> str:
    """Compile ``run`` for ``(cotangent, args)``: "" on success, else why not
    (remembered per kind of call)."""
    try:
        signature = (numba.typeof(cotangent), numba.typeof(tuple(args)))
    except (ValueError, OverflowError) as exc:
        return f"a cotangent or an argument has no numba type ({exc})"
    verdicts = _VERDICTS.setdefault(run, {})
    if signature not in verdicts:
        try:
            run.compile(signature)
        except Exception as exc:  # noqa: BLE001 - numba's typing, or a crash inside numba
            verdicts[signature] = summary(exc)
        else:
            verdicts[signature] = checked(backward, tuple(backward.signatures[-1])) or ""
    return verdicts[signature]


def finite(result) -> bool:
    """No NaN or Inf in ``result`` (a number, or tuples of them)."""
    if type(result) is tuple:
        return all(map(finite, result))
    try:
        return result - result == 0
    except TypeError:
        return True


__all__ = ["finite", "guarded", "pullback", "split"]
