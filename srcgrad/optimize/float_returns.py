"""Gradients of Python floats returned as they are, without ``grad_like``.

``grad_like(g, x)`` turns each cotangent into a gradient shaped and typed
like its argument; for a Python float argument it returns ``g`` itself when
``g`` is a Python float (``float(np.real(g))`` otherwise).  Code specialised
on Python float arguments (a scalar loop of ``math.sin`` and ``math.cos``)
usually computes its cotangents in Python floats, and the call -- a Python
function walking the tuple of gradients -- costs 2-3% of the scalar-loop
benchmark's gradient (200 steps).  Careful hand-written code returns the
floats.  So does this pass, where it can prove that each cotangent returned
is a Python float and each argument is one:

    return grad_like((d_a, d_b), (a, b))   ->   return d_a, d_b

The proof is a type inference over the whole function, a greatest fixed
point like :func:`..analysis.activity.scalar_names`: every name is assumed
to hold a Python float, and a name is dropped as soon as one of its
bindings is not provably one.  A binding is a float when its expression is

* a float constant, a parameter the code is specialised for as a Python
  float (``program.float_params``: ``type(a) is float`` chose this code),
  or a name still assumed a float;
* ``+ - * /`` of floats and ints (int constants, and the parameters the
  code is specialised for as Python ints where nothing rebinds them), at
  least one operand a float (``float op int`` is a float; ``int / int`` is
  left out), unary ``-`` or ``+`` of a float, ``f ** k`` with ``k`` an int
  (``f ** 0.5`` of a negative float is complex);
* a call of a function of ``math`` that returns a float for floats
  (``math.sin``, or a local bound once to it, as
  :mod:`.bind_functions` binds them; not ``math.floor``, an int);
* ``grad_seed(f)`` of a float (1.0);
* a comparison of floats and ints is an int operand: a bool, 0 or 1 to
  Python's arithmetic (``f + (f == 0)``, a rule's guard against dividing by
  0, is a float);
* an element of a tape (``a = a_tape[i]``): a list built as ``[None] *
  n`` or ``[]`` (no other binding) whose elements are set only by ``t[k] =
  v`` or ``t.append(v)`` with ``v`` a float.  A tape's slot read before it
  is written would hold None, which makes the arithmetic reading it raise
  a TypeError, never a value of another type.

Anything else -- a NumPy call (``np.sin`` of a float is a ``np.float64``),
a global, a list item, a loop's target, a tuple target, an update -- is not
a float.  Sound because Python's float arithmetic and those ``math``
functions return exact ``float`` instances (or raise) when every operand
is a float or an int; so at the return each cotangent is the very object
``grad_like`` would have returned, and the gradient is bit for bit the
same.  Only the joint function's return (grad, value_and_grad); arrays,
ints, objects and anything unproven keep ``grad_like``, for every
gradient of the call (the tuple's gradients are checked together).  The
NumPy backend only, when optimising.  Tested by
tests/optimize/test_float_returns.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> body = gast.parse(
    ...     "sin = math.sin\\n"
    ...     "t1 = range(200)\\n"
    ...     "a_tape = [None] * len(t1)\\n"
    ...     "for i in t1:\\n"
    ...     "    a_tape[i] = a\\n"
    ...     "    a = a + 0.1 * sin(b)\\n"
    ...     "t8 = a * b\\n"
    ...     "d_t8 = grad_seed(t8)\\n"
    ...     "d_a = d_t8 * b\\n"
    ...     "d_b = d_t8 * a\\n"
    ...     "for i in reversed(t1):\\n"
    ...     "    a = a_tape[i]\\n"
    ...     "    d_b = d_b + d_a * 0.1 * math.cos(b)\\n"
    ...     "return grad_like((d_a, d_b), (a, b))").body
    >>> print(show_statements(return_floats(body, {"a", "b"})[-1:]))
    return d_a, d_b  # Python floats: the gradients as they are
    >>> print(show_statements(return_floats(body[:-1] + gast.parse(
    ...     "return grad_like((d_a, np.sin(d_b)), (a, b))").body, {"a", "b"})[-1:]))
    return grad_like((d_a, np.sin(d_b)), (a, b))
    >>> print(show_statements(return_floats(body[:-1] + gast.parse(
    ...     "d_b = d_b / (a + (a == 0))\\n"
    ...     "return grad_like((d_a, d_b), (a, b))").body, {"a", "b"})[-1:]))
    return d_a, d_b  # Python floats: the gradients as they are
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import statements_in, walk

#: The functions of ``math`` that return a float for float (or int) arguments.
FLOAT_MATH = frozenset({
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "copysign", "cos",
    "cosh", "degrees", "erf", "erfc", "exp", "exp2", "expm1", "fabs", "fmod", "gamma",
    "hypot", "ldexp", "lgamma", "log", "log10", "log1p", "log2", "pow", "radians",
    "remainder", "sin", "sinh", "sqrt", "tan", "tanh"})

_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div)


def return_floats(body: list, floats, params=None, ints=()) -> list:
    """``body`` (a function's statements) with ``return ... grad_like(G, X) ...``
    written ``return ... G ...`` where every cotangent in ``G`` and argument in
    ``X`` is provably a Python float (see the module docstring); ``floats``:
    the parameters the code is specialised for as Python floats, ``ints``
    those it is specialised for as Python ints, ``params`` all of them (by
    default ``floats``).  The return statements are changed in
    place; ``body`` is returned."""
    if not floats:  # (before the walk: no Python-float parameter, nothing to do)
        return body
    returns = [s for s in _statements(body) if isinstance(s, gast.Return)
               and s.value is not None]
    calls = [(stmt, node) for stmt in returns for node in walk(stmt.value) if _is_grad_like(node)]
    if not calls or not floats:
        return body
    known = python_floats(body, floats, floats if params is None else params, ints)
    for stmt, call in calls:
        pairs = _pairs(*call.args)
        if pairs is None or not all(_is_float(g, known) and _is_float(x, known)
                                    for g, x in pairs):
            continue
        plain = call.args[0]
        if stmt.value is call:
            stmt.value = plain
        else:
            _replace(stmt.value, call, plain)
        stmt.comment = "Python floats: the gradients as they are"
    return body


def python_floats(body: list, floats, params, ints=()) -> set[str]:
    """The names of ``body`` that hold a Python float wherever they are bound:
    the parameters ``floats`` (of all the parameters ``params``) that nothing
    rebinds otherwise, and the names all of whose bindings are floats (see the
    module docstring); ``ints``: parameters that are Python ints, read as int
    operands where nothing rebinds them."""
    bindings: dict[str, list] = {}   # name -> its bound expressions (None: not a float)
    stored: dict[str, list] = {}     # a tape -> the values stored into it
    appended = set()                 # the ids of the names read as t.append(v)'s t
    for stmt in _statements(body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], (gast.Name, gast.Subscript)):
            target = stmt.targets[0]
            if isinstance(target, gast.Name):
                bindings.setdefault(target.id, []).append(stmt.value)
            elif isinstance(target.value, gast.Name):
                stored.setdefault(target.value.id, []).append(stmt.value)
            inner = [stmt.value] if isinstance(target, gast.Name) else [stmt.value, target]
        elif isinstance(stmt, gast.Expr) and _append(stmt.value):
            stored.setdefault(stmt.value.func.value.id, []).append(stmt.value.args[0])
            appended.add(id(stmt.value.func.value))
            inner = [stmt.value.args[0]]
        elif isinstance(stmt, (gast.If, gast.While, gast.Return, gast.Expr)):
            inner = [stmt.test if not isinstance(stmt, (gast.Return, gast.Expr)) else stmt.value]
        elif isinstance(stmt, gast.For):
            for name in _stores(stmt.target):
                bindings.setdefault(name, []).append(_LOOP)
            inner = [stmt.iter]
        else:  # anything else binds what it stores to values of no known type
            inner = [stmt]
        for node in inner:  # a walrus, a comprehension's variable, a with's target
            for name in _stores(node):
                bindings.setdefault(name, []).append(None)
    params = set(params)
    # a tape: bound once, to an empty list, then read and set only by its slots
    tapes = {n for n, values in bindings.items() if n not in params and len(values) == 1
             and values[0] is not None and values[0] is not _LOOP and _empty_list(values[0])
             and not _other_uses(body, n, appended)}
    counters = {n for n, values in bindings.items() if n not in params
                and all(v is _LOOP for v in values)}
    counters = {n for n in counters if _range_loops(body, n, bindings)}
    candidates = {n for n, values in bindings.items() if n not in tapes and n not in params
                  and all(v is not None and v is not _LOOP for v in values)}
    candidates |= set(floats)
    whole = {n for n in ints if n not in bindings}  # Python ints all along
    while True:
        known_tapes = {t for t in tapes
                       if all(_kind(v, candidates, set(), bindings, counters, whole) == "float"
                              for v in stored.get(t, ()))}
        dropped = {n for n in candidates
                   if not all(_kind(v, candidates, known_tapes, bindings, counters, whole)
                              == "float" for v in bindings.get(n, ()))}
        if not dropped:
            return candidates
        candidates -= dropped


#: What a for loop binds its target to (an item of what it runs over).
_LOOP = object()


def _statements(body) -> list:
    """Every statement in ``body``, at any depth (a loop's, a branch's, a
    ``with``'s or ``try``'s body), in order."""
    return [node for stmt in body for node in statements_in(stmt)]


def _stores(node) -> list[str]:
    return [n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]


def _range_loops(body, counter, bindings) -> bool:
    """Whether every loop binding ``counter`` runs over ``range(...)``,
    ``reversed(range(...))`` or a name bound once to one of them: an int."""
    def is_range(node):
        if isinstance(node, gast.Name):
            values = bindings.get(node.id, ())
            return len(values) == 1 and values[0] is not None and values[0] is not _LOOP \
                and is_range(values[0])
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and len(node.args) == 1 and node.func.id == "reversed":
            return is_range(node.args[0])
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id == "range" and not node.keywords
    return all(is_range(s.iter) for s in _statements(body)
               if isinstance(s, gast.For) and counter in _stores(s.target)
               and isinstance(s.target, gast.Name))


def _kind(node, names, tapes, bindings, counters=frozenset(), ints=frozenset()):
    """'float', 'int' (an int constant or parameter ``ints``) or None for ``node``."""
    if isinstance(node, gast.Constant):
        if type(node.value) is float:
            return "float"
        return "int" if type(node.value) is int else None
    if isinstance(node, gast.Name):
        return "float" if node.id in names else "int" if node.id in ints else None
    if isinstance(node, gast.BinOp):
        left = _kind(node.left, names, tapes, bindings, counters, ints)
        right = _kind(node.right, names, tapes, bindings, counters, ints)
        if isinstance(node.op, _ARITHMETIC):
            return "float" if {left, right} <= {"float", "int"} and "float" in (left, right) \
                else None
        if isinstance(node.op, gast.Pow) and left == "float" and right == "int":
            return "float"
        return None
    if isinstance(node, gast.Compare):  # a bool, where both sides are numbers
        sides = [node.left, *node.comparators]
        return "int" if all(_kind(n, names, tapes, bindings, counters, ints) in ("float", "int")
                            for n in sides) else None
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return "float" if _kind(node.operand, names, tapes, bindings, counters, ints) == "float" \
            else None
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
            and node.value.id in tapes and isinstance(node.slice, gast.Name) \
            and node.slice.id in counters:
        return "float"  # a slot of a tape of floats, read by a loop's int counter
    if isinstance(node, gast.Call) and not node.keywords and node.args \
            and not any(isinstance(a, gast.Starred) for a in node.args):
        args = [_kind(a, names, tapes, bindings, counters, ints) for a in node.args]
        if not set(args) <= {"float", "int"}:
            return None
        if _math_function(node.func, bindings):
            return "float"
        if isinstance(node.func, gast.Name) and node.func.id == "grad_seed" \
                and args == ["float"]:
            return "float"
    return None


def _math_function(func, bindings) -> bool:
    """``math.sin``, or a name bound once, to ``math.sin``."""
    if isinstance(func, gast.Name):
        values = bindings.get(func.id, ()) if bindings else ()
        return len(values) == 1 and values[0] is not None and _math_function(values[0], None)
    return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
        and func.value.id == "math" and func.attr in FLOAT_MATH


def _is_float(node, known) -> bool:
    if isinstance(node, gast.Constant):
        return type(node.value) is float
    return isinstance(node, gast.Name) and node.id in known


def _is_grad_like(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "grad_like" and len(node.args) == 2 and not node.keywords


def _pairs(g, x):
    """The (cotangent, argument) pairs of ``grad_like(g, x)``, or None."""
    if isinstance(g, gast.Tuple) and isinstance(x, gast.Tuple):
        return list(zip(g.elts, x.elts)) if len(g.elts) == len(x.elts) else None
    if isinstance(g, (gast.Tuple, gast.List)) or not isinstance(x, gast.Name):
        return None
    return [(g, x)]


def _empty_list(node) -> bool:
    """``[]`` or ``[None] * n``: a tape before its slots are set."""
    if isinstance(node, gast.List) and not node.elts:
        return True
    return isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult) \
        and isinstance(node.left, gast.List) and len(node.left.elts) == 1 \
        and isinstance(node.left.elts[0], gast.Constant) and node.left.elts[0].value is None


def _append(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
        and node.func.attr == "append" and isinstance(node.func.value, gast.Name) \
        and len(node.args) == 1 and not node.keywords


def _other_uses(body, tape, appended) -> bool:
    """Whether ``tape`` is read anywhere but as ``tape[k]``, ``tape[k] = v`` or
    the statement ``tape.append(v)`` (``appended``: the ids of those reads):
    passed to a call, aliased, returned, its elements could be set elsewhere."""
    for stmt in body:
        parents = {}
        for node in walk(stmt):
            for child in gast.iter_child_nodes(node):
                parents[id(child)] = node
        for node in walk(stmt):
            if isinstance(node, gast.Name) and node.id == tape \
                    and isinstance(node.ctx, gast.Load) and id(node) not in appended:
                parent = parents.get(id(node))
                if not (isinstance(parent, gast.Subscript) and parent.value is node):
                    return True
    return False


def _replace(tree, old, new) -> None:
    for node in walk(tree):
        for field, value in gast.iter_fields(node):
            if value is old:
                setattr(node, field, new)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
