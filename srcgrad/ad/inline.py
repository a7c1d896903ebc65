"""Inlining adjoint rules into generated code.

A rule is a small Python function (see :mod:`..rules.registry`).  To use it at
a call site the inliner takes the rule's body, renames its parameters to the
call's operands and its locals to fresh names, and partially evaluates the
result (:mod:`..optimize.peephole`): every ``if`` whose test is now a constant
(``axis is None``, ``isinstance(b, int) and b == 2``) is replaced by its
branch, ``x ** 1`` becomes ``x``, trailing default arguments of runtime
helpers are dropped.  What is left is the code a person would have written at
that spot.

    >>> import gast, operator
    >>> from ..ir.naming import Namer
    >>> from ..rules import lookup
    >>> from .. import ir
    >>> rule = lookup(operator.pow)
    >>> op = ir.Op(operator.pow, [ir.name("h"), gast.Constant(value=2, kind=None)], {}, None, "**")
    >>> from ..ir.syntax import source_of
    >>> done = inline(rule, op, ir.name("t4"), ir.name("d_t4"), Namer())
    >>> [(var, source_of(expr)) for var, expr in done.contributions]
    [('h', 'd_t4 * (2 * h)')]
"""

from __future__ import annotations

import dataclasses
import inspect
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache

import gast
import numpy as np

from .. import ir, runtime
from ..analysis.activity import SCALAR, describe
from ..errors import MissingRuleError, SrcGradError, UnsupportedSyntaxError
from ..frontend.fence import dict_call, dict_pop_advice
from ..frontend.linker import is_library_module
from ..ir.naming import Namer
from ..ir.syntax import (
    SliceToCall,
    assigned_names,
    clone,
    clone_substituted,
    constant,
    source_of,
    walk,
)
from ..ir.transformer import Transformer
from ..optimize.broadcast import DropExpand, DropUnbroadcast
from ..optimize.peephole import STATIC_NAMES, partially_evaluate
from ..rules.registry import Rule
from .object_refusals import derivative_call_message, flat_message, made_by_a_classmethod


@dataclass
class Inlined:
    """The code that computes a rule's cotangents at one call site.

    ``statements`` come first; then each ``(variable, expression)`` in
    ``contributions`` is a cotangent contribution to ``variable``.
    """

    statements: list = field(default_factory=list)
    contributions: list = field(default_factory=list)


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
    func = gast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    if func.body and isinstance(func.body[0], gast.Expr) \
            and isinstance(func.body[0].value, gast.Constant):
        func.body = func.body[1:]
    return func


def inline(rule: Rule, op: ir.Op, out, d_out, namer: Namer, *, wanted=lambda name: True,
           shape_class=None, filename: str | None = None) -> Inlined:
    """Inline ``rule`` for ``op`` whose output is ``out`` with cotangent ``d_out``.

    ``wanted(name)`` says whether a variable needs a cotangent; contributions to
    other operands are not generated.  ``shape_class(name)`` (see
    :func:`..analysis.activity.shape_classes`) lets ``unbroadcast`` go where shapes match.

    A call without a rule gets here only when no value being differentiated
    reaches it (the adjoint sweep refuses the others first): its result is
    still given a cotangent when the code writes into it later
    (``d = dict.fromkeys(keys, 0.0); d['a'] = x[0]``), but nothing flows back.
    """
    if rule is None:
        return Inlined()
    bound = _bind(rule, op, filename)
    mapping = {"out": out, "d_out": d_out}
    result, slots = _expand(rule, op, bound, mapping, namer,
                            ("unbroadcast", DropUnbroadcast, shape_class))
    result.statements = _refusals(result.statements, rule, op, filename)
    for pname, slot in zip(rule.wrt, slots):
        _contribute(mapping[pname], slot, namer, result, wanted)
    return result


