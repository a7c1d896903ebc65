"""Rules of array construction: ``np.array``, ``np.fromiter``, ``np.full``,
copies, both modes.

Building an array from values is linear in the values, so one ``@linear``
declaration gives both rules: the tangent is built the same way from the
values' tangents (``np.array([d_x, d_y])``, zeros for elements that do not
move, with the primal's ``dtype``), and the adjoint unpacks the cotangent:
one cotangent per element of the (flat) list, ``d_out[i]``.  ``np.full``'s fill
value is broadcast everywhere, so its cotangent is the sum of ``d_out``.
Constructors that depend only on shapes (``np.zeros``, ``np.eye``,
``np.zeros_like``...) are constants; ``np.linspace`` and ``np.arange`` are
linear in their end points and step (their lengths are integers), and so are casts to integer and boolean
types (``np.int64(x)``); a cast to a float type (``np.float32(x)``) passes the
derivative through, cast.  ``np.logspace`` (``base`` to the power of
linspace's samples) and ``np.geomspace`` (``start ** (1 - k / div) stop **
(k / div)``) are not linear: their samples scale linspace's weights.
"""

import numpy as np

from ..runtime import grad_like, unbroadcast, unpack_cotangent
from .derive import alias, linear
from .registry import adjoint, nondifferentiable, tangent


@linear(np.array, "object", name="np.array", keywords=("dtype",), unused=("copy",))
def array(out, d_out, object, dtype=None, *, copy=True):  # noqa: A002 - mirrors numpy
    """A list or tuple gets a list of cotangents, one per element; an array
    gets its cotangent cast back to its own dtype.  (``copy=False`` may return
    the array itself: the alias check follows that, see analysis/sharing.py.)"""
    if isinstance(object, (list, tuple)):
        return unpack_cotangent(d_out, object)
    return np.asarray(d_out, dtype=np.result_type(object))


@linear(np.asarray, "a", name="np.asarray", keywords=("dtype",))
def asarray(out, d_out, a, dtype=None):
    """A list or tuple gets a list of cotangents, one per element; an array
    gets its cotangent cast back to its own dtype."""
    if isinstance(a, (list, tuple)):
        return unpack_cotangent(d_out, a)
    return np.asarray(d_out, dtype=np.result_type(a))


@linear(np.require, "a", name="np.require", keywords=("dtype", "requirements"))
def require(out, d_out, a, dtype=None, requirements=None):
    """``np.asarray`` that also meets memory ``requirements`` (contiguous,
    aligned, writeable, owning its data): the same values, so np.asarray's
    rule (review s36 R4-13: refused).  It may return ``a`` itself, which
    analysis/sharing.py knows."""
    if isinstance(a, (list, tuple)):
        return unpack_cotangent(d_out, a)
    return np.asarray(d_out, dtype=np.result_type(a))


@adjoint(np.fromiter, "iter", name="np.fromiter")
def fromiter(out, d_out, iter, dtype, count=-1, *, like=None):  # noqa: A002 - numpy's
    """``np.array(list(iter)[:count], dtype)``: srcgrad lists a generator passed
    here first (``normalize/generator_reads``), so ``iter`` is a list (or an
    array); each item gets its element of the cotangent, those past ``count``
    none.  A dtype without a derivative (``int``) passes none."""
    if not np.issubdtype(out.dtype, np.inexact):
        return 0.0
    g = np.concatenate([np.broadcast_to(d_out, np.shape(out)),
                        np.zeros(len(iter) - np.size(out), dtype=out.dtype)])
    if isinstance(iter, (list, tuple)):
        return unpack_cotangent(g, iter)
    return np.asarray(g, dtype=np.result_type(iter))


@tangent(np.fromiter, "iter", name="np.fromiter")
def fromiter_tangent(out, iter, dtype, count=-1, *, like=None, d_iter):
    if not np.issubdtype(out.dtype, np.inexact):
        return np.zeros(np.shape(out))
    return np.asarray(d_iter, dtype=out.dtype)[:np.size(out)]


# the same values in C or Fortran memory order: the memory order does not matter
alias(np.ascontiguousarray, np.asarray, name="np.ascontiguousarray")
alias(np.asfortranarray, np.asarray, name="np.asfortranarray")


# np.full(3, x, dtype=int), or np.full_like of an integer template (the dtype
# the result takes when none is given): integers, piecewise constant in the
# fill value, so no derivative (review s36 R4-9: the fill value's went through).

@adjoint(np.full, "fill_value", name="np.full")
def full(out, d_out, shape, fill_value, dtype=None):
    """The fill value is broadcast everywhere: its cotangent is the sum, in the
    fill value's dtype (a ``dtype=`` casts the result, not the fill value)."""
    if not np.issubdtype(out.dtype, np.inexact):
        return 0.0
    if out.dtype != np.result_type(fill_value) and np.issubdtype(np.result_type(fill_value),
                                                                   np.inexact):
        return np.asarray(unbroadcast(d_out, fill_value), dtype=np.result_type(fill_value))
    return unbroadcast(d_out, fill_value)


