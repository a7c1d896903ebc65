"""Inlining adjoint rules into generated code.

A rule is a small Python function (see :mod:`.rules.registry`).  To use it at
a call site the inliner takes the rule's body, renames its parameters to the
call's operands and its locals to fresh names, folds every ``if`` whose test is
now a constant (``axis is None``, ``isinstance(b, int) and b == 2``) and
simplifies the result (``x ** 1`` -> ``x``, trailing default arguments of
runtime helpers dropped).  What is left is the code a person would have written
at that spot.

    >>> import gast, operator
    >>> from .naming import Namer
    >>> from .rules import lookup
    >>> from . import ir
    >>> rule = lookup(operator.pow)
    >>> op = ir.Op(operator.pow, [ir.name("h"), gast.Constant(value=2, kind=None)], {}, None, "**")
    >>> done = inline(rule, op, ir.name("t4"), ir.name("d_t4"), Namer())
    >>> [(var, show(expr)) for var, expr in done.contributions]
    [('h', 'd_t4 * (2 * h)')]
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import gast

from . import ir, runtime
from .errors import SrcGradError
from .naming import Namer
from .rules.registry import Rule
from .broadcast import DropExpand, DropUnbroadcast
from .syntax import clone, source_of, walk

#: Pure functions a static test may call.
_STATIC_NAMES = {name: getattr(builtins, name) for name in (
    "isinstance", "int", "float", "bool", "tuple", "list", "len", "type", "complex", "str",
    "abs", "min", "max", "range", "all", "any")}
_STATIC_NAMES.update({"None": None, "True": True, "False": False,
                      "is_basic_index": getattr(runtime, "is_basic_index", None)})


@dataclass
class Inlined:
    """The code that computes a rule's cotangents at one call site.

    ``statements`` come first; then each ``(variable, expression)`` in
    ``contributions`` is a cotangent contribution to ``variable``.
    """

    statements: list = field(default_factory=list)
    contributions: list = field(default_factory=list)


def show(node) -> str:
    """Source of a gast node (see syntax.source_of)."""
    return source_of(node)


def _tree_of(rule) -> gast.FunctionDef:
    """The rule's body to inline: its own source, or for a user's rule (called
    by name, never inlined) a one-line body that calls it."""
    if rule.called is None:
        return _rule_tree(rule.fn)
    return _called_tree(rule.called, tuple(inspect.signature(rule.fn).parameters.values()))


@lru_cache(maxsize=None)
def _called_tree(name, params) -> gast.FunctionDef:
    args = [f"*{p.name}" if p.kind is p.VAR_POSITIONAL else p.name for p in params
            if p.kind is not p.VAR_KEYWORD]
    source = f"def rule({', '.join(args)}):\n    return {name}({', '.join(args)})\n"
    return gast.parse(source).body[0]


@lru_cache(maxsize=None)
def _rule_tree(fn) -> gast.FunctionDef:
    source = textwrap.dedent(inspect.getsource(fn))
    func = gast.parse(source).body[0]
    body = func.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]
    func.body = body
    return func


def constant(value):
    """A gast literal for a Python value, or None if it has none."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return gast.Constant(value=value, kind=None)
    if isinstance(value, tuple):
        elts = [constant(v) for v in value]
        if all(e is not None for e in elts):
            return gast.Tuple(elts=elts, ctx=gast.Load())
    return None


def inline(rule: Rule, op: ir.Op, out, d_out, namer: Namer, *, wanted=lambda name: True,
           shape_class=None, filename: str | None = None) -> Inlined:
    """Inline ``rule`` for ``op`` whose output is ``out`` with cotangent ``d_out``.

    ``wanted(name)`` says whether a variable needs a cotangent; contributions to
    other operands are not generated.  ``shape_class(name)`` (see
    :func:`.analyze.shape_classes`) lets ``unbroadcast`` go where shapes match.
    """
    bound = _bind(rule, op, filename)
    mapping = {"out": out, "d_out": d_out}
    result, slots = _expand_rule(rule, op, bound, mapping, namer,
                                 ("unbroadcast", DropUnbroadcast(op, shape_class)))
    for pname, slot in zip(rule.wrt, slots):
        _contribute(mapping[pname], slot, namer, result, wanted)
    return result


def _expand_rule(rule, op, bound, mapping, namer, drop):
    """The rule's body at this call site: parameters bound (``mapping`` gets the
    operands), locals renamed, the ``drop`` pass run if the rule calls its helper,
    static tests folded.  Returns the statements so far and one expression per
    differentiable parameter."""
    func = _tree_of(rule)
    for pname, value in bound.items():
        mapping[pname] = _SliceToCall().visit(clone(value))
    local_names = _assigned(func.body) - set(mapping)
    renames = {n: namer.fresh(n) for n in sorted(local_names)}
    body = [_copy_substituted(s, mapping, renames) for s in func.body]
    helper, transformer = drop
    if _calls(func, helper):
        body = [transformer.visit(s) for s in body]
    body = fold(body)
    result = Inlined()
    value, prelude = _lower_returns(body, len(rule.wrt), namer)
    result.statements.extend(prelude)
    return result, _split(value, len(rule.wrt), namer, result.statements)


