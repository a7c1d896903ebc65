"""Array methods called on a value that may be a user's object: checked as the code runs.

Normalisation gives ``m.dot(x)``, ``q.mean()``, ``s.copy()`` -- any method
``np.ndarray`` has -- the array method's rules where it cannot tell the class
of ``m`` (a helper's result ``m = make(W)``, an item of a list or dict
``layers["enc"]``, a choice ``Lin(W) if flag else Lin(-W)``, a helper's
parameter).  If ``m`` is an object of a user's class that defines a method of
that name (a layer's ``dot``, a distribution's ``mean``), Python runs the
user's method and the array's rule differentiates something else: a silently
zero gradient, or a raw TypeError from ``np.mean(q, axis=None, ...)``.

This pass puts a check before each such call whose receiver is not certainly
an array or a number (:func:`.attribute_reads.array_names`, the same fixed
point that types attribute reads), where a class of the function's module (or
of a user's module it imports) defines a method of that name -- no check in
code that no such class can reach -- and likewise before ``a + b`` where such
a class defines ``__add__`` or ``__radd__``::

    t1 = m.dot(x)
->
    array_method_call(m, 'dot', "'m.dot(...)': ...", ('model.py', 12, 11))
    t1 = m.dot(x)

:func:`~srcgrad.runtime.array_method_call` passes an array, a number, a list,
a dict, any object whose method of that name is not written in Python, and
raises :class:`~srcgrad.errors.UnsupportedSyntaxError` located at the call
for an object whose class defines it (its method is followed where srcgrad
knows the class when it compiles: an argument, ``m = Lin(W)``, ``self``).
Sound because the check only ever raises: the code that runs past it is the
code that ran before, for values on which the array rule is Python's.

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize
    >>> from .._doctest_helpers import scale      # a function of a user's module
    >>> class Lin:
    ...     dot = scale                             # def dot(self, h) in the class
    >>> def make(W):
    ...     return W
    >>> def f(W, x):
    ...     m = make(W)
    ...     return np.sum(m.dot(x)) + np.sum(W.dot(x))
    >>> program = normalize(parse_function(f))
    >>> check_method_receivers(program, entry=True, module={"Lin": Lin})
    >>> [s.value.args[0].id for s in program.body if isinstance(s, gast.Expr)]
    ['m']
"""

from __future__ import annotations

import ast
import operator
import types

import gast
import numpy as np

from .. import ir
from ..frontend.linker import is_library_module, is_user_function
from .attribute_reads import array_names, located_check


def check_method_receivers(program: ir.Program, objects=frozenset(), entry: bool = True,
                           module=None) -> None:
    """Put :func:`~srcgrad.runtime.array_method_call` before each array-method
    call of ``program`` whose receiver may be a user's object (module
    docstring), and before each operation ``a + b`` whose operand may be an
    object of a user's class (``a.__add__``, ``b.__radd__``: followed where
    the class is known, normalize/user_operators.py) -- each only where a class
    of ``module`` (:func:`user_method_names`) defines a method of that name.
    ``objects`` and ``entry`` as for :func:`.attribute_reads.type_attribute_reads`."""
    calls = [s for s in ir.walk_statements(program.body)
             if isinstance(s, gast.Assign) and getattr(s, "op", None) is not None
             and s.op.args and (_array_method(s) or _operator(s.op.primitive))]
    if not calls:
        return
    names = user_method_names(module)
    calls = [s for s in calls if _array_method(s) and _member(s) in names
             or _operator(s.op.primitive) and names.intersection(OPERATORS[s.op.primitive])]
    if not calls:
        return
    arrays = array_names(program, objects, entry)
    guards = []
    for stmt in calls:
        if _array_method(stmt):
            if isinstance(stmt.op.args[0], gast.Name) and stmt.op.args[0].id not in arrays:
                guards.append((stmt, _guard(program, stmt)))
            continue
        for operand, method in zip(stmt.op.args, OPERATORS[stmt.op.primitive]):
            if isinstance(operand, gast.Name) and operand.id not in arrays and method in names:
                guards.append((stmt, _operator_guard(program, stmt, operand.id, method)))
    for block in ir.statement_blocks(program.body):
        for stmt, guard in guards:
            for i, s in enumerate(block):
                if s is stmt:
                    block.insert(i, guard)
                    break


#: The methods an operator calls on its operands, in order.
def _operator(primitive) -> bool:
    """Whether ``primitive`` is one of :data:`OPERATORS` (a primitive may be
    unhashable: the ``mappingproxy`` an attribute read ``p.__dict__`` gives)."""
    try:
        return primitive in OPERATORS
    except TypeError:
        return False


OPERATORS = {
    operator.add: ("__add__", "__radd__"), operator.sub: ("__sub__", "__rsub__"),
    operator.mul: ("__mul__", "__rmul__"), operator.truediv: ("__truediv__", "__rtruediv__"),
    operator.matmul: ("__matmul__", "__rmatmul__"), operator.pow: ("__pow__", "__rpow__"),
    operator.neg: ("__neg__",),
}


