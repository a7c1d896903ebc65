"""Forward mode: the tangent program of a program in A-normal form.

Forward mode needs no tapes and no reversal: each statement that computes a
value depending on the differentiated arguments is followed by the statement
that computes that value's tangent (``d_y`` beside ``y``), from the operands'
tangents, by inlining the primitive's tangent rule (see
:class:`..rules.registry.TangentRule`).  Branches and loops keep their shape --
the tangent statements sit inside them, next to their primals -- so the
generated code reads like the original with one extra line per operation.

These cases need care:

* a variable that some definitions make dependent and others do not (``h =
  np.zeros(3)`` before a loop that adds ``x`` to it) gets ``d_h =
  zero_tangent(h)`` at the independent definitions, so every use of ``d_h``
  reads the tangent of the value ``h`` holds there -- a loop's counter too
  (``for i in range(2)`` where a later ``for i in x`` gives ``i`` a tangent:
  :meth:`Forward.loop_target_tangents`);
* an array updated in place (``h[i] = v``) has its tangent updated in place too
  (``d_h[i] = d_v``); every definition of such a variable makes its tangent a
  private copy (``fresh_tangent``), since a tangent may alias another one (the
  tangent of ``a + c`` is ``d_a`` itself) or the caller's;
* an operand's term has the operand's shape, which broadcasting may widen:
  ``expand(term, out)`` widens it, and is left out where the operands
  provably share a shape (``x * 2``, ``np.sin(x) * x``);
* a call of a user function calls that function's own generated tangent
  function, ``y, d_y = f_jvp(x, d_x)``, so recursion works;
* the terms of a value that is an array or a tuple of arrays as only the run
  shows (``np.gradient`` with one spacing) add with ``add_parts``, part by
  part, where ``+`` would join two tuples: the rule says so
  (``rule.fn.adds_by_parts``).

    >>> import numpy as np
    >>> def f(x, y):
    ...     z = np.sin(x) * y
    ...     return np.sum(z)
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> program = normalize(parse_function(f))
    >>> made = Forward(program, ["x"], linker=None).run()
    >>> print(show_statements(made.body))
    t1 = np.sin(x)
    d_t1 = d_x * np.cos(x)
    z = t1 * y
    d_z = expand(d_t1 * y, z)
    t2 = np.sum(z)
    d_t2 = np.sum(d_z)

A counter whose name an item of ``x`` also binds: its tangent is zeros.

    >>> def g(x):
    ...     s = 0.0
    ...     for i in range(2):
    ...         s = s + x[i] * i
    ...     for i in x:
    ...         s = s + i
    ...     return s
    >>> made = Forward(normalize(parse_function(g)), ["x"], linker=None).run()
    >>> print("\\n".join(show_statements(made.body).splitlines()[3:6]))
    for i in t1:
        d_i = zero_tangent(i)
        t2 = x[i]
"""

from __future__ import annotations

from dataclasses import dataclass

import gast
import numpy as np

from .. import ir
from ..analysis.activity import (
    activity,
    differentiable,
    operand_names,
    shape_classes,
)
from ..frontend.linker import is_user_function
from ..ir.emit import show_statements  # noqa: F401 - used by the docstring examples
from ..ir.syntax import call_to, clone
from ..rules import registry
from ..rules.custom import custom_vjp
from ..version import __version__
from .calls import bind_arguments
from .constants import check_constant_arguments
from .in_place import check_in_place_calls
from .inline import inline_tangent, missing_rule
from .placed import place_op


@dataclass
class Made:
    """The tangent program: statements, and the tangent expression of the output."""

    body: list
    tangent_output: object
    tangent_params: list[str]


