"""Calls of NumPy's callable objects: ``P(x)`` of a ``np.poly1d``, a ufunc
(or a join: ``np.concatenate``, ``np.stack``) called with ``dtype=``.

A ``np.poly1d`` evaluates its polynomial when called: its ``__call__`` is
``np.polyval(self.coeffs, x)``, library code whose source srcgrad does not
follow, and the object itself is no primitive a rule can be registered for
(each polynomial is an object of its own, and not even hashable: its class
defines ``__eq__`` alone, which made the compiler raise a raw TypeError, review
s36 R4-14).  The call is written as what it runs, differentiated by
``np.polyval``'s rule, its value the same bits::

    P(x)  ->  np.polyval(P.coeffs, x)     (P a np.poly1d srcgrad sees when it compiles)

    >>> import gast, numpy as np
    >>> class Owner(NumpyCallables):
    ...     def static_reference(self, value):
    ...         return gast.Attribute(value=gast.Name(id="np", ctx=gast.Load(),
    ...             annotation=None, type_comment=None), attr=value.__name__, ctx=gast.Load())
    >>> node = gast.parse("P(x + 1.0)").body[0].value
    >>> print(gast.unparse(Owner().polynomial_call(node, np.poly1d([1.0, -2.0]))))
    np.polyval(P.coeffs, x + 1.0)

A ufunc called with ``dtype=D`` computes in ``D``: it casts each operand to
``D`` (under its ``casting`` rule, ``'same_kind'`` by default) and runs its
loop for ``D``.  The rules take the operands alone, so the casts are written
out, each differentiated by ``astype``'s rule (a cotangent cast back to its
operand's dtype) and the ufunc by its own, the value the same bits (review
s36 R4-13)::

    np.add(x, 1.5, dtype=np.float32)
      ->  np.add(np.asarray(x).astype(np.float32, casting='same_kind'),
                 np.asarray(1.5).astype(np.float32, casting='same_kind'))

    >>> node = gast.parse("np.multiply(x, 2.0, dtype=np.float32)").body[0].value
    >>> print(gast.unparse(Owner().typed_ufunc_call(node, np.multiply)))
    np.multiply(np.asarray(x).astype(np.float32, casting='same_kind'), np.asarray(2.0).astype(np.float32, casting='same_kind'))

So is a join with ``dtype=`` (NumPy 1.24) of arrays written out in a list or
tuple: ``np.concatenate``, ``np.stack``, ``np.hstack``, ``np.vstack`` cast
each array to ``D`` and join them::

    >>> node = gast.parse("np.stack([x, y], axis=1, dtype=np.float32)").body[0].value
    >>> print(gast.unparse(Owner().typed_ufunc_call(node, np.stack)))
    np.stack([np.asarray(x).astype(np.float32, casting='same_kind'), np.asarray(y).astype(np.float32, casting='same_kind')], axis=1)
"""

from __future__ import annotations

import types

import gast
import numpy as np

from ..ir.syntax import clone
from ..rules import registry

#: Joins taking ``dtype=`` (NumPy 1.24): they cast each array to it first.
_JOINS = tuple(f for f in (np.concatenate, np.stack, np.hstack, np.vstack,
                           getattr(np, "concat", None)) if f is not None)


class NumpyCallables:
    """Mixed into the normaliser (module docstring)."""

    def polynomial_call(self, node, prim):
        """``np.polyval(P.coeffs, x)`` for ``P(x)`` (``node``) where ``prim``,
        what ``P`` holds, is a ``np.poly1d`` (or ``P.__call__(x)``, as the call of
        a polynomial passed as an argument reaches here); None for any other call."""
        polynomial = node.func
        if isinstance(prim, types.MethodType) and prim.__func__ is np.poly1d.__call__ \
                and isinstance(polynomial, gast.Attribute) and polynomial.attr == "__call__":
            prim, polynomial = prim.__self__, polynomial.value  # Q(x), Q passed: Q.__call__(x)
        if not isinstance(prim, np.poly1d) or len(node.args) != 1 or node.keywords \
                or isinstance(node.args[0], gast.Starred):
            return None
        coeffs = gast.Attribute(value=clone(polynomial), attr="coeffs", ctx=gast.Load())
        polyval = self.static_reference(np.polyval) or self.bound_value(np.polyval, node)
        made = gast.Call(func=polyval, args=[coeffs, node.args[0]], keywords=[])
        for sub in gast.walk(made):
            if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, node)
        return made

    def typed_ufunc_call(self, node, prim):
        """The call ``node`` of the ufunc ``prim`` with ``dtype=D`` (and perhaps
        ``casting=``) written with its operands cast to ``D`` (module docstring);
        None for any other call, and for a ufunc without a rule (its ``dtype=``
        may name its output's type alone: a comparison's)."""
        given = {k.arg: k.value for k in node.keywords}
        if "dtype" not in given or "out" in given:
            return None
        if any(prim is join for join in _JOINS):
            return self.typed_join_call(node, given)
        if not isinstance(prim, np.ufunc) or prim.nout != 1 or len(node.args) != prim.nin \
                or any(isinstance(a, gast.Starred) for a in node.args) \
                or registry.lookup(prim) is None or set(given) - {"dtype", "casting"}:
            return None
        return self.located(gast.Call(func=node.func, args=self.cast_to_dtype(
            node.args, given, node), keywords=[]), node)

    def typed_join_call(self, node, given):
        """A join's ``dtype=`` with its arrays written in a list or tuple; None
        for any other (an array or a list held in a name: left as it is)."""
        arrays = node.args[0] if node.args else given.get("arrays")
        if not isinstance(arrays, (gast.List, gast.Tuple)) \
                or any(isinstance(e, gast.Starred) for e in arrays.elts):
            return None
        cast = type(arrays)(elts=self.cast_to_dtype(arrays.elts, given, node), ctx=gast.Load())
        keywords = [k for k in node.keywords if k.arg not in ("dtype", "casting", "arrays")]
        return self.located(gast.Call(func=node.func, args=[cast, *node.args[1:]],
                                      keywords=keywords), node)

    def cast_to_dtype(self, operands, given, node) -> list:
        """``np.asarray(a).astype(D, casting=C)`` for each operand ``a``."""
        asarray = self.static_reference(np.asarray) or self.bound_value(np.asarray, node)
        casting = given.get("casting") or gast.Constant(value="same_kind", kind=None)
        return [gast.Call(func=gast.Attribute(
                    value=gast.Call(func=clone(asarray), args=[arg], keywords=[]),
                    attr="astype", ctx=gast.Load()),
                args=[clone(given["dtype"])],
                keywords=[gast.keyword(arg="casting", value=clone(casting))])
                for arg in operands]

    @staticmethod
    def located(made, node):
        """``made`` with the location of ``node`` on its new nodes."""
        for sub in gast.walk(made):
            if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, node)
        return made
