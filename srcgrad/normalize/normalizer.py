"""Normalisation: desugar and bring the function into A-normal form.

After this pass every statement applies one operation to names and constants,
every variable is assigned once (a redefinition gets a fresh name, ``h_1``), and
each operation knows the primitive it applies (``stmt.op``, see :mod:`..ir`), so
the adjoint rules can be looked up without re-resolving anything.  Augmented
assignment becomes plain assignment, ``a, b = x, y`` becomes two assignments,
and comparisons and boolean operators are kept whole as opaque, inactive
expressions.

The normaliser is one object (it keeps the current name of each variable, the
free names read, the statements emitted so far) assembled from mixins, one
per kind of syntax: :class:`.statements.Statements` (assignment in every
form), :class:`.expressions.Expressions` (operations on atoms),
:class:`.control.ControlFlow` (branches, loops, comprehensions) and
:class:`.calls.Calls` (what a call refers to, local functions inlined).  This
module holds the driver: it runs :func:`.jumps.structure` first (no statement
follows a jump in its block; one result variable), then each statement in turn.

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

import gast

from .. import ir
from ..errors import UnsupportedSyntaxError
from ..frontend.parse import MISSING, ParsedFunction, static_value
from ..ir.emit import block_lines, unparse
from ..ir.naming import Namer
from ..ir.syntax import assigned_names, is_docstring, walk, walk_nodes
from ..rules import registry
from .argument_checks import unplaced_checks
from .argument_updates import dispatching
from .calls import Calls
from .control import ControlFlow
from .expressions import Expressions
from .index_tricks import IndexTricks
from .inlining import Inlining
from .jumps import structure
from .module_parameters import rename_parameters
from .local_tests import LocalCallsInTests, loop_tests_as_breaks
from .specialise import Specialisation
from .statements import Statements
from .sugar import Sugar
from .user_operators import UserOperators
from .user_methods import MethodArguments


def normalize(parsed: ParsedFunction, receiver_type=None, callees=(),
              object_classes=()) -> ir.Program:
    """Turn a fenced function into an :class:`ir.Program` in A-normal form.

    ``receiver_type`` is the class of the first parameter when the function is
    a method (``self``): calls of its methods then resolve statically, as do
    those of the user objects at the positions of ``object_classes`` (pairs
    ``(position, class)``).
    ``callees`` are the functions the call passes as arguments
    (:class:`~srcgrad.api.arguments.Callee`, with ``position``, ``name`` and
    ``obj``): calls of those parameters are calls of them
    (:meth:`.specialise.Specialisation.function_arguments`).
    """
    return _Normalizer(parsed, receiver_type, callees, object_classes).run()


def parameter_nodes(func) -> list:
    """``func``'s parameters in the order of Python's signature: positional,
    ``*args``, keyword-only, ``**kwargs`` (those of a function called from
    differentiated code, which the caller binds by name at compile time)."""
    args = func.args
    return [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
            *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]


def unparse_body(program: ir.Program) -> str:
    """The program's statements and return as source (for doctests and debugging)."""
    lines = block_lines(program.body, 0)
    lines.append("return " + unparse(program.output))
    return "\n".join(lines)


