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
    >>> from ..frontend.parse import parse_function
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

import collections
import operator

import gast
import numpy as np

from .. import ir
from ..errors import SrcGradError, UnsupportedSyntaxError
from ..frontend.linker import is_user_function
from ..frontend.parse import MISSING, ParsedFunction, root_name
from ..ir.emit import block_lines, unparse
from ..ir.naming import Namer
from ..ir.syntax import assigned_names, clone, helper_ref, is_append, is_docstring, source_of, walk
from ..rules import registry
from .calls import DYNAMIC, Calls
from .control import ControlFlow
from .jumps import structure

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


class _Normalizer(ControlFlow, Calls):
    def __init__(self, parsed: ParsedFunction, receiver_type=None):
        self.parsed = parsed
        self.func = parsed.node
        self.params = [a.id for a in self.func.args.args]
        if self.func.args.vararg is not None:  # a callee's *args: one tuple parameter
            self.params.append(self.func.args.vararg.id)
        self.locals = set(self.params) | assigned_names(self.func)
        self.dict_names = {t.id for n in walk(self.func) if isinstance(n, gast.Assign)
                           and isinstance(n.value, (gast.Dict, gast.DictComp))
                           for t in n.targets if isinstance(t, gast.Name)}
        used = {n.id for n in walk(self.func) if isinstance(n, gast.Name)}
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
            if i == 0 and is_docstring(stmt):
                continue
            self.statement(stmt)
        if output is None:
            output = gast.Constant(value=None, kind=None)
        for default in self.func.args.defaults:
            self.collect_free(default)
        program = ir.Program(self.func.name, self.params, self.out, output,
                             self.parsed.filename, self.func, self.free, self.namer,
                             self.output_node)
        vararg = self.func.args.vararg
        program.vararg_params = (vararg.id,) if vararg is not None else ()
        return program

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
                    gast.Subscript(value=ir.name(base), slice=clone(index),
                                   ctx=gast.Load()), target)
                old_item = self.atom_of(current, ir.Op(operator.getitem, [ir.name(base), index],
                                                       {}, target, "indexing"))
                right = self.atom(stmt.value)
                new_item = self.atom_of(
                    gast.BinOp(left=old_item, op=stmt.op, right=right),
                    ir.Op(BINOPS[type(stmt.op)], [old_item, right], {}, stmt,
                          _OP_LABELS.get(BINOPS[type(stmt.op)], "operator")))
                # d[k] += v on a list or dict changes the array d[k] holds in place
                # (then stores it back): the alias check must know
                self.out[-1].item_update = (base, old_item.id, clone(index))
                self.out[-1].user_target = source_of(target)
                self.out[-1].augmented_symbol = _OP_LABELS.get(BINOPS[type(stmt.op)], "+")
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
            self.out[-1].augmented_symbol = _OP_LABELS.get(BINOPS[type(stmt.op)], "+")
            self.out[-1].user_target = target.id
        elif isinstance(stmt, gast.Expr) and is_append(stmt.value):
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
        if rest and not isinstance(first, gast.Name):  # a[0] = b = v: bind v's atom to each
            atom = self.atom(value)
            for target in targets:
                self.bind(target, atom, stmt)
            return
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
        for extra in rest:  # a = b = value, a = d['h'] = value: each gets a's value
            self.bind(extra, gast.copy_location(ir.name(self.env[first.id]), first), stmt)

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
        for node in walk(self.func):
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                    and isinstance(node.value, gast.Name):
                updated.add(node.value.id)
            if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Subscript) \
                    and isinstance(node.target.value, gast.Name):
                updated.add(node.target.value.id)
            if is_append(node):
                updated.add(node.func.value.id)
        for param in self.params:
            if param in updated:
                # snapshot() copies an array, list or dict and leaves a number alone
                # (the name may be rebound to an array before it is updated)
                call = gast.Call(func=helper_ref("snapshot"), args=[ir.name(param)],
                                 keywords=[])
                gast.copy_location(call, self.func)
                self.expr_into(call, gast.Name(id=param, ctx=gast.Store(), annotation=None,
                                               type_comment=None))
                self.out[-1].comment = f"{param} is updated in place below: work on a copy"

    def unpack(self, target, value):
        """``a, b = value``: names bound one by one, nested targets recursively.

        Python evaluates the whole right-hand side before binding any name, so a
        source that a binding before it overwrites (``a, b = b, a`` inside a loop,
        where both keep their names) is copied to a temporary first."""
        if isinstance(value, (gast.Tuple, gast.List)) \
                and not any(isinstance(v, gast.Starred) for v in value.elts):
            if len(value.elts) != len(target.elts):
                raise self.error(f"cannot unpack {len(value.elts)} values into "
                                 f"{len(target.elts)} names", value, SrcGradError)
            atoms = self.parallel_sources(target.elts, [self.atom(v) for v in value.elts],
                                          value)
            for elt, atom in zip(target.elts, atoms):
                self.bind(elt, atom, value)
            return
        if isinstance(value, gast.Call) and all(isinstance(e, gast.Name) for e in target.elts):
            prim = self.callee(value)
            if prim in MULTI_OUTPUT and MULTI_OUTPUT[prim] != len(target.elts):
                raise self.error(f"{registry.display_name(prim)} returns "
                                 f"{MULTI_OUTPUT[prim]} values, not {len(target.elts)}",
                                 value, SrcGradError)
            if is_user_function(prim) or prim in MULTI_OUTPUT:
                # a, b = f(a, b): f's pair returns the tuple.  The arguments are
                # evaluated before the targets are bound (a straight-line target gets
                # a fresh name, which the arguments must not read)
                expr, op = self.call(value)
                if self.current_names(target) & set(ir.names_in(expr)):
                    # a, b = f(a, b) in a loop: into temporaries first, as for `h = h * 2`
                    # (the adjoint of an operation must not write its own operand)
                    temps = [self.namer.temp() for _ in target.elts]
                    self.emit_tuple(temps, expr, op, value)
                    for elt, tmp in zip(target.elts, temps):
                        self.emit_copy(elt, gast.copy_location(ir.name(tmp), value), value)
                    return
                self.emit_tuple([self.define(elt.id) for elt in target.elts], expr, op, value)
                return
        self.unpack_atom(target, self.atom(value), value)

    def emit_tuple(self, names, expr, op, node):
        """``names[0], names[1], ... = expr`` computed by ``op``."""
        stmt = ir.assign(gast.Tuple(elts=[ir.name(n, store=True) for n in names],
                                    ctx=gast.Store()), expr)
        stmt.op = op
        self.out.append(gast.copy_location(stmt, node))

    def unpack_atom(self, target, whole, node):
        """``a, b = t`` for an atom ``t``: element by element (``a = t[0]``, ...)."""
        for elt in target.elts:
            if not isinstance(elt, (gast.Name, gast.Tuple, gast.List, gast.Subscript)):
                raise self.error("only names, elements and tuples of them can be unpacked "
                                 "into", elt)
        whole = self.parallel_sources(target.elts, [whole], node, after=-1)[0]
        for i, elt in enumerate(target.elts):
            index = gast.Constant(value=i, kind=None)
            item = gast.Subscript(value=whole, slice=index, ctx=gast.Load())
            op = ir.Op(operator.getitem, [whole, index], {}, node, "unpacking")
            if isinstance(elt, gast.Name):
                stmt = ir.assign(self.define(elt.id), item)
                stmt.op = op
                self.out.append(gast.copy_location(stmt, elt))
            else:
                self.bind(elt, self.atom_of(item, op), node)

    def bind(self, target, atom, node):
        """``target = atom`` for a name, an element ``x[i]`` or a (nested) tuple of
        them."""
        if isinstance(target, gast.Name):
            self.emit_copy(target, atom, node)
        elif isinstance(target, (gast.Tuple, gast.List)):
            self.unpack_atom(target, atom, node)
        elif isinstance(target, gast.Subscript):  # u[0], u[1] = u[1], u[0]
            self.setitem(target, atom, self.index(target.slice), node)
        else:
            raise self.error("only names, elements and tuples of them can be unpacked into",
                             target)

    def parallel_sources(self, targets, atoms, node, after=0):
        """``atoms`` with each one that an earlier binding of ``targets`` overwrites
        replaced by a temporary copy made before any binding.

        Atom ``j`` is read after the bindings of ``targets[:j + 1 + after]`` (an
        element-by-element unpacking reads its one atom after every binding:
        ``after=-1`` with one atom means all of them).  Only a binding that keeps
        its name overwrites -- inside a loop or branch; a straight-line definition
        gets a fresh name and leaves the old value readable."""
        stored = [self.current_names(t) for t in targets]
        result = []
        for j, atom in enumerate(atoms):
            before = stored if after < 0 else stored[:j + after]
            if isinstance(atom, gast.Name) and any(atom.id in names for names in before):
                tmp = self.namer.temp()
                stmt = ir.assign(tmp, atom)
                stmt.op = ir.Op(operator.pos, [atom], {}, node, "assignment")
                self.out.append(gast.copy_location(stmt, node))
                atom = gast.copy_location(ir.name(tmp), atom)
            result.append(atom)
        return result

    def current_names(self, target) -> set[str]:
        """The names that binding ``target`` here overwrites in place."""
        if not self.depth:
            return set()
        return {self.env[n] for n in ir.stored_names(target) if n in self.env}

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
        # a local named like a helper the generated code calls (unbroadcast, np) is
        # renamed, or it would shadow the helper
        reserved = user_name in registry.RULE_GLOBALS or user_name in registry.called_functions()
        ssa = user_name if user_name not in self.env.values() and user_name not in self.env \
            and not reserved else self.namer.fresh(user_name)
        self.namer.reserve(ssa)
        self.namer.user_names[ssa] = user_name
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
            for node in walk(stmt):
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

    def opaque(self, node):
        """A copy of ``node`` with local names renamed to their SSA names; evaluated
        as is."""
        node = clone(node)
        for sub in walk(node):
            if isinstance(sub, gast.Call) and self.callee(sub) in DYNAMIC:
                raise self.error(f"'{self.callee(sub).__name__}' is not supported: srcgrad "
                                 f"differentiates the code it can read", sub)
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
            for sub in walk(node):
                if isinstance(sub, gast.Name) and sub.id not in self.locals \
                        and isinstance(sub.ctx, gast.Load):
                    self.collect_free(sub)
            return
        value = self.parsed.resolver.lookup(root)
        if value is MISSING:
            raise self.error(f"name '{root}' is not defined", node, SrcGradError)
        self.free[root] = value