def user_method_names(module) -> frozenset:
    """The names of the methods the user's classes in ``module`` (a function's
    globals, and the user's modules it holds, one level down) define in
    Python: only a call or operation of such a name can meet an object whose
    class has its own.  The classes of the objects it holds count too, and of
    those in a list, tuple or dict it holds (``from tables import TABLE``,
    ``HELD = [TABLE]``: review s36 R4-11, whose class is in no module here)."""
    found, classes = set(), []
    for value in list((module or {}).values()):
        if isinstance(value, type):
            classes.append(value)
        elif isinstance(value, types.ModuleType):
            if not is_library_module(getattr(value, "__name__", "") or ""):
                classes += [v for v in list(vars(value).values()) if isinstance(v, type)]
        else:
            items = value.values() if type(value) is dict \
                else value if type(value) in (list, tuple) else (value,)
            classes += [k for k in set(map(type, items))  # (a long list: its few types)
                        if not is_library_module(getattr(k, "__module__", "") or "")]
    for cls in classes:  # (a library's class holds no user function)
        for k in cls.__mro__[:-1]:
            for name, member in list(vars(k).items()):
                if is_user_function(getattr(member, "__func__", member)):
                    found.add(name)
    return frozenset(found)


def _operator_guard(program, stmt, base, method):
    """``array_method_call(base, method, message, where)`` before ``stmt``, an
    operation srcgrad differentiates with NumPy's rule."""
    node = stmt.op.node
    text = ast.unparse(gast.gast_to_ast(node)) if isinstance(node, gast.AST) else stmt.op.label
    operands = [getattr(node, "left", None), getattr(node, "right", None)] \
        if isinstance(node, gast.BinOp) else [getattr(node, "operand", None)]
    shown = next((ast.unparse(gast.gast_to_ast(o)) for o, a in zip(operands, stmt.op.args)
                  if isinstance(a, gast.Name) and a.id == base and isinstance(o, gast.AST)),
                 base)
    message = (f"'{text}': srcgrad differentiates '{stmt.op.label}' with NumPy's rule here, not "
               f"knowing the class of '{shown}' when it compiled this code (a helper's result "
               f"or parameter, an item of a list or dict, a name bound more than once), but it "
               f"is an object whose class defines its own {method}, which that rule would "
               f"differentiate wrongly; use the operator where srcgrad knows the object's "
               f"class -- on an argument of the function you differentiate, or on a name bound "
               f"once to the class's call or to such an operation (c = a + b) -- or call a "
               f"method of the class by its name")
    return located_check(program, stmt, "array_method_call", base, method, message)


def _array_method(stmt) -> bool:
    """Whether ``stmt`` calls a member of ``np.ndarray``: a method (``.dot``,
    ``.sum``), or data called as one (``m.real(x)``, a user's method named like
    the attribute, which :mod:`.attribute_reads` may have retargeted to
    :data:`ir.GETATTR`), not data read (``.T``)."""
    prim, value = stmt.op.primitive, stmt.value
    called = isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
        and callable(getattr(np.ndarray, value.func.attr, None)) is False
    return getattr(prim, "__objclass__", None) is np.ndarray \
        and (callable(prim) or called) or prim is ir.GETATTR and called


def _member(stmt) -> str:
    """The name of the member of ``np.ndarray`` that ``stmt`` calls."""
    func = getattr(stmt.value, "func", None)
    return func.attr if isinstance(func, gast.Attribute) else stmt.op.primitive.__name__


def _guard(program, stmt):
    """``array_method_call(base, name, message, where)`` before ``stmt``."""
    base = stmt.op.args[0].id
    node = stmt.op.node
    func = getattr(node, "func", None)
    name = func.attr if isinstance(func, gast.Attribute) else stmt.op.label.strip(".()")
    shown = ast.unparse(gast.gast_to_ast(func.value)) \
        if isinstance(func, gast.Attribute) else base
    if isinstance(func, gast.Attribute) and not isinstance(
            func.value, (gast.Name, gast.Attribute, gast.Subscript, gast.Call)):
        shown = f"({shown})"
    message = (f"'{shown}.{name}(...)': srcgrad took '.{name}' for the array method "
               f"np.ndarray.{name}, not knowing the class of '{shown}' when it compiled this "
               f"code (a helper's result or parameter, an item of a list or dict, a choice "
               f"between objects), but it is an object whose class defines its own {name}, "
               f"which the array's rule would differentiate wrongly; call the method where "
               f"srcgrad knows the object's class -- on an argument of the function you "
               f"differentiate, or on a name bound once in it to the class's call "
               f"(m = Lin(W)) -- or give the method a name no array method has")
    return located_check(program, stmt, "array_method_call", base, name, message)