def _expand(rule, op, bound, mapping, namer, drop):
    """:func:`_expand_rule` through a memo: a rule is expanded once per
    :class:`_Pattern` of call site and copied with each site's names (the namer
    asked for the same names in the same order, so the code is the same byte
    for byte).  ``mapping`` gets the operands of the differentiable parameters."""
    helper, pass_, shape_class = drop
    try:
        pattern = _Pattern(op, mapping, shape_class)
        statements, slots, bases = _memo(rule, pattern, helper, pass_)
    except _Unpatterned:
        return _expand_rule(rule, op, bound, mapping, namer, (helper, pass_(op, shape_class)))
    fresh = {f"\x01{i}": namer.fresh(base) for i, base in enumerate(bases)}
    for pname in rule.wrt:
        mapping[pname] = SliceToCall().visit(clone(bound[pname]))
    return (Inlined(statements=_instantiate(statements, pattern.real, fresh)),
            _instantiate(slots, pattern.real, fresh))


def _memo(rule, pattern, helper, pass_):
    """The expansion of ``rule`` at ``pattern`` (see :meth:`_Pattern.expand`),
    remembered per rule object (kept alive by the memo, so its id is not reused;
    a rule registered anew is a new object)."""
    key = (id(rule), pattern.primitive, helper, pattern.key)
    found = _MEMO.get(key)
    if found is None:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        found = _MEMO[key] = (rule, pattern.expand(rule, helper, pass_))
    if found[1] is None:
        raise _Unpatterned
    return found[1]


def _expand_rule(rule, op, bound, mapping, namer, drop):
    """The rule's body at this call site: parameters bound (``mapping`` gets the
    operands), locals renamed, the ``drop`` pass run if the rule calls its helper,
    the result partially evaluated.  Returns the statements so far and one
    expression per differentiable parameter."""
    func = _tree_of(rule)
    for pname, value in bound.items():
        mapping[pname] = SliceToCall().visit(clone(value))
    local_names = assigned_names(func) - set(mapping)
    renames = {n: namer.fresh(n) for n in sorted(local_names)}
    body = [clone_substituted(s, mapping, renames) for s in func.body]
    helper, transformer = drop
    if _calls(func, helper):
        body = [transformer.visit(s) for s in body]
    body = partially_evaluate(body)
    result = Inlined()
    value, prelude = _lower_returns(body, len(rule.wrt), namer)
    result.statements.extend(prelude)
    return result, _split(value, len(rule.wrt), namer, result.statements)


#: (id(rule), primitive, helper, pattern key) -> (rule, expansion); cleared when full.
_MEMO: dict = {}
_MEMO_LIMIT = 4096
#: Names partial evaluation or the drop passes treat by name: an operand so named is
#: not replaced by a placeholder (such a call site is expanded afresh).
_SPECIAL = frozenset(STATIC_NAMES) | frozenset(runtime.__all__) | {"slice"}
_LITERALS = {bool, int, float, complex, str, bytes, type(None), type(...)}


class _Unpatterned(Exception):
    """A call site :class:`_Pattern` does not cover."""


