"""Rules of finite differences: ``np.diff``, ``np.gradient``, ``np.trapezoid``,
``np.ediff1d`` and ``np.unwrap`` (the identity's derivative), both modes.

Both are linear in the array they difference, so the tangent is the same
difference of the tangent.  The adjoint of ``np.diff`` is minus the difference
of the cotangent padded with zeros, once per order
(:func:`~srcgrad.runtime.diff_grad`); ``np.gradient``'s stencil is banded, and
:func:`~srcgrad.runtime.gradient_grad` applies its transpose for any spacing
and edge order.  ``np.diff`` is linear in ``prepend`` and ``append`` too; a
scalar spacing ``h`` of ``np.gradient`` divides its axis's result, so its
derivative is ``-out / h`` there.  Spacings given as coordinate arrays have no
rule: srcgrad refuses to differentiate them when compiling
(:mod:`srcgrad.ad.constants`).  ``np.trapezoid`` sums ``d * (y[1:] + y[:-1]) /
2`` along its axis, ``d`` the spacing (``dx``, or the differences of ``x``):
linear in ``y`` for a fixed spacing, and in the spacing for a fixed ``y``, so
``x``'s cotangent is the transpose of ``np.diff`` applied to the spacing's.
"""

import numpy as np

from ..runtime import (
    diff_grad,
    ediff1d_ends_grad,
    ediff1d_grad,
    getitem_grad,
    gradient_grad,
    in_dtype_of,
    unbroadcast,
)
from .registry import adjoint, tangent


@adjoint(np.diff, "a", "prepend", "append")
def diff(out, d_out, a, n=1, axis=-1, prepend=None, append=None):
    """``np.diff`` differences ``prepend``, ``a`` and ``append`` joined along
    ``axis``; each gets its stretch of the joined cotangent (a scalar, stretched
    to one slice by NumPy, the sum of its slice).  ``append``'s stretch is the
    end: read from the start of the reversed problem (reversing the sequence
    negates each difference).  A list display (``append=[x[0]]``) gets an
    array's cotangent, which the display hands out item by item."""
    g = np.broadcast_to(d_out, np.shape(out))
    return (diff_grad(d_out, a, n, axis, prepend, append),
            unbroadcast(diff_grad(g, np.reshape(prepend, np.shape(prepend) or (1,) * np.ndim(out)),
                                  n, axis), np.asarray(prepend)),
            unbroadcast((-1) ** n * np.flip(diff_grad(
                np.flip(g, axis), np.reshape(append, np.shape(append) or (1,) * np.ndim(out)),
                n, axis), axis), np.asarray(append)))


@tangent(np.diff, "a", "prepend", "append")
def diff_tangent(out, a, n=1, axis=-1, prepend=None, append=None, *, d_a, d_prepend, d_append):
    """Linear in the three: each term differences one tangent, zeros in the others' places."""
    if prepend is None and append is None:
        return np.diff(d_a, n, axis), None, None
    if append is None:
        return (np.diff(d_a, n, axis, prepend=np.zeros_like(prepend)),
                np.diff(np.zeros_like(a, dtype=out.dtype), n, axis, prepend=d_prepend), None)
    if prepend is None:
        return (np.diff(d_a, n, axis, append=np.zeros_like(append)), None,
                np.diff(np.zeros_like(a, dtype=out.dtype), n, axis, append=d_append))
    return (np.diff(d_a, n, axis, prepend=np.zeros_like(prepend), append=np.zeros_like(append)),
            np.diff(np.zeros_like(a, dtype=out.dtype), n, axis, prepend=d_prepend,
                    append=np.zeros_like(append)),
            np.diff(np.zeros_like(a, dtype=out.dtype), n, axis, prepend=np.zeros_like(prepend),
                    append=d_append))