def inline_tangent(rule, op: ir.Op, out, tangent, namer: Namer, *, shape_class=None,
                   filename: str | None = None) -> Inlined:
    """Inline the tangent rule ``rule`` (see :class:`.rules.registry.TangentRule`)
    for ``op`` whose output is ``out``.

    ``tangent(operand)`` gives the tangent expression of an operand (a name or
    a display of names), or None when it carries none; the terms of those
    operands are not generated.  The result's ``contributions`` are
    ``(parameter, term)`` pairs, one per operand that carries a tangent.
    ``expand(term, out)`` is dropped where the operation cannot broadcast.
    """
    bound = _bind(rule, op, filename)
    mapping = {"out": out}
    moving = {}
    for pname in rule.wrt:
        t = tangent(bound[pname])
        moving[pname] = t
        mapping[f"d_{pname}"] = t if t is not None else gast.Constant(value=0.0, kind=None)
    result, slots = _expand_rule(rule, op, bound, mapping, namer,
                                 ("expand", DropExpand(op, shape_class)))
    for pname, slot in zip(rule.wrt, slots):
        if moving[pname] is not None:
            result.contributions.append((pname, slot))
    return result


def _bind(rule: Rule, op: ir.Op, filename) -> dict:
    try:
        bound = rule.bind(op.args, op.kwargs)
    except TypeError as exc:
        supported = ", ".join(rule.params)
        raise SrcGradError(f"srcgrad's rule for {rule.name} cannot take these arguments "
                           f"({exc}); it supports ({supported})", filename=filename,
                           lineno=getattr(op.node, "lineno", None),
                           col=getattr(op.node, "col_offset", None)) from None
    values = {}
    for pname, param in rule.signature.parameters.items():
        if pname in bound.arguments:
            value = bound.arguments[pname]
            if param.kind is param.VAR_POSITIONAL:
                value = gast.Tuple(elts=list(value), ctx=gast.Load())
            elif param.kind is param.VAR_KEYWORD:
                raise SrcGradError(f"srcgrad's rule for {rule.name} does not take the "
                                   f"keyword arguments {sorted(value)}", filename=filename,
                                   lineno=getattr(op.node, "lineno", None),
                                   col=getattr(op.node, "col_offset", None))
            values[pname] = value
        elif param.kind is param.VAR_POSITIONAL:
            values[pname] = gast.Tuple(elts=[], ctx=gast.Load())
        elif param.kind is param.VAR_KEYWORD:
            continue
        else:
            literal = constant(param.default)
            if literal is None:  # pragma: no cover - rule defaults are literals
                raise SrcGradError(f"rule for {rule.name}: default of {pname!r} is not a literal")
            values[pname] = literal
    return values


def _assigned(stmts) -> set[str]:
    names = set()
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                names.add(node.id)
    return names


class _Substitute(gast.NodeTransformer):
    def __init__(self, mapping, renames):
        self.mapping = mapping
        self.renames = renames

    def visit_Name(self, node):
        if node.id in self.renames:
            return gast.Name(id=self.renames[node.id], ctx=node.ctx, annotation=None,
                             type_comment=None)
        if node.id in self.mapping and isinstance(node.ctx, gast.Load):
            return clone(self.mapping[node.id])
        return node


@lru_cache(maxsize=None)
def _calls_cached(func, helper) -> bool:
    return any(isinstance(n, gast.Name) and n.id == helper for n in walk(func))


def _calls(func, helper) -> bool:
    """Whether a rule's tree mentions ``helper`` (else a pass for it is skipped)."""
    return _calls_cached(func, helper)


def _copy_substituted(node, mapping, renames):
    """A copy of ``node`` (as :func:`.syntax.clone`) with parameters replaced by
    copies of their operands and locals renamed: one traversal, where cloning
    and then substituting took two."""
    if type(node) is list:
        return [_copy_substituted(n, mapping, renames) for n in node]
    if not isinstance(node, gast.AST):
        return node
    if type(node) is gast.Name:
        if node.id in renames:
            return gast.Name(id=renames[node.id], ctx=node.ctx, annotation=None,
                             type_comment=None)
        if node.id in mapping and isinstance(node.ctx, gast.Load):
            return clone(mapping[node.id])
    new = type(node)(**{f: _copy_substituted(getattr(node, f, None), mapping, renames)
                        for f in node._fields})
    for key, value in node.__dict__.items():
        if key not in node._fields:
            new.__dict__[key] = value
    return new


class _SliceToCall(gast.NodeTransformer):
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
        return gast.Call(func=ir.name("slice"), args=args, keywords=[])


def _call_to_slice(node):
    """The inverse of :class:`_SliceToCall`, for an index back inside brackets."""
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
        node.elts = [_call_to_slice(e) for e in node.elts]
    return node


