"""Small builders and walkers of gast trees shared by the normalisation passes."""

from __future__ import annotations

import ast
import contextlib

import gast

from .. import runtime
from .transformer import Transformer


def is_dict_view(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
        and node.func.attr in ("items", "keys", "values") and not node.args \
        and not node.keywords


def is_append(call) -> bool:
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
        and call.func.attr == "append" and isinstance(call.func.value, gast.Name) \
        and len(call.args) == 1 and not call.keywords


def updated_in_place(tree) -> set[str]:
    """Names ``tree`` updates in place: ``x[i] = v``, ``x[i] += v``, ``x.append(v)``."""
    updated = set()
    for node in walk(tree):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            updated.add(node.value.id)
        elif is_append(node):
            updated.add(node.func.value.id)
    return updated


class Renamer(Transformer):
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


def call_to(name, *args):
    """``name(*args)``: a call of the builtin or runtime helper called ``name``,
    with positional arguments only (the passes' one way to build such a call)."""
    return gast.Call(func=load_name(name), args=list(args), keywords=[])


def load(name_node):
    return gast.Name(id=name_node.id, ctx=gast.Load(), annotation=None, type_comment=None)


def keywords_of(kwargs):
    return [gast.keyword(arg=k, value=v) for k, v in kwargs.items()]


def is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


def assigned_names(func) -> set[str]:
    names = set()
    for node in walk_nodes(func):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
    return names


#: A node type's fields that can hold nodes, for walk; by gast's declared field
#: types (``Name.id`` is a str), every field where it declares none.
_CHILD_FIELDS: dict = {}
_LEAF_TYPES = (str, int, str | None, int | None)


def _child_fields(kind) -> tuple:
    declared = getattr(kind, "_field_types", {})
    _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if declared.get(f) not in _LEAF_TYPES)
    return _CHILD_FIELDS[kind]


def child_nodes(node) -> list:
    """The children of ``node`` as a list: what ``gast.iter_child_nodes`` gives,
    read from ``__dict__`` (every field: an except clause's ``name`` is a node
    in gast, though declared a str)."""
    out = []
    values = node.__dict__
    for name in node._fields:
        value = values.get(name)
        if value is None:
            continue
        if type(value) is list:
            out.extend(v for v in value if isinstance(v, gast.AST))
        elif isinstance(value, gast.AST):
            out.append(value)
    return out


def loaded_names(node) -> list[str]:
    """The names ``node`` loads (a Name not stored to), in order of first
    appearance in :func:`walk`'s order: its loop with the names picked up as it
    goes, one list, not two (the passes ask this of nearly every statement)."""
    seen = {}
    name, store, ast_type = gast.Name, gast.Store, gast.AST
    todo = [node]
    append, children = todo.append, _NODE_FIELDS  # (contexts and operators hold no name)
    for sub in todo:
        kind = type(sub)
        if kind is name and not isinstance(sub.ctx, store):
            seen[sub.id] = None
        fields = children.get(kind)
        if fields is None:
            fields = _node_fields(kind)
        values = sub.__dict__
        for f in fields:
            value = values.get(f)
            if value is None:
                continue
            if type(value) is list:
                for v in value:
                    if isinstance(v, ast_type):
                        append(v)
            elif isinstance(value, ast_type):
                append(value)
    return list(seen)


#: The trees an :func:`unchanged` block holds still: id -> (tree, its walk).
_UNCHANGED: dict = {}


@contextlib.contextmanager
def unchanged(tree):
    """Within the block, :func:`walk` of ``tree`` itself returns a copy of the
    list made on entry: for a run of analyses that each walk the whole function
    and change none of it (the checks before normalisation walked a long
    function a dozen times).  The block must not change ``tree``."""
    key = id(tree)
    if key in _UNCHANGED:  # (nested: the outer block's list holds)
        yield
        return
    _UNCHANGED[key] = (tree, walk(tree))
    try:
        yield
    finally:
        del _UNCHANGED[key]


def walk(node) -> list:
    """Every node of a gast tree, breadth first -- the order of ``gast.walk``, as a
    list built without generators (the passes walk trees often, so this skips
    the fields that hold only strings and reads the rest from ``__dict__``)."""
    if _UNCHANGED:
        held = _UNCHANGED.get(id(node))
        if held is not None and held[0] is node:
            return list(held[1])
    return _breadth_first(node, _CHILD_FIELDS, _child_fields)


