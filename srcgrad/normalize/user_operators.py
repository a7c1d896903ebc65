"""Operators of a user's class: ``a + b`` as the call of its ``__add__``.

srcgrad differentiates ``+ - * / @ **`` and unary ``-`` with NumPy's rules.
A user's class may define its own (a 2-vector dataclass whose ``__add__``
weighs the second operand, a named tuple subclass multiplying fields, a
matrix-free operator whose ``__matmul__`` applies a stencil): NumPy's rule
for ``+`` then differentiates other arithmetic than the one that runs --
silently wrong gradients and tangents, or raw errors from a rule that
transposes the operator object.

Where the class of an operand is known when compiling -- an argument of the
function (``param_classes``), ``self``, a local bound to the class's call
(``a = V2(x, y)``, a dataclass or named tuple built here), an object at module
level (``P = Poly(c)``, read by a free name) -- and that class
defines the operator's method in Python, the operation is rewritten into
the call of that method, which srcgrad follows through its source like any
other method of a known class::

    c = a + b      ->  c = a.__add__(b)        (a's class defines __add__)
    y = 2.0 * v    ->  y = v.__rmul__(2.0)     (v's class defines __rmul__,
                                                2.0's class no __mul__ of the user's)
    u = L @ u      ->  u = L.__matmul__(u)     (L an argument, a LinearOperator)

Sound as Python's own dispatch is: the left operand's method first; the right
operand's reflected method where the left operand's class has none of the
user's (a number, an array of no user's class).  An array on the left of an
object whose class defines only the reflected method would make NumPy build
an array of objects, element by element -- no differentiable program, and not
what such code means.

    >>> import gast
    >>> from .._doctest_helpers import scale       # a function of a user's module
    >>> class V2:
    ...     __add__ = scale                          # def __add__(self, o) in the class
    >>> class Owner(UserOperators):                  # what the normaliser offers
    ...     param_classes = {"a": V2}
    ...     def class_of(self, node):
    ...         return V2 if getattr(node, "id", None) == "a" else None
    ...     def named_tuple_class_of(self, node):
    ...         return None
    >>> call = Owner().user_operator(gast.parse("a + b").body[0].value)
    >>> call.func.value.id, call.func.attr, [a.id for a in call.args]
    ('a', '__add__', ['b'])
"""

from __future__ import annotations

import ast
import inspect
import operator
import textwrap
import types

import gast

from .. import ir
from ..frontend.linker import is_user_function
from ..frontend.parse import MISSING
from ..ir.syntax import clone, walk
from .method_receivers import user_method_names

#: The methods an operator calls: its own and the reflected one.
_BINARY = {
    gast.Add: ("__add__", "__radd__"), gast.Sub: ("__sub__", "__rsub__"),
    gast.Mult: ("__mul__", "__rmul__"), gast.Div: ("__truediv__", "__rtruediv__"),
    gast.MatMult: ("__matmul__", "__rmatmul__"), gast.Pow: ("__pow__", "__rpow__"),
    gast.FloorDiv: ("__floordiv__", "__rfloordiv__"), gast.Mod: ("__mod__", "__rmod__"),
}
_UNARY = {gast.USub: "__neg__", gast.UAdd: "__pos__"}
_OPERATOR_NAMES = frozenset({m for pair in _BINARY.values() for m in pair} | set(_UNARY.values())
                           | {"__getitem__"})


