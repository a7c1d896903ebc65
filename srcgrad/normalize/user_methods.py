"""Calls of a user's own methods that share a name with a container's.

A Kalman filter's measurement step is called ``update``, an optimizer's step
too; a user's class may also define ``append``, ``pop``, ``fill`` or ``sort``.
The look for in-place updates (:mod:`.argument_updates`) takes ``xs.update(d)``,
``xs.append(v)`` for a dict's or a list's method, which changes its object.
Where the receiver is the method's own instance (``self``, its class known:
the normaliser's ``receiver_type``) and that class defines the method in
Python, the call is the user's method, differentiated through its source like
any other (``self.predict(m)``), not a container's update of ``self``.

    >>> import gast
    >>> from .._doctest_helpers import scale      # a function of a user's module
    >>> class KF:
    ...     update = scale                          # def update(self, ...) in the class
    >>> call = gast.parse("self.update(m)").body[0].value
    >>> class Owner:                      # what the normaliser offers
    ...     receiver_type, params = KF, ["self", "m"]
    ...     def callee(self, call):
    ...         return None
    >>> is_user_method(Owner().callee, call.func)
    True
    >>> is_user_method(Owner().callee, gast.parse("xs.update(m)").body[0].value.func)
    False
"""

from __future__ import annotations

import gast

from ..frontend.linker import is_user_function
from ..ir.syntax import is_append, walk


def receiver_class(resolve):
    """The class of the first parameter of the function whose calls ``resolve``
    resolves, where ``resolve`` is the normaliser's (its ``receiver_type``);
    None where that is not known."""
    owner = getattr(resolve, "__self__", None)
    return getattr(owner, "receiver_type", None)


def is_user_method(resolve, func) -> bool:
    """Whether ``func`` (the function of a call, ``self.update``) names a
    method a user's class defines in Python, called on the instance whose class
    is known (module docstring)."""
    if not isinstance(func, gast.Attribute) or not isinstance(func.value, gast.Name):
        return False
    cls = receiver_class(resolve)
    params = getattr(getattr(resolve, "__self__", None), "params", None)
    if cls is None or not params or func.value.id != params[0]:
        return False
    method = getattr(cls, func.attr, None)
    method = getattr(method, "__func__", method)  # a classmethod's function
    return is_user_function(method)


def own_updates(func, resolve) -> set[str]:
    """The names ``func`` updates in place by its own syntax
    (:func:`..ir.syntax.updated_in_place`: ``x[i] = v``, ``xs.append(v)``),
    leaving out ``self.append(v)`` where that is the user's method."""
    updated = set()
    for node in walk(func):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            updated.add(node.value.id)
        elif is_append(node) and not is_user_method(resolve, node.func):
            updated.add(node.func.value.id)
    return updated
