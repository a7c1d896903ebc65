"""Specialisation on the functions a call passes: defaults and arguments.

Part of :mod:`.normalizer` (a mixin of its normaliser).  srcgrad differentiates
code it can read, so a parameter that holds a function -- a default
(``def nn(p, act=np.tanh)``) or what the call passes (``grad(apply)(np.sin,
x)``, the ``callees`` of :func:`.normalizer.normalize`) -- is resolved when the
code is generated: each call of the parameter becomes a call of that function,
and a guard at the top refuses another one when the code runs directly or
exported (srcgrad's gradient objects pick the code by the function's identity).
The classes of user objects in lists the function reads are gathered here too,
for methods called on their elements.

Before, a parameter whose default is a function; after, the calls of it are
calls of the default, behind a guard:

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(x, act=np.tanh):
    ...     return np.sum(act(x))
    >>> print(unparse_body(normalize(parse_function(f))))
    t1 = act is not np.tanh
    if t1:
        raise TypeError('f was differentiated for act=np.tanh, its default: pass no other function there (srcgrad generated the code for that one)')
    t2 = np.tanh(x)
    t3 = np.sum(t2)
    return t3
"""

from __future__ import annotations

import functools
import inspect
import types

import gast
import numpy as np

from ..frontend.function_tables import ElementFunctions
from ..frontend.linker import (
    ElementClasses,
    Packed,
    element_classes,
    held_element_classes,
    is_library_module,
    is_user_function,
)
from ..frontend.parse import MISSING
from ..ir.syntax import clone, load_name, source_of, walk
from .iterators import builtin_call
from .records import is_record_class
from .sugar import builtin_ref


