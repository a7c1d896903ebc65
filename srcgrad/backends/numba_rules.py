"""What numba must know to compile srcgrad's generated code on Python floats.

Importing this module imports numba (the backend is optional: only
``backend="numba"`` imports it) and teaches numba, through
``numba.extending.overload``, the few runtime helpers that scalar code calls,
so the generated source stays the NumPy backend's, decorated:

- ``grad_seed(value)`` is ``1.0``; ``unbroadcast(g, x)`` of two numbers is
  ``g`` (nothing is broadcast between scalars); ``grad_like(g, x)`` of a float
  (or a tuple of floats) is ``g`` as floats; ``zeros_grad(x)`` is ``0.0``;
  ``signum(x)`` is ``float(x > 0) - float(x < 0)``, ``signum_grad(d, x)`` of a
  real ``x`` is ``0.0 * d``; ``match_complex(g, x)`` of
  two numbers is ``g``; forward mode's ``expand(t, like)`` of two numbers is
  ``t``, ``tangent_like(t, x)`` of a float is ``float(t)``, ``zero_tangent(x)``
  of a number is ``0.0``; ``in_place(value, x)`` (``x op= v``) of numbers is
  ``value`` -- each what the NumPy helper returns for Python floats, bit for bit;
- ``reversed(range(...))``, the adjoint sweep's loop over a ``for`` loop's
  iterations, is the range counted down; ``float(flag)`` of a bool is 1.0 or
  0.0, as in Python.

The numba backend's source writes ``a ** b`` as :func:`power` (Python's
``pow``, where numba's ``**`` rounds differently).  For anything else (arrays,
containers, objects) the overloads do not apply, numba's typing fails, and
:func:`compile_for` says why; the caller then runs the NumPy code.  The
typing happens when the first call's arguments are known and before any
generated code runs, never in the middle of a sweep.  :func:`guarded` makes a
compiled call raise what Python raises.
"""

from __future__ import annotations

import inspect
import json
import math
import operator
import os
import re
import sys
import types as pytypes
import weakref
from pathlib import Path

import numba
import numpy as np
from numba import types
from numba.core import ir as numba_ir
from numba.core.dispatcher import Dispatcher
from numba.core.errors import NumbaError
from numba.extending import overload

from ..runtime import (
    expand,
    grad_like,
    grad_seed,
    in_place,
    match_complex,
    signum,
    signum_grad,
    tangent_like,
    unbroadcast,
    zero_tangent,
    zeros_grad,
)

_NUMBER = (types.Integer, types.Boolean)


def _unwrapped(t):
    """``t``, or the type of a value that may be None (a temporary bound to None
    before a loop that saves it): numba unwraps it where a number is needed."""
    return t.type if isinstance(t, types.Optional) else t


def _real(t) -> bool:
    """A Python float as numba types it (float64), an int or a bool; or one of
    them that may be None."""
    t = _unwrapped(t)
    return t == types.float64 or isinstance(t, _NUMBER)


def _floats(t) -> bool:
    """A tuple of Python floats (float64), as several gradients are."""
    return isinstance(t, types.BaseTuple) and all(e == types.float64 for e in t.types)


def power(base, exponent):
    """``base ** exponent``, as Python computes it.  The numba backend writes
    ``a ** b`` as ``power(a, b)``: numba's own ``**`` multiplies out integer
    exponents and takes ``** 0.5`` as a square root, which round differently
    from the C library's ``pow`` that Python calls; compiled, ``power`` of
    floats calls ``pow`` (``math.pow``), bit for bit Python's value."""
    return base ** exponent


@overload(power)
def _power(base, exponent):
    if isinstance(_unwrapped(base), types.Integer) and \
            isinstance(_unwrapped(exponent), types.Integer):
        return lambda base, exponent: base ** exponent
    if _real(base) and _real(exponent) and not isinstance(exponent, types.Optional):
        # math.pow of an int exponent is numba's powi (multiplications): pass a float;
        # numba's math.pow takes a base that may be None (it raises TypeError if it is)
        return lambda base, exponent: math.pow(base, float(exponent))
    return None


@overload(grad_seed)
def _grad_seed(value):
    if _real(value):
        return lambda value: 1.0
    return None


@overload(unbroadcast)
def _unbroadcast(g, x):
    if _real(g) and _real(x):
        return lambda g, x: g
    return None


@overload(grad_like)
def _grad_like(g, x):
    if x == types.float64 and _real(g):
        return lambda g, x: float(g)
    if _floats(x) and _floats(g) and len(g) == len(x):
        return lambda g, x: g
    return None


