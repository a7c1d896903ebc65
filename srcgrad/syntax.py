"""Small builders and walkers of gast trees shared by the normalisation passes."""

from __future__ import annotations

import ast

import gast

from . import runtime


def is_dict_view(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
        and node.func.attr in ("items", "keys", "values") and not node.args \
        and not node.keywords


def is_append(call) -> bool:
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
        and call.func.attr == "append" and isinstance(call.func.value, gast.Name) \
        and len(call.args) == 1 and not call.keywords


class Renamer(gast.NodeTransformer):
    def __init__(self, renames):
        self.renames = renames

    def visit_Name(self, node):
        if node.id in self.renames:
            return gast.copy_location(gast.Name(id=self.renames[node.id], ctx=node.ctx,
                                                annotation=None, type_comment=None), node)
        return node


def located(tree, where):
    for node in walk(tree):
        if getattr(node, "lineno", None) is None and hasattr(node, "lineno"):
            gast.copy_location(node, where)
    return tree


def load_name(id_):
    return gast.Name(id=id_, ctx=gast.Load(), annotation=None, type_comment=None)


def helper_ref(id_):
    """A reference to a srcgrad.runtime helper, resolved without the user's globals."""
    node = load_name(id_)
    node.helper = getattr(runtime, id_)
    return node


def builtin_call(name, *args):
    return gast.Call(func=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
                     args=list(args), keywords=[])


def load(name_node):
    return gast.Name(id=name_node.id, ctx=gast.Load(), annotation=None, type_comment=None)


def keywords_of(kwargs):
    return [gast.keyword(arg=k, value=v) for k, v in kwargs.items()]


def is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


def assigned_names(func) -> set[str]:
    names = set()
    for node in walk(func):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
    return names


def walk(node) -> list:
    """Every node of a gast tree, breadth first -- the order of ``gast.walk``, as a
    list built without generators (the passes walk trees often)."""
    todo = [node]
    ast_type = gast.AST
    i = 0
    while i < len(todo):
        current = todo[i]
        i += 1
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, ast_type):
                todo.append(value)
            elif type(value) is list:
                todo.extend(v for v in value if isinstance(v, ast_type))
    return todo


def clone(node):
    """A deep copy of a gast tree that shares, not copies, the objects the passes
    attach to nodes (a resolved helper, a bound array): only the syntax is new."""
    if isinstance(node, list):
        return [clone(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = type(node)(**{f: clone(getattr(node, f, None)) for f in node._fields})
    for key, value in node.__dict__.items():
        if key not in node._fields:
            new.__dict__[key] = value
    return new


def source_of(node) -> str:
    """Python source of a gast node.  A negative literal is written as a negation,
    so that it keeps its meaning where precedence matters: ``(-1.5) ** 2``."""
    tree = ast.fix_missing_locations(gast.gast_to_ast(node))
    return ast.unparse(_SignedConstants().visit(tree))


class _SignedConstants(ast.NodeTransformer):
    """Negative literals as negations, on the standard-library tree (converted
    afresh from the gast one, so nothing needs copying first)."""

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                value < 0 or (isinstance(value, float) and str(value).startswith("-"))):
            return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-value))
        return node
