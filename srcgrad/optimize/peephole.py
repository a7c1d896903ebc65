"""Peephole simplification of inlined rule bodies: partial evaluation.

A rule is written once, for every call site (see :mod:`..ad.inline`); once
its parameters are replaced by a call site's operands, much of it is decided:
``axis is None`` is ``None is None``, ``isinstance(b, int) and b == 2`` is
``isinstance(2, int) and 2 == 2``.  :func:`partially_evaluate` keeps the branch
such a test takes and simplifies what is left (``x ** 1`` -> ``x``, ``(g,
h)[0]`` -> ``g``, runtime helpers without their default arguments), so the
code at the call site is what a person would have written there.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> body = gast.parse(
    ...     "if None is None:\\n"
    ...     "    g = d_out * x ** 1 + 0\\n"
    ...     "else:\\n"
    ...     "    g = np.expand_dims(d_out, None)\\n"
    ...     "return (g, 2 * 3)[0]").body
    >>> print(show_statements(body))
    if None is None:
        g = d_out * x ** 1 + 0
    else:
        g = np.expand_dims(d_out, None)
    return (g, 2 * 3)[0]
    >>> print(show_statements(partially_evaluate(body)))
    g = d_out * x
    return g

Sound when a test or expression is evaluated only if it reads nothing but
constants and the pure builtins of :data:`STATIC_NAMES` (no attribute, no
lambda, no name of the program): its value is then the one the rule would
compute at run time.  The identities are exact in IEEE arithmetic up to the
sign of a zero (``-0.0 + 0`` is ``0.0``).  The pass knows nothing of adjoints
or tangents; :mod:`..ad.inline` runs it on every rule body it expands.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import warnings

import gast

from .. import runtime
from ..ir.syntax import call_to_slice, clone_substituted, constant, walk

#: Pure functions a static test may call.
STATIC_NAMES = {name: getattr(builtins, name) for name in (
    "isinstance", "int", "float", "bool", "tuple", "list", "len", "type", "complex", "str",
    "abs", "min", "max", "range", "all", "any")}
STATIC_NAMES.update({"None": None, "True": True, "False": False,
                     "is_basic_index": getattr(runtime, "is_basic_index", None)})


def static_eval(node):
    """``(True, value)`` when ``node`` evaluates to a constant, else ``(False, None)``."""
    for sub in walk(node):
        if isinstance(sub, (gast.Attribute, gast.Lambda, gast.NamedExpr)) \
                or (isinstance(sub, gast.Name) and sub.id not in STATIC_NAMES):
            return False, None
    try:
        tree = ast.Expression(body=gast.gast_to_ast(node))
        ast.fix_missing_locations(tree)
        with warnings.catch_warnings():  # `1 is None` is a fine static test here
            warnings.simplefilter("ignore", SyntaxWarning)
            code = compile(tree, "<srcgrad static test>", "eval")
        return True, eval(code, {"__builtins__": {}}, dict(STATIC_NAMES))  # noqa: S307
    except Exception:  # noqa: BLE001 - a test that cannot be decided statically
        return False, None


def partially_evaluate(stmts) -> list:
    """``stmts`` with each ``if`` whose test is static replaced by the branch it
    takes, each expression simplified (:class:`_Peephole`), and nothing after
    a ``return``."""
    out = []
    for stmt in stmts:
        stmt = _Peephole().visit(stmt)
        if isinstance(stmt, gast.If):
            known, value = static_eval(stmt.test)
            if known:
                out.extend(partially_evaluate(stmt.body if value else stmt.orelse))
                if any(isinstance(s, gast.Return) for s in out):
                    break
                continue
            stmt.body = partially_evaluate(stmt.body)
            stmt.orelse = partially_evaluate(stmt.orelse)
        out.append(stmt)
        if isinstance(stmt, gast.Return):
            break
    return out


def _is_const(node, value) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (int, float) \
        and node.value == value


class _Peephole(gast.NodeTransformer):
    """Local algebra on one expression tree: constant subexpressions evaluated,
    identities (``x ** 1``, ``x + 0``, ``1 * x``) dropped, a display indexed by
    a constant replaced by the element, a comprehension over a static range
    unrolled, a runtime helper's trailing default arguments dropped."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        if isinstance(left, gast.Constant) and isinstance(right, gast.Constant):
            known, value = static_eval(node)
            if known and constant(value) is not None:
                return constant(value)
        if isinstance(node.op, gast.Pow) and _is_const(right, 1):
            return left
        if isinstance(node.op, (gast.Add, gast.Sub)) and _is_const(right, 0) \
                and not isinstance(left, gast.Constant):
            return left
        if isinstance(node.op, gast.Mult):
            if _is_const(right, 1) and not isinstance(left, gast.Constant):
                return left
            if _is_const(left, 1) and not isinstance(right, gast.Constant):
                return right
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp) \
                and isinstance(node.operand.op, gast.USub):
            return node.operand.operand
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant) \
                and type(node.operand.value) in (int, float):
            return gast.Constant(value=-node.operand.value, kind=None)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        node.slice = call_to_slice(node.slice)
        if isinstance(node.value, gast.Tuple) and isinstance(node.slice, gast.Constant) \
                and isinstance(node.slice.value, int):
            elts = node.value.elts
            if -len(elts) <= node.slice.value < len(elts):
                return elts[node.slice.value]
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        known, value = static_eval(node.test)
        if known:
            return node.body if value else node.orelse
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        known, value = static_eval(node)
        return constant(value) if known and constant(value) is not None else node

    def visit_Compare(self, node):
        self.generic_visit(node)
        known, value = static_eval(node)
        return constant(value) if known and constant(value) is not None else node

    def visit_ListComp(self, node):
        """``[f(i) for i in range(2)]`` -> ``[f(0), f(1)]`` when the range is static."""
        self.generic_visit(node)
        items = self._static_items(node)
        if items is None:
            return node
        elts = [self._at(node.elt, node, item) for item in items]
        return gast.List(elts=elts, ctx=gast.Load())

    def visit_DictComp(self, node):
        """``{k[i]: v[i] for i in range(2)}`` -> ``{k[0]: v[0], k[1]: v[1]}``, likewise."""
        self.generic_visit(node)
        items = self._static_items(node)
        if items is None:
            return node
        return gast.Dict(keys=[self._at(node.key, node, item) for item in items],
                         values=[self._at(node.value, node, item) for item in items])

    def _static_items(self, node):
        """The items a one-generator comprehension runs over, if known statically."""
        if len(node.generators) != 1 or node.generators[0].ifs:
            return None
        gen = node.generators[0]
        if not isinstance(gen.target, gast.Name):
            return None
        if isinstance(gen.iter, (gast.Tuple, gast.List)):
            return list(gen.iter.elts)
        known, value = static_eval(gen.iter)
        if not known or not isinstance(value, range):
            return None
        return [gast.Constant(value=v, kind=None) for v in value]

    def _at(self, expr, node, item):
        target = node.generators[0].target.id
        return self.visit(clone_substituted(expr, {target: item}, {}))

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id == "len" and len(node.args) == 1 \
                and isinstance(node.args[0], (gast.Tuple, gast.List)):
            return gast.Constant(value=len(node.args[0].elts), kind=None)
        if isinstance(node.func, gast.Name) and node.func.id == "range" and all(
                isinstance(a, gast.Constant) for a in node.args):
            return node
        if isinstance(node.func, gast.Name) and node.func.id in runtime.__all__:
            _drop_default_arguments(node, getattr(runtime, node.func.id))
        return node


def _drop_default_arguments(call, helper) -> None:
    """Remove trailing positional and keyword arguments equal to the defaults."""
    try:
        params = list(inspect.signature(helper).parameters.values())
    except (TypeError, ValueError):  # a class such as ListCotangent
        return

    def is_default(param, arg):
        return param.default is not inspect.Parameter.empty and isinstance(arg, gast.Constant) \
            and type(arg.value) is type(param.default) and arg.value == param.default

    while call.args and len(call.args) <= len(params) \
            and is_default(params[len(call.args) - 1], call.args[-1]):
        call.args.pop()
    by_name = {p.name: p for p in params}
    call.keywords = [kw for kw in call.keywords
                     if not (kw.arg in by_name and is_default(by_name[kw.arg], kw.value))]
