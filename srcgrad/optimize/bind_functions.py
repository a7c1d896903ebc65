"""``math`` functions called in loops, bound to local names once a call.

A loop of Python floats spends much of each step finding its functions:
``math.sin(b)`` loads the global ``math``, then its attribute ``sin``, every
step -- 8% of the scalar-loop benchmark's gradient (200 steps, four calls a
step).  Careful hand-written code binds them first (``sin, cos = math.sin,
math.cos``); so does this pass, for the functions of ``math`` that a loop of
either sweep calls, with one statement each at the top of the function::

    cos = math.cos  # bound once a call: the loops below call it every step
    sin = math.sin

and each ``math.sin(...)`` in the function then reads ``sin(...)``.  Sound:
a module attribute read at the start of the call is the one read at each
step, since generated code assigns no attribute of ``math``; a name already
used in the function (a variable ``sin``) takes the longer ``math_sin``.
Only ``math``: a NumPy call on an array costs a microsecond or more, where
the lookup's 30 ns is noise, and arrays' code reads better as ``np.tanh``.
The NumPy backend only (numba compiles ``math.sin`` itself), when
optimising.  Tested by tests/optimize/test_bind_functions.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> body = gast.parse(
    ...     "for i in t1:\\n"
    ...     "    a = a + 0.1 * math.sin(b)\\n"
    ...     "    b = b + math.sqrt(a)\\n"
    ...     "c = math.exp(a)").body
    >>> print(show_statements(bind_loop_functions(body, {"a", "b", "c", "i", "t1"})))
    sin = math.sin  # bound once a call: the loops below call it every step
    sqrt = math.sqrt
    for i in t1:
        a = a + 0.1 * sin(b)
        b = b + sqrt(a)
    c = math.exp(a)
"""

from __future__ import annotations

import gast

from ..ir.syntax import load_name, walk

_LOOPS = (gast.For, gast.While)


def bind_loop_functions(body: list, names) -> list:
    """``body`` with the ``math`` functions its loops call bound once, first
    (see the module docstring); ``names``: every name the function uses (a set,
    or a function returning it, called only where a loop calls ``math``)."""
    called = {}  # attribute -> the Attribute nodes of its calls inside loops
    for stmt in body:
        if not isinstance(stmt, _LOOPS):  # loops inside branches are rare: left alone
            continue
        for node in walk(stmt):
            if isinstance(node, gast.Call) and _is_math(node.func):
                called.setdefault(node.func.attr, []).append(node)
    if not called:
        return body
    taken = set(names() if callable(names) else names)
    local = {}
    for attr in sorted(called):
        name = attr if attr not in taken else f"math_{attr}"
        while name in taken:
            name += "_"
        taken.add(name)
        local[attr] = name
    for attr, calls in called.items():
        for call in {id(c): c for c in calls}.values():  # nested loops walk a call twice
            call.func = gast.copy_location(load_name(local[attr]), call.func)
    binds = [gast.Assign(targets=[gast.Name(id=local[a], ctx=gast.Store(), annotation=None,
                                            type_comment=None)],
                         value=gast.Attribute(value=load_name("math"), attr=a, ctx=gast.Load()),
                         type_comment=None) for a in sorted(local)]
    binds[0].comment = "bound once a call: the loops below call it every step"
    return [*binds, *body]


def _is_math(node) -> bool:
    return isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) \
        and node.value.id == "math"
