"""Calls of a user's own methods that share a name with a container's.

A Kalman filter's measurement step is called ``update``, an optimizer's step
too; a user's class may also define ``append``, ``pop``, ``fill`` or ``sort``.
The look for in-place updates (:mod:`.argument_updates`) takes ``xs.update(d)``,
``xs.append(v)`` for a dict's or a list's method, which changes its object.
Where the receiver is the method's own instance (``self``, its class known:
the normaliser's ``receiver_type``) and that class defines the method in
Python, the call is the user's method, differentiated through its source like
any other (``self.predict(m)``), not a container's update of ``self``.

    >>> import gast
    >>> from .._doctest_helpers import scale      # a function of a user's module
    >>> class KF:
    ...     update = scale                          # def update(self, ...) in the class
    >>> call = gast.parse("self.update(m)").body[0].value
    >>> class Owner:                      # what the normaliser offers
    ...     receiver_type, params = KF, ["self", "m"]
    ...     def callee(self, call):
    ...         return None
    >>> is_user_method(Owner().callee, call.func)
    True
    >>> is_user_method(Owner().callee, gast.parse("xs.update(m)").body[0].value.func)
    False
"""

from __future__ import annotations

import dataclasses
import inspect
import types

import gast
import numpy as np

from .. import ir
from ..errors import MissingRuleError, UnsupportedSyntaxError
from ..frontend.linker import is_user_function
from ..frontend.parse import MISSING, root_name, static_value
from ..ir.syntax import clone, is_append, load_name, walk
from ..rules import registry


def receiver_class(resolve):
    """The class of the first parameter of the function whose calls ``resolve``
    resolves, where ``resolve`` is the normaliser's (its ``receiver_type``);
    None where that is not known."""
    owner = getattr(resolve, "__self__", None)
    return getattr(owner, "receiver_type", None)


def is_user_method(resolve, func) -> bool:
    """Whether ``func`` (the function of a call, ``self.update``) names a
    method a user's class defines in Python, called on the instance whose class
    is known (module docstring)."""
    if not isinstance(func, gast.Attribute) or not isinstance(func.value, gast.Name):
        return False
    owner = getattr(resolve, "__self__", None)
    if hasattr(owner, "class_of"):  # the normaliser: self, or a user object passed
        cls = owner.class_of(func.value)
    else:
        cls, params = receiver_class(resolve), getattr(owner, "params", None)
        if not params or func.value.id != params[0]:
            return False
    if cls is None:
        return False
    method = getattr(cls, func.attr, None)
    method = getattr(method, "__func__", method)  # a classmethod's function
    return is_user_function(method)


def own_updates(func, resolve) -> set[str]:
    """The names ``func`` updates in place by its own syntax
    (:func:`..ir.syntax.updated_in_place`: ``x[i] = v``, ``xs.append(v)``),
    leaving out ``self.append(v)`` where that is the user's method."""
    updated = set()
    for node in walk(func):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            updated.add(node.value.id)
        elif is_append(node) and not is_user_method(resolve, node.func):
            updated.add(node.func.value.id)
    return updated