class UserOperators:
    """The rewrite of a user class's operators (mixed into the normaliser)."""

    def defined_operators(self) -> frozenset:
        """The operator methods the user's classes this function can meet define
        in Python -- those of its module and the user's modules it imports
        (:func:`.method_receivers.user_method_names`), of its arguments and
        ``self`` -- looked up once per function."""
        if "_defined_operators" not in self.__dict__:
            parsed = getattr(self, "parsed", None)
            module = dict(getattr(getattr(parsed, "fn", None), "__globals__", None) or {})
            known = [*getattr(self, "param_classes", {}).values(),
                     getattr(self, "receiver_type", None)]
            module.update({f"_{i}": k for i, k in enumerate(known) if isinstance(k, type)})
            self._defined_operators = user_method_names(module).intersection(_OPERATOR_NAMES)
        return self._defined_operators

    def operand_class(self, node):
        """The class of ``node`` where it is known when compiling and is a
        user's (:meth:`class_of`, :meth:`named_tuple_class_of`); else None."""
        if isinstance(node, (gast.BinOp, gast.UnaryOp)):  # 0.5 * (c - a)
            return self.operator_result_class(node)
        if isinstance(node, gast.Attribute):  # tables.P
            return self.module_object_class(node)
        if not isinstance(node, (gast.Name, gast.Call)):
            return None
        cls = self.class_of(node) if isinstance(node, gast.Name) else None
        return cls or self.named_tuple_class_of(node) or self.module_object_class(node)

    def module_object_class(self, node):
        """The class of the object a free name (``P``, ``tables.P``: a global,
        not a local or parameter) holds when srcgrad compiles, or None.  An
        object at module level (a polynomial ``P = Poly(c)``, an interpolation
        table) is as known as an argument is: its method is followed as
        ``P.at(t)`` is, where ``P[t]`` read as an array's indexing gave a zero
        derivative in ``t`` (review s36 R4-11)."""
        callee = getattr(self, "callee", None)
        if callee is None or not isinstance(node, (gast.Name, gast.Attribute)):
            return None
        value = callee(gast.Call(func=node, args=[], keywords=[]))
        if value is MISSING or isinstance(value, (type, types.ModuleType)):
            return None
        return type(value)

    def user_operator(self, node):
        """``a.__add__(b)`` for ``a + b`` (``node``) where the class of ``a`` is
        known and defines ``__add__`` in Python, ``b.__radd__(a)`` where that
        of ``b`` defines ``__radd__`` and that of ``a`` no ``__add__`` of the
        user's, ``v.__neg__()`` for ``-v``; None for any other operation."""
        if isinstance(node, gast.Subscript):
            return self.user_subscript(node)
        if not self.defined_operators().intersection(
                _BINARY.get(type(getattr(node, "op", None)), ())
                + (_UNARY.get(type(getattr(node, "op", None))),)):
            return None  # no class that can reach here defines it (most code: quick)
        if isinstance(node, gast.UnaryOp):
            method = _UNARY.get(type(node.op))
            if method is None or not _defines(self.operand_class(node.operand), method):
                return None
            return _located(_call(node.operand, method, []), node)
        if not isinstance(node, gast.BinOp) or type(node.op) not in _BINARY:
            return None
        own, reflected = _BINARY[type(node.op)]
        if _defines(self.operand_class(node.left), own):
            return _located(_call(node.left, own, [node.right]), node)
        if _defines(self.operand_class(node.right), reflected):
            return _located(_call(node.right, reflected, [node.left]), node)
        return None

    def user_subscript(self, node):
        """``u.__getitem__(t)`` for ``u[t]`` read, where the class of ``u`` is
        known and defines ``__getitem__`` in Python (an interpolated signal
        ``u[t]`` of a float ``t``, a parameter store ``s["W"]``): differentiated
        through that method, not as an array's indexing, whose index carries
        no derivative (review s35 R3-13: a zero gradient for ``t``; R3-37: the
        object's gradient shaped as an array's).  A slice (``u[1:3]``) is left
        to indexing.  None for any other subscript."""
        if "__getitem__" not in self.defined_operators() \
                or not isinstance(node.ctx, gast.Load) \
                or any(isinstance(n, gast.Slice) for n in walk(node.slice)) \
                or not _defines(self.operand_class(node.value), "__getitem__"):
            return None
        return _located(_call(node.value, "__getitem__", [node.slice]), node)

    def held_subscript(self, node):
        """``v[t]`` read where the class of ``v`` is not known when compiling but
        the function reads or was passed lists, dicts or objects holding user
        objects whose class defines ``__getitem__`` in Python (``SIGS[1][t]``,
        ``sigs[0][t]``: tables, interpolants): by ``v``'s class as the code
        runs -- ``Sig_class.__getitem__(v, t)``, differentiated through its
        source, for an object of such a class, and indexing for anything else
        (an array, a list) -- not indexing alone, whose index carries no
        derivative (review s36 D-9: a zero gradient, silently).  ``(atom, op)``,
        or None for any other subscript."""
        if not isinstance(node, gast.Subscript) or not isinstance(node.ctx, gast.Load) \
                or getattr(node, "plain_index", False) \
                or any(isinstance(n, gast.Slice) for n in walk(node.slice)):
            return None
        classes = [c for c in getattr(self, "dispatch_classes", ()) if _defines(c, "__getitem__")]
        if not classes or self.operand_class(node.value) is not None:
            return None
        held = self.local_atom(node.value)
        index = node.slice if isinstance(node.slice, gast.Tuple) else self.local_atom(node.slice)
        fallback = gast.copy_location(gast.Subscript(value=clone(held), slice=clone(index),
                                                     ctx=gast.Load()), node)
        fallback.plain_index = True
        call = _located(_call(held, "__getitem__", [index]), node)
        result = self.dispatched(call, call.func, classes, fallback=fallback)
        return result, ir.Op(operator.pos, [result], {}, node, "[]")

    def operator_result_class(self, node):
        """The class of what ``node`` (``a + b``) gives where it is the call of a
        user's method (:meth:`user_operator`) of a class known here whose every
        ``return`` builds an object of that class (``return V2(...)``,
        ``return type(self)(...)``): ``c = a + b; c.dot(c)`` then calls V2's
        ``dot``; None otherwise."""
        asking = self.__dict__.setdefault("_operators_asked", set())
        if not isinstance(node, (gast.BinOp, gast.UnaryOp)) or id(node) in asking:
            return None  # (c = c + a: c's class is asked about while it is found)
        asking.add(id(node))
        try:
            made = self.user_operator(node)
            cls = None if made is None else self.operand_class(made.func.value)
        finally:
            asking.discard(id(node))
        if cls is None:
            return None
        method = inspect.getattr_static(cls, made.func.attr, None)
        return cls if _returns_own_class(getattr(method, "__func__", method), cls) else None