def _breadth_first(node, children: dict, fields_of) -> list:
    """The nodes under ``node``, breadth first, through the fields ``children``
    lists for each node type (``fields_of(kind)`` fills in a type not seen yet)."""
    todo = [node]
    ast_type = gast.AST
    append = todo.append
    for current in todo:
        kind = type(current)
        fields = children.get(kind)
        if fields is None:
            fields = fields_of(kind)
        if fields:
            values = current.__dict__
            for name in fields:
                value = values.get(name)
                if value is None:  # an absent child (most optional fields)
                    continue
                if type(value) is list:
                    for v in value:
                        if isinstance(v, ast_type):
                            append(v)
                elif isinstance(value, ast_type):
                    append(value)
    return todo


#: The fields that hold only a leaf no pass looks for through a walk: an expression's
#: context (``Load``, ``Store``) and an operator (``Add``, ``USub``, ``Eq``, ``And``).
#: Nearly a third of a tree's nodes; :func:`walk_nodes` leaves them out.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
_NODE_FIELDS: dict = {}


def _node_fields(kind) -> tuple:
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _child_fields(kind)
    _NODE_FIELDS[kind] = tuple(f for f in fields if f not in _LEAF_FIELDS)
    return _NODE_FIELDS[kind]


def walk_nodes(node) -> list:
    """:func:`walk` without the contexts and operators, the rest in its order:
    for the passes that look for names, calls, subscripts or statements (most
    of them), which then skip a third of the nodes and never ask of them.
    A pass that reads a context does so through its node (``name.ctx``).

        >>> tree = gast.parse("a = -b * c").body[0]
        >>> [type(n).__name__ for n in walk(tree)]
        ['Assign', 'Name', 'BinOp', 'Store', 'UnaryOp', 'Mult', 'Name', 'USub', 'Name', 'Load', 'Load']
        >>> [type(n).__name__ for n in walk_nodes(tree)]
        ['Assign', 'Name', 'BinOp', 'UnaryOp', 'Name', 'Name']
    """
    return _breadth_first(node, _NODE_FIELDS, _node_fields)


#: The statements that hold statements (a body, a handler's); any other one, simple,
#: holds expressions alone, so :func:`statements_in` of it is itself.
_COMPOUND_STATEMENTS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.For,
                        gast.AsyncFor, gast.While, gast.If, gast.With, gast.AsyncWith,
                        gast.Try, *((gast.Match,) if hasattr(gast, "Match") else ()),
                        *((gast.TryStar,) if hasattr(gast, "TryStar") else ()))


def statements_in(stmt) -> list:
    """The statements of :func:`walk` of ``stmt``, in its order, without walking a
    simple statement's expressions (the late passes ask it of every statement of
    a long sweep, where nearly all are simple assignments).

        >>> loop = gast.parse("for i in r:\\n    a = i\\n    if a:\\n        b = a").body[0]
        >>> [type(s).__name__ for s in statements_in(loop)]
        ['For', 'Assign', 'If', 'Assign']
    """
    if not isinstance(stmt, _COMPOUND_STATEMENTS):
        return [stmt]
    return [node for node in walk(stmt) if isinstance(node, gast.stmt)]


