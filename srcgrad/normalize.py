"""Normalisation: desugar and bring the function into A-normal form.

After this pass every statement applies one operation to names and constants,
every variable is assigned once (a redefinition gets a fresh name, ``h_1``), and
each operation knows the primitive it applies (``stmt.op``, see :mod:`.ir`), so
the adjoint rules can be looked up without re-resolving anything.  Augmented
assignment becomes plain assignment, ``a, b = x, y`` becomes two assignments,
and comparisons and boolean operators are kept whole as opaque, inactive
expressions.

    >>> import numpy as np
    >>> def loss(W, b, x, y):
    ...     h = np.tanh(x @ W + b)
    ...     h *= 2.0
    ...     return np.mean((h - y) ** 2)
    >>> from .frontend import parse_function
    >>> program = normalize(parse_function(loss))
    >>> print(unparse_body(program))
    t1 = x @ W
    t2 = t1 + b
    h = np.tanh(t2)
    h_1 = h * 2.0
    t3 = h_1 - y
    t4 = t3 ** 2
    t5 = np.mean(t4)
    return t5
"""

from __future__ import annotations

import ast
import collections
import copy
import functools
import inspect
import operator
import types

import gast
import numpy as np

from . import ir, runtime
from .runtime import keys_of
from .emit import block_lines, unparse
from .errors import SrcGradError, UnsupportedSyntaxError
from .controlflow import contains, structure
from .inline import constant as inline_constant
from .frontend import MISSING, ParsedFunction, root_name, static_value
from .linker import is_user_function
from .naming import Namer
from .rules import registry

BINOPS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.MatMult: operator.matmul, gast.BitAnd: operator.and_,
    gast.BitOr: operator.or_, gast.BitXor: operator.xor, gast.LShift: operator.lshift,
    gast.RShift: operator.rshift,
}
UNARYOPS = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Invert: operator.invert,
            gast.Not: operator.not_}
_OP_LABELS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
              operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
              operator.matmul: "@", operator.neg: "unary -", operator.pos: "unary +"}

#: Primitives returning a tuple; ``f(x)[k]`` and ``a, b = f(x)`` unpack them.
MULTI_OUTPUT = {}


def register_multi_output(primitive, count: int) -> None:
    """Declare that ``primitive`` returns a tuple of ``count`` values."""
    MULTI_OUTPUT[primitive] = count


for _prim, _count in ((np.linalg.slogdet, 2), (np.linalg.eigh, 2), (np.linalg.qr, 2),
                      (np.linalg.svd, 3), (np.divmod, 2), (np.frexp, 2), (np.modf, 2)):
    register_multi_output(_prim, _count)


def normalize(parsed: ParsedFunction, receiver_type=None) -> ir.Program:
    """Turn a fenced function into an :class:`ir.Program` in A-normal form.

    ``receiver_type`` is the class of the first parameter when the function is
    a method (``self``): calls of its methods then resolve statically.
    """
    return _Normalizer(parsed, receiver_type).run()


def unparse_body(program: ir.Program) -> str:
    """The program's statements and return as source (for doctests and debugging)."""
    lines = block_lines(program.body, 0)
    lines.append("return " + unparse(program.output))
    return "\n".join(lines)


