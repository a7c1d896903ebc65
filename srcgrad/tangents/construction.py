"""Tangent rules of array construction: ``np.array``, ``np.full``, copies.

Building an array from values is linear in the values, so the tangent is
built the same way from their tangents: ``np.array([x, y])`` has tangent
``np.array([d_x, d_y])`` (zeros for elements that do not move), a fill value
fills the tangent with its own tangent, and a copy has a copy of the tangent
(a fresh array, like the value).  A ``dtype`` given to the primal is given to
the tangent too, so it is stored like the value.
"""

import numpy as np

from ..rules.registry import tangent


@tangent(np.array, "object", name="np.array")
def array(out, object, dtype=None, *, d_object):
    if dtype is None:
        return np.array(d_object)
    return np.array(d_object, dtype=dtype)


@tangent(np.asarray, "a", name="np.asarray")
def asarray(out, a, dtype=None, *, d_a):
    if dtype is None:
        return np.asarray(d_a)
    return np.asarray(d_a, dtype=dtype)


@tangent(np.full, "fill_value", name="np.full")
def full(out, shape, fill_value, dtype=None, *, d_fill_value):
    if dtype is None:
        return np.full(shape, d_fill_value)
    return np.full(shape, d_fill_value, dtype=dtype)


@tangent(np.full_like, "fill_value", name="np.full_like")
def full_like(out, a, fill_value, dtype=None, *, d_fill_value):
    """Shaped (and by default typed) like ``a``, filled with the fill value's tangent."""
    if dtype is None:
        return np.full_like(a, d_fill_value)
    return np.full_like(a, d_fill_value, dtype=dtype)


@tangent(np.copy, "a", name="np.copy")
def copy(out, a, order="K", *, d_a):
    return np.copy(d_a)


def _scalar_cast(kind):
    """``np.float64(x)``: the tangent in the output's type, as the value is."""

    @tangent(kind, "x", name=f"np.{kind.__name__}")
    def cast(out, x, d_x):
        return np.asarray(d_x, dtype=np.result_type(out))[()]

    return cast


for _kind in (np.float64,):
    _scalar_cast(_kind)
