"""Rules of array construction: ``np.array``, ``np.full``, copies, both modes.

Building an array from values is linear in the values, so one ``@linear``
declaration gives both rules: the tangent is built the same way from the
values' tangents (``np.array([d_x, d_y])``, zeros for elements that do not
move, with the primal's ``dtype``), and the adjoint unpacks the cotangent:
one cotangent per element of the (flat) list, ``d_out[i]``.  ``np.full``'s fill
value is broadcast everywhere, so its cotangent is the sum of ``d_out``.
Constructors that depend only on shapes (``np.zeros``, ``np.arange``,
``np.zeros_like``...) are constants, and so are casts to integer and boolean
types (``np.int64(x)``); a cast to a float type (``np.float32(x)``) passes the
derivative through, cast.
"""

import numpy as np

from ..runtime import grad_like, unbroadcast, unpack_cotangent
from .derive import linear
from .registry import adjoint, nondifferentiable, tangent


@linear(np.array, "object", name="np.array", keywords=("dtype",))
def array(out, d_out, object, dtype=None):  # noqa: A002 - mirrors numpy
    """A list or tuple gets a list of cotangents, one per element; an array
    gets its cotangent cast back to its own dtype."""
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


@linear(np.full, "fill_value", name="np.full", keywords=("dtype",))
def full(out, d_out, shape, fill_value, dtype=None):
    return unbroadcast(d_out, fill_value)


@linear(np.full_like, "fill_value", name="np.full_like", keywords=("dtype",))
def full_like(out, d_out, a, fill_value, dtype=None):
    """Only the fill value is differentiable; ``a`` gives just a shape."""
    return unbroadcast(d_out, fill_value)


@linear(np.copy, "a", name="np.copy", unused=("order",))
def copy(out, d_out, a, order="K"):
    """A fresh array, like the value; its memory order does not matter."""
    return d_out


nondifferentiable(np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
                  np.arange, np.linspace, np.eye, np.identity)


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