@tangent(np.full, "fill_value", name="np.full")
def full_tangent(out, shape, fill_value, dtype=None, *, d_fill_value):
    if not np.issubdtype(out.dtype, np.inexact):
        return np.zeros(np.shape(out))
    if dtype is None:
        return np.full(shape, d_fill_value)
    return np.full(shape, d_fill_value, dtype)


@adjoint(np.full_like, "fill_value", name="np.full_like")
def full_like(out, d_out, a, fill_value, dtype=None):
    """Only the fill value is differentiable; ``a`` gives a shape (and, with
    no ``dtype``, the result's dtype)."""
    if not np.issubdtype(out.dtype, np.inexact):
        return 0.0
    if out.dtype != np.result_type(fill_value) and np.issubdtype(np.result_type(fill_value),
                                                                   np.inexact):
        return np.asarray(unbroadcast(d_out, fill_value), dtype=np.result_type(fill_value))
    return unbroadcast(d_out, fill_value)


@tangent(np.full_like, "fill_value", name="np.full_like")
def full_like_tangent(out, a, fill_value, dtype=None, *, d_fill_value):
    if not np.issubdtype(out.dtype, np.inexact):
        return np.zeros(np.shape(out))
    if dtype is None:
        return np.full_like(a, d_fill_value)
    return np.full_like(a, d_fill_value, dtype)


@linear(np.copy, "a", name="np.copy", unused=("order",))
def copy(out, d_out, a, order="K"):
    """A fresh array, like the value; its memory order does not matter."""
    return d_out


nondifferentiable(np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
                  np.eye, np.identity)


@adjoint(np.linspace, "start", "stop", name="np.linspace")
def linspace(out, d_out, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
             axis=0):
    """Sample ``k`` is ``start + (stop - start) k / div`` (``div`` is ``num - 1``
    with the end point, else ``num``): ``stop`` gets the cotangents weighted by
    ``k / div``, ``start`` the rest; ``retstep``'s step ``(stop - start) / div``
    adds its own.  An integer ``dtype`` floors the samples: piecewise constant."""
    if retstep:  # (a cotangent of 0.0: none reached either)
        samples = out[0]
        d_samples, d_step = d_out if isinstance(d_out, (tuple, list)) else (d_out, d_out)
    else:
        samples, d_samples = out, d_out
    div = max(num - 1 if endpoint else num, 1)
    moved = np.moveaxis(np.broadcast_to(d_samples, np.shape(samples)), axis, 0)
    weights = np.asarray(np.arange(num) / div, dtype=moved.dtype).reshape(
        (-1,) + (1,) * (np.ndim(moved) - 1))
    total = np.sum(moved, axis=0)
    d_stop = np.sum(moved * weights, axis=0)
    d_start = total - d_stop
    if retstep:
        d_stop, d_start = d_stop + d_step / div, d_start - d_step / div
    if not np.issubdtype(samples.dtype, np.inexact):
        return 0.0, 0.0
    return unbroadcast(d_start, start), unbroadcast(d_stop, stop)


@tangent(np.linspace, "start", "stop", name="np.linspace")
def linspace_tangent(out, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
                     axis=0, *, d_start, d_stop):
    """The samples' tangents ``d_start (1 - k / div) + d_stop k / div``, and the
    step's ``(d_stop - d_start) / div``."""
    samples = out[0] if retstep else out
    div = max(num - 1 if endpoint else num, 1)
    shape = (-1,) + (1,) * (np.ndim(samples) - 1)
    weights = (np.arange(num) / div).reshape(shape)
    inexact = np.issubdtype(samples.dtype, np.inexact)
    t_start = np.moveaxis(np.asarray((1 - weights) * (d_start * inexact)
                                     + np.zeros(np.shape(np.moveaxis(samples, axis, 0))),
                                     dtype=samples.dtype if inexact else None), 0, axis)
    t_stop = np.moveaxis(np.asarray(weights * (d_stop * inexact)
                                    + np.zeros(np.shape(np.moveaxis(samples, axis, 0))),
                                    dtype=samples.dtype if inexact else None), 0, axis)
    if retstep:
        return (t_start, -d_start * inexact / div), (t_stop, d_stop * inexact / div)
    return t_start, t_stop