@overload(match_complex)
def _match_complex(g, x):
    if _real(g) and _real(x):
        return lambda g, x: g  # a real cotangent of a real value: itself
    return None


@overload(zeros_grad)
def _zeros_grad(x):
    if x == types.float64:
        return lambda x: 0.0
    return None


@overload(signum)
def _signum(x):
    if _real(x):
        return lambda x: (1.0 if x > 0 else 0.0) - (1.0 if x < 0 else 0.0)
    return None


@overload(signum_grad)
def _signum_grad(d_out, x):
    if _real(d_out) and _real(x):
        return lambda d_out, x: 0.0 * d_out  # a real sign's cotangent: zero (signed, as NumPy's)
    return None


@overload(expand)
def _expand(t, like):
    if _real(t) and _real(like):
        return lambda t, like: t  # a number's tangent term: nothing to broadcast
    return None


@overload(tangent_like)
def _tangent_like(t, x):
    if x == types.float64 and _real(t):
        return lambda t, x: float(t)
    return None


@overload(in_place)
def _in_place(value, x):
    if _real(value) and _real(x):
        return lambda value, x: value  # x op= v on a number rebinds x to x op v
    return None


@overload(zero_tangent)
def _zero_tangent(x):
    if _real(x):
        return lambda x: 0.0
    return None


@overload(float)
def _float(x):
    if isinstance(x, types.Boolean):  # float(x > 0): a derivative of a comparison's sides
        return lambda x: 1.0 if x else 0.0
    return None


@overload(reversed)
def _reversed(r):
    if isinstance(r, types.RangeType):
        def counted_down(r):
            n = len(r)
            return range(r.start + (n - 1) * r.step, r.start - r.step, -r.step)
        return counted_down
    return None


def compile_for(dispatcher, args, kwargs=None) -> str | None:
    """Compile ``dispatcher`` (a generated function, and with it every
    generated function it calls) for the call ``dispatcher(*args, **kwargs)``;
    None on success (or when the call does not fit the signature: then the
    call itself raises Python's TypeError), else why not."""
    func = dispatcher.py_func
    try:
        bound = inspect.signature(func).bind(*args, **(kwargs or {}))
    except TypeError:
        return None
    bound.apply_defaults()
    for name, value in bound.arguments.items():
        if type(value) not in (float, int, bool):
            return (f"argument {name} is a {type(value).__name__}: the numba backend compiles "
                    f"functions of Python floats and ints")
    try:
        signature = tuple(numba.typeof(value) for value in bound.args)
    except (ValueError, OverflowError) as exc:
        return f"an argument has no numba type ({exc})"
    _importable(func.__globals__, func.__code__.co_filename)
    try:
        dispatcher.compile(signature)
    except Exception as exc:  # noqa: BLE001 - numba's typing, or a crash inside numba
        return _summary(exc)
    return _checked(dispatcher, signature)


#: Integer operations whose result grows past 2**63, where numba's int64 wraps
#: and Python's int does not (or, for ``**`` of a negative exponent, is a float).
_WRAPPING = {operator.mul, operator.pow, operator.lshift, operator.imul, operator.ipow,
             operator.ilshift}
_SUMS = {operator.add, operator.sub, operator.iadd, operator.isub}
_CHECKS = 3                 # what _integer_hazard looks for: a verdict of another is not read
_INT_LIMIT = 1 << 31        # an int argument beyond it may overflow in a sum or product


def _checked(dispatcher, signature) -> str | None:
    """:func:`_integer_hazard` of a compiled ``dispatcher``, remembered in a file
    next to the generated module: a later process that loads the compiled code
    from numba's disk cache has no typed IR to look at, and reads the verdict
    instead ("" for none; no verdict at all: not compiled, to be safe)."""
    filename = dispatcher.py_func.__code__.co_filename
    on_disk = os.path.isfile(filename)  # not a module kept in memory only
    marker, key = Path(filename + ".numba-checks"), f"{_CHECKS}:{signature}"
    verdicts = {}
    if on_disk:
        try:
            verdicts = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    try:
        reason = _integer_hazard(dispatcher)
    except _NoTypes:
        if key in verdicts:
            return verdicts[key] or None
        # numba's cache of a module no verdict was kept for: compile it again
        for each in _dispatchers(dispatcher):
            if each.signatures:
                each.recompile()
        try:
            reason = _integer_hazard(dispatcher)
        except _NoTypes:
            return "numba loaded it from its cache without the types srcgrad checks " \
                   "integers with"
    if on_disk:
        verdicts[key] = reason or ""
        try:
            marker.write_text(json.dumps(verdicts, sort_keys=True), encoding="utf-8")
        except OSError:
            pass  # an unwritable cache: the next process checks again or runs NumPy
    return reason