class _Normalizer:
    def __init__(self, parsed: ParsedFunction, receiver_type=None):
        self.parsed = parsed
        self.func = parsed.node
        self.params = [a.id for a in self.func.args.args]
        if self.func.args.vararg is not None:  # a callee's *args: one tuple parameter
            self.params.append(self.func.args.vararg.id)
        self.locals = set(self.params) | _assigned_names(self.func)
        used = {n.id for n in gast.walk(self.func) if isinstance(n, gast.Name)}
        self.namer = Namer(used | set(registry.RULE_GLOBALS))
        self.env = {p: p for p in self.params}     # user variable -> current SSA name
        self.free: dict[str, object] = {}
        self.out: list = []
        self.depth = 0                              # nesting in if/for/while
        self.local_functions: dict[str, object] = {}  # nested defs and lambdas, inlined
        self.inlining: list = []
        self.receiver_type = receiver_type          # type of the first parameter (methods)
        self.constants: dict[str, object] = {}      # names assigned once, from a literal
        self.assignments = collections.Counter()    # how often each name is assigned

    # -- errors ---------------------------------------------------------------
    def error(self, message, node, cls=UnsupportedSyntaxError):
        return self.parsed.error(cls, message, node)

    # -- driver ---------------------------------------------------------------
    def run(self) -> ir.Program:
        output = None
        self.output_node = self.func
        result, flag = self.namer.fresh("result"), self.namer.fresh("returned")
        structure(self.func, result=result, flag=flag)
        self.count_assignments(self.func.body)
        self.locals |= {result, flag}
        self.copy_updated_arguments()
        body = self.func.body
        for i, stmt in enumerate(body):
            if isinstance(stmt, gast.Return):
                self.output_node = stmt.value or stmt
                output = self.returned(stmt)
                break
            if i == 0 and _is_docstring(stmt):
                continue
            self.statement(stmt)
        if output is None:
            output = gast.Constant(value=None, kind=None)
        for default in self.func.args.defaults:
            self.collect_free(default)
        return ir.Program(self.func.name, self.params, self.out, output, self.parsed.filename,
                          self.func, self.free, self.namer, self.output_node)

    def returned(self, stmt):
        value = stmt.value
        if value is None:
            return gast.Constant(value=None, kind=None)
        if isinstance(value, gast.Tuple):
            return gast.Tuple(elts=[self.atom(e) for e in value.elts], ctx=gast.Load())
        return self.atom(value)

    # -- statements -----------------------------------------------------------
    def statement(self, stmt):
        if isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value, stmt)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.assign([stmt.target], stmt.value, stmt)
        elif isinstance(stmt, gast.AugAssign):
            target = stmt.target
            if isinstance(target, gast.Subscript):  # x[i] += v
                index = self.index(target.slice)
                base = self.updated_array(target)
                current = gast.copy_location(
                    gast.Subscript(value=ir.name(base), slice=copy.deepcopy(index),
                                   ctx=gast.Load()), target)
                old_item = self.atom_of(current, ir.Op(operator.getitem, [ir.name(base), index],
                                                       {}, target, "indexing"))
                right = self.atom(stmt.value)
                new_item = self.atom_of(
                    gast.BinOp(left=old_item, op=stmt.op, right=right),
                    ir.Op(BINOPS[type(stmt.op)], [old_item, right], {}, stmt,
                          _OP_LABELS.get(BINOPS[type(stmt.op)], "operator")))
                self.setitem(target, new_item, index, stmt)
                return
            if not isinstance(target, gast.Name):
                raise self.error("augmented assignment to an attribute is not supported yet",
                                 target)
            load = gast.Name(id=target.id, ctx=gast.Load(), annotation=None, type_comment=None)
            gast.copy_location(load, target)
            binop = gast.BinOp(left=load, op=stmt.op, right=stmt.value)
            gast.copy_location(binop, stmt)
            old = self.env.get(target.id)
            self.assign([target], binop, stmt)
            # NumPy updates an array in place here: the alias check must know
            self.out[-1].augmented = old
        elif isinstance(stmt, gast.Expr) and _is_append(stmt.value):
            call = stmt.value
            base = self.updated_array(gast.Subscript(value=call.func.value, slice=None,
                                                     ctx=gast.Load()))
            item = self.atom(call.args[0])
            node = gast.Expr(value=gast.Call(func=gast.Attribute(
                value=ir.name(base), attr="append", ctx=gast.Load()), args=[item], keywords=[]))
            node.op = ir.Op(ir.APPEND, [ir.name(base), item], {}, stmt, ".append()")
            self.out.append(gast.copy_location(node, stmt))
        elif isinstance(stmt, (gast.Expr, gast.Assert)):
            node = self.opaque(stmt)
            node.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
            self.out.append(node)
        elif isinstance(stmt, gast.Pass):
            pass
        elif isinstance(stmt, gast.FunctionDef):
            self.local_function(stmt.name, stmt)
        elif isinstance(stmt, gast.If):
            self.if_statement(stmt)
        elif isinstance(stmt, gast.For):
            self.for_statement(stmt)
        elif isinstance(stmt, gast.While):
            self.while_statement(stmt)
        elif isinstance(stmt, (gast.Break, gast.Continue)):
            self.out.append(gast.copy_location(type(stmt)(), stmt))
        else:  # pragma: no cover - the fence rejects everything else
            raise self.error(f"'{type(stmt).__name__}' statements are not supported", stmt)

    def assign(self, targets, value, stmt):
        first, rest = targets[0], targets[1:]
        if isinstance(value, gast.Lambda) and len(targets) == 1 and isinstance(first, gast.Name):
            self.local_function(first.id, value)
            return
        if isinstance(first, gast.Name):
            self.expr_into(value, first)
        elif isinstance(first, (gast.Tuple, gast.List)):
            self.unpack(first, value)
        elif isinstance(first, gast.Subscript):
            self.setitem(first, self.atom(value), self.index(first.slice), stmt)
        else:
            raise self.error("assignment to an element or attribute (in-place update) "
                             "is not supported yet", first)
        for extra in rest:  # a = b = value
            if not isinstance(extra, gast.Name) or not isinstance(first, gast.Name):
                raise self.error("chained assignment to several targets of this form "
                                 "is not supported", extra)
            self.expr_into(gast.Name(id=first.id, ctx=gast.Load(), annotation=None,
                                     type_comment=None), extra)

    def is_sum_of_generator(self, node) -> bool:
        return isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
            and isinstance(node.args[0], gast.GeneratorExp) and self.callee(node) is sum

    def updated_array(self, target) -> str:
        """The current name of the array ``x`` in ``x[i] = ...``."""
        base = target.value
        if not isinstance(base, gast.Name) or base.id not in self.locals:
            raise self.error("only elements of a local variable can be assigned "
                             "(x[i] = v); assign to a copy of a global or an attribute",
                             base)
        if base.id not in self.env:
            raise self.error(f"local variable '{base.id}' is used before it is assigned",
                             base, SrcGradError)
        return self.env[base.id]

    def setitem(self, target, value, index, stmt):
        """``x[index] = value``: an in-place update of ``x`` (see ir.is_update)."""
        base = self.updated_array(target)
        node = ir.assign(gast.Subscript(value=ir.name(base), slice=index, ctx=gast.Store()),
                         value)
        node.op = ir.Op(operator.setitem, [ir.name(base), index, value], {}, stmt,
                        "element assignment")
        self.out.append(gast.copy_location(node, stmt))

    def atom_of(self, expr, op):
        """A temporary holding ``expr`` computed by ``op``."""
        tmp = self.namer.temp()
        stmt = ir.assign(tmp, expr)
        stmt.op = op
        self.out.append(gast.copy_location(stmt, op.node))
        return gast.copy_location(ir.name(tmp), op.node)

    def copy_updated_arguments(self):
        """Arguments updated in place are copied first: the caller's arrays never change."""
        updated = set()
        for node in gast.walk(self.func):
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                    and isinstance(node.value, gast.Name):
                updated.add(node.value.id)
            if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Subscript) \
                    and isinstance(node.target.value, gast.Name):
                updated.add(node.target.value.id)
            if _is_append(node):
                updated.add(node.func.value.id)
        for param in self.params:
            if param in updated:
                call = gast.Call(func=gast.Attribute(value=ir.name(param), attr="copy",
                                                     ctx=gast.Load()), args=[], keywords=[])
                gast.copy_location(call, self.func)
                self.expr_into(call, gast.Name(id=param, ctx=gast.Store(), annotation=None,
                                               type_comment=None))
                self.out[-1].comment = f"{param} is updated in place below: work on a copy"

    def unpack(self, target, value):
        for elt in target.elts:
            if not isinstance(elt, gast.Name):
                raise self.error("only names can be unpacked into", elt)
        if isinstance(value, (gast.Tuple, gast.List)):
            if len(value.elts) != len(target.elts):
                raise self.error(f"cannot unpack {len(value.elts)} values into "
                                 f"{len(target.elts)} names", value, SrcGradError)
            atoms = [self.atom(v) for v in value.elts]
            for elt, atom in zip(target.elts, atoms):
                self.emit_copy(elt, atom, value)
            return
        if isinstance(value, gast.Call):
            prim = self.callee(value)
            if is_user_function(prim):  # a, b = f(x): f's pair returns the tuple
                names = [self.define(elt.id) for elt in target.elts]
                tuple_target = gast.Tuple(elts=[ir.name(n, store=True) for n in names],
                                          ctx=gast.Store())
                self.emit_call(value, prim, tuple_target)
                return
            if prim in MULTI_OUTPUT:
                if MULTI_OUTPUT[prim] != len(target.elts):
                    raise self.error(f"{registry.display_name(prim)} returns "
                                     f"{MULTI_OUTPUT[prim]} values, not {len(target.elts)}",
                                     value, SrcGradError)
                names = [self.define(elt.id) for elt in target.elts]
                tuple_target = gast.Tuple(elts=[ir.name(n, store=True) for n in names],
                                          ctx=gast.Store())
                self.emit_call(value, prim, tuple_target)
                return
        whole = self.atom(value)  # a, b = t: element by element
        for i, elt in enumerate(target.elts):
            index = gast.Constant(value=i, kind=None)
            item = gast.Subscript(value=whole, slice=index, ctx=gast.Load())
            stmt = ir.assign(self.define(elt.id), item)
            stmt.op = ir.Op(operator.getitem, [whole, index], {}, value, "unpacking")
            self.out.append(gast.copy_location(stmt, elt))


    # -- comprehensions ---------------------------------------------------------
    def comprehension(self, node):
        """``[f(x) for x in xs if c]`` -> a list built by a loop with ``append``; the
        comprehension's variables get fresh names (they have their own scope)."""
        result = self.namer.temp()
        self.locals.add(result)
        start = ir.assign(result, gast.List(elts=[], ctx=gast.Load()))
        start.op = ir.Op(ir.BUILD_LIST, [], {}, node, ir.BUILD_LIST.label)
        self.out.append(gast.copy_location(start, node))
        self.env[result] = result
        loop = self.comprehension_loop(node, lambda elt: gast.Expr(value=gast.Call(
            func=gast.Attribute(value=_load_id(result), attr="append", ctx=gast.Load()),
            args=[elt], keywords=[])))
        self.statement(loop)
        name = ir.name(result)
        return name, ir.Op(operator.pos, [name], {}, node, "comprehension")

    def comprehension_loop(self, node, body_of):
        """The nested ``for``/``if`` statements a comprehension stands for."""
        renames = {}
        for gen in node.generators:
            if gen.is_async:
                raise self.error("async comprehensions are not supported", gen)
            for target in gast.walk(gen.target):
                if isinstance(target, gast.Name):
                    renames[target.id] = self.namer.fresh(target.id)
                    self.locals.add(renames[target.id])
        rename = _Renamer(renames)
        stmt = body_of(rename.visit(copy.deepcopy(node.elt)))
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                stmt = gast.If(test=rename.visit(copy.deepcopy(cond)), body=[stmt], orelse=[])
            stmt = gast.For(target=rename.visit(copy.deepcopy(gen.target)),
                            iter=rename.visit(copy.deepcopy(gen.iter)) if gen is not
                            node.generators[0] else gen.iter,
                            body=[stmt], orelse=[], type_comment=None)
            gast.copy_location(stmt, gen.target)
        return _located(stmt, node)

    def sum_of_generator(self, node, target: str):
        """``sum(f(x) for x in xs)`` -> an accumulating loop (no list is built)."""
        self.locals.add(target)
        start = ir.assign(self.define(target), gast.Constant(value=0, kind=None))
        start.op = ir.Op(ir.OPAQUE, [], {}, node, "sum")
        self.out.append(gast.copy_location(start, node))
        loop = self.comprehension_loop(node.args[0], lambda elt: gast.AugAssign(
            target=gast.Name(id=target, ctx=gast.Store(), annotation=None, type_comment=None),
            op=gast.Add(), value=elt))
        self.statement(loop)

    # -- compound statements ----------------------------------------------------
    def nested(self, stmts) -> list:
        """Normalise a branch or loop body into its own statement list."""
        saved, self.out = self.out, []
        self.depth += 1
        try:
            for stmt in stmts:
                self.statement(stmt)
            return self.out
        finally:
            self.out = saved
            self.depth -= 1

    def pin(self, stmts) -> None:
        """Give every variable assigned in ``stmts`` its name now, so that a read
        before the assignment (from the previous iteration) finds it."""
        for user_name in sorted(_assigned_names(gast.Module(body=list(stmts), type_ignores=[]))):
            if user_name not in self.env:
                self.define(user_name)

    def condition(self, test, body_stmts):
        """The branch condition as a name the adjoint sweep can read back."""
        node = self.opaque(test)
        assigned = {self.env.get(n, n) for n in
                    _assigned_names(gast.Module(body=list(body_stmts), type_ignores=[]))}
        if isinstance(node, gast.Name) and node.id not in assigned:
            return node
        tmp = self.namer.temp()
        stmt = ir.assign(tmp, node)
        stmt.op = ir.Op(ir.OPAQUE, [], {}, test, "condition")
        self.out.append(gast.copy_location(stmt, test))
        return gast.copy_location(ir.name(tmp), test)

    def if_statement(self, stmt):
        test = self.condition(stmt.test, stmt.body + stmt.orelse)
        node = gast.If(test=test, body=self.nested(stmt.body), orelse=self.nested(stmt.orelse))
        self.out.append(gast.copy_location(node, stmt))

    def conditional_into(self, node, target: str):
        """``target = a if c else b`` as an ``if`` statement (only one side runs)."""
        name = gast.copy_location(gast.Name(id=target, ctx=gast.Store(), annotation=None,
                                            type_comment=None), node)
        branch = gast.If(test=node.test,
                         body=[gast.copy_location(ir.assign(name, node.body), node.body)],
                         orelse=[gast.copy_location(ir.assign(copy.deepcopy(name), node.orelse),
                                                    node.orelse)])
        self.locals.add(target)
        self.define(target)
        self.if_statement(gast.copy_location(branch, node))

    def for_statement(self, stmt):
        if stmt.orelse:
            raise self.error("'for ... else' is not supported", stmt.orelse[0])
        target, prefix, range_atom = self.loop_index(stmt)
        body = prefix + stmt.body
        self.pin(body)
        counter = self.counter_start(stmt.body)
        index = self.define(target.id)
        self.locals.add(target.id)
        inner = self.nested(body)
        if counter:
            inner.insert(0, self.counter_step(counter, stmt))
        loop = gast.For(target=ir.name(index, store=True), iter=range_atom, body=inner,
                        orelse=[], type_comment=None)
        loop.counter = counter
        self.out.append(gast.copy_location(loop, stmt))

    def loop_index(self, stmt):
        """``for x in xs`` -> ``for k in range(len(xs)): x = xs[k]`` (and zip, enumerate):
        every loop runs over a range, which the adjoint sweep can run backwards."""
        target, it = stmt.target, stmt.iter
        callee = self.callee(it) if isinstance(it, gast.Call) else MISSING
        if callee is range and isinstance(target, gast.Name) and not it.keywords:
            return target, [], self.opaque_value(it, "range")
        index, start = None, None
        if callee is enumerate and isinstance(target, gast.Tuple) and len(target.elts) == 2 \
                and not it.keywords and 1 <= len(it.args) <= 2:
            seqs, items = it.args[:1], target.elts[1:]
            index, start = target.elts[0], (it.args[1] if len(it.args) == 2 else None)
        elif callee is zip and isinstance(target, gast.Tuple) and not it.keywords \
                and len(target.elts) == len(it.args):
            seqs, items = list(it.args), list(target.elts)
        elif _dict_view(it):  # for k, v in d.items(), for k in d.keys(), for v in d.values()
            return self.dict_loop(stmt, it)
        else:
            seqs, items = [it], [target]
        names = [self.sequence(seq, stmt.body) for seq in seqs]
        if isinstance(index, gast.Name) and start is None:
            k, prefix = index, []
        else:
            k = gast.copy_location(gast.Name(id=self.namer.fresh("k"), ctx=gast.Store(),
                                             annotation=None, type_comment=None), target)
            prefix = []
            if index is not None:
                offset = gast.BinOp(left=_load(k), op=gast.Add(), right=start)
                prefix.append(gast.copy_location(ir.assign(copy.deepcopy(index), offset), target))
        for item, seq in zip(items, names):
            value = gast.copy_location(gast.Subscript(value=seq, slice=_load(k), ctx=gast.Load()),
                                       seq)
            prefix.append(gast.copy_location(ir.assign(copy.deepcopy(item), value), item))
        lengths = [_builtin_call("len", seq) for seq in names]
        count = lengths[0] if len(lengths) == 1 else _builtin_call("min", *lengths)
        return k, prefix, self.opaque_value(gast.copy_location(_builtin_call("range", count), it),
                                            "range")

    def dict_loop(self, stmt, it):
        """``for k, v in d.items()`` -> over ``keys_of(d)``, reading ``d[k]``."""
        kind, mapping = it.func.attr, it.func.value
        keys = gast.Call(func=_helper("keys_of"), args=[mapping], keywords=[])
        key = stmt.target.elts[0] if kind == "items" else stmt.target if kind == "keys" \
            else gast.Name(id=self.namer.fresh("key"), ctx=gast.Store(), annotation=None,
                           type_comment=None)
        prefix = []
        if kind in ("items", "values"):
            value = stmt.target.elts[1] if kind == "items" else stmt.target
            prefix.append(gast.copy_location(ir.assign(copy.deepcopy(value), gast.Subscript(
                value=copy.deepcopy(mapping), slice=_load(key), ctx=gast.Load())), value))
        loop = gast.For(target=key, iter=gast.copy_location(keys, it), body=prefix,
                        orelse=[], type_comment=None)
        gast.copy_location(loop, stmt)
        index, inner_prefix, range_atom = self.loop_index(loop)
        return index, inner_prefix + prefix, range_atom

    def sequence(self, seq, body):
        """The sequence a loop indexes, held in a name the body does not reassign.

        A parameter, global or attribute may be a dict or another iterable that
        cannot be indexed by position: ``sequence(xs)`` lists it (a list, tuple
        or array comes back as it is)."""
        if isinstance(seq, gast.Name):
            unknown = seq.id in self.params or seq.id not in self.locals
        else:
            unknown = isinstance(seq, (gast.Attribute, gast.Call, gast.Subscript))
        if isinstance(seq, gast.Call) and (self.callee(seq) is keys_of):
            unknown = False
        if unknown and not isinstance(seq, gast.Call):
            seq = gast.copy_location(gast.Call(func=_helper("sequence"), args=[seq],
                                               keywords=[]), seq)
        elif isinstance(seq, gast.Name) and seq.id not in _assigned_names(
                gast.Module(body=body, type_ignores=[])):
            return seq
        tmp = self.namer.temp()
        self.locals.add(tmp)
        self.expr_into(seq, gast.copy_location(gast.Name(id=tmp, ctx=gast.Store(),
                                                         annotation=None, type_comment=None),
                                               seq))
        return gast.copy_location(gast.Name(id=tmp, ctx=gast.Load(), annotation=None,
                                            type_comment=None), seq)

    def opaque_value(self, node, label):
        """A temporary holding ``node`` evaluated whole (inactive: ranges, lengths)."""
        tmp = self.namer.temp()
        stmt = ir.assign(tmp, self.opaque(node))
        stmt.op = ir.Op(ir.OPAQUE, [], {}, node, label)
        self.out.append(gast.copy_location(stmt, node))
        return gast.copy_location(ir.name(tmp), node)

    def counter_start(self, body):
        """A counter of iterations for loops the adjoint cannot count otherwise."""
        if not contains(body, gast.Break, into_loops=False):
            return None
        counter = self.namer.fresh("iterations")
        stmt = ir.assign(counter, gast.Constant(value=0, kind=None))
        stmt.op = ir.Op(ir.OPAQUE, [], {}, None, "iteration counter")
        self.out.append(stmt)
        self.env[counter] = counter
        self.locals.add(counter)
        return counter

    def counter_step(self, counter, node):
        stmt = ir.assign(counter, gast.BinOp(left=ir.name(counter), op=gast.Add(),
                                             right=gast.Constant(value=1, kind=None)))
        stmt.op = ir.Op(ir.OPAQUE, [], {}, node, "iteration counter")
        return gast.copy_location(stmt, node)

    def while_statement(self, stmt):
        if stmt.orelse:
            raise self.error("'while ... else' is not supported", stmt.orelse[0])
        self.pin(stmt.body)
        counter = self.namer.fresh("iterations")
        start = ir.assign(counter, gast.Constant(value=0, kind=None))
        start.op = ir.Op(ir.OPAQUE, [], {}, stmt, "iteration counter")
        self.out.append(gast.copy_location(start, stmt))
        self.env[counter] = counter
        self.locals.add(counter)
        self.depth += 1
        test = self.opaque(stmt.test)
        self.depth -= 1
        inner = self.nested(stmt.body)
        inner.insert(0, self.counter_step(counter, stmt))
        loop = gast.While(test=test, body=inner, orelse=[])
        loop.counter = counter
        self.out.append(gast.copy_location(loop, stmt))

    # -- expressions ----------------------------------------------------------
    def define(self, user_name: str) -> str:
        """The name for a new definition of ``user_name``.

        In straight-line code every definition gets a fresh name (``h``, ``h_1``);
        inside ``if``/``for``/``while`` a variable keeps the name it has, since the
        same statement may run many times (the reverse pass saves what an
        overwrite destroys).
        """
        if self.depth and user_name in self.env:
            return self.env[user_name]
        ssa = user_name if user_name not in self.env.values() and user_name not in self.env \
            else self.namer.fresh(user_name)
        self.namer.reserve(ssa)
        self.env[user_name] = ssa
        return ssa

    def expr_into(self, value, target: gast.Name):
        """Normalise ``value`` so that its last operation assigns ``target``."""
        if self.is_sum_of_generator(value):
            tmp = self.namer.temp()
            self.sum_of_generator(value, tmp)
            self.emit_copy(target, gast.copy_location(ir.name(self.env[tmp]), value), value)
            return
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

    def count_assignments(self, stmts) -> None:
        """Count the assignments of each name (literal propagation needs exactly one)."""
        for stmt in stmts:
            for node in gast.walk(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    self.assignments[node.id] += 1

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

    def atom(self, node):
        """A name or constant holding ``node``'s value (emitting statements for it)."""
        if isinstance(node, gast.Constant):
            return node
        if isinstance(node, gast.Name):
            if node.id in self.local_functions:
                raise self.error(f"the local function '{node.id}' can only be called here "
                                 f"(srcgrad inlines it at each call)", node)
            if node.id in self.locals:
                if node.id not in self.env:
                    raise self.error(f"local variable '{node.id}' is used before it is "
                                     f"assigned", node, SrcGradError)
                if self.env[node.id] in self.constants:
                    return copy.deepcopy(self.constants[self.env[node.id]])
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
        if isinstance(node, gast.IfExp):
            tmp = self.namer.temp()
            self.conditional_into(node, tmp)
            return gast.copy_location(ir.name(self.env[tmp]), node)
        if self.is_sum_of_generator(node):
            tmp = self.namer.temp()
            self.sum_of_generator(node, tmp)
            return gast.copy_location(ir.name(self.env[tmp]), node)
        built = self.operation(node)
        expr, op = built
        tmp = self.namer.temp()
        stmt = ir.assign(tmp, expr)
        stmt.op = op
        gast.copy_location(stmt, node)
        self.out.append(stmt)
        return gast.copy_location(ir.name(tmp), node)

    def is_static(self, node) -> bool:
        """An attribute chain of free names (``np.pi``, ``math.e``)."""
        return isinstance(node, gast.Attribute) and root_name(node) is not None \
            and root_name(node) not in self.locals

    def operation(self, node):
        """``(expression, Op)`` for one operation applied to atoms, or None for an atom."""
        if isinstance(node, (gast.Constant, gast.Name)) or self.is_static(node):
            return None
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant) \
                and isinstance(node.op, (gast.USub, gast.UAdd)):
            return None
        if isinstance(node, gast.BinOp):
            left, right = self.atom(node.left), self.atom(node.right)
            prim = BINOPS[type(node.op)]
            return gast.BinOp(left=left, op=node.op, right=right), \
                ir.Op(prim, [left, right], {}, node, _OP_LABELS.get(prim, prim.__name__))
        if isinstance(node, gast.UnaryOp):
            if isinstance(node.op, gast.Not):
                return self.opaque(node), ir.Op(ir.OPAQUE, [], {}, node, "not")
            operand = self.atom(node.operand)
            prim = UNARYOPS[type(node.op)]
            return gast.UnaryOp(op=node.op, operand=operand), \
                ir.Op(prim, [operand], {}, node, _OP_LABELS.get(prim, prim.__name__))
        if isinstance(node, (gast.Compare, gast.BoolOp)):
            label = "comparison" if isinstance(node, gast.Compare) else "boolean operator"
            return self.opaque(node), ir.Op(ir.OPAQUE, [], {}, node, label)
        if isinstance(node, gast.Call):
            return self.call(node)
        if isinstance(node, gast.Attribute):
            value = self.atom(node.value)
            prim = getattr(np.ndarray, node.attr, None)
            expr = gast.Attribute(value=value, attr=node.attr, ctx=gast.Load())
            if prim is None:  # an attribute of an object: self.W
                return expr, ir.Op(ir.GETATTR, [value, gast.Constant(value=node.attr, kind=None)],
                                   {}, node, f".{node.attr}")
            return expr, ir.Op(prim, [value], {}, node, f".{node.attr}")
        if isinstance(node, gast.Subscript):
            return self.subscript(node)
        if isinstance(node, (gast.Tuple, gast.List)):
            elts = [self.atom(e) for e in node.elts]
            prim = ir.BUILD_TUPLE if isinstance(node, gast.Tuple) else ir.BUILD_LIST
            return type(node)(elts=elts, ctx=gast.Load()), ir.Op(prim, elts, {}, node, prim.label)
        if isinstance(node, gast.Dict):
            if not all(isinstance(k, gast.Constant) for k in node.keys):
                raise self.error("dict displays need constant keys", node)
            values = [self.atom(v) for v in node.values]
            keys = gast.Tuple(elts=list(node.keys), ctx=gast.Load())
            return gast.Dict(keys=list(node.keys), values=values), \
                ir.Op(ir.BUILD_DICT, [keys, *values], {}, node, ir.BUILD_DICT.label)
        if isinstance(node, (gast.ListComp, gast.GeneratorExp)):
            return self.comprehension(node)
        raise self.error(f"'{type(node).__name__}' expressions are not supported", node)

    def subscript(self, node):
        value = node.value
        if isinstance(value, gast.Call) and isinstance(node.slice, gast.Constant) \
                and isinstance(node.slice.value, int):
            prim = self.callee(value)
            if prim in MULTI_OUTPUT:  # slogdet(a)[1]: unpack, use element 1
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
        return self.atom(node)

    def callee(self, call):
        """The object a call's function refers to, when it is static."""
        func = self.unalias(call.func)
        if root_name(func) in self.locals:
            return MISSING
        return static_value(func, self.parsed.resolver, self.locals)

    def call(self, node):
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error("'**' arguments are not supported yet", kw.value)
        func = self.unalias(node.func)
        if isinstance(func, gast.Name) and func.id in self.local_functions:
            result = self.inline_local(self.local_functions[func.id], node)
            return result, ir.Op(operator.pos, [result], {}, node, func.id)
        if isinstance(func, gast.Lambda):
            result = self.inline_local(func, node)
            return result, ir.Op(operator.pos, [result], {}, node, "lambda")
        method = self.typed_method(func)
        if method is not None:  # self.helper(x) -> helper(self, x), resolved by type
            receiver = self.literal(func.value)
            args = [receiver, *[self.literal(a) for a in node.args]]
            kwargs = {kw.arg: self.literal(kw.value) for kw in node.keywords}
            name = self.namer.fresh(method.__name__)
            self.free[name] = method
            expr = gast.Call(func=ir.name(name), args=args, keywords=_keywords(kwargs))
            op = ir.Op(method, args, kwargs, node, f".{func.attr}()")
            op.receiver_type = self.receiver_type
            return expr, op
        if isinstance(func, gast.Attribute) and not self.is_static(func):
            receiver = self.atom(func.value)
            args = [self.literal(a) for a in node.args]
            kwargs = {kw.arg: self.literal(kw.value) for kw in node.keywords}
            prim = getattr(np.ndarray, func.attr, None) or ir.UnknownMember(func.attr, True)
            expr = gast.Call(func=gast.Attribute(value=receiver, attr=func.attr, ctx=gast.Load()),
                             args=args, keywords=_keywords(kwargs))
            return expr, ir.Op(prim, [receiver, *args], kwargs, node, f".{func.attr}()")
        prim = self.callee(node)
        if prim is MISSING:
            name = ast.unparse(gast.gast_to_ast(func))
            if isinstance(func, (gast.Name, gast.Attribute)) and root_name(func) not in self.locals:
                raise self.error(f"name '{name}' is not defined", func, SrcGradError)
            raise self.error(f"calling '{name}' is not supported: call a function by name",
                             func)
        if isinstance(prim, types.MethodType) and is_user_function(prim.__func__):
            # MODEL.run(x) -> run(MODEL, x), resolved by MODEL's class
            receiver = self.bound_value(prim.__self__, node)
            name = self.namer.fresh(prim.__func__.__name__)
            self.free[name] = prim.__func__
            args = [receiver, *[self.literal(a) for a in node.args]]
            kwargs = {kw.arg: self.literal(kw.value) for kw in node.keywords}
            expr = gast.Call(func=ir.name(name), args=args, keywords=_keywords(kwargs))
            op = ir.Op(prim.__func__, args, kwargs, node, f".{prim.__func__.__name__}()")
            op.receiver_type = type(prim.__self__)
            return expr, op
        if isinstance(prim, functools.partial):  # partial(f, a, k=v)(x) -> f(a, x, k=v)
            bound = [self.bound_value(v, node) for v in prim.args]
            keywords = [gast.keyword(arg=k, value=self.bound_value(v, node))
                        for k, v in prim.keywords.items() if k not in
                        {kw.arg for kw in node.keywords}]
            name = self.namer.fresh(getattr(prim.func, "__name__", "function"))
            self.free[name] = prim.func
            target = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
            target.helper = prim.func
            return self.call(gast.copy_location(gast.Call(
                func=target, args=bound + list(node.args),
                keywords=keywords + list(node.keywords)), node))
        helper = getattr(prim, "__name__", None)
        if helper in runtime.__all__ and getattr(runtime, helper) is prim:
            func = ir.name(helper)  # srcgrad.stop_gradient -> stop_gradient: no srcgrad import
        else:
            self.collect_free(func)
        args = [self.literal(a) for a in node.args]
        kwargs = {kw.arg: self.literal(kw.value) for kw in node.keywords}
        if is_user_function(prim) and prim.__code__.co_flags & inspect.CO_VARARGS:
            args = self.pack_varargs(prim, args, node)
        expr = gast.Call(func=func, args=args, keywords=_keywords(kwargs))
        return expr, ir.Op(prim, args, kwargs, node, registry.display_name(prim))

    def pack_varargs(self, fn, args, node):
        """``f(a, b, c)`` for ``def f(x, *rest)``: ``rest`` arrives as one tuple."""
        fixed = fn.__code__.co_argcount
        extra = args[fixed:]
        packed = self.atom_of(gast.Tuple(elts=extra, ctx=gast.Load()),
                              ir.Op(ir.BUILD_TUPLE, extra, {}, node, ir.BUILD_TUPLE.label))
        return args[:fixed] + [packed]

    def unalias(self, func):
        """``model.run`` where ``model = MODEL`` (assigned once) -> ``MODEL.run``."""
        chain, node = [], func
        while isinstance(node, gast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not chain or not isinstance(node, gast.Name) or node.id not in self.env \
                or self.env[node.id] not in self.constants:
            return func
        rebuilt = copy.deepcopy(self.constants[self.env[node.id]])
        for attr in reversed(chain):
            rebuilt = gast.Attribute(value=rebuilt, attr=attr, ctx=gast.Load())
        return gast.copy_location(rebuilt, func)

    def bound_value(self, value, node):
        """A literal for ``value``, or a name bound to it in the generated module."""
        literal = inline_constant(value)
        if literal is not None:
            return literal
        name = self.namer.fresh("bound")
        self.free[name] = value
        ref = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
        ref.helper = value
        return gast.copy_location(ref, node)

    def typed_method(self, func):
        """The function behind ``self.m`` when ``self``'s class is known."""
        if self.receiver_type is None or not isinstance(func, gast.Attribute) \
                or not isinstance(func.value, gast.Name) or not self.params \
                or func.value.id != self.params[0] or self.env.get(self.params[0]) != \
                self.params[0]:
            return None
        method = getattr(self.receiver_type, func.attr, None)
        return method if is_user_function(method) else None

    # -- local functions ----------------------------------------------------------
    def local_function(self, name, node):
        """Remember a nested ``def`` or a lambda: each call is inlined."""
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or getattr(node, "decorator_list", []):
            raise self.error("nested functions with *args, **kwargs, keyword-only parameters "
                             "or decorators are not supported", node)
        self.local_functions[name] = node
        self.locals.discard(name)

    def inline_local(self, fdef, call):
        """The body of a nested function at its call site, with fresh local names.

        Names the body does not assign refer to the enclosing function's
        variables as they are at the call, as a closure would see them.
        """
        if any(f is fdef for f in self.inlining):
            raise self.error("recursive local functions are not supported: define the "
                             "function at module level", call)
        params = [a.id for a in fdef.args.args]
        body = fdef.body if isinstance(fdef.body, list) else [
            gast.copy_location(gast.Return(value=fdef.body), fdef.body)]
        inner = set(params) | _assigned_names(gast.Module(body=body, type_ignores=[]))
        renames = {n: self.namer.fresh(n) for n in sorted(inner)}
        self.locals.update(renames.values())
        defaults = dict(zip(params[len(params) - len(fdef.args.defaults):], fdef.args.defaults))
        given = dict(zip(params, call.args))
        for kw in call.keywords:
            if kw.arg not in params or kw.arg in given:
                raise self.error(f"unexpected argument '{kw.arg}' for the local function", kw)
            given[kw.arg] = kw.value
        for param in params:
            value = given.get(param, defaults.get(param))
            if value is None:
                raise self.error(f"missing argument '{param}' for the local function", call)
            self.assign([gast.Name(id=renames[param], ctx=gast.Store(), annotation=None,
                                   type_comment=None)], value, call)
        wrapper = gast.FunctionDef(name="inlined", args=fdef.args,
                                   body=[_Renamer(renames).visit(copy.deepcopy(s)) for s in body],
                                   decorator_list=[], returns=None, type_comment=None)
        result = self.namer.fresh("result")
        structure(wrapper, result=result, flag=self.namer.fresh("returned"))
        self.count_assignments(wrapper.body)
        self.assignments.update(renames[p] for p in params)
        self.locals.update({result})
        stmts = wrapper.body
        output = stmts.pop() if stmts and isinstance(stmts[-1], gast.Return) else None
        self.inlining.append(fdef)
        try:
            for stmt in stmts:
                self.statement(stmt)
            if output is None or output.value is None:
                return gast.Constant(value=None, kind=None)
            return self.atom(output.value)
        finally:
            self.inlining.pop()

    def emit_call(self, call, prim, target):
        self.collect_free(call.func)
        args = [self.literal(a) for a in call.args]
        kwargs = {kw.arg: self.literal(kw.value) for kw in call.keywords}
        stmt = ir.assign(target, gast.Call(func=call.func, args=args, keywords=_keywords(kwargs)))
        stmt.op = ir.Op(prim, args, kwargs, call, registry.display_name(prim))
        gast.copy_location(stmt, call)
        self.out.append(stmt)

    def opaque(self, node):
        """A copy of ``node`` with local names renamed to their SSA names; evaluated
        as is."""
        node = copy.deepcopy(node)
        for sub in gast.walk(node):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load):
                if getattr(sub, "helper", None) is not None:
                    continue
                if sub.id in self.locals:
                    if sub.id not in self.env:
                        raise self.error(f"local variable '{sub.id}' is used before it is "
                                         f"assigned", sub, SrcGradError)
                    sub.id = self.env[sub.id]
                else:
                    self.collect_free(sub)
        return node

    def collect_free(self, node):
        if getattr(node, "helper", None) is not None:
            return
        root = root_name(node)
        if root is None or root in self.locals:
            for sub in gast.walk(node):
                if isinstance(sub, gast.Name) and sub.id not in self.locals \
                        and isinstance(sub.ctx, gast.Load):
                    self.collect_free(sub)
            return
        value = self.parsed.resolver.lookup(root)
        if value is MISSING:
            raise self.error(f"name '{root}' is not defined", node, SrcGradError)
        self.free[root] = value