# -- partial evaluation ----------------------------------------------------------

def static_eval(node):
    """``(True, value)`` when ``node`` evaluates to a constant, else ``(False, None)``."""
    for sub in walk(node):
        if isinstance(sub, gast.Name) and sub.id not in _STATIC_NAMES:
            return False, None
        if isinstance(sub, (gast.Attribute, gast.Lambda, gast.NamedExpr)):
            return False, None
    try:
        tree = ast.Expression(body=gast.gast_to_ast(node))
        ast.fix_missing_locations(tree)
        with warnings.catch_warnings():  # `1 is None` is a fine static test here
            warnings.simplefilter("ignore", SyntaxWarning)
            code = compile(tree, "<srcgrad static test>", "eval")
        return True, eval(code, {"__builtins__": {}}, dict(_STATIC_NAMES))  # noqa: S307
    except Exception:  # noqa: BLE001 - a test that cannot be decided statically
        return False, None


def fold(stmts) -> list:
    """Fold static ``if`` tests and simplify expressions in ``stmts``."""
    out = []
    for stmt in stmts:
        stmt = _Simplify().visit(stmt)
        if isinstance(stmt, gast.If):
            known, value = static_eval(stmt.test)
            if known:
                out.extend(fold(stmt.body if value else stmt.orelse))
                if any(isinstance(s, gast.Return) for s in out):
                    break
                continue
            stmt.body = fold(stmt.body)
            stmt.orelse = fold(stmt.orelse)
        out.append(stmt)
        if isinstance(stmt, gast.Return):
            break
    return out


def _is_const(node, value) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (int, float) \
        and node.value == value


class _Simplify(gast.NodeTransformer):
    """Local algebra on inlined expressions: constants, identities, tuple indexing."""

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
        node.slice = _call_to_slice(node.slice)
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
        return self.visit(_Substitute({target: item}, {}).visit(clone(expr)))

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


# -- returns and results --------------------------------------------------------

def _lower_returns(body, n_slots, namer):
    """Turn a body with (possibly nested) returns into ``(result, statements)``."""
    if body and isinstance(body[-1], gast.Return) and not any(
            isinstance(n, gast.Return) for s in body[:-1] for n in gast.walk(s)):
        return body[-1].value, body[:-1]
    results = [namer.fresh("g") for _ in range(n_slots)]

    def rewrite(stmts):
        out = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.Return):
                out.extend(_assign_results(results, stmt.value))
                return out
            if isinstance(stmt, gast.If) and any(isinstance(n, gast.Return)
                                                 for n in gast.walk(stmt)):
                rest = stmts[i + 1:]
                stmt.body = rewrite(stmt.body + rest)
                stmt.orelse = rewrite(stmt.orelse + rest)
                out.append(stmt)
                return out
            out.append(stmt)
        raise SrcGradError("an adjoint rule has a path that does not return")

    statements = rewrite(body)
    value = ir.name(results[0]) if n_slots == 1 else gast.Tuple(
        elts=[ir.name(r) for r in results], ctx=gast.Load())
    return value, statements


def _assign_results(results, value):
    if len(results) == 1:
        return [ir.assign(results[0], value)]
    if isinstance(value, gast.Tuple) and len(value.elts) == len(results):
        return [ir.assign(r, v) for r, v in zip(results, value.elts)]
    target = gast.Tuple(elts=[ir.name(r, store=True) for r in results], ctx=gast.Store())
    return [ir.assign(target, value)]


def _split(value, n, namer, statements):
    """``n`` expressions for the ``n`` parts of ``value``."""
    if n == 1:
        return [value]
    if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == n:
        return list(value.elts)
    names = [namer.fresh("g") for _ in range(n)]
    statements.append(ir.assign(gast.Tuple(elts=[ir.name(x, store=True) for x in names],
                                           ctx=gast.Store()), value))
    return [ir.name(x) for x in names]


def _contribute(operand, expr, namer, result: Inlined, wanted) -> None:
    """Record ``expr`` as the cotangent of ``operand`` (a name, constant or display)."""
    if isinstance(operand, gast.Name):
        if wanted(operand.id):
            result.contributions.append((operand.id, expr))
        return
    if not isinstance(operand, (gast.Tuple, gast.List)):
        return  # constants and static names have no cotangent
    if not any(wanted(n) for n in ir.names_in(operand)):
        return
    if isinstance(expr, (gast.Tuple, gast.List)) and len(expr.elts) == len(operand.elts):
        parts = list(expr.elts)
    else:
        names = [namer.fresh("g") if ir.names_in(e) else "_" for e in operand.elts]
        result.statements.append(ir.assign(
            gast.Tuple(elts=[ir.name(x, store=True) for x in names], ctx=gast.Store()), expr))
        parts = [ir.name(x) for x in names]
    for elt, part in zip(operand.elts, parts):
        _contribute(elt, part, namer, result, wanted)
