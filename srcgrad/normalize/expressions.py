"""Normalisation of expressions: one operation per statement, on atoms.

Part of :mod:`.normalizer` (a mixin of its normaliser).  An expression is taken
apart innermost first: each operation gets a temporary (``t1 = x @ W``) whose
statement carries the primitive it applies (``stmt.op``, an :class:`..ir.Op`),
its operands reduced to atoms -- names, constants, attribute chains of free
names (``np.pi``) -- so no later pass re-resolves what an operator or a call
means.  Each definition of a variable gets its own name in straight-line code
(:meth:`Expressions.define`); comparisons, and boolean operators of
comparisons, stay whole, opaque and never differentiated.  A boolean operator
that returns one of its operands (``t = s or 1.0``) is a conditional on the
first one's truth (:meth:`Expressions.bool_as_conditional`).

    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> import numpy as np
    >>> def f(x, W):
    ...     y = -(x @ W) * np.pi
    ...     wide = y.ndim > 1 and y.shape[1] > 2
    ...     z = y.T[0] or x[1]
    ...     return z
    >>> print(unparse_body(normalize(parse_function(f))))
    t1 = x @ W
    t2 = -t1
    y = t2 * np.pi
    wide = y.ndim > 1 and y.shape[1] > 2
    t4 = y.T
    t3 = t4[0]
    if t3:
        t5 = t3
    else:
        t5 = x[1]
    z = t5
    return z
"""

from __future__ import annotations

import builtins
import operator

import gast
import numpy as np

from .. import ir, runtime
from ..errors import SrcGradError
from ..frontend.parse import MISSING, root_name, static_value
from ..ir.syntax import clone, source_of, walk
from ..rules import registry
from .calls import DYNAMIC

#: The builtins' names, which generated code may call whatever the user's code does.
_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))

BINOPS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.MatMult: operator.matmul, gast.BitAnd: operator.and_,
    gast.BitOr: operator.or_, gast.BitXor: operator.xor, gast.LShift: operator.lshift,
    gast.RShift: operator.rshift,
}
UNARYOPS = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Invert: operator.invert,
            gast.Not: operator.not_}
OP_LABELS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
             operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
             operator.matmul: "@", operator.neg: "unary -", operator.pos: "unary +"}

#: Calls whose value is a bool: ``and``/``or`` of these and of comparisons
#: stays whole (see :meth:`Expressions.is_truth_value`).
TRUTH_CALLS = (bool, isinstance, issubclass, hasattr, callable, all, any, np.all, np.any,
               np.isscalar, np.array_equal, np.allclose, np.iscomplexobj, np.isrealobj)

#: Primitives returning a tuple; ``f(x)[k]`` and ``a, b = f(x)`` unpack them.
MULTI_OUTPUT = {}


def register_multi_output(primitive, count: int) -> None:
    """Declare that ``primitive`` returns a tuple of ``count`` values."""
    MULTI_OUTPUT[primitive] = count


for _prim, _count in ((np.linalg.slogdet, 2), (np.linalg.eigh, 2), (np.linalg.qr, 2),
                      (np.linalg.svd, 3), (np.divmod, 2), (np.frexp, 2), (np.modf, 2)):
    register_multi_output(_prim, _count)


_SCOPES = (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp, gast.Lambda)


def bound_inside(node) -> set[int]:
    """The names in ``node`` that a comprehension or lambda inside it binds
    (``v`` in ``any(v > 0 for v in xs)``): ids of their Name nodes, which keep
    their names in an expression evaluated as it is."""
    inner = set()
    for scope in walk(node):
        if not isinstance(scope, _SCOPES):
            continue
        if isinstance(scope, gast.Lambda):
            args = scope.args
            bound = {a.id for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                    args.vararg, args.kwarg] if isinstance(a, gast.Name)}
            parts = [scope.body]
        else:
            bound = {n.id for g in scope.generators for n in walk(g.target)
                     if isinstance(n, gast.Name)}
            parts = [scope.elt if not isinstance(scope, gast.DictComp) else scope.key,
                     *([scope.value] if isinstance(scope, gast.DictComp) else []),
                     *[g.target for g in scope.generators], *[i for g in scope.generators
                                                             for i in g.ifs],
                     *[g.iter for g in scope.generators[1:]]]
        inner.update(id(n) for part in parts for n in walk(part)
                     if isinstance(n, gast.Name) and n.id in bound)
    return inner