class Forward:
    def __init__(self, program: ir.Program, wrt: list[str], linker):
        self.program = program
        self.wrt = list(wrt)
        self.linker = linker
        self.namer = program.namer
        self.varied = activity(program, self.wrt).varied
        self.classes = shape_classes(program)
        self.names: dict[str, str] = {}
        self.updated = _updated(program.body)

    # -- names ------------------------------------------------------------------
    def tangent_name(self, var: str) -> str:
        if var not in self.names:
            self.names[var] = self.namer.adjoint(var)
        return self.names[var]

    def tangent(self, operand):
        """The tangent of an operand expression, or None if it carries none."""
        if isinstance(operand, gast.Name):
            if operand.id not in self.varied:
                return None
            node = ir.name(self.tangent_name(operand.id))
            node.primal = operand
            return node
        if isinstance(operand, (gast.Tuple, gast.List)):
            if not any(n in self.varied for n in ir.names_in(operand)):
                return None
            elts = [self.tangent(e) or _zero_of(e) for e in operand.elts]
            return type(operand)(elts=elts, ctx=gast.Load())
        return None

    # -- the sweep ----------------------------------------------------------------
    def run(self) -> Made:
        program = self.program
        check_in_place_calls(program, self.varied)  # the same refusal as reverse mode's
        tangent_params = [self.tangent_name(p) for p in self.wrt]
        entry = []
        for p in program.params:
            if p in self.varied and p not in self.wrt:
                entry.append(self.define(p, call_to("zero_tangent", ir.name(p)), "independent"))
            elif p in self.updated:
                entry.append(self.define(p, ir.name(self.tangent_name(p)), "argument"))
        body = entry + self.block(program.body)
        return Made(body, self.output_tangent(program.output), tangent_params)

    def output_tangent(self, output):
        if isinstance(output, gast.Tuple):
            return gast.Tuple(elts=[self.output_tangent(e) for e in output.elts],
                              ctx=gast.Load())
        if isinstance(output, gast.Name) and output.id in self.varied:
            return call_to("tangent_like", ir.name(self.tangent_name(output.id)), output)
        return call_to("zero_tangent", output)

    def block(self, stmts) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.If):
                stmt.body = self.block(stmt.body) or [gast.Pass()]
                stmt.orelse = self.block(stmt.orelse)
                out.append(stmt)
            elif isinstance(stmt, (gast.For, gast.While)):
                stmt.body = self.loop_target_tangents(stmt) + self.block(stmt.body) \
                    or [gast.Pass()]
                stmt.orelse = self.block(stmt.orelse)
                out.append(stmt)
            elif isinstance(stmt, gast.Assign) and ir.is_update(stmt):
                out.extend(self.update(stmt))
            elif isinstance(stmt, gast.Assign):
                out.extend(self.assignment(stmt))
            elif getattr(stmt, "op", None) is not None and stmt.op.primitive is ir.APPEND:
                out.extend(self.append(stmt))
            else:
                out.append(stmt)
        return out

    def loop_target_tangents(self, loop) -> list:
        """``d_i = zero_tangent(i)`` at the top of ``for i in t1`` where ``i``
        has a tangent -- another binding of the name carries one (``for i in
        x`` later, which the normaliser writes ``i = t5[k]``) -- but what the
        loop runs over has none (``t1 = range(3)``): its items carry no
        derivative, and the body's rules read ``d_i`` (review s36 R4-22: an
        UnboundLocalError from the generated code).  None for a loop over a
        value with a tangent, whose items the normaliser reads by index."""
        if not isinstance(loop, gast.For) \
                or any(n in self.varied for n in ir.names_in(loop.iter)):
            return []
        return [self.define(n, call_to("zero_tangent", ir.name(n)), "loop counter")
                for n in ir.stored_names(loop.target) if n in self.varied]

    def define(self, var: str, value, origin) -> gast.Assign:
        """``d_var = value``; a private copy when ``var`` is updated in place, or
        when ``value`` may be the very tangent of a variable that is (found by
        review: ``z = y + 1.0; y[0] = 5.0`` made ``d_z`` the ``d_y`` that
        ``d_y[0] = 0.0`` then changed)."""
        if var in self.updated:
            value = call_to("fresh_tangent", value, ir.name(var))
        elif self.may_share_updated(value):
            value = call_to("snapshot", value)
        stmt = ir.assign(self.tangent_name(var), value)
        stmt.origin = origin
        return stmt

    def may_share_updated(self, value) -> bool:
        """Whether the tangent expression ``value`` may be (a view of) the tangent
        of a variable updated in place: it reads one, and is not arithmetic, which
        makes a new array (``expand(d_y, z)`` and ``np.ravel(d_y)`` may be ``d_y``)."""
        updated = {self.tangent_name(n) for n in self.updated}
        if not updated or not updated & set(ir.names_in(value)):
            return False
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
                and value.func.id == "expand" and value.args:
            value = value.args[0]  # expand(term, out): the term, or a view of it
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
                and isinstance(value.func.value, gast.Name) and value.func.value.id == "np" \
                and not any(k.arg == "copy" for k in value.keywords):
            made = getattr(np, value.func.attr, None)
            if isinstance(made, np.ufunc) or value.func.attr in _NEW_ARRAYS:
                return False  # np.sum(d_h), np.tanh(d_y): a new array
        # (a display is a new container: what reads an item of it is copied)
        return not isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Tuple, gast.List,
                                      gast.Dict))

    def assignment(self, stmt) -> list:
        targets = [t for t in ir.target_names(stmt)]
        if not any(t in self.varied for t in targets):
            return [stmt]
        op = getattr(stmt, "op", None)
        moving = op is not None and differentiable(op) \
            and any(n in self.varied for n in operand_names(op))
        if moving and is_user_function(op.primitive) \
                and registry.user_rule(op.primitive, "jvp") is None:
            return self.call(stmt, op, op.primitive)   # (else the rule the user registered)
        if moving and isinstance(op.primitive, custom_vjp) \
                and registry.lookup_tangent(op.primitive) is None:
            return self.call(stmt, op, op.primitive.fn)  # forward mode through its source
        if not moving:  # an independent definition of a dependent variable
            return [stmt] + [self.define(t, call_to("zero_tangent", ir.name(t)), "independent")
                             for t in targets]
        rule = registry.lookup_tangent(op.primitive)
        if rule is None:
            raise missing_rule(self.program, op, forward=True)
        check_constant_arguments(self.program, op, rule, self.varied)  # no silent zero
        target = stmt.targets[0]
        out_expr = gast.Tuple(elts=[ir.name(t) for t in targets], ctx=gast.Load()) \
            if isinstance(target, gast.Tuple) else ir.name(targets[0])
        done = inline_tangent(rule, op, out_expr, self.tangent, self.namer,
                              shape_class=lambda n: self.classes.get(n, n),
                              filename=self.program.filename)
        out = [stmt]
        terms = [term for _, term in done.contributions]
        place_op(done.statements + terms, self.program, op)  # run-time refusals' place
        for s in done.statements:
            s.origin = op.label
            out.append(s)
        if not terms:
            return out + [self.define(t, call_to("zero_tangent", ir.name(t)), op.label)
                          for t in targets]
        if isinstance(target, gast.Tuple):
            out.extend(self.unpack(target, terms, op.label))
            return out
        total = _sum_by_parts(terms) if getattr(rule.fn, "adds_by_parts", False) \
            else _sum_terms(terms)
        out.append(self.define(targets[0], total, op.label))
        return out

    def unpack(self, target, terms, origin) -> list:
        """``d_a, d_b = term`` for a primitive with several outputs (summed part
        by part when several operands move)."""
        names = ir.stored_names(target)
        if len(terms) == 1 and not any(n in self.updated for n in names):
            stmt = ir.assign(_tangent_target(target, self.tangent_name), terms[0])
            stmt.origin = origin
            return [stmt]
        parts = []
        out = []
        for term in terms:
            held = self.namer.fresh("dt")
            out.append(ir.assign(held, term))
            parts.append(held)
        for i, var in enumerate(names):
            total = None
            for held in parts:
                piece = gast.Subscript(value=ir.name(held), slice=gast.Constant(value=i, kind=None),
                                       ctx=gast.Load())
                total = piece if total is None else gast.BinOp(left=total, op=gast.Add(),
                                                               right=piece)
            out.append(self.define(var, total, origin))
        return out

    def update(self, stmt) -> list:
        """``x[i] = v``: ``d_x[i] = d_v`` beside it (``d_x`` is private, see define)."""
        x, index, value = stmt.op.args
        if x.id not in self.varied:
            return [stmt]
        moved = self.tangent(value)
        if moved is not None:  # none where x is an integer or bool array (it truncates)
            moved = call_to("written_tangent", moved, ir.name(x.id))
        new = ir.assign(gast.Subscript(value=ir.name(self.tangent_name(x.id)),
                                       slice=clone(stmt.targets[0].slice), ctx=gast.Store()),
                        moved if moved is not None else gast.Constant(value=0.0, kind=None))
        new.origin = "element assignment"
        return [stmt, new]

    def append(self, stmt) -> list:
        xs, item = stmt.op.args
        if xs.id not in self.varied:
            return [stmt]
        moved = self.tangent(item) or _zero_of(item)
        call = gast.Call(func=gast.Attribute(value=ir.name(self.tangent_name(xs.id)),
                                             attr="append", ctx=gast.Load()),
                         args=[moved], keywords=[])
        new = gast.Expr(value=call)
        new.updates = self.tangent_name(xs.id)
        new.origin = ".append()"
        return [stmt, new]

    def call(self, stmt, op, fn) -> list:
        """``y, d_y = f_jvp(a, b, d_a)`` for ``y = f(a, b)``."""
        args = bind_arguments(self.program, op)
        self.linker.adopt(self.program)  # the defaults bind_arguments bound
        positions = tuple(i for i, a in enumerate(args)
                          if isinstance(a, gast.Name) and a.id in self.varied)
        made = self.linker.request_tangent(fn, positions, getattr(op, "receiver_type", None),
                                           getattr(op, "callees", ()))
        target = stmt.targets[0]
        tangents = [self.tangent(args[i]) for i in positions]
        value = gast.Call(func=ir.name(made.name), args=[*args, *tangents], keywords=[])
        names = ir.target_names(stmt)
        if isinstance(target, gast.Name) and target.id not in self.updated:
            both = gast.Tuple(elts=[clone(target), _tangent_target(target, self.tangent_name)],
                              ctx=gast.Store())
            new = ir.assign(both, value)
            rest = []
        else:  # a tuple returned: unpack value and tangent apart (names only, so that
            # reverse mode can differentiate this code again)
            result, held = self.namer.fresh(f"{made}_out"), self.namer.fresh("dt")
            new = ir.assign(gast.Tuple(elts=[ir.name(result, store=True),
                                             ir.name(held, store=True)], ctx=gast.Store()), value)
            rest = [ir.assign(clone(target), ir.name(result))]
            if any(n in self.updated for n in names) or not isinstance(target, gast.Tuple) \
                    or any(not isinstance(e, gast.Name) for e in target.elts):
                rest += [self.define(n, _part(held, target, n), str(op.label)) for n in names]
            else:
                rest.append(ir.assign(_tangent_target(target, self.tangent_name), ir.name(held)))
        new.origin = op.label
        new.source_stmt = stmt
        return [new, *rest]


