"""Normalisation of calls: rules, user functions, methods, partials, local functions.

Part of :mod:`.normalizer` (a mixin of its normaliser).  A call is resolved at
compile time to the object it calls: a primitive with an adjoint rule, a user
function (differentiated through its own source, see :mod:`.calls`), a method
of an object whose class is known, a ``functools.partial``, or a function
defined inside the differentiated one, which is inlined at each call -- as is
one a helper returns (``flat, unflatten = flatten(params)``: the helper is
inlined where its result is assigned; both in :mod:`.inlining`).

Before, a function calling a user function (``scale``), a local function, a
``functools.partial`` and a srcgrad marker; after, the user function is a
call the linker will pair with its own generated code, the local function's
body is inlined, the partial is its function with the bound arguments, and
the marker is named without ``srcgrad.``:

    >>> from .._doctest_helpers import scale
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> norm2 = functools.partial(np.linalg.norm, ord=2)
    >>> def f(x, w):
    ...     def act(v):
    ...         return np.tanh(v) * w
    ...     h = act(scale(x, k=3.0))
    ...     return norm2(h) + runtime.stop_gradient(np.sum(h))
    >>> program = normalize(parse_function(f))
    >>> print(unparse_body(program))
    v_1 = scale(x, k=3.0)
    t1 = np.tanh(v_1)
    t2 = t1 * w
    h = t2
    t3 = norm(h, ord=2)
    t4 = np.sum(h)
    t5 = stop_gradient(t4)
    t6 = t3 + t5
    return t6
    >>> program.body[0].op.primitive is scale, program.body[4].op.primitive is np.linalg.norm
    (True, True)
"""

from __future__ import annotations

import ast
import collections
import functools
import inspect
import operator
import types

import gast
import numpy as np

from .. import ir, runtime
from ..errors import SrcGradError
from ..frontend.linker import Callee, held_element_classes, is_user_function
from ..frontend.wrappers import takes_wrapped_parameters
from ..frontend.parse import (
    MISSING,
    parse_function,
    root_name,
    source_target,
    static_value,
)
from ..ir.syntax import (
    clone,
    constant,
    keywords_of,
    source_of,
    updated_in_place,
    walk,
)
from ..rules import registry
from ..rules.custom import custom_vjp
from .array_operands import ArrayOperands
from .argument_updates import (
    augmented_parameters,
    call_effects,
    dispatching,
    updated_arguments,
)
from .call_updates import (
    call_guard,
    copy_passed,
    deeply_updated,
    read_after_call,
    read_described,
)
from .function_values import FunctionValues
from .inlining import returned_functions
from .keywords import Keywords
from .list_methods import certainly_list
from .made_transforms import MadeTransforms, is_transform
from .mutable_defaults import changed_defaults, default_message
from .named_tuples import NamedTuples, is_named_tuple_class
from .none_results import writes_into_argument
from .numpy_callables import NumpyCallables
from .partials import Partials, partial_call
from .records import Records, is_record_class
from .rewrites import Rewrites, located_guard
from .selections import Selections
from .starred import packed_shapes
from .sugar import NON_DIFFERENTIABLE_BUILTINS, builtin_ref

#: Primitives that take a function only to order items or to act on a
#: cotangent: a lambda passed to them is a value, never differentiated through.
TAKES_FUNCTIONS = (sorted, runtime.on_grad, runtime.index_of_max, runtime.index_of_min,
                   runtime.sorted_order)  # sorted's tangent, differentiated again

#: Builtins that run or inspect code srcgrad cannot see.
DYNAMIC = (exec, eval, compile, globals, locals, vars, __import__)


def bounded_deque(call) -> bool:
    """Whether ``call`` (of ``collections.deque``) gives a ``maxlen`` that may
    not be None (review s36 R4-20: its appends drop items, a list's do not)."""
    given = [kw.value for kw in call.keywords if kw.arg in ("maxlen", None)] + call.args[1:]
    return any(not (isinstance(v, gast.Constant) and v.value is None) for v in given)