@adjoint(np.logspace, "start", "stop", name="np.logspace")
def logspace(out, d_out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base`` to the power of ``np.linspace(start, stop)``'s samples: the
    cotangents times ``out log(base)`` are the samples', weighted as in
    ``np.linspace``'s rule (``stop`` by ``k / div``, ``start`` by the rest).
    ``base`` is a constant."""
    if not np.issubdtype(out.dtype, np.inexact):
        return 0.0, 0.0
    div = max(num - 1 if endpoint else num, 1)
    log_base = np.log(np.expand_dims(np.array(base, ndmin=np.ndim(out) - 1), axis))
    g = np.broadcast_to(d_out, np.shape(out)) * out * np.asarray(log_base, dtype=out.dtype)
    moved = np.moveaxis(g, axis, 0)
    weights = np.asarray(np.arange(num) / div, dtype=out.dtype).reshape(
        (-1,) + (1,) * (np.ndim(moved) - 1))
    d_stop = np.sum(moved * weights, axis=0)
    return (grad_like(unbroadcast(np.sum(moved, axis=0) - d_stop, start), start),
            grad_like(unbroadcast(d_stop, stop), stop))


@tangent(np.logspace, "start", "stop", name="np.logspace")
def logspace_tangent(out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0,
                     *, d_start, d_stop):
    """``out log(base)`` times the samples' tangents, as in ``np.linspace``'s."""
    at = axis % np.ndim(out)
    div = max(num - 1 if endpoint else num, 1)
    rest = np.shape(out)[:at] + np.shape(out)[at + 1:]
    weights = np.moveaxis(np.asarray(np.arange(num) / div, dtype=out.dtype).reshape(
        (-1,) + (1,) * (np.ndim(out) - 1)), 0, at)
    log_base = np.log(np.expand_dims(np.array(base, ndmin=np.ndim(out) - 1), axis))
    slope = out * np.asarray(log_base, dtype=out.dtype) * np.issubdtype(out.dtype, np.inexact)
    return (slope * (1 - weights) * np.expand_dims(np.broadcast_to(d_start, rest), at),
            slope * weights * np.expand_dims(np.broadcast_to(d_stop, rest), at))


@adjoint(np.geomspace, "start", "stop", name="np.geomspace")
def geomspace(out, d_out, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Sample ``k`` is ``start ** (1 - k / div) * stop ** (k / div)``: ``start``
    gets the cotangents times ``out (1 - k / div) / start``, ``stop`` times
    ``out (k / div) / stop``."""
    if not np.issubdtype(out.dtype, np.inexact):
        return 0.0, 0.0
    div = max(num - 1 if endpoint else num, 1)
    moved = np.moveaxis(np.broadcast_to(d_out, np.shape(out)) * out, axis, 0)
    weights = np.asarray(np.arange(num) / div, dtype=out.dtype).reshape(
        (-1,) + (1,) * (np.ndim(moved) - 1))
    to_stop = np.sum(moved * weights, axis=0)
    return (grad_like(unbroadcast((np.sum(moved, axis=0) - to_stop) / start, start), start),
            grad_like(unbroadcast(to_stop / stop, stop), stop))


@tangent(np.geomspace, "start", "stop", name="np.geomspace")
def geomspace_tangent(out, start, stop, num=50, endpoint=True, dtype=None, axis=0, *,
                      d_start, d_stop):
    at = axis % np.ndim(out)
    div = max(num - 1 if endpoint else num, 1)
    rest = np.shape(out)[:at] + np.shape(out)[at + 1:]
    weights = np.moveaxis(np.asarray(np.arange(num) / div, dtype=out.dtype).reshape(
        (-1,) + (1,) * (np.ndim(out) - 1)), 0, at)
    inexact = np.issubdtype(out.dtype, np.inexact)
    return (out * (1 - weights) * np.expand_dims(np.broadcast_to(d_start / start, rest), at)
            * inexact,
            out * weights * np.expand_dims(np.broadcast_to(d_stop / stop, rest), at) * inexact)


@adjoint(np.arange, "start", "stop", "step", name="np.arange")
def arange(out, d_out, start, stop=None, step=1, *, dtype=None):
    """Element ``k`` is ``start + k step``: ``start`` gets the sum of the
    cotangents, ``step`` their sum weighted by ``k``.  How many elements there
    are is piecewise constant, so ``stop`` (and a lone argument, the stop) gets
    0; an integer result is piecewise constant too."""
    if stop is None:
        return 0.0, None, None
    inexact = np.issubdtype(out.dtype, np.inexact)
    return (np.sum(d_out) * inexact, 0.0,
            np.sum(d_out * np.arange(np.size(out))) * inexact)


@tangent(np.arange, "start", "stop", "step", name="np.arange")
def arange_tangent(out, start, stop=None, step=1, *, dtype=None, d_start, d_stop, d_step):
    inexact = np.issubdtype(out.dtype, np.inexact)
    zeros = np.zeros(np.shape(out), dtype=out.dtype if inexact else None)
    if stop is None:
        return zeros, None, None
    return (np.asarray(zeros + d_start * inexact, dtype=zeros.dtype), zeros,
            np.asarray(np.arange(np.size(out)) * (d_step * inexact), dtype=zeros.dtype))


def _scalar_cast(kind):
    """``np.float64(x)``: a NumPy scalar (or array) of ``x``'s value; the cotangent
    comes back in ``x``'s own type, the tangent in the output's."""

    @adjoint(kind, "x", name=f"np.{kind.__name__}")
    def cast(out, d_out, x):
        return grad_like(d_out, x)

    @tangent(kind, "x", name=f"np.{kind.__name__}")
    def cast_tangent(out, x, d_x):
        return np.asarray(d_x, dtype=np.result_type(out))[()]


for _kind in (np.float64, np.float32):
    _scalar_cast(_kind)

# Casts to integers and booleans: piecewise constant.
for _kind in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.bool_):
    nondifferentiable(_kind, name=f"np.{_kind.__name__}")
