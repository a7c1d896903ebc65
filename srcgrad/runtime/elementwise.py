"""Cotangents of elementwise operations, the two gradient markers, and the
value of an elementwise update in place.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.  An elementwise operation's
cotangent has the output's shape; :func:`unbroadcast` sums it down to an
operand that broadcasting stretched.  :func:`grad_seed` is the cotangent the
adjoint sweep of ``grad`` starts from, :func:`signum` the derivative of
``abs``, :func:`match_complex` a cotangent in the kind (real or complex) of
its value.  :func:`stop_gradient` and :func:`on_grad` are what a user writes in
a differentiated function: identities, whose rules act on the cotangent.
:func:`in_place` is what ``x += v`` leaves in ``x`` when ``x`` is an array.

    >>> import numpy as np
    >>> unbroadcast(np.ones((2, 3)), np.zeros((1, 3)))
    array([[2., 2., 2.]])
"""

from __future__ import annotations

import inspect
import operator

import numpy as np

from .errors import error_at
from .namespaces import as_array, foreign

#: Python numbers and NumPy's numeric scalar types: shape (), every one (a dict
#: used as a set: one hash lookup, and an exported module writes it as a literal)
_SCALARS = dict.fromkeys((float, int, complex, bool, np.bool_, np.float64, np.float32, np.float16,
                          np.longdouble, np.complex128, np.complex64, np.clongdouble, np.int64,
                          np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8))


def list_written(target, message: str, where=None) -> None:
    """Check ``y[i] = [a, b]`` where the compiler could not tell whether ``y``
    is an array (normalize/array_operands.py writes the display as an array
    where it can): into a list or dict the display is stored as it is, which
    srcgrad follows; into an array NumPy makes an array of it, whose adjoint
    would take the list for a sequence -- refused here, at the user's line,
    before any derivative is computed.

        >>> list_written([0.0, 1.0], "never raised")
        >>> list_written(np.zeros((2, 2)), "write y[0] = np.array([...])")
        Traceback (most recent call last):
        srcgrad.errors.UnsupportedSyntaxError: write y[0] = np.array([...])
    """
    if isinstance(target, (np.ndarray, np.generic)):
        raise error_at("UnsupportedSyntaxError", message, where)


#: The operators after which srcgrad may take a list display for an array (a
#: list has none of the first five; the others beside a NumPy value): the name
#: of each one's function in :mod:`operator`
_DISPLAY_OPERATORS = {"-": "sub", "/": "truediv", "//": "floordiv", "**": "pow", "@": "matmul",
                      "+": "add", "*": "mul", "%": "mod", "<<": "lshift", ">>": "rshift",
                      "|": "or_", "^": "xor", "&": "and_"}