class _Normalizer(Statements, Expressions, ControlFlow, Calls, Inlining, Specialisation,
                  Sugar, LocalCallsInTests, MethodArguments, UserOperators, IndexTricks):
    def __init__(self, parsed: ParsedFunction, receiver_type=None, callees=(),
                 object_classes=()):
        self.parsed = parsed
        self.callees = callees
        self.func = parsed.node
        # a parameter named np or math: np_1 here, np in the signature (module_parameters.py)
        self.shown_params = rename_parameters(self.func)
        # in the order of Python's signature, which the caller binds its arguments
        # in (ad/calls.py): a callee's *args one tuple, its **kwargs one dict
        self.param_nodes = parameter_nodes(self.func)
        self.params = [a.id for a in self.param_nodes]
        # one walk for the names stored, the names of dicts and every name used
        nodes = walk_nodes(self.func)
        names = [n for n in nodes if isinstance(n, gast.Name)]
        self.locals = set(self.params) | {n.id for n in names if isinstance(n.ctx, gast.Store)}
        self.dict_names = {t.id for n in nodes if isinstance(n, gast.Assign)
                           and isinstance(n.value, (gast.Dict, gast.DictComp))
                           for t in n.targets if isinstance(t, gast.Name)}
        if self.func.args.kwarg is not None:  # **kw: a dict (kw.get(k, v) reads it)
            self.dict_names.add(self.func.args.kwarg.id)
        used = {n.id for n in names}
        self.namer = Namer(used | set(registry.RULE_GLOBALS))
        self.namer.user_names.update(self.shown_params)
        self.env = {p: p for p in self.params}     # user variable -> current SSA name
        self.free: dict[str, object] = {}
        self.out: list = []
        self.depth = 0                              # nesting in if/for/while
        self.local_functions: dict[str, object] = {}  # nested defs and lambdas, inlined
        self.called_parameters: dict[str, object] = {}  # nonlinearity=np.tanh, called
        self.passed: dict[str, object] = {}         # parameter -> the function it holds
        self.dispatch_classes: dict = {}            # classes of objects in lists (ordered set)
        self.inlining: list = []
        self.receiver_type = receiver_type          # type of the first parameter (methods)
        # the classes of user objects passed other than first (user_methods.py)
        self.param_classes = {self.params[i]: c for i, c in object_classes
                              if i < len(self.params)}
        self.constants: dict[str, object] = {}      # names assigned once, from a literal
        # the parameters passed a list or tuple (xs + ys concatenates: scan_sequences.py)
        self.sequence_params = tuple(getattr(parsed, "sequence_params", ()))
        self.assignments = collections.Counter()    # how often each name is assigned

    # -- errors ---------------------------------------------------------------
    def error(self, message, node, cls=UnsupportedSyntaxError):
        return self.parsed.error(cls, message, node)

    # -- driver ---------------------------------------------------------------
    def run(self) -> ir.Program:
        output = None
        self.output_node = self.func
        self.desugar()
        loop_tests_as_breaks(self.func)  # while f(x) > c, f a local function (local_tests.py)
        self.locals |= assigned_names(self.func)
        result, flag = self.namer.fresh("result"), self.namer.fresh("returned")
        parts = structure(self.func, result=result, flag=flag, fresh=self.namer.fresh)
        self.count_assignments(self.func.body)
        self.locals |= {result, flag, *parts}
        self.copy_updated_arguments()
        self.function_defaults()
        self.function_arguments()
        body = self.func.body
        # m(x) for m in self.mods: the classes the code dispatches on, which the
        # look at what a called helper changes follows too (argument_updates.py),
        # with those of the objects passed on (predict(m, x) calling m(x))
        with dispatching((*self.dispatch_classes, *self.passed_object_classes())):
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
        self.out[:0] = unplaced_checks(self.argument_checks, self.params, self.parsed.filename)
        self.defaults_as_values()
        program = ir.Program(self.func.name, self.params, self.out, output,
                             self.parsed.filename, self.func, self.free, self.namer,
                             self.output_node)
        vararg = self.func.args.vararg
        program.vararg_params = (vararg.id,) if vararg is not None else ()
        program.defaults = self.signature_defaults()
        program.specialised = self.specialised
        program.shown_params = self.shown_params
        # the classes of the user objects passed (memory/stale_views.py reads a
        # method called for what it does to tell whether it changes their arrays)
        program.param_classes = dict(getattr(self, "param_classes", {}))
        if self.receiver_type is not None and self.params:
            program.param_classes[self.params[0]] = self.receiver_type
        return program

    def defaults_as_values(self) -> None:
        """The parameters' defaults in the generated signature: as written where
        the function's globals and closure give them their value; the value
        itself where they read a variable of the enclosing scope
        (``lambda v, k=k: ...`` in a loop), which the generated module cannot."""
        args = self.func.args
        defaults = args.defaults
        values = getattr(self.parsed.fn, "__defaults__", None) or ()
        if len(values) != len(defaults):
            values = [MISSING] * len(defaults)
        given = getattr(self.parsed.fn, "__kwdefaults__", None) or {}
        places = [(defaults, i, default, value)
                  for i, (default, value) in enumerate(zip(defaults, values))]
        places += [(args.kw_defaults, i, default, given.get(param.id, MISSING))
                   for i, (param, default) in enumerate(zip(args.kwonlyargs, args.kw_defaults))
                   if default is not None]  # a keyword-only parameter's (callees only)
        for held, i, default, value in places:
            if value is not MISSING and not self.reads_value(default, value):
                held[i] = gast.copy_location(self.bound_value(value, default), default)
                continue
            self.collect_free(default)

    def signature_defaults(self) -> list:
        """The defaults of the generated signature's trailing parameters, aligned
        with :attr:`params`: ``def layer(x, w, *, scale=1.0)`` gives ``def
        layer_forward(x, w, scale=1.0)``; a ``*args`` or ``**kwargs`` parameter,
        always passed by the caller, ends the run (``def h(x, y=1, *rest)``:
        none, where ``y``'s default would otherwise have been shown on ``rest``)."""
        args = self.func.args
        positional = [*args.posonlyargs, *args.args]
        given = dict(zip([a.id for a in positional[len(positional) - len(args.defaults):]],
                         args.defaults))
        given.update({a.id: d for a, d in zip(args.kwonlyargs, args.kw_defaults)
                      if d is not None})
        run = []
        for name in reversed(self.params):
            if name not in given:
                break
            run.append(given[name])
        return run[::-1]

    def reads_value(self, node, value) -> bool:
        """Whether ``node`` evaluates to ``value`` in the function's own scope."""
        if isinstance(node, gast.Constant):
            return True
        names = [n.id for n in walk(node) if isinstance(n, gast.Name)]
        if all(n not in self.locals and self.parsed.resolver.has(n) for n in names):
            found = static_value(node, self.parsed.resolver)
            return found is value or found is MISSING
        return False

    def returned(self, stmt):
        value = stmt.value
        if value is None:
            return gast.Constant(value=None, kind=None)
        if isinstance(value, gast.Tuple):
            return gast.Tuple(elts=[self.atom(e) for e in value.elts], ctx=gast.Load())
        return self.atom(value)

    def count_assignments(self, stmts) -> None:
        """Count the assignments of each name (literal propagation needs exactly one)."""
        for stmt in stmts:
            for node in walk_nodes(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    self.assignments[node.id] += 1