def clone(node):
    """A deep copy of a gast tree that shares, not copies, the objects the passes
    attach to nodes (a resolved helper, a bound array): only the syntax is new."""
    if isinstance(node, list):
        return [clone(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    # the fields (a missing one None), then the rest, straight into the new
    # node's __dict__: what the constructor with keywords would do, less its call
    kind, values = type(node), node.__dict__
    new = kind.__new__(kind)
    copied = new.__dict__
    for f in kind._fields:
        copied[f] = clone(values[f]) if f in values else None
    for key, value in values.items():
        if key not in copied:
            copied[key] = value
    return new


def constant(value):
    """A gast literal for a Python value, or None if it has none."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return gast.Constant(value=value, kind=None)
    if isinstance(value, tuple):
        elts = [constant(v) for v in value]
        if all(e is not None for e in elts):
            return gast.Tuple(elts=elts, ctx=gast.Load())
    return None


def clone_substituted(node, mapping, renames):
    """A copy of ``node`` (as :func:`clone`) with each name loaded from ``mapping``
    replaced by a copy of its value and each name in ``renames`` renamed: one
    traversal, where cloning and then substituting took two."""
    if type(node) is list:
        return [clone_substituted(n, mapping, renames) for n in node]
    if not isinstance(node, gast.AST):
        return node
    if type(node) is gast.Name:
        if node.id in renames:
            return gast.Name(id=renames[node.id], ctx=node.ctx, annotation=None,
                             type_comment=None)
        if node.id in mapping and isinstance(node.ctx, gast.Load):
            return clone(mapping[node.id])
    new = type(node)(**{f: clone_substituted(getattr(node, f, None), mapping, renames)
                        for f in node._fields})
    for key, value in node.__dict__.items():
        if key not in node._fields:
            new.__dict__[key] = value
    return new


class SliceToCall(Transformer):
    """``x[1:n]``'s index as a value: ``slice(1, n)`` (a Slice node is only valid
    inside brackets)."""

    def visit_Slice(self, node):
        parts = [node.lower, node.upper, node.step]
        while len(parts) > 2 and parts[-1] is None:
            parts.pop()
        if parts == [None, None]:
            parts = [None]
        args = [gast.Constant(value=None, kind=None) if p is None else self.visit(p)
                for p in parts]
        return gast.Call(func=load_name("slice"), args=args, keywords=[])


def call_to_slice(node):
    """The inverse of :class:`SliceToCall`, for an index back inside brackets."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id == "slice" and not node.keywords and 1 <= len(node.args) <= 3:
        args = list(node.args)
        if len(args) == 1:
            args = [None, args[0], None]
        args += [None] * (3 - len(args))
        lower, upper, step = (None if isinstance(a, gast.Constant) and a.value is None else a
                              for a in args)
        return gast.Slice(lower=lower, upper=upper, step=step)
    if isinstance(node, gast.Tuple):
        node.elts = [call_to_slice(e) for e in node.elts]
    return node


def source_of(node) -> str:
    """Python source of a gast node.  A negative literal is written as a negation,
    so that it keeps its meaning where precedence matters: ``(-1.5) ** 2``.

    The passes write some thousand comments and emission some three thousand
    statements per 1000-line function; gast's general converter (then
    ``fix_missing_locations`` and a pass for negative literals) took longer
    than ``ast.unparse`` itself.  The node kinds of generated code have fields
    gast and ``ast`` share, which a direct copy converts; anything else goes
    the general way, to the same text."""
    try:
        return _statement(node) if isinstance(node, gast.stmt) else _expression(node, _TEST)
    except _Unusual:
        pass
    try:
        return ast.unparse(_to_ast(node))
    except _Unusual:
        tree = ast.fix_missing_locations(gast.gast_to_ast(node))
        return ast.unparse(SignedConstants().visit(tree))


class SignedConstants(ast.NodeTransformer):
    """Negative literals as negations, on the standard-library tree (converted
    afresh from the gast one, so nothing needs copying first)."""

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                value < 0 or (isinstance(value, float) and str(value).startswith("-"))):
            return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-value))
        return node


class _Unusual(Exception):
    """A node kind the direct copy leaves to gast's converter."""


def _shared_kinds() -> dict:
    """gast node classes with an ``ast`` twin of the very same fields."""
    kinds = {}
    for name in dir(gast):
        kind, twin = getattr(gast, name), getattr(ast, name, None)
        if isinstance(kind, type) and issubclass(kind, gast.AST) and isinstance(twin, type) \
                and issubclass(twin, ast.AST) and kind._fields == twin._fields:
            kinds[kind] = twin
    return kinds


_TWINS = _shared_kinds()
_CONTEXTS = {gast.Load: ast.Load, gast.Store: ast.Store, gast.Del: ast.Del}
_SIGNED = SignedConstants()


def _to_ast(node):
    kind = type(node)
    if kind is list:
        return [_to_ast(n) for n in node]
    if kind is gast.Name:
        return ast.Name(id=node.id, ctx=_CONTEXTS[type(node.ctx)]())
    if kind is gast.Constant:
        return _SIGNED.visit_Constant(ast.Constant(value=node.value, kind=node.kind))
    twin = _TWINS.get(kind)
    if twin is None:
        if isinstance(node, gast.AST):
            raise _Unusual(kind.__name__)
        return node
    new = twin(**{f: _to_ast(getattr(node, f, None)) for f in kind._fields})
    if isinstance(new, ast.stmt):
        new.lineno = 1  # read by unparse (type comments are looked up by line)
    return new


# -- the common node kinds written directly --------------------------------------------
#
# ``ast.unparse`` (its precedence and delimiters kept in context managers, a
# dispatch per node) was a tenth of the compile time: the statements and
# expressions generated code is made of are written here to the very text it
# writes (Python 3.11's rules: the same precedences, parentheses, spacing and
# literals, negative literals as negations as :class:`SignedConstants` makes
# them), and anything else is left to it.

_P = ast._Precedence
_TEST, _TUPLE, _YIELD, _CMP, _EXPR, _FACTOR, _ATOM = (
    int(_P.TEST), int(_P.TUPLE), int(_P.YIELD), int(_P.CMP), int(_P.EXPR), int(_P.FACTOR),
    int(_P.ATOM))
_UNPARSER = ast._Unparser
_BINOPS = {getattr(gast, name): (symbol, int(_UNPARSER.binop_precedence[symbol]),
                                 symbol in _UNPARSER.binop_rassoc)
           for name, symbol in _UNPARSER.binop.items()}
_UNOPS = {getattr(gast, name): (symbol, int(_UNPARSER.unop_precedence[symbol]))
          for name, symbol in _UNPARSER.unop.items()}