class _NoTypes(Exception):
    """A compiled function numba loaded from its disk cache: no typed IR."""


def _integer_hazard(dispatcher) -> str | None:
    """Why the compiled code may give another value than Python's on integers, or
    None: an integer product, power or shift (numba's int64 wraps where Python's
    int grows; ``n ** -2`` is a float in Python), a sum or difference of two
    integer variables (``k = k + k``, Fibonacci's ``a + b`` double each time), or
    an integer made by a call (``int(x * 1e19)``).  A counter (``k + 1``: a
    constant added, so it grows with the iterations) and a loop's own index are
    kept, and so is ``len(...)``.  Looks at every generated function compiled
    with it."""
    for each in _dispatchers(dispatcher):
        for signature in each.signatures:
            annotation = each.overloads[signature].type_annotation
            if not hasattr(annotation, "blocks"):
                raise _NoTypes
            constants = {stmt.target.name: getattr(stmt.value, "value", None)
                         for block in annotation.blocks.values()
                         for stmt in block.body if isinstance(stmt, numba_ir.Assign)
                         and isinstance(stmt.value, (numba_ir.Const, numba_ir.Global,
                                                     numba_ir.FreeVar))}
            for block in annotation.blocks.values():
                for stmt in block.body:
                    if not (isinstance(stmt, numba_ir.Assign)
                            and isinstance(stmt.value, numba_ir.Expr)
                            and isinstance(annotation.typemap.get(stmt.target.name),
                                           types.Integer)):
                        continue
                    expr = stmt.value
                    if expr.op in ("binop", "inplace_binop") and \
                            expr.list_vars() and _operator(expr) in _WRAPPING:
                        return ("it multiplies, raises to a power or shifts integers, which "
                                "numba's 64-bit integers wrap where Python's grow")
                    if expr.op in ("binop", "inplace_binop") and _operator(expr) in _SUMS \
                            and expr.lhs.name not in constants \
                            and expr.rhs.name not in constants:
                        return ("it adds or subtracts integer variables, whose sums "
                                "numba's 64-bit integers may wrap where Python's grow")
                    if expr.op == "call" and constants.get(expr.func.name, None) is not len:
                        # (the length of a range or a tape, as hvp's code takes, is bounded)
                        return ("it makes an integer with a call (int(), round(), len()...), "
                                "which numba's 64-bit integers may wrap")
    return None


def _dispatchers(dispatcher) -> list:
    """``dispatcher`` and the other compiled functions of its module."""
    module = dispatcher.py_func.__globals__
    return [dispatcher] + [v for v in module.values()
                           if isinstance(v, Dispatcher) and v is not dispatcher]


def _operator(expr):
    try:
        return expr.fn
    except (AttributeError, KeyError):  # numba keeps an Expr's fields in a dict
        return None


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
    its integers checked, as :func:`compile_for` does) at the first call,
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
            verdicts[signature] = _summary(exc)
        else:
            verdicts[signature] = _checked(backward, tuple(backward.signatures[-1])) or ""
    return verdicts[signature]


def fits(kernel, *values, arrays=None) -> bool:
    """Whether the fused ``kernel`` (:mod:`.numba_fusion`) may compute its run for
    ``values``, those of the names it reads: the first ``arrays`` (all, by
    default) each a float64 ``ndarray`` (not a subclass, a Dask or CuPy
    array), C-contiguous or 1-d, of one shape with at least one dimension; the
    others such arrays too, or Python floats or NumPy float64s (numbers NumPy
    broadcasts; the run's statements are each made of one of the first
    ``arrays``, so NumPy's values are arrays too; an int is refused: ``n * n``
    of int64s wraps where Python's ints grow); and numba
    compiled the kernel for them (at the first call of each kind, before it
    runs; a failure is remembered and the NumPy code runs from then on).
    Otherwise the NumPy statements run."""
    shape = None
    kinds = []
    for i, a in enumerate(values):
        kind = type(a)
        if kind is np.ndarray:
            if a.dtype != _FLOAT64 or not (a.flags.c_contiguous or a.ndim == 1):
                return False  # (strided 1-d: see flat())
            if shape is None:
                shape = a.shape
            elif a.shape != shape:
                return False
            kinds.append((a.flags.writeable, a.flags.c_contiguous))
        elif arrays is not None and i >= arrays and (kind is float or kind is _NUMPY_FLOAT):
            kinds.append(kind)  # (not an int: n * n wraps in int64, Python's grows)
        else:
            return False
    if not shape:  # 0-d arrays: NumPy's own scalars
        return False
    verdicts = _FITTED.get(kernel)
    if verdicts is None:
        verdicts = _FITTED[kernel] = {}
    key = (len(shape), tuple(kinds))
    verdict = verdicts.get(key)
    if verdict is None:
        _importable(kernel.py_func.__globals__, kernel.py_func.__code__.co_filename)
        try:
            written = kernel.py_func.__code__.co_argcount - len(values)  # blank()'s arrays
            kernel.compile(tuple(numba.typeof(a) for a in values)
                           + (types.Array(types.float64, len(shape), "C"),) * written)
            verdict = True
        except Exception:  # noqa: BLE001 - numba's typing, or a crash inside numba
            verdict = False
        verdicts[key] = verdict
    return verdict


