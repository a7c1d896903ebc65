"""Values being differentiated that reach a parameter a rule holds constant.

A rule differentiates the parameters named in its ``wrt`` and takes the others
as constants.  An axis, a shape, a count, an index, a dtype, a mode or a flag
carries no derivative, so a value that reaches one of those is fine even when
the activity analysis calls it varied (an int kept in a list beside the
weights, say).  Any other parameter taken as a constant would give a value
that flows there a gradient of zero, silently; so when such a value is being
differentiated srcgrad refuses the code as it compiles, naming the function,
the parameter and the way out (``srcgrad.stop_gradient``), in both modes.

    >>> import numpy as np
    >>> from srcgrad.rules import registry
    >>> restore = registry.restore_point()
    >>> @registry.adjoint(np.heaviside, "x1")
    ... def step(out, d_out, x1, x2):
    ...     return 0.0 * d_out
    >>> def f(x, h):
    ...     return np.heaviside(x, h)
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> program = normalize(parse_function(f))
    >>> op = program.body[0].op
    >>> check_constant_arguments(program, op, registry.lookup(np.heaviside), {"x"})
    >>> try:
    ...     check_constant_arguments(program, op, registry.lookup(np.heaviside), {"x", "h"})
    ... except NonDifferentiableError as error:
    ...     print(error.message)
    a value being differentiated ('h') reaches the parameter 'x2' of 'np.heaviside', which srcgrad's rule takes as a constant: its gradient would be 0; wrap the value in srcgrad.stop_gradient(...) if it should be a constant there
    >>> restore()
"""

from __future__ import annotations

import numpy as np

from .. import ir
from ..analysis.activity import describe, scalar_names
from ..errors import NonDifferentiableError

#: Parameters that hold integers, booleans, shapes, axes, indices, dtypes,
#: modes, functions or thresholds: no derivative flows through them, whatever
#: reaches them.  (Any other parameter a rule takes as a constant is refused.)
DISCRETE = frozenset({
    # axes, counts, shapes, positions
    "axis", "axes", "axis1", "axis2", "axisa", "axisb", "axisc", "source", "destination",
    "start", "n", "k", "kth", "shift", "repeats", "reps", "indices", "index",
    "indices_or_sections", "shape", "newshape", "s", "num", "offset", "pad_width",
    "condition", "condlist", "where", "keys", "key",
    # dtypes, layouts, modes, flags
    "dtype", "order", "casting", "copy", "subok", "device", "like", "keepdims", "mode",
    "kind", "method", "norm", "reflect_type", "edge_order", "UPLO", "lower", "upper",
    "trans", "unit_diagonal", "overwrite_a", "overwrite_b", "check_finite",
    "full_matrices", "compute_uv", "allow_singular", "optimize", "deg", "reverse",
    "endpoint", "retstep", "mod",
    # thresholds (the result is piecewise constant in them) and hooks
    "rcond", "tol", "hook", "name",
})

#: Parameters of particular primitives that give only a shape (and dtype).
SHAPE_ONLY = {np.full_like: ("a",)}

#: Differentiated parameters whose rule holds only for scalars: a moving value
#: there must be known to be a number when compiling.
SCALAR_ONLY = {np.gradient: ("varargs", "a spacing given as coordinates (an array)")}


def check_constant_arguments(program: ir.Program, op: ir.Op, rule, varied) -> None:
    """Raise NonDifferentiableError where a name in ``varied`` reaches a parameter
    of ``rule`` (an adjoint or tangent rule bound at ``op``) that the rule takes
    as a constant and that is not one of the :data:`DISCRETE` kinds."""
    if rule.called is not None:  # a user's rule: its wrt says what the user means
        return
    if str(getattr(op.primitive, "__module__", "")).startswith("srcgrad."):
        return  # srcgrad's own helpers in code it generated (tangent_like(d_y, y))
    try:
        bound = rule.bind(op.args, op.kwargs)
    except TypeError:  # the inliner reports arguments the rule cannot take
        return
    scalar_only = _lookup(SCALAR_ONLY, op.primitive, None)
    for pname, value in bound.arguments.items():
        nodes = value if isinstance(value, (tuple, list)) else \
            list(value.values()) if isinstance(value, dict) else [value]
        moving = [n for node in nodes for n in ir.names_in(node) if n in varied]
        if not moving:
            continue
        if pname in rule.wrt:
            if scalar_only and scalar_only[0] == pname:
                _check_scalars(program, op, pname, nodes, varied, scalar_only[1])
            continue
        if pname in DISCRETE or pname in _lookup(SHAPE_ONLY, op.primitive, ()):
            continue
        raise _refusal(program, op, pname, moving[0],
                       "which srcgrad's rule takes as a constant: its gradient would be 0")


def _lookup(table, primitive, default):
    try:
        return table.get(primitive, default)
    except TypeError:  # an unhashable primitive
        return default


def _check_scalars(program, op, pname, nodes, varied, what) -> None:
    scalars = scalar_names(program)
    for node in nodes:
        names = [n for n in ir.names_in(node) if n in varied]
        if names and not (type(node).__name__ == "Name" and node.id in scalars):
            raise _refusal(program, op, pname, names[0],
                           f"where srcgrad differentiates a scalar only, and it cannot tell "
                           f"that this is one ({what} has no rule; if it is a number, "
                           f"pass float(...) of it)")


def _refusal(program, op, pname, name, why) -> NonDifferentiableError:
    return NonDifferentiableError(
        f"a value being differentiated ('{name}') reaches the parameter '{pname}' of "
        f"{describe(op)}, {why}; wrap the value in srcgrad.stop_gradient(...) if it should "
        f"be a constant there", filename=program.filename,
        lineno=getattr(op.node, "lineno", None), col=getattr(op.node, "col_offset", None))
