"""Calls that build a named tuple: ``P(a, b)``, ``P(W=a, b=c)``.

Part of :mod:`.normalizer` (a mixin of its normaliser, through :mod:`.calls`).
A named tuple class (``collections.namedtuple``, ``typing.NamedTuple``) makes
a tuple whose items are also read by name, so building one is a display of
its fields in order: the primitive :data:`srcgrad.ir.BUILD_NAMEDTUPLE`, whose
rules hand each field its item of the cotangent and make the tangent a named
tuple of the same class (:mod:`srcgrad.rules.containers`).  The call stays
``P(...)`` in the code, its fields put in order: a keyword field in its place,
a field left out its default, written in.  A class that defines its own
``__new__`` or ``__init__`` is an ordinary call (it needs a rule).

On a local ``p`` that every assignment binds to ``P(...)`` (or to
``p._replace(...)``), ``p._replace(W=v)`` is ``P(W=v, b=p.b)`` and a method
``p.m(v)`` is ``P.m(p, v)``, differentiated like ``self.m(v)``; so too in a
helper that such a ``p`` is passed to first (``helper(p)``: prepared for ``P``,
as a method for its class).  On a named tuple whose class is only known when
the code runs (passed to the differentiated function, returned by a helper:
``p = upd(p)``), ``p._replace(W=v)`` is ``replaced(("W",), p, v)``, a runtime
primitive with rules of its own; its other methods have none (refused, located).

Before, a function building a named tuple by keyword; after, its fields in
order, the default of ``b`` written in:

    >>> import collections
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> Layer = collections.namedtuple("Layer", "W b", defaults=[0.5])
    >>> def f(x):
    ...     p = Layer(W=x * 2.0)
    ...     return p.W + p.b
    >>> program = normalize(parse_function(f))
    >>> print(unparse_body(program))
    t1 = x * 2.0
    p = Layer(t1, 0.5)
    t2 = p.W
    t3 = p.b
    t4 = t2 + t3
    return t4
    >>> program.body[1].op.label
    'named tuple'
"""

from __future__ import annotations

import dataclasses
import inspect
import operator

import gast

from .. import ir, runtime
from ..errors import SrcGradError
from ..frontend.linker import is_user_function
from ..ir.syntax import (
    clone,
    constant,
    helper_ref,
    keywords_of,
    load_name,
    located,
    source_of,
    walk,
)
from .records import is_record_class


def is_named_tuple_class(value) -> bool:
    """Whether calling ``value`` builds a named tuple from its fields: a tuple
    class with ``_fields`` whose ``__new__`` is the one ``namedtuple`` wrote
    and which has no ``__init__`` of its own."""
    if not isinstance(value, type) or not issubclass(value, tuple) \
            or not isinstance(getattr(value, "_fields", None), tuple):
        return False
    new = next((vars(c)["__new__"] for c in value.__mro__ if "__new__" in vars(c)), None)
    code = getattr(getattr(new, "__func__", new), "__code__", None)  # a staticmethod
    return code is not None and code.co_filename == "<string>" \
        and code.co_varnames[1:1 + len(value._fields)] == value._fields \
        and value.__init__ is tuple.__init__


def _built_from_fields(cls) -> bool:
    """A named tuple class, or a dataclass that only stores its fields
    (:mod:`.records`): a local built by calling it is of that class, its
    methods resolved by it."""
    return is_named_tuple_class(cls) or is_record_class(cls)