class _Pattern:
    """A call site with each node of its operands, output and cotangent copied,
    names replaced by placeholders.

    Expanding a rule depends on the operands only through their structure,
    their constants, which of their names share a shape class (or are scalars)
    and, for ``expand``, which tangent nodes carry a ``primal``: ``key`` holds
    exactly that, so call sites with one key expand alike up to their names and
    the fresh names of the namer.  The copy of ``real[slot]`` has ``_slot`` set.
    """

    def __init__(self, op, mapping, shape_class):
        self.primitive = op.primitive
        self.shape_class = shape_class or (lambda name: name)
        self.key, self.real, self.tokens, self.classes, self.bases = [], [], {}, {}, []
        self.args = [self.canon(a) for a in op.args]
        self.kwargs = {k: self.canon(v) for k, v in op.kwargs.items()}
        self.mapping = {k: self.canon(v) for k, v in mapping.items()}
        self.key = (*self.key, tuple(op.kwargs), tuple(mapping))

    def token(self, name):
        """The placeholder of ``name``'s shape class (SCALAR stays itself)."""
        cls = self.shape_class(name)
        if cls == SCALAR:
            return SCALAR
        return self.classes.setdefault(cls, f"\x00class{len(self.classes)}")

    def canon(self, node):
        """A copy of ``node`` with placeholders, its part of ``key`` appended."""
        if type(node) is list:
            self.key.append(len(node))
            return [self.canon(n) for n in node]
        if not isinstance(node, gast.AST):
            self.key.append((type(node), node))
            return node
        slot, kind = len(self.real), type(node)
        self.real.append(node)
        if kind is gast.Name:
            if node.id in _SPECIAL or node.annotation is not None \
                    or node.type_comment is not None:
                raise _Unpatterned
            new = gast.Name(id=f"\x00{slot}", ctx=type(node.ctx)(), annotation=None,
                            type_comment=None)
            self.tokens[new.id] = self.token(node.id)
            self.key += (kind, self.tokens[new.id], type(node.ctx))
        elif kind is gast.Constant:
            if type(node.value) not in _LITERALS:  # its repr might not tell it apart
                raise _Unpatterned
            new = gast.Constant(value=node.value, kind=node.kind)
            self.key += (kind, type(node.value), repr(node.value), node.kind)
        else:
            self.key.append(kind)
            new = kind(**{f: self.canon(getattr(node, f, None)) for f in node._fields})
        new._slot = slot
        if "primal" in node.__dict__:  # a tangent's operand: DropExpand reads its class
            if type(node.primal) is not gast.Name:
                raise _Unpatterned
            new.primal = ir.name(self.token(node.primal.id))
            self.tokens[new.primal.id] = new.primal.id
            self.key += ("primal", new.primal.id)
        return new

    def fresh(self, base):
        """The namer of :meth:`expand`: a placeholder, noting the name asked for."""
        self.bases.append(base)
        return f"\x01{len(self.bases) - 1}"

    def expand(self, rule, helper, pass_):
        """``(statements, slots, bases)``: the rule expanded at this pattern and
        the names asked of the namer -- or None where the drop pass read the
        shape class of a name not of the call site (a local of the rule)."""
        asked = []

        def shape_class(name):
            if name not in self.tokens:
                asked.append(name)
            return self.tokens.get(name, name)

        op = ir.Op(self.primitive, self.args, self.kwargs, None, rule.name)
        result, slots = _expand_rule(rule, op, _bind(rule, op, None), dict(self.mapping),
                                     self, (helper, pass_(op, shape_class)))
        return None if asked else (result.statements, slots, self.bases)


def _instantiate(node, real, fresh):
    """A copy of a template's ``node``: a placeholder for a call site's name or
    constant becomes a copy of it, a node standing for another of the site's
    nodes gets that node's attributes, a fresh placeholder the name given."""
    if type(node) is list:
        return [_instantiate(n, real, fresh) for n in node]
    kind, extras = type(node), node.__dict__
    slot = extras.get("_slot")
    if slot is not None:
        if kind is gast.Name or kind is gast.Constant:
            return clone(real[slot])
        extras = real[slot].__dict__
    new = kind.__new__(kind)
    fields, values = kind._fields, new.__dict__
    for name in fields:
        value = node.__dict__.get(name)
        if type(value) is list:
            value = [_instantiate(v, real, fresh) if isinstance(v, gast.AST) else v
                     for v in value]
        elif isinstance(value, gast.AST):
            value = _instantiate(value, real, fresh)
        values[name] = value
    if kind is gast.Name and slot is None:
        values["id"] = fresh.get(values["id"], values["id"])
    for key, value in extras.items():
        if key not in fields and key != "_slot":
            values[key] = value
    return new