def _returns_own_class(fn, cls) -> bool:
    """Whether each ``return`` of the function ``fn`` is a call of ``cls`` (by
    its name in ``fn``'s globals, ``type(self)`` or ``self.__class__``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    if not returns or any(isinstance(n, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef))
                          for n in ast.walk(tree.body[0]) if n is not tree.body[0]):
        return False
    for ret in returns:
        made = ret.value.func if isinstance(ret.value, ast.Call) else None
        if isinstance(made, ast.Name) and fn.__globals__.get(made.id) is cls:
            continue
        if isinstance(made, ast.Call) and isinstance(made.func, ast.Name) \
                and made.func.id == "type" and len(made.args) == 1:
            continue  # type(self)(...)
        if isinstance(made, ast.Attribute) and made.attr == "__class__":
            continue  # self.__class__(...)
        return False
    return True


def _defines(cls, method) -> bool:
    """Whether ``cls`` (a class or None) defines ``method`` as a user's function."""
    if cls is None:
        return False
    found = inspect.getattr_static(cls, method, None)
    return is_user_function(getattr(found, "__func__", found))


def _call(receiver, method, args):
    func = gast.Attribute(value=clone(receiver), attr=method, ctx=gast.Load())
    return gast.Call(func=func, args=[clone(a) for a in args], keywords=[])


def _located(made, node):
    for sub in walk(made):
        if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
            gast.copy_location(sub, node)
    return made
