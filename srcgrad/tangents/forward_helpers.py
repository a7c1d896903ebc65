"""Tangent rules of the helpers generated tangent code calls.

They are linear in the tangent they take, so their tangent rules apply the
helper to the tangent's tangent: forward mode over generated forward-mode code
(third and higher derivatives along directions) needs nothing else.
"""

from ..rules.registry import tangent
from ..runtime import expand, fresh_tangent, on_grad, tangent_attr, tangent_like


@tangent(expand, "t", name="expand")
def expand_(out, t, like, d_t):
    return expand(d_t, like)


@tangent(fresh_tangent, "t", name="fresh_tangent")
def fresh_tangent_(out, t, x, d_t):
    return fresh_tangent(d_t, x)


@tangent(tangent_like, "t", name="tangent_like")
def tangent_like_(out, t, x, d_t):
    return tangent_like(d_t, x)


@tangent(tangent_attr, "t", name="tangent_attr")
def tangent_attr_(out, t, obj, name, d_t):
    return tangent_attr(d_t, obj, name)


@tangent(on_grad, "x", name="on_grad")
def on_grad_(out, x, hook, d_x):
    """A hook acts on cotangents only: tangents pass through."""
    return d_x