class Calls(Selections, NamedTuples, Records, Keywords, Rewrites, Partials, ArrayOperands,
            MadeTransforms, NumpyCallables, FunctionValues):
    """Calls and local functions (mixed into the normaliser); the calls that pick
    one item of a sequence are :class:`.selections.Selections`, those that build
    a named tuple :class:`.named_tuples.NamedTuples`, ``**`` arguments
    :class:`.keywords.Keywords`."""

    def callee(self, call):
        """The object a call's function refers to, when it is static."""
        func = self.unalias(call.func)
        if root_name(func) in self.locals:
            return MISSING
        return static_value(func, self.parsed.resolver, self.locals)

    def shown_statement(self, made, shown) -> None:
        """The statement ``made`` (one srcgrad wrote for the user's), shown in
        messages about it as ``shown``: the call as the user would write it."""
        start = len(self.out)
        self.statement(made)
        for stmt in self.out[start:]:
            if getattr(getattr(stmt, "op", None), "node", None) is made:
                stmt.op.node = shown

    def written_in_place(self, node, shown):
        """``t = np.putmask(y, m, v)``: the call ``node`` of a function that
        writes into its first argument, made the statement it is -- followed or
        refused as one, shown in messages as ``shown`` (the user's names) -- and
        None, its value in Python (none_results.py)."""
        made = gast.copy_location(gast.Expr(value=node), node)
        self.shown_statement(made, gast.copy_location(gast.Expr(value=shown), made))
        none = gast.copy_location(gast.Constant(value=None, kind=None), node)
        return none, ir.Op(operator.pos, [none], {}, node, "None")

    def call(self, node):
        if any(kw.arg is None for kw in node.keywords):
            node = self.expanded_keywords(node)
        if isinstance(node.func, gast.Name) and node.func.id in self.called_parameters:
            # nonlinearity(h) for a parameter nonlinearity=np.tanh, or passed np.tanh: np.tanh(h)
            default = clone(self.called_parameters[node.func.id])
            node = gast.copy_location(gast.Call(func=gast.copy_location(default, node.func),
                                                args=node.args, keywords=node.keywords), node)
        if isinstance(node.func, gast.Name) and self.receives_class(node.func) \
                and not self.assignments[node.func.id]:
            # cls(...) in a classmethod (Normal.from_params(theta)): the class it runs for
            node = gast.copy_location(gast.Call(func=self.bound_value(
                self.receiver_type, node.func), args=node.args, keywords=node.keywords), node)
        node = self.own_method_call(node)  # self(x), super().m(x) (user_methods.py)
        rebuilt = self.built_like(node)
        if rebuilt is not None:  # type(p)(*(d_a, d_b)), p = P(a, b): P(d_a, d_b)
            node = rebuilt
        if any(isinstance(a, gast.Starred) for a in node.args):  # *x of unknown length
            self.starred_call(node, self.starred_callee(node))
        func = self.unalias(node.func)
        made = (self.partial_lambda(func) or self.transform_lambda(func)) \
            if isinstance(func, gast.Call) else None  # srcgrad.grad(L)(w): made_transforms.py
        if made is None and isinstance(func, gast.Name) \
                and hasattr(self.local_functions.get(func.id), "partial_of"):
            made = self.local_functions[func.id]
        if made is not None and not hasattr(made, "partial_of"):  # srcgrad.grad(L)(w)
            result = self.inline_local(made, node)
            return result, ir.Op(operator.pos, [result], {}, node, source_of(func))
        if made is not None:  # functools.partial(np.multiply, w)(x): partials.py
            call = partial_call(made, node)
            if writes_into_argument(self.callee(call)):
                return self.written_in_place(call, partial_call(made, node, made.partial_shown))
            return self.call(call)
        if writes_into_argument(self.callee(node)):
            return self.written_in_place(node, node)
        displayed = self.displays_as_arrays(node)
        if displayed is not None:
            node = displayed
        if isinstance(func, gast.Name) and func.id in self.local_functions:
            result = self.inline_local(self.local_functions[func.id], node)
            return result, ir.Op(operator.pos, [result], {}, node, func.id)
        if isinstance(func, gast.Lambda):
            result = self.inline_local(func, node)
            return result, ir.Op(operator.pos, [result], {}, node, "lambda")
        held = self.class_held_function(func)
        if held is not None:  # self.act(z) of a class attribute act = np.tanh: np.tanh(z)
            self.refuse_instance_override(func, self.class_of(func.value), node)
            return self.call(gast.copy_location(gast.Call(
                func=self.static_reference(held) or self.bound_value(held, func),
                args=node.args, keywords=node.keywords), node))
        method = self.typed_method(func)
        if method is not None:  # self.helper(x) -> helper(self, x), resolved by type
            cls = self.class_of(func.value)
            binding = inspect.getattr_static(cls, func.attr, None)
            # cls.f(z) in a classmethod: f as the class holds it (cls.h(z) of a plain
            # method h passes z first, as Python does)
            static = isinstance(binding, staticmethod) or (
                self.receives_class(func.value) and not isinstance(binding, classmethod))
            if not static and not isinstance(binding, classmethod) \
                    and not self.receives_class(func.value):
                self.refuse_instance_override(func, cls, node)
            self.check_caller_sees_no_update(method, node, method=not static, owner=cls)
            # self.m(x) for a @staticmethod m: m(x); for a @classmethod: m(type(self), x)
            receiver = [] if static else [self.bound_value(cls, func)] \
                if isinstance(binding, classmethod) else [self.literal(func.value)]
            args = [*receiver, *[self.passed_value(a) for a in node.args]]
            kwargs = {kw.arg: self.passed_value(kw.value) for kw in node.keywords}
            name = self.namer.fresh(method.__name__)
            self.free[name] = method
            expr, args, kwargs = self.helper_call(ir.name(name), method, args, kwargs, node)
            op = ir.Op(method, args, kwargs, node, f".{func.attr}()")
            op.receiver_type = None if static else cls
            op.callees = self.handed_on_classes()  # for m in self.mods: m(x)
            return expr, op
        if self.is_local_pop(node):
            return self.popped(node)
        if isinstance(func, gast.Attribute) and not self.is_static(func):
            cls = self.local_named_tuple(func)
            call = None if cls is None else self.named_tuple_method(node, cls)
            if call is not None:  # p.total(), p._replace(W=v) of a local P(...)
                return self.call(call)
            call = self.replaced_fields(node) if cls is None else None
            if call is not None:  # p._replace(W=v), p's class known when the code runs
                return self.call(call)
            held = self.held_callable(node) or self.held_object_method(node)
            if held is not None:  # self.l1(x), self.enc.forward(x): user_methods.py
                return self.call(held)
            classes = self.dispatchable(func)
            if classes:  # layer.forward(x), layer from a list of objects: by its class
                result = self.dispatched(node, func, classes)
                return result, ir.Op(operator.pos, [result], {}, node, f".{func.attr}()")
            if func.attr == "get" and isinstance(func.value, gast.Name) and not node.keywords \
                    and func.value.id in self.dict_names and len(node.args) in (1, 2) \
                    and not any(isinstance(a, gast.Starred) for a in node.args):
                result = self.atom(self.dict_get(func.value, node))
                return result, ir.Op(operator.pos, [result], {}, node, ".get()")
            receiver = self.atom(func.value)
            args = [self.literal(a) for a in node.args]
            kwargs = {kw.arg: self.literal(kw.value) for kw in node.keywords}
            text = isinstance(func.value, gast.Constant) and isinstance(func.value.value, str)
            prim = getattr(str if text else np.ndarray, func.attr, None) \
                or ir.UnknownMember(func.attr, True)  # ('w={}'.format(w): str.format)
            if func.attr in ("index", "count") and (isinstance(
                    func.value, (gast.List, gast.Tuple)) or self.certainly_sequence(func.value)
                    or isinstance(func.value, gast.Name) and func.value.id in self.locals
                    and certainly_list(self.func, self.params, self.callee, func.value.id,
                                       displays=(gast.List, gast.ListComp, gast.Tuple))):
                prim = getattr(list, func.attr)  # vals.index(max(vals)): an int, no derivative
            expr = gast.Call(func=gast.Attribute(value=receiver, attr=func.attr, ctx=gast.Load()),
                             args=args, keywords=keywords_of(kwargs))
            op = ir.Op(prim, [receiver, *args], kwargs, node, f".{func.attr}()")
            op.hint = self.method_hint(func, prim)  # self.act(h): why, if refused
            return expr, op
        prim = self.callee(node)
        polynomial = self.polynomial_call(node, prim)
        if polynomial is not None:  # P(x) of a np.poly1d: np.polyval(P.coeffs, x)
            return self.call(polynomial)
        typed = self.typed_ufunc_call(node, prim)
        if typed is not None:  # np.add(x, 1.5, dtype=D): the operands cast to D first
            return self.call(typed)
        if inspect.getattr_static(type(prim), "__srcgrad_custom_vjp__", None) is not None:
            # dHdq(q) for dHdq = srcgrad.grad(H): a custom_vjp of second-order code
            prim = prim.__srcgrad_custom_vjp__() or prim
        if callable(getattr(prim, "cache_info", None)) and is_user_function(
                getattr(prim, "__wrapped__", None)):
            # @functools.lru_cache / @functools.cache: a call gives what the function
            # it caches computes (review s37 R5-11), so that function is differentiated
            prim = prim.__wrapped__
        if prim in DYNAMIC:
            raise self.error(f"'{prim.__name__}' is not supported: srcgrad differentiates the "
                             f"code it can read", node)
        if prim is collections.deque and bounded_deque(node):
            raise self.error(
                f"'{source_of(node)}' is not supported: a deque with a maxlen drops its oldest "
                f"item when an append fills it, which srcgrad, following the deque's appends "
                f"as a list's, does not do; keep the window as a list, as in window = "
                f"(window + [v])[-k:]", node)
        if prim is MISSING:
            name = ast.unparse(gast.gast_to_ast(func))
            if isinstance(func, gast.Name) and func.id in self.locals and any(
                    is_user_function(inspect.getattr_static(c, "__call__", None))
                    for c in self.dispatch_classes):  # layer(h), layer from a list: __call__
                called = gast.copy_location(gast.Attribute(value=clone(func), attr="__call__",
                                                           ctx=gast.Load()), func)
                return self.call(gast.copy_location(gast.Call(
                    func=called, args=node.args, keywords=node.keywords), node))
            if isinstance(func, gast.Name) and func.id in self.params:
                raise self.error(self.called_parameter(func.id), func)
            made = self.closure_call(func)
            if made is not None:  # flatten(p)[1](v)
                raise self.error(self.closure_use(made[0]), func)
            if isinstance(func, (gast.Name, gast.Attribute)) and root_name(func) not in self.locals:
                raise self.error(self.missing_module_attribute(func)  # xp.sum, xp passed
                                 or f"name '{name}' is not defined", func, SrcGradError)
            made = self.made_object(func)
            if made is not None:  # cs = CubicSpline(xs, ys); cs(t): review s36 R4-15
                raise self.error(
                    f"calling '{name}', an object of the class {made.__qualname__} this "
                    f"function builds, is not supported: srcgrad calls functions and "
                    f"methods it can read, and cannot follow what calling it runs; build it "
                    f"outside and pass it as an argument, or give the call a rule of your "
                    f"own (a function calling it, made a srcgrad.custom_vjp)", func)
            chosen = self.function_value_call(node, func)
            if chosen is not None:  # ACTS[name](h), f(x) for f in FNS: function_values.py
                return chosen, ir.Op(operator.pos, [chosen], {}, node, f"{name}()")
            raise self.error(
                f"calling '{name}' is not supported: it holds a function only known when the "
                f"code runs (taken from a list or dict, or computed); srcgrad calls a function "
                f"it can name when it compiles -- a global or local function, one a global list "
                f"or dict holds, a parameter passed one, a method of an object -- so call "
                f"that one (for a choice among a few, an if that calls each)", func)
        if self.is_selection(node, prim):  # max(xs), max(xs, key=k, default=d)
            result = self.selected(node, prim)
            return result, ir.Op(operator.pos, [result], {}, node, f"{prim.__name__}()")
        if is_named_tuple_class(prim):  # P(a, b=c): its fields in order
            return self.named_tuple(node, prim)
        if is_record_class(prim):  # Lin(w, c=b) of a dataclass: its fields in order
            return self.record(node, prim)
        if returned_functions(prim):  # flatten(p) outside `flat, unflatten = flatten(p)`
            raise self.error(self.closure_use(prim), node)
        if is_user_function(prim):  # integrate(self.rhs, y0): a lambda (user_methods.py)
            node = self.methods_as_lambdas(node)
        if is_user_function(prim) and any(self.is_local_function(a) for a in [
                *node.args, *(kw.value for kw in node.keywords)]):
            # fixed_point(lambda z: g(p, z), x0): the helper inlined, the lambda with it
            self.check_caller_sees_no_update(prim, node)  # apply(lambda p: setter(p), y)
            result = self.inline_helper(prim, node)
            return result, ir.Op(operator.pos, [result], {}, node, prim.__name__)
        bound = self.through_the_class(node, prim)  # Box.__call__(box, p): box.__call__(p)
        if isinstance(bound, gast.Call):
            return self.call(bound)
        if bound is not None:
            prim, node = bound
        if isinstance(prim, types.MethodType) and is_user_function(prim.__func__):
            # MODEL.run(x) -> run(MODEL, x), resolved by MODEL's class (net(x): its
            # loop over self.mods calls their classes' __call__, dispatching)
            with dispatching((*self.dispatch_classes, *held_element_classes(prim.__self__))):
                self.check_caller_sees_no_update(prim.__func__, node, method=True,
                                                 owner=prim.__self__)
            receiver = self.bound_value(prim.__self__, node)
            name = self.namer.fresh(prim.__func__.__name__)
            self.free[name] = prim.__func__
            args = [receiver, *[self.passed_value(a) for a in node.args]]
            kwargs = {kw.arg: self.passed_value(kw.value) for kw in node.keywords}
            expr, args, kwargs = self.helper_call(ir.name(name), prim.__func__, args, kwargs,
                                                  node)
            op = ir.Op(prim.__func__, args, kwargs, node, f".{prim.__func__.__name__}()")
            # a classmethod bound to its class (Act.g(x)): cls in it is that class
            op.receiver_type = prim.__self__ if isinstance(prim.__self__, type) \
                else type(prim.__self__)
            receiving = gast.Call(func=node.func, args=[gast.Constant(value=None, kind=None),
                                                        *node.args], keywords=node.keywords)
            op.callees = self.handed_on_classes(prim.__self__) + packed_shapes(
                prim.__func__, node, getattr(self, "tuple_lengths", {}), receiver=1) \
                + self.passed_functions(prim.__func__, receiving)  # net(x): self.mods
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
        if any(prim is b for b in NON_DIFFERENTIABLE_BUILTINS):  # any(...): like a comparison
            self.collect_free(func)
            args = [self.literal(a) for a in node.args]
            kwargs = {kw.arg: self.literal(kw.value) for kw in node.keywords}
            expr = gast.Call(func=func, args=args, keywords=keywords_of(kwargs))
            return expr, ir.Op(ir.OPAQUE, [], {}, node, registry.display_name(prim))
        helper = getattr(prim, "__name__", None)
        if helper in runtime.__all__ and getattr(runtime, helper) is prim:
            func = ir.name(helper)  # srcgrad.stop_gradient -> stop_gradient: no srcgrad import
        else:
            self.collect_free(func)
        if prim is runtime.on_grad:
            node = self.watched_site(node)
        if any(prim is p for p in TAKES_FUNCTIONS):
            node = self.lambdas_as_values(node)
        elif not is_user_function(prim):
            self.refuse_passed_functions(node, prim)
        # a list display passed to a custom_vjp (G(w, [a, b]), G = srcgrad.grad(loss)) is
        # built into a name too: kept a display, it was a constant, its items got no gradient
        argument = self.passed_value if is_user_function(prim) or isinstance(prim, custom_vjp) \
            else self.literal
        args = [argument(a) for a in node.args]
        kwargs = {kw.arg: argument(kw.value) for kw in node.keywords}
        if is_user_function(prim):
            self.check_caller_sees_no_update(prim, node)
            expr, args, kwargs = self.helper_call(func, prim, args, kwargs, node)
        else:
            expr = gast.Call(func=func, args=args, keywords=keywords_of(kwargs))
        op = ir.Op(prim, args, kwargs, node, registry.display_name(prim))
        if is_user_function(prim):
            op.callees = self.passed_functions(prim, node) + self.handed_on_classes() \
                + packed_shapes(source_target(prim), node, getattr(self, "tuple_lengths", {}))
            if getattr(node, "receiver_type", None) is not None:  # Dense_class.forward(obj, x)
                op.receiver_type = node.receiver_type
            elif self.named_tuple_receiver(node) is not None:  # helper(p), p = P(a, b)
                op.receiver_type = self.named_tuple_receiver(node)
        return expr, op

    def passed_value(self, node):
        """An argument of a user function: a list or tuple display is built into
        a name first (``helper([a, b])``: ``t = [a, b]; helper(t)``), so that the
        callee's parameter is a value the caller differentiates -- kept as a
        display, it was taken as a constant, and its items got no gradient."""
        if isinstance(node, (gast.List, gast.Tuple)) \
                and not any(isinstance(e, gast.Starred) for e in node.elts):
            return self.atom(node)
        return self.literal(node)

    def refuse_passed_functions(self, node, prim) -> None:
        """A lambda or local function passed to a library function
        (``np.apply_along_axis(lambda r: ..., 1, X)``): srcgrad inlines such a
        function where it is called, and cannot see where the library calls it;
        refused here, saying how to write the calls out."""
        passed = next((a for a in [*node.args, *(k.value for k in node.keywords)]
                       if self.is_local_function(a)), None)
        if passed is None:
            return
        name = registry.display_name(prim) if prim is not MISSING else source_of(node.func)
        what = "a lambda" if isinstance(passed, gast.Lambda) else f"the local function " \
            f"'{passed.id}'"
        if is_transform(prim):  # f, g = grad(L), grad(M); [grad(L)]: made_transforms.py
            raise self.error(f"srcgrad.{prim.__name__} of {what} can be made in the function "
                             f"differentiated only assigned to one name (g = "
                             f"srcgrad.{prim.__name__}(f), then g(x)) or called at once "
                             f"(srcgrad.{prim.__name__}(f)(x)); write it so", passed)
        if prim is np.apply_along_axis:
            advice = ("call it on each row yourself: np.stack([f(row) for row in X]) for "
                      "axis=1 of a 2-D X, np.stack([f(col) for col in X.T], axis=-1) for axis=0")
        elif prim is np.vectorize or prim is np.frompyfunc:
            advice = ("write the function with array operations, or call it on each element "
                      "in a comprehension")
        else:
            advice = ("call the function yourself, in a loop or comprehension, or define it at "
                      "module level and give srcgrad a rule for the call (srcgrad.register_vjp)")
        raise self.error(f"{what} can only be called here (srcgrad inlines it where it is "
                         f"called): it is passed to {name}, whose calls srcgrad cannot follow: "
                         f"{advice}", passed)

    def refuse_instance_override(self, func, cls, node) -> None:
        """Before ``obj.m(...)``, a call srcgrad resolves by ``obj``'s class, a
        check that ``obj`` holds no attribute ``m`` of its own: Python calls
        that one (``layer.activation = np.sin`` hides ``Layer.activation``), and
        the code made from the class's method would compute something else
        (review s35 R3-19: value and gradient of tanh for sin, silently).
        Raises a SrcGradError located at the call when the code runs."""
        obj, attr = func.value, func.attr
        shown = ast.unparse(gast.gast_to_ast(obj))
        message = (f"'{shown}.{attr}' is set on the object itself, which hides the method "
                   f"{cls.__qualname__}.{attr} that srcgrad differentiated: srcgrad calls a "
                   f"method by the object's class; make the per-object choice a parameter "
                   f"(def {attr}(self, z, act=np.tanh)) or a subclass overriding {attr}")
        held = gast.Call(func=builtin_ref("getattr"), args=[
            clone(obj), gast.Constant(value="__dict__", kind=None),
            gast.Tuple(elts=[], ctx=gast.Load())], keywords=[])
        test = gast.Compare(left=gast.Constant(value=attr, kind=None), ops=[gast.In()],
                            comparators=[held])
        guard = located_guard(test, message, self.parsed.filename, node)
        for sub in walk(guard):
            if "lineno" in sub._attributes:
                gast.copy_location(sub, node)
        self.statement(guard)

    def passed_functions(self, fn, node) -> tuple:
        """The functions a call of the user function ``fn`` passes it -- a NumPy
        or user function by name, a parameter holding one (``solve(f, x0)``) --
        as :class:`~..frontend.linker.Callee` entries: ``fn``'s code is
        specialised on them (:meth:`.specialise.Specialisation.function_arguments`)."""
        # positions in the order of the signature, as the callee's normaliser
        # numbers its parameters (keyword-only ones after *args)
        signature = inspect.signature(source_target(fn), follow_wrapped=False).parameters
        params = list(signature)
        kinds = [p.kind for p in signature.values()]
        fixed = kinds.count(inspect.Parameter.POSITIONAL_ONLY) \
            + kinds.count(inspect.Parameter.POSITIONAL_OR_KEYWORD)
        named = {p.name for p in signature.values() if p.kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
        given = []
        for i, arg in enumerate(node.args[:fixed]):  # (those after: *rest's)
            if isinstance(arg, gast.Starred):
                break  # the positions after it are not known
            given.append((i, arg))
        given += [(params.index(kw.arg), kw.value) for kw in node.keywords if kw.arg in named]
        found = []
        for i, arg in sorted(given, key=lambda item: item[0]):
            value = self.function_value(arg)
            if i < len(params) and value is not MISSING:
                found.append(Callee(i, params[i], value))
        return tuple(found)

    def function_value(self, arg):
        """The function ``arg`` (an argument's expression) evaluates to, when it is
        known at compile time; MISSING for anything else."""
        if isinstance(arg, gast.Name) and arg.id in self.passed and self.env.get(arg.id) == arg.id:
            if arg.id in self.passed_on:  # the helper's code is specialised on it
                self.specialised.append(self.passed_on.pop(arg.id))
            return self.passed[arg.id]
        if isinstance(arg, (gast.Name, gast.Attribute)):
            arg = self.unalias(arg)  # act = np.cos; apply(act, x)
        if not isinstance(arg, (gast.Name, gast.Attribute)) or (
                root_name(arg) in self.locals and getattr(arg, "helper", None) is None):
            return MISSING
        value = static_value(arg, self.parsed.resolver, self.locals)
        if value is MISSING or not callable(value) \
                or isinstance(value, (type, np.ndarray, types.ModuleType)):
            return MISSING
        return value

    def called_parameter(self, name) -> str:
        """Why the call of parameter ``name`` has no function to differentiate."""
        if self.assignments[name]:
            return (f"calling '{name}', a parameter the function assigns, is not supported: "
                    f"srcgrad specialises the code on the function passed as '{name}', so "
                    f"assign the function called later to a new name")
        return (f"'{name}' is a parameter: srcgrad specialises the generated code on the "
                f"function passed there, when the gradient is called (g(...), then g.source "
                f"shows that call's code), or give it a default "
                f"(def {self.func.name}(..., {name}=np.tanh))")

    def watched_site(self, node):
        """``on_grad(h, hook)`` -> ``on_grad(h, hook, where=('f.py', 12, 8, 'h'))``
        for a hook that takes a second argument: it learns which value of the
        source it watches (file, line, column, expression), so one hook can log
        many sites.  A one-argument hook is called as written, and gets
        ``where=('f.py', 12, 8)``: one that returns no cotangent is refused
        there (:func:`~srcgrad.runtime.hook_result`)."""
        given = {kw.arg: kw.value for kw in node.keywords}
        args = list(node.args) + [given.pop(name) for name in ("x", "hook")[len(node.args):]
                                  if name in given]
        if len(args) != 2 or given:
            return node
        hook = static_value(args[1], self.parsed.resolver, self.locals)
        site = (self.parsed.filename, getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if hook is not MISSING and runtime.takes_site(hook):
            site += (ast.unparse(gast.gast_to_ast(args[0])),)
        where = constant(site)
        return gast.copy_location(gast.Call(
            func=node.func, args=args, keywords=[gast.keyword(arg="where", value=where)]), node)

    def lambdas_as_values(self, call):
        """``sorted(xs, key=lambda v: -v)``, ``on_grad(h, lambda g: 0.5 * g)``: a
        lambda a primitive only calls to order items or to act on a cotangent
        (:data:`TAKES_FUNCTIONS`) becomes a value, ``t3 = lambda v: -v``, its free
        locals renamed like any expression's; nothing is differentiated through it.
        A local ``key = lambda v: -v`` passed by name is the same value."""
        def hoisted(value):
            if isinstance(value, gast.Name) and isinstance(
                    self.local_functions.get(value.id), gast.Lambda):
                value = gast.copy_location(clone(self.local_functions[value.id]), value)
            if not isinstance(value, gast.Lambda):
                return value
            tmp = self.namer.temp()
            self.locals.add(tmp)
            self.env[tmp] = tmp  # read back as a local, like a conditional's temporary
            stmt = ir.assign(tmp, self.opaque(value))
            stmt.op = ir.Op(ir.OPAQUE, [], {}, value, "lambda")
            self.out.append(gast.copy_location(stmt, value))
            return gast.copy_location(ir.name(tmp), value)
        return gast.copy_location(gast.Call(
            func=call.func, args=[hoisted(a) for a in call.args],
            keywords=[gast.keyword(arg=kw.arg, value=hoisted(kw.value))
                      for kw in call.keywords]), call)

    def check_caller_sees_no_update(self, fn, call, method=False, owner=None):
        """Refuse ``helper(t, x)`` where ``helper`` writes into ``t`` in place
        (``t[0] = v``, ``t.append(v)``) and this function reads ``t`` (or a name
        for the same array) again: Python shows the caller the change, while the
        generated code of a called function works on a copy of what it updates
        -- the caller would read the old values, a silently wrong result.  A
        buffer passed only to be filled (``fill(buf, x)`` and ``buf`` not read
        again) is fine, and so is a callee that copies first (``t = t.copy()``)."""
        # apply(setter, y): what the functions it passes do too (call_effects)
        passes = call_effects(fn, call, self.callee, self.passed, method, self.local_functions,
                              owner)
        # (ks = list(hs); ks[0] *= c in the callee: hs's arrays change, deep alone)
        updated = updated_parameters(fn) | passes.item | deeply_updated(fn) | passes.deep
        augmented = augmented_parameters(fn) | passes.augmented
        self.check_defaults_unchanged(fn, call, method, updated | augmented | passes.deep
                                      | deeply_updated(fn))
        if not updated and not augmented:
            return
        try:
            receiver = [gast.Constant(value=None, kind=None)] if method else []
            bound = inspect.signature(fn).bind_partial(*receiver, *call.args, **{
                kw.arg: kw.value for kw in call.keywords if kw.arg is not None})
        except TypeError:
            return  # the call's own error comes later, located
        for param, arg in _each_argument(bound):
            if param in augmented and param not in updated and isinstance(arg, gast.expr):
                # p += v in the callee: in place on an array, decided as the code runs
                # (g = clip_(g, c): the reads of 'g' after are of what clip_ returns)
                read = read_after_call(self.func, self.params, self.callee, call, arg,
                                       rebound=self.bound_to_result(call, fn, param),
                                       sequences=self.sequence_params)
                if read is None:
                    continue
                guard = call_guard(arg, fn, param, read, self.parsed.filename, call)
                if not isinstance(arg, (gast.Name, gast.Subscript, gast.Attribute)):
                    raise self.error(guard.message, arg)  # a call: evaluated once only
                value = self.atom(arg)
                if isinstance(value, gast.Name):
                    guard.value.args[:2] = [ir.name(value.id), ir.name(value.id)]
                    self.out.append(guard)
                continue
            if param not in updated or not isinstance(arg, gast.expr):
                continue
            # a read afterwards of the array, a view of it, another name for it
            # (state = step(state): 'state' is then the updated copy step returns)
            read = read_after_call(self.func, self.params, self.callee, call, arg,
                                   deep=param in deeply_updated(fn) | passes.deep,
                                   rebound=self.bound_to_result(call, fn, param),
                                   sequences=self.sequence_params)
            if read is not None:
                shown = source_of(arg)
                raise self.error(
                    f"{fn.__name__}() updates its argument '{param}' in place, and this "
                    f"function {read_described(read)}, which shares the memory of "
                    f"'{shown}', after the call: srcgrad's code "
                    f"for {fn.__name__} works on a copy of what it updates, so that change "
                    f"would be lost; pass a copy ({copy_passed(call, arg)}) and "
                    f"return the updated value", arg)

    def check_defaults_unchanged(self, fn, call, method, updated):
        """Refuse a call of ``fn`` that leaves out a parameter whose mutable
        default ``fn`` changes in place (``cache=[]``, ``memo={}``): Python
        shares that object between calls (:mod:`.mutable_defaults`)."""
        receiver = [gast.Constant(value=None, kind=None)] if method else []
        try:
            passed = inspect.signature(fn).bind_partial(*receiver, *call.args, **{
                kw.arg: kw.value for kw in call.keywords if kw.arg is not None}).arguments
        except (TypeError, ValueError):
            return  # the call's own error comes later, located
        if any(kw.arg is None for kw in call.keywords) \
                or any(isinstance(a, gast.Starred) for a in call.args):
            return  # f(x, *t), f(x, **d): the callee's own check, as it runs, sees
        for param in changed_defaults(fn, passed, updated):
            default = inspect.signature(fn).parameters[param].default
            raise self.error(default_message(fn, param, default), call)

    def bound_to_result(self, call, fn, param) -> dict:
        """The names this function's statement ``name = helper(...)`` (or
        ``(name, e) = helper(...)``) binds to what ``helper`` returns as its
        updated parameter ``param`` (``return state``, ``return state, e`` on
        every path): after the call they are the updated array or list, in
        Python as in srcgrad's code, where the callee updates a copy and
        returns it -- a read of them is no read of the old memory.  Each maps
        to the ids of its bindings of that kind (``state = step(state, -dt)``
        in the other branch): no other binding may run between the call and
        a read of it, or the read is checked as any other."""
        line, col = getattr(call, "lineno", None), getattr(call, "col_offset", None)
        own = [stmt for stmt in walk(self.func) if isinstance(stmt, gast.Assign)
               and (stmt.value is call or line is not None
                    and getattr(stmt.value, "lineno", None) == line
                    and getattr(stmt.value, "col_offset", None) == col)]
        if len(own) != 1:
            return {}
        names = {n.id for n in bound_to_updated_copy(own[0], fn, param)}
        if not names:
            return {}
        # g = clip_(g, c) + g: the second g, read in the statement after the call,
        # is the old array the callee updated -- nothing is excused then
        made = next((n for n in walk(own[0].value) if isinstance(n, gast.Call) and (
            n is call or (getattr(n, "lineno", None), getattr(n, "col_offset", None)) == (
                line, col))), None)
        inside = {id(n) for n in walk(made)} if made is not None else set()
        if made is None or any(isinstance(n, gast.Name) and n.id in names and id(n) not in inside
                               for n in walk(own[0].value)):
            return {}
        kept = {name: set() for name in names}
        for stmt in walk(self.func):
            if not isinstance(stmt, gast.Assign) or not isinstance(stmt.value, gast.Call):
                continue
            helper = self.callee(stmt.value)
            if not is_user_function(helper) or not isinstance(helper, types.FunctionType):
                continue
            # (a helper's p op= v too: g = clip_(g, c) in one branch, normalize_ in the other)
            for updated in updated_parameters(helper) | augmented_parameters(helper):
                for target in bound_to_updated_copy(stmt, helper, updated):
                    if target.id in kept:
                        kept[target.id].add(id(target))
        return {name: frozenset(ids) for name, ids in kept.items()}

    def emit_call(self, call, prim, target):
        self.collect_free(call.func)
        args = [self.literal(a) for a in call.args]
        kwargs = {kw.arg: self.literal(kw.value) for kw in call.keywords}
        stmt = ir.assign(target, gast.Call(func=call.func, args=args, keywords=keywords_of(kwargs)))
        stmt.op = ir.Op(prim, args, kwargs, call, registry.display_name(prim))
        gast.copy_location(stmt, call)
        self.out.append(stmt)

    def helper_call(self, func, fn, args, kwargs, node):
        """The call of the user function ``fn`` as the code runs it and as its
        operation binds it: ``(expr, args, kwargs)``.  The arguments that
        ``fn``'s ``*rest`` and ``**kw`` collect are packed into one tuple and
        one dict, each a name the caller differentiates (the callee's
        parameter is that value, ad/calls.py bind_arguments); the call run as
        it stands unpacks them again, ``layer(x, *t1, **t2)``."""
        code = source_target(fn).__code__  # a decorator's forwarding wrapper's is not
        starred, packed = [], []
        if takes_wrapped_parameters(source_target(fn)):  # wrapper(*a, **k): frontend/wrappers.py
            return gast.Call(func=func, args=list(args), keywords=keywords_of(kwargs)), \
                args, kwargs
        if code.co_flags & inspect.CO_VARARGS:
            args = self.pack_varargs(source_target(fn), args, node)
            starred = [args[-1]]
        if code.co_flags & inspect.CO_VARKEYWORDS:
            kwargs = self.pack_keywords(source_target(fn), kwargs, node)
            packed = [kwargs[code.co_varnames[code.co_argcount + code.co_kwonlyargcount
                                              + bool(starred)]]]
        shown = {k: v for k, v in kwargs.items() if not packed or v is not packed[0]}
        expr = gast.Call(func=func, args=[*args[:len(args) - len(starred)],
                                          *(gast.Starred(value=clone(a), ctx=gast.Load())
                                            for a in starred)],
                         keywords=[*keywords_of(shown),
                                   *(gast.keyword(arg=None, value=clone(d)) for d in packed)])
        return expr, args, kwargs

    def pack_varargs(self, fn, args, node):
        """``f(a, b, c)`` for ``def f(x, *rest)``: ``rest`` arrives as one tuple."""
        fixed = fn.__code__.co_argcount
        extra = args[fixed:]
        if len(extra) == 1 and isinstance(extra[0], gast.Starred):  # f(a, *t): t is the rest
            items = extra[0].value
            packed = self.atom_of(gast.Call(func=builtin_ref("tuple"), args=[items], keywords=[]),
                                  ir.Op(tuple, [items], {}, node, "tuple"))
            return args[:fixed] + [packed]
        packed = self.atom_of(gast.Tuple(elts=extra, ctx=gast.Load()),
                              ir.Op(ir.BUILD_TUPLE, extra, {}, node, ir.BUILD_TUPLE.label))
        return args[:fixed] + [packed]

    def pack_keywords(self, fn, kwargs, node):
        """``f(a, k=v, scale=s)`` for ``def f(x, scale=1.0, **kw)``: ``kw``
        arrives as one dict of the keywords no other parameter takes, built
        where the call is (``t = {'k': v}``; empty where there are none), and
        is passed under its own name, which no keyword can be."""
        code = fn.__code__
        positional = code.co_varnames[code.co_posonlyargcount:code.co_argcount]
        named = {*positional, *code.co_varnames[code.co_argcount:
                                                code.co_argcount + code.co_kwonlyargcount]}
        extra = {k: v for k, v in kwargs.items() if k not in named}
        keys = [gast.Constant(value=k, kind=None) for k in extra]
        values = list(extra.values())  # (atoms already)
        packed = self.atom_of(gast.Dict(keys=keys, values=[clone(v) for v in values]),
                              ir.Op(ir.BUILD_DICT, [gast.Tuple(elts=list(keys), ctx=gast.Load()),
                                                    *values], {}, node, ir.BUILD_DICT.label))
        rest = code.co_varnames[code.co_argcount + code.co_kwonlyargcount
                                + bool(code.co_flags & inspect.CO_VARARGS)]
        return {**{k: v for k, v in kwargs.items() if k in named}, rest: packed}

    def unalias(self, func):
        """``model.run`` where ``model = MODEL`` (assigned once) -> ``MODEL.run``;
        ``act`` where ``act = np.tanh`` (or a global function, assigned once) ->
        ``np.tanh``: the function a local name is bound to when srcgrad compiles."""
        chain, node = [], func
        while isinstance(node, gast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name) or node.id not in self.env \
                or self.env[node.id] not in self.constants \
                or not chain and not isinstance(self.constants[self.env[node.id]],
                                                (gast.Name, gast.Attribute)):
            return func
        rebuilt = clone(self.constants[self.env[node.id]])
        for attr in reversed(chain):
            rebuilt = gast.Attribute(value=rebuilt, attr=attr, ctx=gast.Load())
        return gast.copy_location(rebuilt, func)

    def bound_value(self, value, node):
        """A literal for ``value``, or a name bound to it in the generated module."""
        literal = constant(value)
        if literal is not None:
            return literal
        name = self.namer.fresh("bound")
        self.free[name] = value
        ref = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
        ref.helper = value
        return gast.copy_location(ref, node)

    def class_held_function(self, func):
        """The function ``obj.attr`` reads where ``obj``'s class is known and holds
        there a callable Python does not bind (a ufunc, a builtin, a partial, a
        staticmethod's function: ``act = np.tanh``, ``act = staticmethod(f)``),
        so that ``obj.act(z)`` calls it with ``z`` alone; else None."""
        cls = self.class_of(func.value) if isinstance(func, gast.Attribute) else None
        if cls is None or self.receives_class(func.value):
            return None
        held = inspect.getattr_static(cls, func.attr, None)
        if isinstance(held, staticmethod):
            held = held.__func__
            return held if callable(held) and not is_user_function(held) else None
        if isinstance(held, (np.ufunc, types.BuiltinFunctionType, functools.partial)):
            return held
        return None

    def typed_method(self, func):
        """The function behind ``self.m`` when ``self``'s class is known (or
        ``opt.m``, ``opt`` a user object passed: :meth:`.user_methods.MethodArguments.class_of`)."""
        cls = self.class_of(func.value) if isinstance(func, gast.Attribute) else None
        if cls is None:
            return None
        method = getattr(cls, func.attr, None)
        if isinstance(inspect.getattr_static(cls, func.attr, None), classmethod):
            method = method.__func__  # called with the class first, by :meth:`call`
        return method if is_user_function(method) else None

def bound_to_updated_copy(stmt, fn, param) -> list:
    """The Name targets of ``stmt`` (``name = fn(...)``, ``(name, e) =
    fn(...)``) that receive ``fn``'s parameter ``param`` as every return gives
    it back, or its items (``a, b = fn(...)`` where ``fn`` returns ``param``)."""
    positions = returned_parameter(fn, param)
    if not positions or len(stmt.targets) != 1:
        return []
    target = stmt.targets[0]
    if isinstance(target, gast.Name):
        return [target] if None in positions else []
    if isinstance(target, (gast.Tuple, gast.List)) and not any(
            isinstance(e, gast.Starred) for e in target.elts):
        # pos, vel = step([pos, vel]): each an item of the returned copy
        return [e for i, e in enumerate(target.elts)
                if (i in positions or None in positions) and isinstance(e, gast.Name)]
    return []


@functools.lru_cache(maxsize=256)
def returned_parameter(fn, param) -> frozenset:
    """Where every ``return`` of the user function ``fn`` gives its parameter
    ``param`` back: ``{None}`` for ``return param``, ``{i}`` for a tuple
    holding it at ``i`` (``return param, e``); empty where some return gives
    anything else (a bare ``return`` gives None, which holds nothing)."""
    try:
        func = parse_function(fn).node
    except SrcGradError:
        return frozenset()
    returns, stack = [], list(func.body)
    while stack:  # not into nested functions: their returns are their own
        node = stack.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda,
                             gast.ClassDef)):
            continue
        if isinstance(node, gast.Return):
            returns.append(node.value)
        stack.extend(gast.iter_child_nodes(node))
    found = None
    for value in returns:
        if value is None or isinstance(value, gast.Constant) and value.value is None:
            continue
        if isinstance(value, gast.Name) and value.id == param:
            here = {None}
        elif isinstance(value, gast.Tuple) and not any(
                isinstance(e, gast.Starred) for e in value.elts):
            here = {i for i, e in enumerate(value.elts)
                    if isinstance(e, gast.Name) and e.id == param}
        else:
            return frozenset()
        found = here if found is None else found & here
    return frozenset(found or ())