def inline_tangent(rule, op: ir.Op, out, tangent, namer: Namer, *, shape_class=None,
                   filename: str | None = None) -> Inlined:
    """Inline the tangent rule ``rule`` (see :class:`..rules.registry.TangentRule`)
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
        moving[pname] = t = tangent(bound[pname])
        mapping[f"d_{pname}"] = t if t is not None else gast.Constant(value=0.0, kind=None)
    result, slots = _expand(rule, op, bound, mapping, namer,
                            ("expand", DropExpand, shape_class))
    result.statements = _refusals(result.statements, rule, op, filename)
    for pname, slot in zip(rule.wrt, slots):
        if moving[pname] is not None:
            result.contributions.append((pname, slot))
    return result


def _refusals(statements, rule, op: ir.Op, filename):
    """A rule's ``assert False, message`` -- the arguments it has no
    derivative for (``np.pad``'s maximum mode) -- at this call site.  Where the
    arguments decide it here (partial evaluation left the assert unconditional),
    MissingRuleError, located at the call, as a call without a rule gets; where
    they decide it as the code runs (a mode held in a variable), a ``raise``
    of that error in place of the assert, which ``python -O`` would strip and
    so run a derivative the rule does not have.

        >>> import gast
        >>> from ..ir.emit import show_statements
        >>> body = gast.parse("if m != 'edge':\\n    assert False, 'no tangent'\\n"
        ...                   "d_t1 = np.pad(d_x, 2, m)").body
        >>> print(show_statements(_refusals(body, None, None, 'f.py')))
        if m != 'edge':
            raise error_at('MissingRuleError', 'no tangent')
        d_t1 = np.pad(d_x, 2, m)
    """
    if rule is not None and not _asserts(_tree_of(rule)):
        return statements  # (most rules: no walk of their expansion)
    for stmt in statements:
        if _refusal(stmt):
            raise MissingRuleError(f"{_message(stmt)}: srcgrad has no derivative of "
                                   f"{rule.name} for these arguments", filename=filename,
                                   lineno=getattr(op.node, "lineno", None),
                                   col=getattr(op.node, "col_offset", None))
    raised = _RaiseAsserts()
    return [s for s in map(raised.visit, statements) if s is not None]


@lru_cache(maxsize=None)
def _asserts(func) -> bool:
    """Whether a rule's tree has an ``assert``."""
    return any(isinstance(n, gast.Assert) for n in walk(func))


def _refusal(stmt) -> bool:
    return isinstance(stmt, gast.Assert) and isinstance(stmt.test, gast.Constant) \
        and stmt.test.value is False


def _message(stmt) -> str:
    msg = stmt.msg
    return msg.value if isinstance(msg, gast.Constant) and isinstance(msg.value, str) \
        else "srcgrad's rule has no derivative for these arguments"


class _RaiseAsserts(Transformer):
    """An ``assert`` left in the rule's code: ``raise error_at(...)`` (under
    ``if not test:`` where the test is not ``False``), gone where it is ``True``."""

    def visit_Assert(self, node):
        node.test = _folded(node.test)
        if isinstance(node.test, gast.Constant) and node.test.value is True:
            return None
        name = gast.Name(id="error_at", ctx=gast.Load(), annotation=None, type_comment=None)
        name.helper = runtime.error_at
        call = gast.Call(func=name, args=[gast.Constant(value="MissingRuleError", kind=None),
                                          gast.Constant(value=_message(node), kind=None)],
                         keywords=[])
        raised = gast.copy_location(gast.Raise(exc=call, cause=None), node)
        if _refusal(node):
            return raised
        return gast.copy_location(gast.If(test=_negated(node.test), body=[raised], orelse=[]),
                                  node)


def _folded(test):
    """``True or x`` is ``True``; ``True and x`` is ``x`` (a test partial
    evaluation decided in part)."""
    if not isinstance(test, gast.BoolOp):
        return test
    values = [_folded(v) for v in test.values]
    decided = isinstance(test.op, gast.Or)  # the value that decides an or
    if any(isinstance(v, gast.Constant) and v.value is decided for v in values):
        return gast.Constant(value=decided, kind=None)
    values = [v for v in values if not (isinstance(v, gast.Constant) and v.value is not decided)]
    if not values:
        return gast.Constant(value=not decided, kind=None)
    return values[0] if len(values) == 1 else gast.BoolOp(op=test.op, values=values)


_OPPOSITE = {gast.In: gast.NotIn, gast.NotIn: gast.In, gast.Eq: gast.NotEq, gast.NotEq: gast.Eq}


def _negated(test):
    """``not test``, written as ``a not in b`` / ``a != b`` where it is a comparison."""
    if isinstance(test, gast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPPOSITE:
        return gast.Compare(left=test.left, ops=[_OPPOSITE[type(test.ops[0])]()],
                            comparators=test.comparators)
    return gast.UnaryOp(op=gast.Not(), operand=test)


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


@lru_cache(maxsize=None)
def _calls(func, helper) -> bool:
    """Whether a rule's tree mentions ``helper`` (else a pass for it is skipped)."""
    return any(isinstance(n, gast.Name) and n.id == helper for n in walk(func))


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


def _pop_message(node) -> str:
    """Why ``lst.pop(i)`` is refused, in the user's names, with the rewrite
    that takes the same item (reviewer s33, F14: it said 'xs.pop()' and took the
    last item whatever ``i`` was)."""
    func = getattr(node, "func", None)
    name = source_of(func.value) if isinstance(func, gast.Attribute) else "xs"
    args = getattr(node, "args", None) or []
    if dict_call("pop", args):  # d.pop('c'), d.pop(k, v): a dict's (review s35, R3-3)
        return dict_pop_advice(name, args)
    index = source_of(args[0]) if args else "-1"
    rest = {"-1": f"{name}[:-1]", "0": f"{name}[1:]"}.get(
        index, f"{name}[:{index}] + {name}[{index}:][1:]")
    return (f"srcgrad follows {name}.pop({index if args else ''}) only on a list built in "
            f"this function and otherwise only read and appended to (here it is also "
            f"changed another way -- reversed, sorted, written by index -- or another name, "
            f"a call or a loop may see it change): read the item and rebind the list, "
            f"'v = {name}[{index}]; {name} = {rest}'")


def _not_a_plain_record(cls) -> str:
    """What keeps the dataclass ``cls`` from being one srcgrad builds (its
    fields keyword-only, a __post_init__, a field __init__ leaves out, an
    __init__ of its own), in words; '' for a class that is no dataclass."""
    if not dataclasses.is_dataclass(cls):
        return ""
    fields = dataclasses.fields(cls)
    keyword_only = [f.name for f in fields if getattr(f, "kw_only", False) is True]
    if keyword_only:
        return (f"its fields {', '.join(map(repr, keyword_only))} are keyword-only "
                f"(kw_only=True), which srcgrad does not build yet: drop kw_only")
    if getattr(cls, "__post_init__", None) is not None:
        return f"{cls.__name__} has a __post_init__, which srcgrad does not run"
    left_out = [f.name for f in fields if not f.init]
    if left_out:
        return (f"__init__ leaves out the fields {', '.join(map(repr, left_out))} "
                f"(init=False)")
    return f"{cls.__name__}.__init__ is not the one @dataclass writes"


def missing_rule(program, op: ir.Op, forward: bool = False) -> MissingRuleError:
    """The error for an operation a differentiated value flows into and which
    has no rule to inline (an adjoint, or with ``forward`` a tangent), at the
    user's line, saying how to give it one or to cut the flow."""
    def at(cls, message):  # located at the user's line
        return cls(message, filename=program.filename, lineno=getattr(op.node, "lineno", None),
                   col=getattr(op.node, "col_offset", None))

    kind, register, what = (("tangent (forward-mode)", "register_jvp", "derivative")
                            if forward else ("adjoint", "register_vjp", "gradient"))
    if getattr(op.primitive, "__module__", None) == "itertools" \
            or any(op.primitive is f for f in (iter, zip, enumerate, next)):
        name = getattr(op.primitive, "__name__", "?")
        return at(UnsupportedSyntaxError,
            f"srcgrad cannot follow a value being differentiated through the iterator "
            f"{'itertools.' if op.primitive.__module__ == 'itertools' else ''}{name}(...): "
            f"loop over the sequence itself, by index or with zip/enumerate/"
            f"itertools.pairwise/itertools.product (which srcgrad takes apart), or index "
            f"it by position")
    if isinstance(op.primitive, ir.UnknownMember) and op.primitive.name == "pop":
        return at(UnsupportedSyntaxError, _pop_message(op.node))
    if op.label == ".flat":  # x.flat[3], for v in x.flat (review s37 R5-8)
        return at(MissingRuleError, flat_message(op))
    if getattr(op, "hint", None):  # self.act(h), opt.update(w, g): a user's method
        cls, message = op.hint
        return at(cls, message)
    if getattr(op.primitive, "__module__", None) == "srcgrad.api.gradient_calls":
        return at(MissingRuleError,
            f"{describe(op)} is the derivative rule of a gradient srcgrad made, called "
            f"inside the function differentiated (dHdq = srcgrad.grad(H); ... dHdq(q)): "
            f"srcgrad differentiates such a function once, by reverse or forward mode, "
            f"not a second time (that would be a third derivative of H)")
    if isinstance(op.primitive, type) and not is_library_module(
            getattr(op.primitive, "__module__", "") or ""):  # Plain(w): a user's class
        name = op.primitive.__name__
        why = _not_a_plain_record(op.primitive)
        if why:  # a @dataclass, but one srcgrad does not build (review s35, R3-20)
            return at(MissingRuleError,
                f"building an object of the dataclass {name} from a value being "
                f"differentiated: srcgrad builds dataclasses whose __init__ only stores "
                f"their fields, given by position or name, and {why}; build it outside and "
                f"pass it in (grad(f)(x, obj): its fields are then differentiated)")
        return at(MissingRuleError,
            f"building an object of the class {name} from a value being differentiated: "
            f"srcgrad builds named tuples and dataclasses whose __init__ only stores its "
            f"fields (no __init__ of its own, no __post_init__), and cannot see what "
            f"{name}.__init__ does with its arguments; make {name} such a @dataclass, or "
            f"build it outside and pass it in (grad(f)(x, obj): its fields are then "
            f"differentiated)")
    if op.primitive is np.lib.stride_tricks.as_strided:  # kept refused (session 37)
        return at(MissingRuleError,
            f"{describe(op)} has no {kind} rule, and a value being differentiated flows into "
            f"it: its view reads whatever memory the shape and strides given point at -- "
            f"elements repeated, overlapping windows, or bytes outside the array -- chosen "
            f"by byte offsets, not indices, so srcgrad cannot tell which element each "
            f"{what} belongs to; write the windows "
            f"with np.lib.stride_tricks.sliding_window_view (differentiated) or index with "
            f"an integer array (x[idx], idx = np.arange(k)[:, None] + np.arange(w)), which "
            f"read the same elements")
    if type(op.primitive).__module__ == "srcgrad.api.second_order" and \
            type(op.primitive).__name__ == "Derivative":  # H_of = srcgrad.hessian(nll)
        return at(MissingRuleError, derivative_call_message(op))
    made = made_by_a_classmethod(program, op)
    if made is not None:  # m = Net.make(W); m.loss(x): review s37 R5-18
        name, made_by = made
        return at(MissingRuleError,
            f"{describe(op)} is called on '{source_of(op.args[0])}', the object "
            f"{made_by}(...) returned: an object of the class {name} built from a value "
            f"being differentiated, whose methods srcgrad cannot follow; srcgrad builds "
            f"named tuples and dataclasses whose __init__ only stores its fields (no "
            f"__init__ of its own, no __post_init__), and cannot see what {name}.__init__ "
            f"does with its arguments; make {name} such a @dataclass, or build it outside "
            f"and pass it in (grad(f)(x, obj): its fields are then differentiated)")
    called = _called_object(op)
    if called is not None:  # CS(t) for CS = CubicSpline(xs, ys): review s36 R4-15
        return at(MissingRuleError,
            f"calling {called} with a value being differentiated: srcgrad differentiates "
            f"code it can read, and what this object's call runs is library code without "
            f"a rule; give the call a rule of your own -- a function calling it, made a "
            f"srcgrad.custom_vjp (a spline's slope is its .derivative()) -- or wrap the "
            f"value in srcgrad.stop_gradient if no {what} should flow there")
    return at(MissingRuleError,
        f"no {kind} rule for {describe(op)}, and a value being differentiated flows into it "
        f"(register one with srcgrad.{register}, or wrap the value in "
        f"srcgrad.stop_gradient if no {what} should flow there)")


def _called_object(op: ir.Op):
    """How a message names the callable object ``op`` calls -- one that is no
    function, class or ufunc (a ``CubicSpline``, an ``interp1d``, an
    ``np.vectorize``) -- as the user wrote it and by its class: ``'CS' (a
    scipy.interpolate.CubicSpline object)``, never by a repr holding a memory
    address; None for any other operation."""
    prim = op.primitive
    if isinstance(prim, (type, np.ufunc, ir.UnknownMember)) or inspect.isroutine(prim) \
            or not callable(prim) or hasattr(prim, "__qualname__"):
        return None
    kind = type(prim)
    module = (kind.__module__ or "").split("._")[0]
    func = getattr(op.node, "func", None)
    shown = f"'{source_of(func)}' " if func is not None else ""
    return f"{shown}(a {module + '.' if module else ''}{kind.__qualname__} object)"