def blank(like, count: int) -> tuple:
    """``count`` new float64 arrays of ``like``'s shape, for a fused kernel to
    write.  NumPy allocates them, not numba: NumPy asks the kernel for huge
    pages for big arrays, and numba's allocator's 4 KiB page faults made an
    18-output kernel on 1e6 floats twice as slow as its arithmetic."""
    return tuple(np.empty(like.shape) for _ in range(count))


def flat(array):
    """``array``'s elements in one dimension, for a fused kernel to index: a view
    of a C-contiguous array; a 1-d array with other strides (a cotangent
    broadcast from a number, strides 0) as it is."""
    return array.reshape(-1)


@overload(flat)
def _flat(array):
    if isinstance(array, types.Array) and array.layout == "C":
        return lambda array: array.reshape(-1)
    if isinstance(array, types.Array) and array.ndim == 1:
        return lambda array: array
    if isinstance(array, (types.Float, types.Integer)):  # a number the run broadcasts
        return lambda array: array
    return None


def at(values, index):
    """Element ``index`` of a fused kernel's input that may be a number: the
    number itself, or the element of a flattened array (:func:`flat`)."""
    return values if np.ndim(values) == 0 else values[index]


@overload(at)
def _at(values, index):
    if isinstance(values, (types.Float, types.Integer)):
        return lambda values, index: values
    if isinstance(values, types.Array) and values.ndim == 1:
        return lambda values, index: values[index]
    return None


_FLOAT64 = np.dtype(np.float64)
_NUMPY_FLOAT = np.float64
#: Per kernel (while it lives), per number of dimensions and kinds of values:
#: whether numba compiled it.
_FITTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def finite(result) -> bool:
    """No NaN or Inf in ``result`` (a number, or tuples of them)."""
    if type(result) is tuple:
        return all(map(finite, result))
    try:
        return result - result == 0
    except TypeError:
        return True


def _importable(namespace: dict, filename: str) -> None:
    """Make the generated module importable under a name of its own, as numba's
    disk cache needs: code loaded from it imports the module it was compiled in.
    The name is the file's (``srcgrad.generated.grad_f_<hash of the source>``),
    the same in every process, and the module holds the namespace's values."""
    name = "srcgrad.generated." + os.path.splitext(os.path.basename(filename))[0]
    if name not in sys.modules:
        module = pytypes.ModuleType(name)
        module.__dict__.update((k, v) for k, v in namespace.items() if k != "__name__")
        module.__file__ = filename
        sys.modules[name] = module
    for value in list(namespace.values()):
        if isinstance(value, numba.core.registry.CPUDispatcher):
            value.py_func.__module__ = name


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _summary(exc: Exception) -> str:
    """The line of numba's message that says what it could not compile: the
    call it found no implementation for, or its first line that says something."""
    lines = [line.strip() for line in _ADDRESS.sub("", _ANSI.sub("", str(exc))).splitlines()]
    calls = [line[4:] for line in lines if line.startswith(">>> ")]
    if calls:
        text = f"numba cannot type {calls[0]}"
    else:
        useful = [line for line in lines if line and not line.startswith(("Failed in", "During:"))]
        text = useful[0] if useful else type(exc).__name__
        if not isinstance(exc, NumbaError):  # numba failed on code it should have typed
            text = f"numba failed ({type(exc).__name__}: {text})"
    return text if len(text) <= 160 else text[:157] + "..."


__all__ = ["at", "blank", "compile_for", "finite", "fits", "flat", "guarded", "power", "pullback", "split"]