class MethodArguments:
    """Mixed into the normaliser: a bound method of the instance
    (``integrate(self.rhs, y0)``), or a ``functools.partial`` made in the call
    (``integrate(functools.partial(rhs, k=k), y0)``), passed to a user
    function.  Neither is known before the code runs (the instance, ``k``),
    so the helper cannot be specialised on it; written as the lambda it
    stands for (``lambda y: self.rhs(y)``), it is inlined with the helper, as
    a lambda passed there is (:meth:`.inlining.Inlining.inline_helper`)."""

    def methods_as_lambdas(self, node):
        """``node`` (a call of a user function) with each such argument
        written as a lambda; ``node`` itself where there is none."""
        args = [self._as_lambda(a) for a in node.args]
        keywords = [gast.keyword(arg=k.arg, value=self._as_lambda(k.value))
                    for k in node.keywords]
        if all(a is b for a, b in zip(args, node.args)) and all(
                a.value is b.value for a, b in zip(keywords, node.keywords)):
            return node
        return gast.copy_location(gast.Call(func=node.func, args=args, keywords=keywords), node)

    def _as_lambda(self, arg):
        if isinstance(arg, gast.Attribute) and is_user_method(self.callee, arg) \
                and not isinstance(inspect.getattr_static(self.receiver_type, arg.attr, None),
                                   (staticmethod, classmethod)):
            return self._lambda(arg, getattr(self.receiver_type, arg.attr), 1, [], set())
        made = self.partial_lambda(arg, keep_names=True) if isinstance(arg, gast.Call) else None
        if made is not None:  # partial(rhs, k=k), partial(np.multiply, w): partials.py
            return made
        return arg

    def _lambda(self, func, fn, skipped, bound, named, keywords=()):
        """``lambda a, b: func(*bound, a, b, **keywords)`` for the parameters of
        ``fn`` after the first ``skipped`` and not in ``named``; the argument
        itself where ``fn`` takes more than plain parameters."""
        code = fn.__code__
        if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) \
                or code.co_kwonlyargcount or fn.__defaults__:
            return func
        params = [p for p in code.co_varnames[skipped:code.co_argcount] if p not in named]
        names = [self.namer.fresh(p) for p in params]
        call = gast.Call(func=clone(func), args=[*map(clone, bound), *map(load_name, names)],
                         keywords=[gast.keyword(arg=k.arg, value=clone(k.value))
                                   for k in keywords])
        made = gast.Lambda(args=gast.arguments(
            args=[gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                  for n in names], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
            kwarg=None, defaults=[]), body=call)
        for sub in walk(made):
            if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, func)
        return made

    def own_method_call(self, node):
        """``self(x)`` in a method, the class defining ``__call__``:
        ``self.__call__(x)``, and so ``m(x)`` for an argument ``m`` passed an
        object of such a class (:meth:`class_of`); ``super().m(x)``: the
        method ``m`` of the next class in ``self``'s class's order after the
        one defining this function, called with ``self`` (a name bound to that
        function, the call marked with ``self``'s class).  ``node`` itself for
        any other call; ``super(K, self).m(x)`` after ``K``; ``type(self).m(self, x)``
        through ``self``'s class."""
        func = node.func
        owner = self.class_of(func) if isinstance(func, gast.Name) else None
        if owner is not None and is_user_function(inspect.getattr_static(owner, "__call__",
                                                                         None)):
            # m(x), m an argument passed a callable object differentiated (its class known)
            called = gast.copy_location(gast.Attribute(value=func, attr="__call__",
                                                       ctx=gast.Load()), func)
            return gast.copy_location(gast.Call(func=called, args=node.args,
                                                keywords=node.keywords), node)
        cls, params = self.receiver_type, self.params
        if cls is None or not params or self.env.get(params[0]) != params[0]:
            return node
        if isinstance(func, gast.Name) and func.id == params[0] \
                and is_user_function(vars(cls).get("__call__") or next((vars(k)["__call__"] for k in cls.__mro__ if "__call__" in vars(k)), None)):
            called = gast.copy_location(gast.Attribute(value=func, attr="__call__",
                                                       ctx=gast.Load()), func)
            return gast.copy_location(gast.Call(func=called, args=node.args,
                                                keywords=node.keywords), node)
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Call) \
                and self.callee(func.value) is type and len(func.value.args) == 1 \
                and not func.value.keywords and isinstance(func.value.args[0], gast.Name) \
                and func.value.args[0].id == params[0]:
            # type(self).m(self, x): the class of self, known when the code is made
            owner = gast.copy_location(gast.Attribute(value=self.bound_value(cls, func.value),
                                                      attr=func.attr, ctx=gast.Load()), func)
            return gast.copy_location(gast.Call(func=owner, args=node.args,
                                                keywords=node.keywords), node)
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Call)
                and isinstance(func.value.func, gast.Name) and func.value.func.id == "super"
                and not func.value.keywords and self.callee(func.value) is super):
            return node
        after = self._super_start(func.value.args, params[0])
        if after is MISSING:
            return node
        method = self._next_method(func.attr, after)
        if method is None:
            return node
        name = self.namer.fresh(f"{method.__qualname__.split('.')[-2]}_{func.attr}")
        self.free[name] = method
        ref = gast.copy_location(load_name(name), func)
        ref.helper = method
        call = gast.copy_location(gast.Call(func=ref, args=[load_name(params[0]), *node.args],
                                            keywords=node.keywords), node)
        call.receiver_type = cls
        for sub in walk(call):
            if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, node)
        return call

    def _super_start(self, args, receiver):
        """The class ``super(...)`` looks after: None for ``super()`` (the class
        defining the function); ``K`` for ``super(K, self)``, ``K`` a class the
        code names and ``self`` the receiver; MISSING for any other form."""
        if not args:
            return None
        if len(args) != 2 or not isinstance(args[1], gast.Name) or args[1].id != receiver \
                or not isinstance(args[0], (gast.Name, gast.Attribute)) \
                or root_name(args[0]) in self.locals:
            return MISSING
        start = static_value(args[0], self.parsed.resolver, self.locals)
        return start if isinstance(start, type) and start in self.receiver_type.__mro__ \
            else MISSING

    def _next_method(self, attr, after=None):
        """The function ``super().attr`` (``super(after, self).attr``) calls
        here: found after the class that defines the function being compiled
        (or ``after``), in its receiver's order (None where that class is not
        found, or the method is no plain user function)."""
        code = getattr(self.parsed.fn, "__code__", None)
        mro = self.receiver_type.__mro__
        owner = next((i for i, k in enumerate(mro) if any(
            getattr(v, "__code__", None) is code for v in vars(k).values())), None)
        if after is not None:
            owner = mro.index(after)
        if code is None or owner is None:
            return None
        for k in mro[owner + 1:]:
            if attr in vars(k):
                found = vars(k)[attr]
                return found if is_user_function(found) else None
        return None

    def method_hint(self, func, prim):
        """Why ``obj.m(...)`` (``func``), a method srcgrad has no rule for
        (``prim``), cannot be differentiated, where it is likely the user's own:
        a function stored in the instance (``self.act = np.tanh``), or a method
        of an object passed other than first: ``(error class, message)``; None
        otherwise (the error then offers a rule, srcgrad.register_vjp)."""
        if not isinstance(prim, ir.UnknownMember) or not isinstance(func.value, gast.Name) \
                or func.value.id not in self.params:
            return None
        name, shown = func.value.id, f"{func.value.id}.{func.attr}"
        if self.receiver_type is not None and name == self.params[0]:
            if hasattr(self.receiver_type, func.attr):
                return None
            return UnsupportedSyntaxError, (f"'{shown}' is a function stored in the object ({shown} = ...): srcgrad "
                    f"finds a method by the class of '{name}' when it compiles and cannot "
                    f"see what an instance holds; define it as a method of the class "
                    f"(def {func.attr}(self, h): return np.tanh(h)), or pass the function "
                    f"as a parameter (def {self.func.name}(..., {func.attr}=np.tanh)) and "
                    f"call that")
        # (review s37 R5-9/R5-11: it said an argument's class is known -- '{name}' is
        # an argument -- where the code was compiled without one, or for a library's)
        return MissingRuleError, (
            f"no adjoint rule for '{shown}(...)': srcgrad finds the methods of an object by "
            f"its class, which it knows for '{name}' when the gradient is called with an "
            f"object of your own class there (an instance, a dataclass or a named tuple: "
            f"grad({self.func.name})(..., {name}, ...)) or a module (np, math), or as self "
            f"in a method; here the code was compiled without such an object ('.source', "
            f"srcgrad show and export compile the function alone: show or export the "
            f"gradient after a call), or '{name}' holds an object of a library's class. For "
            f"your own class, call the gradient with the object, or call a module-level "
            f"function taking it (def {func.attr}({name}, ...)); for a module, pass it or "
            f"make it the parameter's default (def {self.func.name}(..., {name}=np)); for a "
            f"library's method, register a rule with srcgrad.register_vjp")

    def through_the_class(self, node, prim):
        """``Box.__call__(box, p)``, a method reached through its class with the
        object passed first, as the bound call it is: ``(box.__call__, node
        without box)`` for a global ``box`` (the caller's look at what it
        changes in place then follows ``self.set(p)`` inside to the method of
        ``box``'s class, and so does the code made for it), or the call
        ``box.__call__(p)`` for a parameter passed an object of a class where
        that is the same method.  None for any other call, which is compiled
        and checked as a plain function's (``self.m(...)`` inside then refused,
        located, ``self``'s class unknown).

        ``S(x)`` for an object ``S`` of a user class that defines ``__call__``
        (``S = Scale(2.0)``, a global or a closure's) is ``Scale.__call__(S,
        x)``: ``(S.__call__, node)``, followed like ``MODEL.run(x)``, the
        object's fields read as they are when the code runs."""
        func = node.func
        call = inspect.getattr_static(type(prim), "__call__", None)
        if isinstance(call, types.FunctionType) and is_user_function(call) \
                and not isinstance(prim, (type, types.FunctionType, types.MethodType)) \
                and getattr(prim, "__srcgrad_custom_vjp__", None) is None \
                and registry.lookup(prim) is None and registry.lookup_tangent(prim) is None \
                and not registry.is_nondifferentiable(prim):  # (register_vjp(S, rule): S's)
            return types.MethodType(call, prim), node
        if not (is_user_function(prim) and isinstance(func, gast.Attribute) and node.args
                and not isinstance(node.args[0], gast.Starred)):
            return None
        owner = self.callee(gast.Call(func=func.value, args=[], keywords=[]))
        if not isinstance(owner, type) or inspect.getattr_static(owner, func.attr, None) \
                is not prim:
            return None  # (a staticmethod, a function stored on an object)
        first, rest = node.args[0], node.args[1:]
        obj = self.callee(gast.Call(func=first, args=[], keywords=[])) \
            if isinstance(first, (gast.Name, gast.Attribute)) else None
        if isinstance(obj, owner):
            call = gast.Call(func=func, args=rest, keywords=node.keywords)
            return types.MethodType(prim, obj), gast.copy_location(call, node)
        cls = self.class_of(first)
        if cls is not None and issubclass(cls, owner) and getattr(cls, func.attr, None) is prim:
            method = gast.copy_location(gast.Attribute(value=first, attr=func.attr,
                                                       ctx=gast.Load()), func)
            return gast.copy_location(gast.Call(func=method, args=rest,
                                                keywords=node.keywords), node)
        return None

    def class_of(self, node):
        """The class of the object ``node`` names, where it is known: ``self``
        (the receiver's class), or a parameter passed a user object
        (``param_classes``), not rebound in the function, or a local bound once
        to an object the function builds (``opt = Adam(len(w0))``:
        :meth:`built_class`); None otherwise."""
        if not isinstance(node, gast.Name) or self.env.get(node.id) != node.id:
            return None
        if self.assignments.get(node.id):
            return self.built_class(node.id) if self.assignments[node.id] == 1 else None
        if self.receiver_type is not None and self.params and node.id == self.params[0]:
            return self.receiver_type
        return getattr(self, "param_classes", {}).get(node.id)

    def own_view(self, node) -> bool:
        """Whether ``node`` (``s.items()``, a dict view by its syntax) calls the
        user's own ``items``/``values``/``keys`` of an argument whose class is
        known (``param_classes``, or ``self``'s) and that the function does not
        rebind: that method, differentiated through its source, not dict's
        (a store giving ``np.exp`` of what it holds)."""
        receiver = node.func.value
        if not isinstance(receiver, gast.Name) or receiver.id not in self.params:
            return False
        cls = getattr(self, "param_classes", {}).get(receiver.id)
        if cls is None and self.receiver_type is not None and receiver.id == self.params[0]:
            cls = self.receiver_type
        if cls is None or any(isinstance(n, gast.Name) and n.id == receiver.id
                              and isinstance(n.ctx, (gast.Store, gast.Del))
                              for n in walk(self.func)):
            return False
        method = inspect.getattr_static(cls, node.func.attr, None)
        return is_user_function(getattr(method, "__func__", method))

    def view_checked(self, mapping, node) -> list:
        """The arguments after ``d`` of ``keys_of(d, ...)`` for ``d.items()``
        (``node``): none where ``d`` is certainly a dict (a display's name, a
        ``**kw``, an argument of the function differentiated, not rebound: its
        class checked at the call, api/protocols.py); else the view and where
        it is, so that the code refuses an object whose class has its own
        (runtime ``keys_of``)."""
        if isinstance(mapping, gast.Name) and (mapping.id in self.dict_names or (
                mapping.id in self.params and not getattr(self.parsed, "called", False)
                and not any(isinstance(n, gast.Name) and n.id == mapping.id
                            and isinstance(n.ctx, (gast.Store, gast.Del))
                            for n in walk(self.func)))):
            return []
        where = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
            self.parsed.filename, getattr(node, "lineno", None),
            getattr(node, "col_offset", None))], ctx=gast.Load())
        return [gast.Constant(value=node.func.attr, kind=None), where]

    def receives_class(self, node) -> bool:
        """Whether ``node`` is the first parameter of a classmethod being
        compiled (``cls``, the class itself, not an instance of it)."""
        fn, cls = getattr(self.parsed, "fn", None), self.receiver_type
        if cls is None or fn is None or not isinstance(node, gast.Name) or not self.params \
                or node.id != self.params[0]:
            return False
        binding = next((vars(k)[fn.__name__] for k in cls.__mro__
                        if fn.__name__ in vars(k)), None)
        return isinstance(binding, classmethod) and binding.__func__ is fn

    def built_class(self, name):
        """The class ``C`` where the function's one assignment of ``name`` is
        ``name = C(...)``, ``C`` a plain class of the user's (its ``__init__``
        written in Python or none, no ``__new__`` or metaclass of its own: the
        call makes an object of ``C``), not a dataclass or named tuple that
        only stores its fields (built as a display: records.py); else None.
        Built from values without a derivative (an optimiser's zeros), the
        object's methods are then differentiated by its class, as those of an
        object passed are; built from differentiated values, the call itself
        is refused (it needs a rule)."""
        cls = self.called_for(name)
        if not isinstance(cls, type) or type(cls) is not type or cls.__new__ is not object.__new__ \
                or issubclass(cls, tuple) or dataclasses.is_dataclass(cls) \
                or not (cls.__init__ is object.__init__ or is_user_function(cls.__init__)):
            return None
        return cls

    def made_object(self, func):
        """The class ``C`` where ``func`` is a local bound once, to ``C(...)`` of a
        class (``cs = CubicSpline(xs, ys)``); else None."""
        if not isinstance(func, gast.Name) or self.assignments.get(func.id) != 1:
            return None
        made = self.called_for(func.id)
        return made if isinstance(made, type) else None

    def called_for(self, name):
        """What the call is that the first ``name = f(...)`` of the function calls
        (:meth:`callee`); None where no such assignment binds ``name``."""
        for stmt in walk(self.func):
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], gast.Name) \
                    and stmt.targets[0].id == name and isinstance(stmt.value, gast.Call):
                return self.callee(stmt.value)
        return None

    def local_atom(self, expr):
        """The atom holding ``expr`` (``self.l1``, ``self.layers["enc"]``), a new
        temporary made a local bound here (with no user name of its own)."""
        held = self.atom(expr)
        if isinstance(held, gast.Name) and held.id not in self.env:
            self.locals.add(held.id)
            self.env[held.id] = held.id
        return held

    def held_callable(self, node):
        """``self.l1(x)``, where ``self.l1`` is no attribute of ``self``'s (known)
        class but a field, and the objects the function was passed or reads
        hold callable objects (``self.l1 = Dense(...)``: ``ElementClasses``,
        frontend/linker.held_element_classes) -> ``t(x)`` after ``t =
        self.l1``: a call of a local, by the class of what it holds
        (``dispatched``, one branch per class, a located error for another).
        None for any other call."""
        func = node.func
        cls = self.class_of(func.value) if isinstance(func, gast.Attribute) else None
        if cls is None or inspect.getattr_static(cls, func.attr, MISSING) is not MISSING \
                or not any(is_user_function(inspect.getattr_static(c, "__call__", None))
                           for c in self.dispatch_classes):
            return None
        held = self.local_atom(func)
        return gast.copy_location(gast.Call(func=held, args=node.args,
                                            keywords=node.keywords), node)

    def held_object_method(self, node):
        """``self.enc.forward(x)``, where ``enc`` is no attribute of ``self``'s
        (known) class but a field, or ``self.layers["enc"].forward(x)`` (an item
        of a list or dict), and the objects the function was passed or reads
        hold user objects whose classes define ``forward`` in Python
        (``self.enc = Linear(W)``: ``ElementClasses``) -> ``t.forward(x)`` after
        ``t = self.enc``: the method of a local, by the class of what it holds
        (``dispatched``: one branch per class, a located error for another, so
        an attribute rebound to another object since is refused, not misread).
        So is a method of what a call returns, ``self.layer(0).forward(x)`` or
        ``model.get_block().apply(x)`` (review s35 R3-33): ``t = self.layer(0)``
        first, then ``t.forward(x)`` by ``t``'s class.  None for any other call."""
        func = node.func
        if not isinstance(func, gast.Attribute) \
                or not isinstance(func.value, (gast.Attribute, gast.Subscript, gast.Call)) \
                or hasattr(np.ndarray, func.attr) \
                or not any(is_user_function(inspect.getattr_static(c, func.attr, None))
                           for c in self.dispatch_classes):
            return None
        holder = func.value
        if isinstance(holder, gast.Attribute):
            cls = self.class_of(holder.value)
            if cls is None or inspect.getattr_static(cls, holder.attr, MISSING) is not MISSING:
                return None
        held = self.local_atom(holder)
        held.shown = holder  # messages name self.enc, not the local
        method = gast.copy_location(gast.Attribute(value=held, attr=func.attr,
                                                   ctx=gast.Load()), func)
        return gast.copy_location(gast.Call(func=method, args=node.args,
                                            keywords=node.keywords), node)