def _each_argument(bound):
    """``(parameter, argument)`` of a call bound to its callee's signature, the
    arguments packed into ``*args`` and ``**kw`` one by one under that name
    (``kw['q'] *= 3.0`` in the callee changes the caller's array passed q=h)."""
    for param, arg in bound.arguments.items():
        kind = bound.signature.parameters[param].kind
        if kind is inspect.Parameter.VAR_KEYWORD and isinstance(arg, dict):
            yield from ((param, value) for value in arg.values())
        elif kind is inspect.Parameter.VAR_POSITIONAL and isinstance(arg, tuple):
            yield from ((param, value) for value in arg)
        else:
            yield param, arg


@functools.lru_cache(maxsize=256)
def updated_parameters(fn) -> frozenset:
    """The parameters of the user function ``fn`` that it updates in place
    (``p[i] = v``, ``p[i] += v``, ``p.append(v)``) and never rebinds (a callee
    that starts with ``p = p.copy()`` leaves its caller's array alone).
    srcgrad's own generated code (differentiated again for a second
    derivative) updates none: it copies first (``state_1 = private_copy(state)``)."""
    if (getattr(fn, "__module__", None) or "").startswith("srcgrad.generated."):
        return frozenset()
    try:
        parsed = parse_function(fn)
    except SrcGradError:
        return frozenset()
    func = parsed.node
    params = {a.id for a in func.args.args + func.args.kwonlyargs if isinstance(a, gast.Name)}
    rebound = {n.id for n in walk(func) if isinstance(n, gast.Name)
               and isinstance(n.ctx, gast.Store)}
    return frozenset((updated_in_place(func) - rebound) & params) \
        | updated_arguments(parsed)