@adjoint(np.gradient, "f", "varargs")
def gradient(out, d_out, f, *varargs, axis=None, edge_order=1):
    """One array out for one axis, a tuple of them (and of cotangents) for several.
    A scalar spacing ``h`` divides its axes' results, so it gets ``-<g, out> / h``
    (summed over the axes it spaces).  Spacings given as coordinates have no
    rule (0.0 here): srcgrad refuses, when compiling, to differentiate a moving
    one (srcgrad/ad/constants.py)."""
    g_f = gradient_grad(d_out, f, varargs, axis, edge_order)
    parts = out if isinstance(out, (tuple, list)) else (out,)
    grads = d_out if isinstance(d_out, (tuple, list)) else (d_out,) * len(parts)
    if len(varargs) == 0:
        return g_f, ()
    if len(varargs) == 1:
        h = varargs[0]
        moved = -sum(map(np.sum, map(np.multiply, grads, parts)))
        return g_f, (moved / h if np.ndim(h) == 0 else 0.0,)
    h, k = varargs[0], varargs[1]
    moved = -np.sum(grads[0] * parts[0])
    moved_1 = -np.sum(grads[1] * parts[1])
    if len(varargs) == 2:
        return g_f, (moved / h if np.ndim(h) == 0 else 0.0,
                     moved_1 / k if np.ndim(k) == 0 else 0.0)
    if len(varargs) != 3:
        assert False, "np.gradient: a spacing's gradient takes up to three spacings"
    m = varargs[2]
    moved_2 = -np.sum(grads[2] * parts[2])
    return g_f, (moved / h if np.ndim(h) == 0 else 0.0, moved_1 / k if np.ndim(k) == 0 else 0.0,
                 moved_2 / m if np.ndim(m) == 0 else 0.0)


@tangent(np.gradient, "f", "varargs")
def gradient_tangent(out, f, *varargs, axis=None, edge_order=1, d_f, d_varargs):
    """The spacings are written out (generated code differentiated again cannot
    unpack ``*varargs``): none, one for every axis, or one per axis up to three;
    the keywords where they differ from their defaults.  A scalar spacing's
    tangent scales its axes' results by ``rate = -d_h / h``: with one spacing,
    the gradient of ``f * rate``; with several, each part times its rate.  The
    result is an array or a tuple of arrays (one spacing for a 2-d ``f``), as
    only the run shows, so the two terms add with ``add_parts``
    (``adds_by_parts`` below) -- no runtime class built in the tangent code,
    which can then be differentiated again."""
    if len(varargs) == 0 and axis is None and edge_order == 1:
        return np.gradient(d_f), ()
    if len(varargs) == 0 and edge_order == 1:
        return np.gradient(d_f, axis=axis), ()
    if len(varargs) == 0:
        return np.gradient(d_f, axis=axis, edge_order=edge_order), ()
    if len(varargs) == 1:
        rate = -d_varargs[0] / varargs[0] if np.ndim(varargs[0]) == 0 else 0.0
        if axis is None and edge_order == 1:
            return np.gradient(d_f, varargs[0]), np.gradient(f * rate, varargs[0])
        if edge_order == 1:
            return (np.gradient(d_f, varargs[0], axis=axis),
                    np.gradient(f * rate, varargs[0], axis=axis))
        return (np.gradient(d_f, varargs[0], axis=axis, edge_order=edge_order),
                np.gradient(f * rate, varargs[0], axis=axis, edge_order=edge_order))
    rate = -d_varargs[0] / varargs[0] if np.ndim(varargs[0]) == 0 else 0.0
    rate_1 = -d_varargs[1] / varargs[1] if np.ndim(varargs[1]) == 0 else 0.0
    if len(varargs) == 2 and axis is None and edge_order == 1:
        return np.gradient(d_f, varargs[0], varargs[1]), (out[0] * rate, out[1] * rate_1)
    if len(varargs) == 2:
        return (np.gradient(d_f, varargs[0], varargs[1], axis=axis, edge_order=edge_order),
                (out[0] * rate, out[1] * rate_1))
    if len(varargs) != 3:
        assert False, "np.gradient: a tangent takes up to three spacings"
    rate_2 = -d_varargs[2] / varargs[2] if np.ndim(varargs[2]) == 0 else 0.0
    return (np.gradient(d_f, varargs[0], varargs[1], varargs[2], axis=axis,
                        edge_order=edge_order),
            (out[0] * rate, out[1] * rate_1, out[2] * rate_2))


gradient_tangent.adds_by_parts = True  # see the docstring