def _part(held, target, var):
    """The tangent of ``var`` inside the tangent ``held`` of ``target``."""
    if isinstance(target, gast.Name):
        return ir.name(held)
    path = _path(target, var)
    node = ir.name(held)
    for i in path:
        node = gast.Subscript(value=node, slice=gast.Constant(value=i, kind=None),
                              ctx=gast.Load())
    return node


def _path(target, var):
    if isinstance(target, gast.Name):
        return [] if target.id == var else None
    for i, elt in enumerate(target.elts):
        sub = _path(elt, var)
        if sub is not None:
            return [i, *sub]
    return None


def _tangent_target(target, tangent_name):
    """The tangent target mirroring a (possibly nested) tuple target."""
    if isinstance(target, gast.Name):
        return ir.name(tangent_name(target.id), store=True)
    return gast.Tuple(elts=[_tangent_target(e, tangent_name) for e in target.elts],
                      ctx=gast.Store())


def _updated(body) -> set[str]:
    """Variables updated in place somewhere (``x[i] = v``, ``xs.append(v)``)."""
    return {n for stmt in ir.walk_statements(body) if ir.is_update(stmt)
            for n in ir.target_names(stmt)}


#: NumPy functions whose result is a new array, never (a view of) an operand.
_NEW_ARRAYS = frozenset({
    "sum", "mean", "prod", "dot", "matmul", "einsum", "cumsum", "cumprod", "where",
    "concatenate", "stack", "outer", "inner", "tensordot", "var", "std", "trace", "max",
    "min", "amax", "amin", "array", "copy", "zeros_like", "ones_like", "full_like",
})