_CMPOPS = {getattr(gast, name): symbol for name, symbol in _UNPARSER.cmpops.items()}
_INFINITY = ast._INFSTR


def _negative(value) -> bool:
    """Whether :class:`SignedConstants` writes the literal ``value`` as a negation."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and (
        value < 0 or (isinstance(value, float) and str(value).startswith("-")))


def _literal(value, kind) -> str:
    if isinstance(value, tuple):
        raise _Unusual("tuple constant")
    if value is ...:
        return "..."
    prefix = "u" if kind == "u" else ""
    if isinstance(value, (float, complex)):
        return prefix + repr(value).replace("inf", _INFINITY).replace(
            "nan", f"({_INFINITY}-{_INFINITY})")
    return prefix + repr(value)


def _items(elts) -> str:
    if len(elts) == 1:
        return _expression(elts[0], _TEST) + ","
    return ", ".join([_expression(e, _TEST) for e in elts])


def _expression(node, precedence: int) -> str:
    """``node``'s text where the context binds as tightly as ``precedence``."""
    kind = type(node)
    if kind is gast.Name:
        return node.id
    if kind is gast.Constant:
        value = node.value
        if _negative(value):
            text = "-" + _literal(-value, None)
            return f"({text})" if precedence > _FACTOR else text
        return _literal(value, getattr(node, "kind", None))
    if kind is gast.Attribute:
        value = node.value
        space = " " if type(value) is gast.Constant and isinstance(value.value, int) \
            and not _negative(value.value) else ""
        return f"{_expression(value, _ATOM)}{space}.{node.attr}"
    if kind is gast.Call:
        parts = [_expression(a, _TEST) for a in node.args]
        for k in node.keywords:
            name = getattr(k, "arg", None)
            parts.append(("**" if name is None else name + "=") + _expression(k.value, _TEST))
        return f"{_expression(node.func, _ATOM)}({', '.join(parts)})"
    if kind is gast.BinOp:
        symbol, own, right_first = _BINOPS[type(node.op)]
        left, right = (own + 1, own) if right_first else (own, own + 1)
        text = f"{_expression(node.left, left)} {symbol} {_expression(node.right, right)}"
        return f"({text})" if precedence > own else text
    if kind is gast.UnaryOp:
        symbol, own = _UNOPS[type(node.op)]
        text = symbol + ("" if own == _FACTOR else " ") + _expression(node.operand, own)
        return f"({text})" if precedence > own else text
    if kind is gast.Subscript:
        index = node.slice
        inside = _items(index.elts) if type(index) is gast.Tuple and index.elts \
            else _expression(index, _TEST)
        return f"{_expression(node.value, _ATOM)}[{inside}]"
    if kind is gast.Slice:
        lower, upper, step = (getattr(node, f, None) for f in ("lower", "upper", "step"))
        text = (_expression(lower, _TEST) if lower is not None else "") + ":"
        if upper is not None:
            text += _expression(upper, _TEST)
        if step is not None:
            text += ":" + _expression(step, _TEST)
        return text
    if kind is gast.Tuple:
        text = _items(node.elts)
        return f"({text})" if not node.elts or precedence > _TUPLE else text
    if kind is gast.List:
        return "[" + ", ".join([_expression(e, _TEST) for e in node.elts]) + "]"
    if kind is gast.Compare:
        text = _expression(node.left, _CMP + 1)
        for op, right in zip(node.ops, node.comparators):
            text += f" {_CMPOPS[type(op)]} {_expression(right, _CMP + 1)}"
        return f"({text})" if precedence > _CMP else text
    if kind is gast.Starred:
        return "*" + _expression(node.value, _EXPR)
    raise _Unusual(kind.__name__)


def _statement(stmt) -> str:
    kind = type(stmt)
    if kind is gast.Assign:
        if getattr(stmt, "type_comment", None) is not None:
            raise _Unusual("type comment")
        targets = "".join([_expression(t, _TUPLE) + " = " for t in stmt.targets])
        return targets + _expression(stmt.value, _TEST)
    if kind is gast.Expr:
        return _expression(stmt.value, _YIELD)
    if kind is gast.Return:
        value = getattr(stmt, "value", None)
        return "return" if value is None else "return " + _expression(value, _TEST)
    if kind is gast.AugAssign:
        return f"{_expression(stmt.target, _TEST)} {_BINOPS[type(stmt.op)][0]}= " \
            f"{_expression(stmt.value, _TEST)}"
    if kind is gast.Delete:
        return "del " + ", ".join([_expression(t, _TEST) for t in stmt.targets])
    if kind is gast.Pass:
        return "pass"
    raise _Unusual(kind.__name__)
