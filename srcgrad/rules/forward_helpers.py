"""Rules of the runtime helpers that generated tangent code calls, both modes.

Higher derivatives differentiate generated forward-mode code again: reverse
over forward for second derivatives (see :mod:`srcgrad.api.higher`), forward
over forward along directions.  So the helpers that code calls need rules like
any primitive.  Broadcasting a term (``expand``), copying or reshaping a
tangent (``fresh_tangent``, ``tangent_like``), making a sequence's tangent a
sequence (``sequence_tangent``), taking its real part for a real
value (``match_complex``) and reading an object's tangent attribute
(``tangent_attr``) are linear in the tangent they take, so one
``@linear`` declaration each gives both rules: the tangent applies the helper
to the tangent's tangent, the adjoint passes the cotangent back summed to the
tangent's shape (or as an attribute's cotangent).  ``add_parts``, the sum of
two terms of a value that may be a tuple, passes its cotangent to both and adds
its tangents the same way.  The zero tangent of a constant carries nothing,
nor does the stand-in for a tangent that does not exist (``missing_tangent``).
``np.interp``'s periodic knots (``periodic_knots``) are ``xp`` at their places.
"""

import numpy as np

from ..runtime import (
    add_parts,
    attribute_grad,
    cotangent_at,
    elements_cotangent,
    expand,
    fresh_tangent,
    held_at,
    match_complex,
    missing_tangent,
    only_where,
    periodic_knots,
    same_window,
    sequence_tangent,
    signum,
    signum_grad,
    sorted_order,
    taken_again,
    tangent_attr,
    tangent_like,
    unbroadcast,
    zero_tangent,
)
from .derive import linear
from .registry import adjoint, nondifferentiable, tangent


@linear(expand, "t", name="expand")
def expand_(out, d_out, t, like):
    return unbroadcast(d_out, t)


@linear(only_where, "g", name="only_where")
def only_where_(out, d_out, g, mask):
    """A selection's (co)tangent, linear in it: the cotangent passes where the
    branch was taken, summed back to ``g``'s shape."""
    return unbroadcast(only_where(d_out, mask), g)


@linear(fresh_tangent, "t", name="fresh_tangent")
def fresh_tangent_(out, d_out, t, x):
    """A list's or dict's tangent is copied as it is, its cotangent passed back
    as it is; an array's is summed to the tangent's shape."""
    return d_out if isinstance(t, (list, tuple, dict)) else unbroadcast(d_out, t)


@linear(tangent_like, "t", name="tangent_like")
def tangent_like_(out, d_out, t, x):
    """The tangent of a list, tuple or dict output (a helper returning the list
    of an RNN's outputs) keeps its structure: its cotangent passes back as it
    is, element by element."""
    return d_out if isinstance(t, (list, tuple, dict)) else unbroadcast(d_out, t)


@linear(sequence_tangent, "t", name="sequence_tangent")
def sequence_tangent_(out, d_out, t, x):
    """The tangent of a tuple or list as a sequence of ``x``'s kind (what ``+``
    and ``*`` of sequences act on): the cotangent goes back in ``t``'s kind (an
    array's rows stacked), and none to the scalar zero of a tangent that does
    not move."""
    return 0.0 if isinstance(t, (int, float)) else elements_cotangent(d_out, t)


@linear(match_complex, "g", name="match_complex")
def match_complex_(out, d_out, g, x):
    """``g`` itself or its real part (the tangent of ``np.real_if_close``)."""
    return match_complex(d_out, g)


@linear(tangent_attr, "t", name="tangent_attr")
def tangent_attr_(out, d_out, t, obj, name):
    return attribute_grad(d_out, obj, name)


@adjoint(add_parts, "a", "b", name="add_parts")
def add_parts_(out, d_out, a, b):
    """Both terms have the value's shape and structure: each gets the cotangent."""
    return d_out, d_out


@tangent(add_parts, "a", "b", name="add_parts")
def add_parts_tangent(out, a, b, d_a, d_b):
    return d_a, d_b


add_parts_tangent.adds_by_parts = True  # the two terms are added with add_parts too

@adjoint(periodic_knots, "xp", name="periodic_knots")
def periodic_knots_(out, d_out, xp, period):
    """``np.interp``'s knots with a period (its rules call this): each knot is
    ``xp`` at its place, shifted by whole periods, so its cotangent goes back
    to that place (a second derivative with respect to ``xp``)."""
    g = np.broadcast_to(cotangent_at(d_out, 0), np.shape(out[0]))
    return np.bincount(out[1], g, np.size(xp))


@tangent(periodic_knots, "xp", name="periodic_knots")
def periodic_knots_tangent(out, xp, period, d_xp):
    """The knots' tangents are ``xp``'s at their places; the places are integers."""
    return np.asarray(d_xp, dtype=np.float64)[out[1]], zero_tangent(out[1])


nondifferentiable(zero_tangent, name="zero_tangent")
nondifferentiable(missing_tangent, name="missing_tangent")  # it raises where it is used
# the permutation ``sorted`` applies (the tangent of ``sorted(xs)`` is the
# tangents in that order): integer positions
nondifferentiable(sorted_order, name="sorted_order")
# the dtype a tangent is cast to (np.float64(x[0])'s tangent, a cotangent of a
# given dtype): differentiating that code again follows the value, not the dtype
nondifferentiable(np.result_type, name="np.result_type")
# the tests that keep views and containers in step with an update (see
# srcgrad.runtime.aliases): a flag, a key; they raise at the user's place
nondifferentiable(same_window, name="same_window")
nondifferentiable(taken_again, name="taken_again")
nondifferentiable(held_at, name="held_at")
@adjoint(signum, "x", name="signum")
def signum_(out, d_out, x):
    return signum_grad(d_out, x)


@tangent(signum, "x", name="signum")
def signum_tangent_(out, x, d_x):
    """:func:`srcgrad.runtime.signum_tangent` written out in NumPy operations,
    so that a third derivative through ``np.abs`` of a complex value
    differentiates it once more: the phase turns, ``-1j signum(x) da`` with
    ``da = Im(conj(x) d_x) / |x|^2`` (0 where ``x`` is 0); 0 for a real ``x``."""
    if np.iscomplexobj(x):
        square = np.real(x * np.conj(x))
        return -1j * out * np.imag(np.conj(x) * d_x) / np.where(square > 0, square, 1.0)
    return 0.0 * np.real(d_x)