def _dict_view(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
        and node.func.attr in ("items", "keys", "values") and not node.args \
        and not node.keywords


def _is_append(call) -> bool:
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
        and call.func.attr == "append" and isinstance(call.func.value, gast.Name) \
        and len(call.args) == 1 and not call.keywords


class _Renamer(gast.NodeTransformer):
    def __init__(self, renames):
        self.renames = renames

    def visit_Name(self, node):
        if node.id in self.renames:
            return gast.copy_location(gast.Name(id=self.renames[node.id], ctx=node.ctx,
                                                annotation=None, type_comment=None), node)
        return node


def _located(tree, where):
    for node in gast.walk(tree):
        if getattr(node, "lineno", None) is None and hasattr(node, "lineno"):
            gast.copy_location(node, where)
    return tree


def _load_id(id_):
    return gast.Name(id=id_, ctx=gast.Load(), annotation=None, type_comment=None)


def _helper(id_):
    """A reference to a srcgrad.runtime helper, resolved without the user's globals."""
    node = _load_id(id_)
    node.helper = getattr(runtime, id_)
    return node


def _builtin_call(name, *args):
    return gast.Call(func=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
                     args=list(args), keywords=[])


def _load(name_node):
    return gast.Name(id=name_node.id, ctx=gast.Load(), annotation=None, type_comment=None)


def _keywords(kwargs):
    return [gast.keyword(arg=k, value=v) for k, v in kwargs.items()]


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


def _assigned_names(func) -> set[str]:
    names = set()
    for node in gast.walk(func):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
    return names