def _sum_terms(terms):
    """The sum of the terms of the operands that move; the terms of a primitive
    with several outputs (tuple displays, ``np.linalg.lstsq``) add part by part."""
    if len(terms) > 1 and all(isinstance(t, gast.Tuple) and len(t.elts) == len(terms[0].elts)
                              for t in terms):
        return gast.Tuple(elts=[_sum_terms(list(parts)) for parts in
                                zip(*(t.elts for t in terms))], ctx=gast.Load())
    total = terms[0]
    for term in terms[1:]:
        total = gast.BinOp(left=total, op=gast.Add(), right=term)
    return total


def _sum_by_parts(terms):
    """The sum of terms that are arrays or tuples of arrays as only the run
    shows (a rule marked ``adds_by_parts``: ``np.gradient`` with one spacing),
    with :func:`~srcgrad.runtime.add_parts`, where ``+`` would join two tuples."""
    if all(isinstance(t, gast.Tuple) for t in terms):
        return _sum_terms(terms)  # displays add part by part as they are
    total = terms[0]
    for term in terms[1:]:
        total = call_to("add_parts", total, term)
    return total


def _zero_of(operand):
    if isinstance(operand, gast.Constant):
        return gast.Constant(value=0.0, kind=None)
    return call_to("zero_tangent", operand)