if hasattr(np, "trapezoid"):  # NumPy 2's name of np.trapz
    @adjoint(np.trapezoid, "y", "x", "dx")
    def trapezoid(out, d_out, y, x=None, dx=1.0, axis=-1):
        """Each interval's cotangent times its width goes half to each end of
        it; a 1-D ``x`` (its intervals laid along ``axis``) gets the sum over
        the other axes of each interval's cotangent times the interval's mean,
        as the spacing's cotangent, through the transpose of ``np.diff``."""
        g = np.expand_dims(d_out, axis)
        ax = axis % np.ndim(y)
        upper = (slice(None),) * ax + (slice(1, None),)
        lower = (slice(None),) * ax + (slice(None, -1),)
        mean = (np.asarray(y)[upper] + np.asarray(y)[lower]) / 2
        if x is None:
            return (getitem_grad(g * dx / 2, np.asarray(y), upper)
                    + getitem_grad(g * dx / 2, np.asarray(y), lower), None,
                    unbroadcast(g * mean, dx))
        laid = (1,) * ax + (-1,) + (1,) * (np.ndim(y) - ax - 1)
        h = np.reshape(np.diff(x), laid) if np.ndim(x) == 1 else np.diff(x, axis=axis)
        others = tuple(range(ax)) + tuple(range(ax + 1, np.ndim(g * mean)))
        d_x = diff_grad(np.sum(g * mean, axis=others), x, 1, -1) if np.ndim(x) == 1 \
            else diff_grad(unbroadcast(g * mean, h), x, 1, axis)
        return (getitem_grad(g * h / 2, np.asarray(y), upper)
                + getitem_grad(g * h / 2, np.asarray(y), lower), d_x, None)

    @tangent(np.trapezoid, "y", "x", "dx")
    def trapezoid_tangent(out, y, x=None, dx=1.0, axis=-1, *, d_y, d_x, d_dx):
        """The integral of ``d_y`` on the same points; a moving ``dx`` scales
        the integral; a moving ``x`` moves the widths (``np.trapezoid`` of ``y``
        with ``d_x`` as the points, linear in them)."""
        if x is None:
            return np.trapezoid(d_y, dx=dx, axis=axis), None, out * (d_dx / dx)
        return np.trapezoid(d_y, x, axis=axis), np.trapezoid(y, d_x, axis=axis), None


@adjoint(np.ediff1d, "ary", "to_end", "to_begin", name="np.ediff1d")
def ediff1d(out, d_out, ary, to_end=None, to_begin=None):
    """The differences of the flattened ``ary`` between ``to_begin`` and
    ``to_end``: each element's cotangent is the one of the difference before
    it minus the one of the difference after it; ``to_begin`` and ``to_end``,
    copied into the output's ends, get the cotangents there."""
    ends = ediff1d_ends_grad(d_out, ary, to_end, to_begin)
    return ediff1d_grad(d_out, ary, to_begin), ends[0], ends[1]


@tangent(np.ediff1d, "ary", "to_end", "to_begin", name="np.ediff1d")
def ediff1d_tangent(out, ary, to_end=None, to_begin=None, *, d_ary, d_to_end, d_to_begin):
    """The tangent's differences, zeros where ``to_begin`` and ``to_end`` are;
    the tangents of ``to_begin`` and ``to_end`` at the ends, zeros between."""
    inner = max(np.size(ary) - 1, 0)
    begin = 0 if to_begin is None else np.size(to_begin)
    end = 0 if to_end is None else np.size(to_end)
    if to_begin is None and to_end is None:
        by_ary = np.ediff1d(d_ary)
    elif to_end is None:
        by_ary = np.ediff1d(d_ary, to_begin=np.zeros(begin))
    elif to_begin is None:
        by_ary = np.ediff1d(d_ary, to_end=np.zeros(end))
    else:
        by_ary = np.ediff1d(d_ary, to_end=np.zeros(end), to_begin=np.zeros(begin))
    return (by_ary,
            in_dtype_of(np.concatenate([np.zeros(begin + inner), np.ravel(d_to_end)]), out),
            in_dtype_of(np.concatenate([np.ravel(d_to_begin), np.zeros(inner + end)]), out))


@adjoint(np.unwrap, "p", name="np.unwrap")
def unwrap(out, d_out, p, discont=None, axis=-1, *, period=2 * np.pi):
    """``p`` plus a multiple of ``period`` that is constant between jumps: the
    derivative is the identity."""
    return d_out


@tangent(np.unwrap, "p", name="np.unwrap")
def unwrap_tangent(out, p, discont=None, axis=-1, *, period=2 * np.pi, d_p):
    return d_p