class Expressions:
    """Expressions, atoms and names (mixed into the normaliser)."""

    def define(self, user_name: str) -> str:
        """The name for a new definition of ``user_name``.

        In straight-line code every definition gets a fresh name (``h``, ``h_1``);
        inside ``if``/``for``/``while`` a variable keeps the name it has, since the
        same statement may run many times (the reverse pass saves what an
        overwrite destroys).
        """
        if self.depth and user_name in self.env:
            return self.env[user_name]
        # a local named like a helper the generated code calls (unbroadcast, np) or
        # a builtin it may call (slice, len, range, reversed: rules and loops) is
        # renamed, or it would shadow the helper (slice = x[1:] * 2.0: T1, s30, #11)
        reserved = user_name in registry.RULE_GLOBALS or user_name in registry.called_functions() \
            or user_name in _BUILTINS
        ssa = user_name if user_name not in self.env.values() and user_name not in self.env \
            and not reserved else self.namer.fresh(user_name)
        self.namer.reserve(ssa)
        # (an inlined local function's variable: the name its user wrote)
        self.namer.user_names[ssa] = self.namer.user_names.get(user_name, user_name)
        self.env[user_name] = ssa
        return ssa

    def expr_into(self, value, target: gast.Name):
        """Normalise ``value`` so that its last operation assigns ``target``."""
        if self.is_sum_of_generator(value):
            tmp = self.namer.temp()
            self.sum_of_generator(value, tmp)
            self.emit_copy(target, gast.copy_location(ir.name(self.env[tmp]), value), value)
            return
        if isinstance(value, gast.BoolOp) and not self.is_truth_value(value):
            value = self.bool_as_conditional(value)
        if isinstance(value, gast.IfExp):
            tmp = self.namer.temp()
            self.conditional_into(value, tmp)
            self.emit_copy(target, gast.copy_location(ir.name(tmp), value), value)
            return
        built = self.operation(value)
        if built is None:  # an atom: a plain copy
            atom = self.atom(value)
            self.emit_copy(target, atom, value)
            return
        expr, op = built
        name = self.define(target.id)
        if name in ir.names_in(expr):  # `h = h * 2` in a loop: keep the operand intact
            tmp = self.namer.temp()
            stmt = ir.assign(tmp, expr)
            stmt.op = op
            self.out.append(gast.copy_location(stmt, value))
            self.emit_copy(target, gast.copy_location(ir.name(tmp), value), value)
            return
        stmt = ir.assign(name, expr)
        stmt.op = op
        gast.copy_location(stmt, value)
        self.out.append(stmt)

    def emit_copy(self, target, atom, node):
        name = self.define(target.id)
        literal = isinstance(atom, gast.Constant) or (
            isinstance(atom, (gast.Name, gast.Attribute)) and root_name(atom) in self.free
            and root_name(atom) not in self.locals and root_name(atom) not in self.env.values())
        if literal and self.assignments.get(target.id, 0) == 1 and target.id not in self.params:
            # `power = 2`, `model = MODEL`: later reads see the literal or the global
            self.constants[name] = atom
        if isinstance(atom, gast.Name) and atom.id == name:
            return  # `x = x`
        stmt = ir.assign(name, atom)
        stmt.op = ir.Op(operator.pos, [atom], {}, node, "assignment")
        gast.copy_location(stmt, node)
        self.out.append(stmt)

    def atom_of(self, expr, op):
        """A temporary holding ``expr`` computed by ``op``."""
        tmp = self.namer.temp()
        stmt = ir.assign(tmp, expr)
        stmt.op = op
        self.out.append(gast.copy_location(stmt, op.node))
        return gast.copy_location(ir.name(tmp), op.node)

    def atom(self, node):
        """A name or constant holding ``node``'s value (emitting statements for it)."""
        if isinstance(node, gast.Constant):
            return node
        if isinstance(node, gast.Name):
            if node.id in self.local_functions:
                raise self.error(f"the local function '{node.id}' can only be called here "
                                 f"(srcgrad inlines it at each call): it cannot be returned, "
                                 f"kept in a list, tuple or dict, or passed to a function "
                                 f"other than a helper of this module", node)
            if node.id in self.locals:
                if node.id not in self.env:
                    raise self.error(f"local variable '{node.id}' is used before it is "
                                     f"assigned", node, SrcGradError)
                if self.env[node.id] in self.constants:
                    return clone(self.constants[self.env[node.id]])
                return gast.copy_location(ir.name(self.env[node.id]), node)
            self.collect_free(node)
            return node
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)) \
                and isinstance(node.operand, gast.Constant) \
                and isinstance(node.operand.value, (int, float, complex)) \
                and not isinstance(node.operand.value, bool):
            sign = -1 if isinstance(node.op, gast.USub) else 1
            return gast.Constant(value=sign * node.operand.value, kind=None)
        if self.is_static(node):
            self.collect_free(node)
            return node
        if isinstance(node, gast.BoolOp) and not self.is_truth_value(node):
            node = self.bool_as_conditional(node)
        if isinstance(node, gast.IfExp):
            tmp = self.namer.temp()
            self.conditional_into(node, tmp)
            return gast.copy_location(ir.name(self.env[tmp]), node)
        if self.is_sum_of_generator(node):
            tmp = self.namer.temp()
            self.sum_of_generator(node, tmp)
            return gast.copy_location(ir.name(self.env[tmp]), node)
        if getattr(node, "uncopied", False):  # a list the desugaring built: used as it is
            return gast.copy_location(self.comprehension(node)[0], node)
        built = self.operation(node)
        expr, op = built
        tmp = self.namer.temp()
        stmt = ir.assign(tmp, expr)
        stmt.op = op
        gast.copy_location(stmt, node)
        self.out.append(stmt)
        return gast.copy_location(ir.name(tmp), node)

    def is_truth_value(self, node) -> bool:
        """Whether ``node`` is True or False whatever it reads: a comparison, a
        ``not``, a bool constant, ``isinstance(...)`` and the like, or ``and``/``or``
        of these.  Such a boolean operator stays whole (never differentiated)."""
        if isinstance(node, gast.Compare) or (isinstance(node, gast.UnaryOp)
                                              and isinstance(node.op, gast.Not)):
            return True
        if isinstance(node, gast.Constant):
            return isinstance(node.value, bool) or node.value is None
        if isinstance(node, gast.BoolOp):
            return all(self.is_truth_value(v) for v in node.values)
        if isinstance(node, gast.Call) and isinstance(node.func, (gast.Name, gast.Attribute)):
            callee = self.callee(node)
            return any(callee is c for c in TRUTH_CALLS)
        return False

    def bool_as_conditional(self, node):
        """``a or b`` used as a value is ``a`` when ``a`` is true, else ``b``; ``a and
        b`` is ``b`` when ``a`` is true, else ``a`` -- one of the operands, and its
        derivative with it.  Rewritten as ``t if t else b`` (``b if t else t``), with
        ``t`` holding ``a`` evaluated once, here; ``b`` is only evaluated in its
        branch, as Python short-circuits (``a or b or c`` is ``a or (b or c)``)."""
        first, *rest = node.values
        rest = rest[0] if len(rest) == 1 else gast.copy_location(
            gast.BoolOp(op=node.op, values=rest), rest[0])
        if isinstance(first, (gast.Name, gast.Constant)):
            def held():
                return clone(first)
        else:
            tmp = self.namer.temp()
            self.locals.add(tmp)
            self.expr_into(first, gast.copy_location(gast.Name(
                id=tmp, ctx=gast.Store(), annotation=None, type_comment=None), first))

            def held():
                return gast.copy_location(gast.Name(id=tmp, ctx=gast.Load(), annotation=None,
                                                    type_comment=None), first)
        body, orelse = (held(), rest) if isinstance(node.op, gast.Or) else (rest, held())
        return gast.copy_location(gast.IfExp(test=held(), body=body, orelse=orelse), node)

    def is_static(self, node) -> bool:
        """An attribute chain of free names (``np.pi``, ``math.e``)."""
        return isinstance(node, gast.Attribute) and root_name(node) is not None \
            and root_name(node) not in self.locals

    def is_sum_of_generator(self, node) -> bool:
        return isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
            and isinstance(node.args[0], gast.GeneratorExp) and self.callee(node) is sum

    def operation(self, node):
        """``(expression, Op)`` for one operation applied to atoms, or None for an atom."""
        if isinstance(node, (gast.Constant, gast.Name)) or self.is_static(node):
            return None
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant) \
                and isinstance(node.op, (gast.USub, gast.UAdd)):
            return None
        made = self.user_operator(node)  # a + b, a's class defining __add__: user_operators.py
        if made is not None:
            return self.call(made)
        held = self.held_subscript(node)  # SIGS[1][t], items defining __getitem__: ibid.
        if held is not None:
            return held
        if isinstance(node, gast.BinOp):
            node = self.operands_as_arrays(node)  # M @ [a, b]: array_operands.py
            left, right = self.atom(node.left), self.atom(node.right)
            if hasattr(node, "checked_display"):
                self.display_checked(node, left, right)
            prim = BINOPS[type(node.op)]
            return gast.BinOp(left=left, op=node.op, right=right), \
                ir.Op(prim, [left, right], {}, node, OP_LABELS.get(prim, prim.__name__))
        if isinstance(node, gast.UnaryOp):
            if isinstance(node.op, gast.Not):
                return self.opaque(node), ir.Op(ir.OPAQUE, [], {}, node, "not")
            operand = self.atom(node.operand)
            prim = UNARYOPS[type(node.op)]
            return gast.UnaryOp(op=node.op, operand=operand), \
                ir.Op(prim, [operand], {}, node, OP_LABELS.get(prim, prim.__name__))
        if isinstance(node, (gast.Compare, gast.BoolOp)):
            label = "comparison" if isinstance(node, gast.Compare) else "boolean operator"
            return self.opaque(node), ir.Op(ir.OPAQUE, [], {}, node, label)
        if isinstance(node, gast.Call):
            return self.call(node)
        if isinstance(node, gast.Attribute):
            value = self.atom(node.value)
            prim = getattr(np.ndarray, node.attr, None)
            expr = gast.Attribute(value=value, attr=node.attr, ctx=gast.Load())
            # an attribute of an object: self.W; or p.mean read, not called: an array's
            # method read is a bound method, so it is a user's field (p = Gauss(mean, std))
            if prim is None or callable(prim):
                return expr, ir.Op(ir.GETATTR, [value, gast.Constant(value=node.attr, kind=None)],
                                   {}, node, f".{node.attr}")
            return expr, ir.Op(prim, [value], {}, node, f".{node.attr}")
        if isinstance(node, gast.Subscript):
            return self.subscript(node)
        if isinstance(node, (gast.Tuple, gast.List)):
            elts = [self.atom(e) for e in node.elts]
            prim = ir.BUILD_TUPLE if isinstance(node, gast.Tuple) else ir.BUILD_LIST
            return type(node)(elts=elts, ctx=gast.Load()), ir.Op(prim, elts, {}, node, prim.label)
        if isinstance(node, gast.Dict) and any(k is None for k in node.keys):
            return self.operation(_unpacked_dict(node))
        if isinstance(node, gast.Dict) and not all(isinstance(k, gast.Constant)
                                                   for k in node.keys):
            return self.operation(_dict_of_pairs(node))
        if isinstance(node, gast.Dict):
            values = [self.atom(v) for v in node.values]
            keys = gast.Tuple(elts=list(node.keys), ctx=gast.Load())
            return gast.Dict(keys=list(node.keys), values=values), \
                ir.Op(ir.BUILD_DICT, [keys, *values], {}, node, ir.BUILD_DICT.label)
        if isinstance(node, (gast.ListComp, gast.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, gast.Lambda):
            # [lambda t, k=k: t * k for k in ...], fs.append(lambda t: ...)
            raise self.error(
                "a lambda kept as a value (in a list, tuple or dict, or appended to one) is "
                "not supported: srcgrad calls only a function it can name when "
                "it compiles -- a lambda bound to a name (g = lambda t: ...), a local or "
                "global function, a function passed as an argument -- not one taken from a "
                "list or dict when the code runs; call such a function directly and pass "
                "what differs between the lambdas as an argument (g = lambda t, k: t * k; "
                "sum(g(x, k) for k in ks))", node)
        raise self.error(f"this expression ('{source_of(node)}') is not supported here", node)

    def subscript(self, node):
        made = self.concatenation(node)  # np.r_[a, b]: index_tricks.py
        if made is not None:
            return self.call(made)
        value = node.value
        if isinstance(value, gast.Call) and isinstance(node.slice, gast.Constant) \
                and isinstance(node.slice.value, int):
            prim = self.callee(value)
            # svd(a, compute_uv=False) returns the singular values alone
            single = prim is np.linalg.svd and any(
                isinstance(v, gast.Constant) and not v.value
                for v in [k.value for k in value.keywords if k.arg == "compute_uv"]
                + value.args[2:3])
            if prim in MULTI_OUTPUT and not single:  # slogdet(a)[1]: unpack, use element 1
                names = [self.namer.temp() for _ in range(MULTI_OUTPUT[prim])]
                target = gast.Tuple(elts=[ir.name(n, store=True) for n in names],
                                    ctx=gast.Store())
                self.emit_call(value, prim, target)
                element = ir.name(names[node.slice.value])
                return element, ir.Op(operator.pos, [element], {}, node, "element")
        base = self.atom(value)
        index = self.index(node.slice)
        return gast.Subscript(value=base, slice=index, ctx=gast.Load()), \
            ir.Op(operator.getitem, [base, index], {}, node, "indexing")

    def index(self, node):
        if isinstance(node, gast.Slice):
            parts = {k: (None if getattr(node, k) is None else self.atom(getattr(node, k)))
                     for k in ("lower", "upper", "step")}
            return gast.Slice(**parts)
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in node.elts], ctx=gast.Load())
        if isinstance(node, gast.List):
            return self.literal(node)
        return self.atom(node)

    def literal(self, node):
        """An argument: atoms, and list/tuple displays of atoms kept as displays."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return type(node)(elts=[self.literal(e) for e in node.elts], ctx=gast.Load())
        if isinstance(node, gast.Starred):  # f(*x.shape): passed on as it is
            return gast.Starred(value=self.atom(node.value), ctx=gast.Load())
        return self.atom(node)

    def opaque(self, node):
        """A copy of ``node`` with local names renamed to their SSA names; evaluated
        as is; a call of a local function in it is computed first (local_tests.py)."""
        node = clone(self.hoisted_calls(node))
        inner = bound_inside(node)
        for sub in walk(node):
            if isinstance(sub, gast.Call) and self.callee(sub) in DYNAMIC:
                raise self.error(f"'{self.callee(sub).__name__}' is not supported: srcgrad "
                                 f"differentiates the code it can read", sub)
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load):
                if getattr(sub, "helper", None) is not None or id(sub) in inner \
                        or getattr(sub, "hoisted", False):
                    continue
                if sub.id in self.locals:
                    if sub.id not in self.env:
                        raise self.error(f"local variable '{sub.id}' is used before it is "
                                         f"assigned", sub, SrcGradError)
                    sub.id = self.env[sub.id]
                elif sub.id in runtime.__all__ and static_value(
                        sub, self.parsed.resolver, self.locals) is getattr(runtime, sub.id):
                    # a check srcgrad wrote (unpacked(t, 2, ...)), read again from
                    # generated code: still srcgrad's own, which changes nothing
                    sub.helper = getattr(runtime, sub.id)
                else:
                    self.collect_free(sub)
        return node

    def collect_free(self, node):
        if getattr(node, "helper", None) is not None:
            return
        root = root_name(node)
        if root is None or root in self.locals:
            for sub in walk(node):
                if isinstance(sub, gast.Name) and sub.id not in self.locals \
                        and isinstance(sub.ctx, gast.Load):
                    self.collect_free(sub)
            return
        if root in self.free:
            return  # a name the compiler bound (a function passed: act_fn.__call__)
        value = self.parsed.resolver.lookup(root)
        if value is MISSING:
            raise self.error(f"name '{root}' is not defined", node, SrcGradError)
        self.free[root] = value


def _dict_of_pairs(node):
    """``{k: v, name: w}`` (a key not a constant) as ``dict([(k, v), (name, w)])``:
    Python's order of evaluation (each key, then its value), and the same
    dict (a repeated key keeps its first place and takes its last value),
    which the rule of ``dict`` over a list of pairs differentiates."""
    pairs = [gast.copy_location(gast.Tuple(elts=[k, v], ctx=gast.Load()), v)
             for k, v in zip(node.keys, node.values)]
    func = gast.copy_location(ir.name("dict"), node)
    items = gast.copy_location(gast.List(elts=pairs, ctx=gast.Load()), node)
    return gast.copy_location(gast.Call(func=func, args=[items], keywords=[]), node)


def _unpacked_dict(node):
    """``{**a, 'k': v, **b}`` as ``dict(a) | {'k': v} | dict(b)``: the same items
    in the same order (each ``**`` a shallow copy, later keys winning), which
    the dict copy and merge rules differentiate."""
    parts, keys, values = [], [], []

    def flush():
        if keys:
            parts.append(gast.copy_location(gast.Dict(keys=list(keys), values=list(values)),
                                            node))
            keys.clear()
            values.clear()

    for key, value in zip(node.keys, node.values):
        if key is None:
            flush()
            func = gast.copy_location(ir.name("dict"), value)
            parts.append(gast.copy_location(gast.Call(func=func, args=[value], keywords=[]),
                                            value))
        else:
            keys.append(key)
            values.append(value)
    flush()
    merged = parts[0]
    for part in parts[1:]:
        merged = gast.copy_location(gast.BinOp(left=merged, op=gast.BitOr(), right=part), node)
    return merged