def tangent_sweep(program: ir.Program, wrt: list[str], linker, value: bool = True):
    """The tangent sweep of ``program``: ``(made, result)``, where ``made`` holds
    the statements (each followed by its tangent) and the tangent parameters, and
    ``result`` is what the generated function returns -- ``(value, tangent)``, or
    the tangent alone without ``value``."""
    made = Forward(program, wrt, linker).run()
    result = gast.Tuple(elts=[program.output, made.tangent_output], ctx=gast.Load()) \
        if value else made.tangent_output
    return made, result


def tangent_doc(program: ir.Program, wrt: list[str], tangent_params, value: bool = True) -> str:
    """The docstring of a generated tangent function.  (Users reach these through
    :func:`srcgrad.api.higher.tangent_function`.)"""
    shown = getattr(program, "shown_params", None) or {}  # np_1: the parameter np
    listing = ", ".join(shown.get(w, w) for w in wrt) or "nothing"
    tangents = ", ".join(tangent_params)
    returns = "(value, tangent of the value)" if value else "the tangent of its value"
    return (f"Forward mode of {program.name}: returns {returns}.\n\n"
            f"{tangents or 'No argument'} {'is the tangent' if len(wrt) == 1 else 'are the tangents'}"
            f" of {listing}: the direction the derivative is taken in.\n"
            f"Generated by srcgrad {__version__} from {program.name} "
            f"({program.filename}, line {program.node.lineno}).")
