"""A ``NodeTransformer`` whose generic visit skips the leaves no pass rewrites.

``ast.NodeTransformer.generic_visit`` visits every field of every node: an
expression's context (``Load``, ``Store``) and its operator (``Add``,
``USub``, ``Eq``) too -- nearly a third of a tree's nodes, each a dispatch, a
``getattr`` and a generator of its (no) fields.  No transformer of srcgrad's
has a ``visit_Load`` or ``visit_Add``: they read ``node.ctx`` and ``node.op``
from the node that holds them.  :class:`Transformer` does what the standard
one does, in the same order, and leaves those fields alone; it visits the
rest from the node's ``__dict__`` (a missing field is skipped, as
``ast.iter_fields`` skips it).  The transformers that walk a whole function
(the desugarer, the sign carrier) took twice as long the standard way.

A transformer that does define a visit method for a context or an operator
gets the standard generic visit, every field included:

    >>> import gast
    >>> from srcgrad.ir.syntax import source_of
    >>> class Negate(Transformer):
    ...     def visit_Name(self, node):
    ...         return gast.UnaryOp(op=gast.USub(), operand=node)
    >>> tree = gast.parse("y = a * b").body[0]
    >>> print(source_of(Negate().visit(tree.value)))
    -a * -b
    >>> class Stores(Transformer):
    ...     def visit_Store(self, node):
    ...         return gast.Load()
    >>> Stores().leaves_visited
    True
"""

from __future__ import annotations

import ast

import gast

#: The fields that hold a context or an operator node (never anything else).
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
#: The node classes those fields hold.
_LEAF_KINDS = (gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)
_FIELDS: dict = {}


def _fields(kind) -> tuple:
    _FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
    return _FIELDS[kind]


def _visits_leaves(cls) -> bool:
    return any(hasattr(cls, "visit_" + kind.__name__)
               for base in _LEAF_KINDS for kind in [base, *_subclasses(base)])


def _subclasses(kind) -> list:
    found, todo = [], list(kind.__subclasses__())
    while todo:
        sub = todo.pop()
        found.append(sub)
        todo.extend(sub.__subclasses__())
    return found


class Transformer(gast.NodeTransformer):
    """``gast.NodeTransformer`` without the visits of contexts and operators."""

    leaves_visited = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.leaves_visited = _visits_leaves(cls)

    def generic_visit(self, node):
        if self.leaves_visited:
            return super().generic_visit(node)
        kind = type(node)
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _fields(kind)
        values = node.__dict__
        node_type = ast.AST
        for field in fields:
            if field not in values:
                continue
            old = values[field]
            if type(old) is list:
                new_values = []
                for value in old:
                    if isinstance(value, node_type):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, node_type):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old[:] = new_values
            elif isinstance(old, node_type):
                new = self.visit(old)
                if new is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new)
        return node


__all__ = ["Transformer"]
