"""Rules of ``dict.fromkeys(keys, value)``, both modes.

Every key of the new dict holds the same ``value``, so the value's cotangent
is the sum of the entries' cotangents, and each entry's tangent is the
value's.  Keys carry no derivative.  (A dict built from constants and written
into later -- ``d = dict.fromkeys(keys, 0.0); d['a'] = x[0]`` -- needs no rule:
nothing flows back into the call.)
"""

from ..runtime import cotangent_at
from .registry import adjoint, tangent


@adjoint(dict.fromkeys, "value", name="dict.fromkeys")
def fromkeys(out, d_out, iterable, value=None):
    return sum([cotangent_at(d_out, key) for key in out], 0.0)


@tangent(dict.fromkeys, "value", name="dict.fromkeys")
def fromkeys_tangent(out, iterable, value=None, *, d_value):
    return dict.fromkeys(out, d_value)