class NamedTuples:
    """Building named tuples (mixed into the normaliser)."""

    def local_named_tuple(self, func):
        """The named tuple class of ``p`` in ``p.m(...)``, for a local ``p`` that
        every assignment binds to a call of that one class; None otherwise."""
        if not isinstance(func, gast.Attribute):
            return None
        return self.named_tuple_class_of(func.value)

    def named_tuple_class_of(self, node, seen=frozenset()):
        """The named tuple class of the name ``node``: a local that every assignment
        binds to a call of that one class, or the first parameter of a helper
        called with such a local there (``helper(p)``: its ``receiver_type``, see
        :meth:`named_tuple_receiver`) that it never rebinds; None otherwise
        (``seen``: the names asked about already, r = q._replace(); q = r._replace())."""
        if isinstance(node, gast.Call):  # helper(Lin(w, c), x)
            cls = self.callee(node)
            return cls if _built_from_fields(cls) else None
        if isinstance(node, (gast.BinOp, gast.UnaryOp)):  # (a + b).dot(a): user_operators.py
            return self.operator_result_class(node)
        if not isinstance(node, gast.Name) or node.id in seen:
            return None
        name = node.id
        if self.params and name == self.params[0] and _built_from_fields(
                self.receiver_type) and not any(
                isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
                for n in walk(self.func)):
            return self.receiver_type
        if name not in self.locals or name in self.params:
            return None
        assigns = {id(a.targets[0]): a for a in walk(self.func)
                   if isinstance(a, gast.Assign) and len(a.targets) == 1}
        found = set()
        for n in walk(self.func):
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store):
                assign = assigns.get(id(n))
                made = None if assign is None else self.operator_result_class(assign.value)
                if made is not None:  # c = a + b, V2.__add__ returning V2(...): user_operators.py
                    found.add(made)
                    continue
                if assign is None or not isinstance(assign.value, gast.Call):
                    return None  # unpacked, a loop's target, p += ...: not known
                made = assign.value.func
                if self.callee(assign.value) is dataclasses.replace and assign.value.args:
                    made = gast.Attribute(value=assign.value.args[0], attr="_replace",
                                          ctx=gast.Load())  # q = dataclasses.replace(p, W=v)
                if isinstance(made, gast.Attribute) and made.attr == "_replace" \
                        and isinstance(made.value, gast.Name):
                    if made.value.id != name and made.value.id not in seen:
                        # r = q._replace(W=v): of q's class (a name asked about
                        # already is of the class the others give)
                        found.add(self.named_tuple_class_of(made.value, seen | {name})
                                  or self.class_of(made.value))  # (p an argument)
                    continue  # p = p._replace(W=v): of p's class
                found.add(self.callee(assign.value))
        cls = found.pop() if len(found) == 1 else None
        return cls if _built_from_fields(cls) else None

    def named_tuple_receiver(self, node):
        """For a call of a user function ``helper(p, ...)`` whose first argument is a
        named tuple of known class ``P`` (:meth:`named_tuple_class_of`): ``P``, the
        class the helper is prepared for (``p._replace(W=v)`` and ``p.m(v)`` there
        are resolved by it, as in the caller); None otherwise."""
        return self.named_tuple_class_of(node.args[0]) if node.args else None

    def built_like(self, node):
        """``type(p)(*(a, b))`` -> ``P(a, b)`` for a local named tuple ``p`` of
        known class ``P`` (:meth:`named_tuple_class_of`): the tangent of ``p =
        P(...)`` as srcgrad's forward-mode code writes it, read again for a
        second derivative (hvp), where the class the call makes must be known.
        None for any other call.  ``dataclasses.replace(p, W=v)`` is ``P(W=v,
        b=p.b)`` (:meth:`.records.Records.replaced_record`)."""
        made = self.replaced_record(node)
        if made is not None:
            return made
        func = node.func
        if not isinstance(func, gast.Call) or len(func.args) != 1 or func.keywords \
                or not isinstance(func.func, gast.Name) or func.func.id != "type" \
                or self.callee(func) is not type:
            return None
        cls = self.named_tuple_class_of(func.args[0]) or self.built_just_before(node)
        if cls is None:
            return None
        ref = load_name(self.namer.fresh(f"{cls.__name__}_class"))
        ref.helper = cls
        self.free[ref.id] = cls
        args = []
        for arg in node.args:  # *(a, b): its items, one by one
            if isinstance(arg, gast.Starred) and isinstance(arg.value, (gast.Tuple, gast.List)) \
                    and not any(isinstance(e, gast.Starred) for e in arg.value.elts):
                args.extend(arg.value.elts)
            else:
                args.append(arg)
        return located(gast.Call(func=located(ref, func), args=args, keywords=node.keywords),
                       node)

    def built_just_before(self, node):
        """``P`` where the statement right before ``d_p = type(p)(*(...))`` is
        ``p = P(...)``, a named tuple or dataclass built from its fields: there
        ``type(p)`` is ``P`` whatever else ``p`` is bound to (``s = s0``, an
        argument, then ``s = State(...)`` in a loop: forward-mode code read
        again for hvp; reviewer s33, F1).  None otherwise."""
        made = node.func.args[0]
        if not isinstance(made, gast.Name):
            return None
        for block in ir.statement_blocks(self.func.body):
            for before, stmt in zip(block, block[1:]):
                if isinstance(stmt, gast.Assign) and stmt.value is node \
                        and isinstance(before, gast.Assign) and len(before.targets) == 1 \
                        and isinstance(before.targets[0], gast.Name) \
                        and before.targets[0].id == made.id \
                        and isinstance(before.value, gast.Call):
                    cls = self.callee(before.value)
                    return cls if _built_from_fields(cls) else None
        return None

    def named_tuple_method(self, node, cls):
        """``p.m(v)`` for a local named tuple ``p`` of class ``P``: ``P.m(p, v)``,
        resolved by ``P`` like ``self.m(v)`` in a method; ``p._replace(W=v)``:
        ``P(W=v, b=p.b)``.  None for another attribute (a tuple's own methods)."""
        func = node.func
        ref = load_name(self.namer.fresh(f"{cls.__name__}_class"))
        ref.helper = cls
        self.free[ref.id] = cls
        if func.attr == "_replace" and not node.args and is_named_tuple_class(cls) \
                and all(kw.arg in cls._fields for kw in node.keywords):
            given = {kw.arg for kw in node.keywords}
            kept = [gast.keyword(arg=f, value=gast.Attribute(value=clone(func.value), attr=f,
                                                              ctx=gast.Load()))
                    for f in cls._fields if f not in given]
            return located(gast.Call(func=ref, args=[], keywords=[*node.keywords, *kept]), node)
        if not is_user_function(inspect.getattr_static(cls, func.attr, None)):
            return None
        method = gast.Attribute(value=ref, attr=func.attr, ctx=gast.Load())
        method.helper = getattr(cls, func.attr)
        call = gast.Call(func=method, args=[clone(func.value), *node.args],
                         keywords=node.keywords)
        call.receiver_type = cls
        return located(call, node)

    def replaced_fields(self, node):
        """``p._replace(W=v)`` on a ``p`` whose class is only known when the code
        runs (an argument, a helper's return, ``p = upd(p)``):
        ``replaced(("W",), p, v)``, the runtime primitive whose rules hand ``v``
        the cotangent of field ``W`` and ``p`` the rest (by the class ``p`` has
        then).  None for another call."""
        func = node.func
        if func.attr != "_replace" or node.args \
                or any(kw.arg is None for kw in node.keywords):
            return None
        ref = load_name("replaced")
        ref.helper = runtime.replaced
        names = gast.Tuple(elts=[gast.Constant(value=kw.arg, kind=None) for kw in node.keywords],
                           ctx=gast.Load())
        return located(gast.Call(func=located(ref, func),
                                 args=[located(names, node), func.value,
                                       *(kw.value for kw in node.keywords)],
                                 keywords=[]), node)

    def named_tuple(self, node, cls):
        """``P(b=c, W=a)`` -> ``P(a, c)`` as a :data:`~srcgrad.ir.BUILD_NAMEDTUPLE`
        of its fields in order; returns the call and its operation."""
        fields = cls._fields
        positional, ready = self.spread_star(node, cls)
        given = self.fields_given(cls.__name__, fields, positional, node)
        missing = [f for f in fields if f not in given and f not in cls._field_defaults]
        if missing:
            raise self.error(f"{cls.__name__}() missing required argument '{missing[0]}'",
                             node, SrcGradError)
        args = [(given[f] if id(given[f]) in ready else self.literal(given[f])) if f in given
                else self.bound_value(cls._field_defaults[f], node) for f in fields]
        self.collect_free(node.func)
        expr = gast.Call(func=node.func, args=args, keywords=keywords_of({}))
        return expr, ir.Op(ir.BUILD_NAMEDTUPLE, args, {}, node, ir.BUILD_NAMEDTUPLE.label)

    def spread_star(self, node, cls) -> tuple:
        """The positional arguments of ``P(..., *t, ...)`` with ``*t`` spelt out
        as ``t[0], ..., t[m - 1]`` where ``t``'s length is only known when the
        code runs (an argument, a loop's item: ``[Layer(*p) for p in params]``)
        but the fields of ``P`` leave it one length ``m`` (those without a
        default, or all of them, given by position); a check before it raises
        Python's TypeError as the code runs if ``t`` holds another number
        (``runtime.star_items``).  A ``*t`` of known length was spelt out when
        the call was desugared (:mod:`.starred`).  Where the defaults allow
        several lengths, refused, located.  Returns the arguments and the ids
        of those made into atoms here."""
        stars = [i for i, a in enumerate(node.args) if isinstance(a, gast.Starred)]
        if not stars:
            return list(node.args), set()
        name, fields, star = cls.__name__, cls._fields, node.args[stars[0]]
        before, after = node.args[:stars[0]], node.args[stars[0] + 1:]
        named = {kw.arg for kw in node.keywords}

        def fits(m):  # whether Python's call takes m items from the star
            count = len(before) + m + len(after)
            return count <= len(fields) and not named & set(fields[:count]) and all(
                f in named or f in cls._field_defaults for f in fields[count:])

        lengths = [m for m in range(len(fields) + 1) if fits(m)]
        text = source_of(star.value)
        if len(stars) > 1 or len(lengths) != 1:
            how = "several starred arguments" if len(stars) > 1 else (
                f"the length of {text} is not known when srcgrad compiles the code, and "
                + (f"{name}'s defaults let it be any of {lengths}" if lengths
                   else f"no length of it fits {name}'s fields"))
            raise self.error(f"{name}(*{text}): {how}; write the fields one by one "
                             f"({name}({', '.join(f'{text}[{k}]' for k in range(len(fields)))}))",
                             node)
        # (in Python's order: the arguments before the star, the star, the rest;
        # the values made here are atoms already, which the caller takes as they are)
        before = [self.literal(a) for a in before]
        whole = self.atom(star.value)
        if isinstance(whole, gast.Name):
            where = constant((self.parsed.filename, getattr(node, "lineno", None),
                              getattr(node, "col_offset", None)))
            call = gast.Call(func=helper_ref("star_items"), args=[
                ir.name(whole.id), gast.Constant(value=lengths[0], kind=None),
                gast.Constant(value=name, kind=None), gast.Constant(value=text, kind=None),
                where], keywords=[])
            guard = gast.copy_location(gast.Expr(value=call), node)
            guard.op = ir.Op(ir.OPAQUE, [], {}, node, "statement")
            self.out.append(guard)
        items = []
        for k in range(lengths[0]):
            index = gast.Constant(value=k, kind=None)
            item = gast.Subscript(value=clone(whole), slice=index, ctx=gast.Load())
            items.append(self.atom_of(item, ir.Op(operator.getitem, [whole, index], {}, star,
                                                  "unpacking")))
        return [*before, *items, *after], {id(a) for a in [*before, *items]}