def display_operand(symbol: str, left, right, message: str, where=None) -> None:
    """Check ``[a, b] - y`` (``symbol`` ``'-'``; the display's side given as its
    type, ``list`` or ``tuple``, the other as the value ``y``) where the
    compiler wrote the display as ``np.array([a, b])``, what NumPy makes of it
    beside an array, but could not tell that ``y`` is one.  Beside an ndarray
    nothing is raised.  Beside anything else the operator on an empty display
    gives Python's own answer, which depends on the types alone: its TypeError
    (``[a, b] - [1.0, 2.0]``, ``[a, b] ** 2``) is raised as the function raises
    it, a NumPy scalar's array is NumPy's value too; any other result
    (``[a, b] * np.int64(2)`` repeats the list, a user's ``__rsub__``) is one
    srcgrad did not generate: refused, located, with ``message``.

        >>> display_operand("-", list, np.ones(2), "never raised")
        >>> display_operand("-", list, np.float64(1.0), "never raised")
        >>> display_operand("**", list, 2, "never raised")
        Traceback (most recent call last):
        TypeError: unsupported operand type(s) for ** or pow(): 'list' and 'int'
    """
    display_first = isinstance(left, type)
    other = right if display_first else left
    if isinstance(other, np.ndarray):
        return
    if type(other).__module__ in ("builtins", "numpy"):
        apply = getattr(operator, _DISPLAY_OPERATORS[symbol])
        made = apply(left(), other) if display_first else apply(other, right())
        if isinstance(made, np.ndarray):
            return
    raise error_at("UnsupportedSyntaxError", message, where)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``, undoing NumPy broadcasting.

    Used by the adjoints of broadcasting operations: if ``x`` was stretched to
    the output's shape, its cotangent is the sum over the stretched axes.
    """
    kind = type(g)
    if kind is float:  # a Python float cotangent: nothing was broadcast
        return g
    if kind is np.ndarray:
        if type(x) is np.ndarray and g.shape == x.shape:
            return g  # the common case, first: no np.shape calls
    elif kind in _SCALARS and type(x) in _SCALARS:
        return g  # two scalars (a loop's running sum): no np.shape calls, 1-2 us each
    if isinstance(x, (tuple, list)):
        if isinstance(g, (tuple, list)) and len(g) == len(x):
            return g  # a sequence's own cotangent: one stored as it is (grid[0] = row)
        raise error_at(
            "UnsupportedSyntaxError",
            "srcgrad differentiated '+' as arithmetic, but an operand is a "
            f"{type(x).__name__}: a sequence whose type srcgrad could not see when it "
            "compiled (an argument or an element of a container); build it with "
            "tuple(...) or list(...) inside the function")
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    if type(g) is not np.ndarray:
        g = as_array(g)  # a Dask or CuPy array stays one
    if g.ndim < len(shape):  # zeros smaller than x: no cotangent
        if foreign(g):  # a lazy array is not asked for its values: broadcast it
            return np.broadcast_to(g, shape)
        if not np.any(g):
            return 0.0
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if stretched:
        g = g.sum(axis=stretched, keepdims=True)
    if g.shape != shape and not foreign(g) and not np.any(g):  # zeros smaller than x
        return 0.0
    return g


def grad_seed(value):
    """The cotangent 1 that starts ``grad``'s adjoint sweep.

    Raises if ``value`` is not a scalar: ``grad`` differentiates scalar
    functions; ``vjp`` and ``jacobian`` handle the others.  An array of one
    element (``y.T @ K @ y`` of a column ``y``, ``np.sum(x, keepdims=True)``)
    is a scalar too, as autograd takes it: its seed is ones of its shape.

        >>> grad_seed(2.5), grad_seed(np.float64(2.5)), grad_seed(np.float32(2.5))
        (1.0, np.float64(1.0), np.float32(1.0))
    """
    kind = type(value)
    if kind is float:
        return 1.0
    if kind is np.float64 or kind is np.float32:   # a NumPy sum's: what the checks below give
        return kind(1)
    _check_output(value)
    if np.ndim(value) != 0 and np.size(value) == 1:
        kind = getattr(value, "dtype", None)
        return np.ones_like(value, dtype=kind if kind is not None and kind.kind in "fc"
                            else float)
    if np.ndim(value) != 0:
        raise error_at(
            "NonDifferentiableError",
            f"grad needs a function with a scalar output, but it returned a value of "
            f"shape {np.shape(value)}; use srcgrad.vjp or srcgrad.jacobian for "
            f"non-scalar outputs")
    if isinstance(value, np.generic):
        return value.dtype.type(1)
    return 1.0


def _check_output(value) -> None:
    """Raise where ``value`` is no real number or array: ``grad`` of a function
    that returns None (its ``return`` forgotten), a string or a dict would
    otherwise seed 1 and give zeros or fail inside srcgrad, and of a complex
    one the derivative of its real part, silently (autograd and JAX refuse
    both)."""
    if value is None or isinstance(value, (str, bytes, dict, set)):
        what = "None (is its return statement missing?)" if value is None \
            else f"a {type(value).__name__}"
        raise error_at(
            "NonDifferentiableError",
            f"grad needs a function with a scalar output, but it returned {what}; "
            f"return the number to differentiate (srcgrad.vjp takes other outputs)")
    if isinstance(value, complex) or np.iscomplexobj(value):
        raise error_at(
            "NonDifferentiableError",
            "grad needs a function with a real scalar output, but it returned a complex "
            "value; differentiate a real function of it (np.real(f), np.abs(f) ** 2), or "
            "use srcgrad.vjp or srcgrad.jvp for the derivative of a complex output")


def only_where(g, mask):
    """``g`` where ``mask`` holds and exactly 0 elsewhere, even where ``g`` is
    inf or NaN: the (co)tangent of the branch a selection took (``np.maximum``,
    ``np.clip``), or a term that a zero tangent makes zero.  ``g * mask`` gives
    ``inf * 0 = NaN`` where a derivative is infinite past the point the
    selection cut off (``np.sqrt(np.maximum(x, 0.0))`` at ``x < 0``: the
    function is constant there, its derivative 0).  Types as ``g * mask``'s:
    a Python float for Python numbers, a NumPy scalar for NumPy scalars.

        >>> only_where(np.array([np.inf, 2.0, np.nan]), np.array([False, True, False]))
        array([0., 2., 0.])
        >>> only_where(3.0, False), only_where(3.0, True)
        (0.0, 3.0)
    """
    if type(g) is float and type(mask) is bool:
        return g if mask else 0.0
    made = np.where(mask, g, 0.0)
    return made[()] if made.ndim == 0 and not isinstance(g, np.ndarray) else made


def signum(x):
    """The derivative of ``abs`` at ``x``: ``np.sign(x)`` (a Python float for a
    Python number), and for complex ``x`` its conjugate ``conj(x) / |x|`` (the
    cotangent convention of autograd: a holomorphic rule needs no conjugate,
    ``abs`` does)."""
    if isinstance(x, (int, float)):
        return float(x > 0) - float(x < 0)
    if np.iscomplexobj(x):
        return np.conj(np.sign(x))
    return np.sign(x)


def signum_tangent(x, d_x):
    """The tangent of :func:`signum` at ``x`` along ``d_x``: zero for real ``x``
    (``np.sign`` is piecewise constant); for complex ``x = |x| e^(i a)``,
    ``signum(x) = e^(-i a)`` turns with the phase: ``-i signum(x) da``, where
    ``da = Im(conj(x) d_x) / |x|^2``.  Second derivatives through ``np.abs``
    of a complex value need it (forward over reverse)."""
    if not np.iscomplexobj(x):
        return 0.0 * np.real(d_x)
    s = signum(x)
    return -1j * s * np.imag(np.conj(x) * d_x) / _nonzero_square(x)


def signum_grad(d_out, x):
    """The cotangent of ``x`` for ``d_out``, the cotangent of ``signum(x)``, in
    autograd's convention (a complex cotangent ``d/dRe - i d/dIm``): zero for
    real ``x``; for complex ``x`` the phase derivative
    ``Re(-i signum(x) d_out)`` times ``-i conj(x) / |x|^2``."""
    if not np.iscomplexobj(x):
        return 0.0 * np.real(d_out)
    s = signum(x)
    return np.real(-1j * s * d_out) * (-1j) * np.conj(x) / _nonzero_square(x)


def _nonzero_square(x):
    """``|x|^2``, with 1 where ``x`` is 0 (there ``signum`` is 0 and so is its change)."""
    square = np.abs(x) ** 2
    return np.where(square > 0, square, 1.0)


def match_complex(g, x):
    """The cotangent ``g`` of a complex ``x`` seen through a real-valued view
    (``np.real``, ``np.imag``, ``np.angle``), in ``x``'s kind: complex where ``x``
    is complex, its real part where ``x`` is real (the imaginary part is the
    derivative along ``i * x``, which a real ``x`` cannot move)."""
    if type(g) is float:
        return g
    if np.iscomplexobj(x):
        if np.iscomplexobj(g):
            return g
        return g.astype(np.result_type(x)) if foreign(g) else \
            np.asarray(g, dtype=np.result_type(x))[()]
    return np.real(g) if np.iscomplexobj(g) else g


def in_place(value, x):
    """What ``x op= v`` leaves in ``x``, from ``value``, which is ``x op v``.

    NumPy updates an array ``x`` in place, so the result is an array of
    ``x``'s dtype and shape: a 0-d array stays an array where ``x + v`` is a
    NumPy scalar, and a float32 array stays float32 where ``x + v`` is float64
    (NumPy computes the float64 result, then rounds it into ``x``, as here).
    What NumPy refuses raises here too: a value of another shape, or one of a
    kind ``x`` cannot take (``x += 0.5`` on an integer array).  A number or a
    NumPy scalar is immutable: ``x op= v`` rebinds it to ``value``.

        >>> v = np.array(0.25)
        >>> v + v, in_place(v + v, v)
        (np.float64(0.5), array(0.5))
        >>> in_place(np.ones(2, np.float32) + np.ones(2), np.ones(2, np.float32)).dtype
        dtype('float32')
        >>> in_place(0.5 + 1.0, 0.5)
        1.5
    """
    if not isinstance(x, np.ndarray):
        if foreign(x) and hasattr(type(x), "__iadd__") and value.dtype != x.dtype:
            return value.astype(x.dtype)  # a CuPy array is updated in place, as NumPy's
        return value  # a Dask array has no in-place update: x op= v rebinds x
    if type(value) is type(x) and value.dtype == x.dtype and value.shape == x.shape:
        return value  # the common case: x op v is what the update leaves
    if np.shape(value) != x.shape:
        raise ValueError(f"non-broadcastable output operand with shape {x.shape} doesn't "
                         f"match the broadcast shape {np.shape(value)}")
    out = np.empty_like(x)
    np.copyto(out, value, casting="same_kind")
    return out


def stop_gradient(x):
    """Return ``x``; no gradient flows through the call."""
    return x


def on_grad(x, hook, where=None):
    """Return ``x``; in the adjoint sweep, ``x``'s cotangent is replaced by
    ``hook(cotangent)`` (inspect it, clip it, scale it) before it flows on.

    A hook with a second parameter gets ``hook(cotangent, site)``: the
    :class:`GradSite` (file, line, column, expression) of the ``on_grad`` call
    in the source, which srcgrad fills in as ``where`` -- one hook can then log
    per-layer or per-step gradient norms and tell them apart."""
    return x


class GradSite(tuple):
    """Where an ``on_grad`` call is in the user's source: ``file``, ``line``,
    ``col`` and the watched ``expr``; prints as ``file:line:col: expr``.
    Built from the tuple the generated code carries:
    ``GradSite(('f.py', 12, 8, 'np.tanh(z)'))``."""

    __slots__ = ()

    file = property(lambda self: self[0])
    line = property(lambda self: self[1])
    col = property(lambda self: self[2])
    expr = property(lambda self: self[3])

    def __str__(self):
        return f"{self.file}:{self.line}:{self.col}: {self.expr}"

    def __repr__(self):
        return f"GradSite({tuple(self)!r})"


def takes_site(hook) -> bool:
    """Whether ``hook`` requires a second positional argument (the
    :class:`GradSite`).  One with a default (``lambda g, s=s: ...``,
    ``np.clip``-like ``def clip(g, limit=0.1)``) or only ``*args`` is called
    with the cotangent alone, as it always was."""
    try:
        params = list(inspect.signature(hook).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: one argument
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 and positional[1].default is inspect.Parameter.empty