class Specialisation:
    """Parameters holding functions, resolved at generation (mixed into the normaliser)."""

    def function_defaults(self) -> None:
        """Parameters whose default is a function and which the body calls
        (``def nn(p, nonlinearity=np.tanh)``): the code is specialised on the
        default, each call of the parameter is a call of it, and a guard at the
        top refuses, when the code runs, another function passed there."""
        self.called_parameters = {}
        args = self.func.args
        values = getattr(self.parsed.fn, "__defaults__", None) or ()
        if len(values) != len(args.defaults):
            values = ()
        given = getattr(self.parsed.fn, "__kwdefaults__", None) or {}
        # a callee's keyword-only parameters too (def layer(x, *, act=np.tanh))
        defaulted = [*zip(args.args[len(args.args) - len(values):], args.defaults, values),
                     *((p, d, given[p.id]) for p, d in zip(args.kwonlyargs, args.kw_defaults)
                       if d is not None and p.id in given)]
        if not defaulted:  # (none: no walk)
            return
        called = {n.func.id for n in walk(self.func) if isinstance(n, gast.Call)
                  and isinstance(n.func, gast.Name)}
        passed = {c.name for c in self.callees}
        for param, node, value in defaulted:
            name = param.id
            if isinstance(value, types.ModuleType) and name not in passed \
                    and not self.assignments[name]:
                self.module_default(param, node, value)
                continue
            if name not in called or name in passed or self.assignments[name] \
                    or not callable(value) or isinstance(value, type):
                continue
            if self.reads_value(node, value) and not isinstance(node, gast.Constant):
                expr = node
            else:
                expr = load_name(self.namer.fresh(f"{name}_default"))
                expr.helper = value
                self.free[expr.id] = value
            self.called_parameters[name] = expr
            self.passed[name] = value
            self.guard(param, expr, f"{self.func.name} was differentiated for "
                                    f"{name}={source_of(node)}, its default: pass no other "
                                    f"function there (srcgrad generated the code for that one)")

    def module_default(self, param, node, value) -> None:
        """``def f(x, xp=np)``: a parameter whose default is a module (the array
        namespace of backend-agnostic code) is that module where the body reads
        it (``xp.tanh(h)`` is ``np.tanh(h)``, differentiated by its rule), and a
        guard at the top refuses another module passed there when the code runs."""
        if self.reads_value(node, value) and not isinstance(node, gast.Constant):
            expr = node
        else:
            expr = load_name(self.namer.fresh(f"{param.id}_default"))
            expr.helper = value
            self.free[expr.id] = value
        self.guard(param, expr, f"{self.func.name} was differentiated for "
                                f"{param.id}={source_of(node)}, its default: pass no other "
                                f"module there (srcgrad generated the code for that one)")
        self.constants[param.id] = expr   # (after the guard, which reads the parameter)

    def module_argument(self, param, callee) -> None:
        """``grad(f)(x, np)`` for ``def f(x, xp)``: a module passed as an argument
        (the array namespace of backend-agnostic code, ``math``) is that module
        where the body reads it, as a module default is (:meth:`module_default`),
        behind a guard; srcgrad's gradient objects choose the code by the module's
        identity, as for a function passed (review s37 R5-9: it was refused, the
        message asking for the argument the call gave)."""
        value, resolver = callee.obj, self.parsed.resolver
        held = [k for k, v in resolver.globals.items() if v is value and k.isidentifier()]
        names = [n for n in ("np" if value is np else "", value.__name__.rpartition(".")[2],
                             *held) if n and n not in self.locals and resolver.lookup(n) is value]
        if names:  # a name the function's module holds it by: np.exp, as written there
            expr = load_name(names[0])
        else:
            expr = load_name(self.namer.fresh(f"{param.id}_module"))
            expr.helper = value
            self.free[expr.id] = value
        self.guard(param, expr, f"{self.func.name} was differentiated for {callee!r}, the "
                                f"module passed when it was compiled: this code runs with "
                                f"that module only (a gradient made by srcgrad generates "
                                f"and caches code for each module passed)")
        self.specialised.append(repr(callee))
        self.constants[param.id] = expr
        self.modules_passed[expr.id] = (param.id, value)

    def missing_module_attribute(self, func) -> str | None:
        """The message for ``xp.sum(...)`` where the module passed as ``xp`` has
        no ``sum``: Python's AttributeError, with the names the user wrote (the
        generated code's name for the module is srcgrad's own); None for
        anything else."""
        chain = []
        while isinstance(func, gast.Attribute):
            chain.append(func.attr)
            func = func.value
        passed = getattr(self, "modules_passed", {})
        if not isinstance(func, gast.Name) or func.id not in passed or not chain:
            return None
        param, value = passed[func.id]
        for depth, attr in enumerate(reversed(chain)):
            if not hasattr(value, attr):
                shown = ".".join([param, *reversed(chain)][:depth + 2])
                return (f"'{shown}': the module {value.__name__} passed as '{param}' has no "
                        f"attribute '{attr}'")
            value = getattr(value, attr)
        return None

    def function_arguments(self) -> None:
        """Parameters the call passed a function to (``grad(apply, wrt=1)(np.tanh,
        x)``; the ``callees`` of :func:`.normalizer.normalize`): as for a default,
        each call of the parameter is a call of that function -- a NumPy
        function by the name the module knows it by (``np.tanh``), any other a
        name bound to it (a user function's body is differentiated like any
        called helper's; a callable object is called through its ``__call__``)
        -- and a guard at the top refuses another function when the code runs.
        srcgrad's gradient objects choose the code by the function's identity,
        so the guard only ever stops code run directly or exported.
        ``self.specialised`` lists them (``act=np.tanh``) for the module's header."""
        self.specialised, self.element_lists, self.passed_on = [], [], {}
        self.modules_passed = {}  # the generated code's name -> (parameter, module passed)
        self.dispatch_classes = self.static_element_classes()
        # the classes of the objects in the lists the call passed (or that the
        # objects it passed hold): handed on to the user functions this one calls
        self.received_classes = [c for c in self.callees if isinstance(c, ElementClasses)]
        params = self.param_nodes  # a position in the signature's order (calls.py)
        called = {n.func.id for n in walk(self.func) if isinstance(n, gast.Call)
                  and isinstance(n.func, gast.Name)} if self.callees else set()
        for callee in self.callees:
            name = callee.name
            if isinstance(callee, ElementFunctions):  # acts=[np.tanh, relu]: function_values.py
                self.element_lists.append(repr(callee))
                continue
            if isinstance(callee, ElementClasses):  # in the header once a call uses them
                self.dispatch_classes.update(dict.fromkeys(callee.classes))
                self.element_lists.append(repr(callee))
                continue
            if isinstance(callee, Packed):  # a *rest's length, a **kw's keys (sugar.py)
                continue
            if callee.position >= len(params) or params[callee.position].id != name \
                    or self.assignments[name]:
                continue
            value = self.passed[name] = callee.obj
            if isinstance(value, types.ModuleType):  # grad(f)(x, np): the namespace passed
                self.module_argument(params[callee.position], callee)
                continue
            if name not in called:  # passed on (in the header once it is), or a value
                self.passed_on[name] = repr(callee)
                continue
            expr = self.static_reference(value)
            if expr is None:
                base = getattr(value, "__name__", None)
                if not isinstance(base, str) or not base.isidentifier() or \
                        self.parsed.resolver.lookup(base) not in (value, MISSING):
                    base = f"{name}_fn"
                expr = load_name(self.namer.fresh(base))
                expr.helper = value
                self.free[expr.id] = value
            call = expr
            if not isinstance(value, (types.FunctionType, types.BuiltinFunctionType,
                                      types.MethodType, functools.partial, np.ufunc)) \
                    and isinstance(inspect.getattr_static(type(value), "__call__", None),
                                   types.FunctionType):
                call = gast.Attribute(value=clone(expr), attr="__call__", ctx=gast.Load())
            self.called_parameters[name] = call
            self.specialised.append(repr(callee))
            self.guard(params[callee.position], expr, (
                f"{self.func.name} was differentiated for {callee!r}, the function passed "
                f"when it was compiled: this code runs with that function only (a gradient "
                f"made by srcgrad generates and caches code for each function passed)"))

    def handed_on_classes(self, receiver=None) -> tuple:
        """The :class:`ElementClasses` a call of a user function passes on: those
        this function received (a loop over ``self.mods`` or a list argument in
        the callee dispatches on them, as here), and for a method of an object
        known when compiling (``net(x)`` with ``net`` passed, ``MODEL.run(x)``)
        those of the objects in its lists (``self.mods`` of a Sequential)."""
        classes = {k: None for c in self.received_classes for k in c.classes}
        names = [c.name for c in self.received_classes]
        if receiver is not None and held_element_classes(receiver):
            classes.update(dict.fromkeys(held_element_classes(receiver)))
            names.append("self")
        # predict(model, x) calling model(x) or model.forward(x): the callee
        # dispatches on these classes, so those of the objects this function knows
        # by class and passes to a function are among them, not only those of the
        # elements of their lists -- a model holding no list too (R1-6)
        passed = [k for k in [*self.passed_object_classes(), *self.passed_global_classes()]
                  if k not in classes]
        if not classes and not passed:
            return ()
        classes.update(dict.fromkeys(passed))
        if not names:
            names = [n for n, k in self.param_classes.items() if k in passed] + [
                n for n, ks in self.passed_globals().items() if set(ks) & set(passed)]
        return (ElementClasses(-1, "+".join(dict.fromkeys(names)), tuple(classes)),)

    def passed_global_classes(self) -> list:
        """The classes of the user objects that a global object this function
        passes to some call holds (``through_block(MODEL, x)`` calling
        ``model.get_block().forward(h)``), and its own: the callee dispatches
        on them as this function does (:meth:`static_element_classes`)."""
        return [k for classes in self.passed_globals().values() for k in classes]

    def passed_globals(self) -> dict:
        """Name -> classes (:meth:`passed_global_classes`) of each global user
        object this function passes to a call."""
        if not hasattr(self, "_passed_globals"):
            self._passed_globals = {}
            passed = {a.id for n in walk(self.func) if isinstance(n, gast.Call)
                      for a in (*n.args, *(k.value for k in n.keywords))
                      if isinstance(a, gast.Name) and a.id not in self.locals}
            for name in sorted(passed):
                value = self.parsed.resolver.lookup(name)
                if element_classes([value]):
                    self._passed_globals[name] = tuple(dict.fromkeys(
                        (type(value), *held_element_classes(value))))
        return self._passed_globals

    def passed_object_classes(self) -> list:
        """The classes of this function's parameters that hold user objects of a
        class known when compiling (``self``'s, ``param_classes``) and that it
        passes as an argument to some call (``predict(model, x)``)."""
        if not hasattr(self, "_passed_object_classes"):
            passed = {a.id for n in walk(self.func) if isinstance(n, gast.Call)
                      for a in (*n.args, *(k.value for k in n.keywords))
                      if isinstance(a, gast.Name)}
            known = dict(getattr(self, "param_classes", {}))
            if self.receiver_type is not None and self.params:
                known[self.params[0]] = self.receiver_type
            self._passed_object_classes = [
                k for name, k in known.items() if name in passed and isinstance(k, type)
                and not issubclass(k, tuple) and not is_library_module(k.__module__ or "")]
        return self._passed_object_classes

    def static_element_classes(self) -> dict:
        """The classes of the user objects in the lists and tuples the function
        reads from its globals and closure (``for layer in LAYERS``), those a
        user object it reads there holds (``MODEL.layers``, as for an object
        passed: ``ElementClasses``), and the
        dataclasses it builds (:mod:`.records`: ``ms = [Lin(w, c) ...]``), as a dict
        used as an ordered set: a method called on an element is called by its
        class (:meth:`.calls.Calls.dispatched`)."""
        found, looked = {}, set()  # each name looked up once (a second adds nothing)
        resolver = self.parsed.resolver
        for node in walk(self.func):
            if isinstance(node, gast.Name) and node.id not in self.locals \
                    and node.id not in looked:
                looked.add(node.id)
                value = resolver.lookup(node.id)
                found.update(dict.fromkeys(element_classes(value)))
                if element_classes([value]):  # MODEL.layers[0].forward(x), MODEL.block().f(x)
                    found.update(dict.fromkeys(held_element_classes(value)))
                if is_record_class(value):  # ms = [Lin(w, c) ...]: m.predict(x)
                    found[value] = None
        return found

    def static_reference(self, value):
        """``np.tanh`` for ``value`` np.tanh when the function's globals hold ``np``
        (or ``tanh`` itself): how the code names a library function; or None."""
        name = getattr(value, "__name__", None)
        if not isinstance(name, str) or not name.isidentifier() \
                or is_user_function(value) or isinstance(value, functools.partial):
            return None
        resolver = self.parsed.resolver
        if name not in self.locals and resolver.lookup(name) is value:
            return load_name(name)
        for alias in sorted(resolver.globals):
            module = resolver.globals[alias]
            if isinstance(module, types.ModuleType) and alias not in self.locals \
                    and resolver.lookup(alias) is module and getattr(module, name, None) is value:
                return gast.Attribute(value=load_name(alias), attr=name, ctx=gast.Load())
        return None

    def guard(self, param, expr, message) -> None:
        """``if name is not expr: raise TypeError(message)`` at the top, located at
        ``param``: the code is specialised on the function ``expr`` names."""
        test = gast.Compare(left=load_name(param.id), ops=[gast.IsNot()],
                            comparators=[clone(expr)])
        if isinstance(self.passed.get(param.id), types.MethodType):
            # a bound method is a new object at each read (layer.fwd): the
            # same method is the same function bound to the same object
            test = gast.BoolOp(op=gast.Or(), values=[gast.Compare(
                left=builtin_call("getattr", load_name(param.id), gast.Constant(attr, None),
                                  gast.Constant(None, None)),
                ops=[gast.IsNot()],
                comparators=[gast.Attribute(value=clone(expr), attr=attr, ctx=gast.Load())])
                for attr in ("__func__", "__self__")])
        guard = gast.If(test=test, body=[gast.Raise(exc=gast.Call(
            func=builtin_ref("TypeError"), args=[gast.Constant(value=message, kind=None)],
            keywords=[]), cause=None)], orelse=[])
        for sub in walk(guard):
            if hasattr(sub, "lineno"):
                gast.copy_location(sub, param)
        self.statement(guard)
