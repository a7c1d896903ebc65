"""Adjoint rules of the helpers that generated tangent code calls.

Second derivatives differentiate generated forward-mode code once more
(reverse over forward, see :mod:`srcgrad.higher`), so the helpers it uses need
rules like any primitive: broadcasting a term (``expand``) and copying or
reshaping a tangent (``fresh_tangent``, ``tangent_like``) pass the cotangent
back summed to the tangent's shape; reading an object's tangent attribute is
an attribute read; the zero tangent of a constant carries nothing.
"""

from ..runtime import (
    AttributeCotangent,
    expand,
    fresh_tangent,
    signum,
    tangent_attr,
    tangent_like,
    unbroadcast,
    zero_tangent,
)
from .registry import adjoint, nondifferentiable


@adjoint(expand, "t", name="expand")
def expand_(out, d_out, t, like):
    return unbroadcast(d_out, t)


@adjoint(fresh_tangent, "t", name="fresh_tangent")
def fresh_tangent_(out, d_out, t, x):
    return unbroadcast(d_out, t)


@adjoint(tangent_like, "t", name="tangent_like")
def tangent_like_(out, d_out, t, x):
    return unbroadcast(d_out, t)


@adjoint(tangent_attr, "t", name="tangent_attr")
def tangent_attr_(out, d_out, t, obj, name):
    return AttributeCotangent({name: d_out})


nondifferentiable(zero_tangent, name="zero_tangent")
nondifferentiable(signum, name="signum")
