"""Calls that build a dataclass from its fields: ``Lin(w, c)``, ``State(pos=p, vel=v)``.

Part of :mod:`.normalizer` (a mixin of its normaliser, through :mod:`.calls`).
A dataclass whose ``__init__`` is the one ``@dataclass`` wrote does nothing
but store its arguments in its fields, so building one inside the
differentiated function (a model from its parameters, a simulator's state
from positions and velocities) is a display of its fields in order, like a
named tuple's (:mod:`.named_tuples`): the primitive
:data:`srcgrad.ir.BUILD_RECORD`, whose adjoint hands each field the cotangent
its attribute reads gave the object and whose tangent is an object of the
same class holding the fields' tangents (:mod:`srcgrad.rules.containers`).
The call stays ``Lin(...)`` in the code, its fields put in order: a keyword
field in its place, a field left out its default (or a call of its
``default_factory``), written in.  A class whose ``__init__`` is its own, or
that runs ``__post_init__``, takes keyword-only or ``InitVar`` arguments, or
makes its own ``__new__``, is an ordinary call (it needs a rule): what such an
``__init__`` does is not a display of fields.

Before, a function building a dataclass by keyword; after, its fields in
order, the default of ``c`` written in:

    >>> import dataclasses
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> @dataclasses.dataclass
    ... class Lin:
    ...     w: object
    ...     c: float = 0.5
    >>> def f(x):
    ...     m = Lin(w=x * 2.0)
    ...     return m.w + m.c
    >>> program = normalize(parse_function(f))
    >>> print(unparse_body(program))
    t1 = x * 2.0
    m = Lin(t1, 0.5)
    t2 = m.w
    t3 = m.c
    t4 = t2 + t3
    return t4
    >>> program.body[1].op.label
    'dataclass'
"""

from __future__ import annotations

import dataclasses
import inspect

import gast

from .. import ir
from ..errors import SrcGradError
from ..ir.syntax import keywords_of, load_name, walk


def is_record_class(value) -> bool:
    """Whether calling ``value`` only stores its arguments in the fields of a
    dataclass, in order: ``@dataclass`` wrote its ``__init__`` (not the class),
    every field is an ``__init__`` argument that may be given by position, and
    there is no ``__post_init__``, ``InitVar`` or ``__new__`` of its own."""
    if not isinstance(value, type) or not dataclasses.is_dataclass(value):
        return False
    init = vars(value).get("__init__")
    code = getattr(init, "__code__", None)
    if code is None or not code.co_filename.startswith("<") \
            or getattr(value, "__post_init__", None) is not None \
            or value.__new__ is not object.__new__:
        return False
    fields = dataclasses.fields(value)
    try:
        params = list(inspect.signature(init).parameters.values())[1:]
    except (TypeError, ValueError):
        return False
    return all(f.init for f in fields) and [p.name for p in params] == [f.name for f in fields] \
        and all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)


class Records:
    """Building dataclasses (mixed into the normaliser)."""

    def record(self, node, cls):
        """``Lin(c=b, w=a)`` -> ``Lin(a, b)`` as a :data:`~srcgrad.ir.BUILD_RECORD`
        of its fields in order; returns the call and its operation."""
        fields = [f.name for f in dataclasses.fields(cls)]
        name = cls.__name__
        if any(isinstance(a, gast.Starred) for a in node.args) \
                or any(kw.arg is None for kw in node.keywords):
            raise self.error(f"{name}(*args) or {name}(**kwargs): srcgrad builds a dataclass "
                             f"from its fields named or given one by one; write "
                             f"{name}({', '.join(fields)}) with each field's value", node)
        given = self.fields_given(name, fields, node.args, node)
        args = [self.literal(given[f.name]) if f.name in given else self._default(cls, f, node)
                for f in dataclasses.fields(cls)]
        self.collect_free(node.func)
        expr = gast.Call(func=node.func, args=args, keywords=keywords_of({}))
        return expr, ir.Op(ir.BUILD_RECORD, args, {}, node, ir.BUILD_RECORD.label)

    def replaced_record(self, node):
        """``dataclasses.replace(p, W=v)`` -> ``P(W=v, b=p.b)`` for ``p`` of a
        dataclass ``P`` known when compiling (an argument, ``self``, a local built
        by ``P(...)``) that only stores its fields: what ``replace`` does, a new
        object built from the fields given and ``p``'s others, so a display of
        fields (:meth:`record`).  A class not known, or one whose ``__init__``
        does more, is refused, located, saying what to write.  None for another
        call."""
        if self.callee(node) is not dataclasses.replace:
            return None
        obj = node.args[0] if len(node.args) == 1 and not isinstance(
            node.args[0], gast.Starred) else None
        cls = None if obj is None else self.named_tuple_class_of(obj) or self.class_of(obj) \
            or self._replaced_parameter_class(obj)
        if cls is None or not is_record_class(cls) or any(kw.arg is None
                                                         for kw in node.keywords):
            shown = cls.__name__ if isinstance(cls, type) else "P"
            raise self.error(
                f"dataclasses.replace(p, field=value) is differentiated where p is a "
                f"dataclass that only stores its fields (no __post_init__, InitVar or "
                f"field outside __init__) and its class is known when srcgrad compiles: "
                f"an argument of the function differentiated, self, or a local built by "
                f"calling the class, with each field named; otherwise build the new object "
                f"from its fields, {shown}(W=..., b=p.b)", node)
        fields = [f.name for f in dataclasses.fields(cls)]
        for kw in node.keywords:
            if kw.arg not in fields:
                raise self.error(f"{cls.__name__}.__init__() got an unexpected keyword "
                                 f"argument '{kw.arg}'", kw.value, SrcGradError)
        if not isinstance(obj, gast.Name):
            obj = self.atom(obj)  # evaluated once, first, as replace's argument is
        given = {kw.arg for kw in node.keywords}
        kept = [gast.keyword(arg=f, value=gast.copy_location(gast.Attribute(
            value=gast.copy_location(gast.Name(id=obj.id, ctx=gast.Load(), annotation=None,
                                               type_comment=None), obj),
            attr=f, ctx=gast.Load()), node)) for f in fields if f not in given]
        ref = gast.copy_location(load_name(self.namer.fresh(f"{cls.__name__}_class")),
                                 node.func)
        ref.helper = self.free[ref.id] = cls
        made = gast.Call(func=ref, args=[], keywords=[*node.keywords, *kept])
        return gast.copy_location(made, node)

    def _replaced_parameter_class(self, obj):
        """The class of the parameter ``obj`` passed a dataclass object, where
        every binding of it in the function is ``obj = dataclasses.replace(obj,
        ...)`` (a loop carrying it: review s35, R3-6) -- each one an object of
        that class again; None otherwise."""
        if not isinstance(obj, gast.Name) or obj.id not in self.params:
            return None
        cls = getattr(self, "param_classes", {}).get(obj.id)
        if cls is None and self.receiver_type is not None and obj.id == self.params[0]:
            cls = self.receiver_type
        for node in walk(self.func):
            if isinstance(node, gast.Name) and node.id == obj.id \
                    and isinstance(node.ctx, (gast.Store, gast.Del)):
                bound = self._binding_of(node)
                call = getattr(bound, "value", None)
                if not isinstance(bound, gast.Assign) or len(bound.targets) != 1 \
                        or not isinstance(call, gast.Call) \
                        or self.callee(call) is not dataclasses.replace or not call.args \
                        or not isinstance(call.args[0], gast.Name) or call.args[0].id != obj.id:
                    return None
        return cls

    def _binding_of(self, name):
        """The statement of the function whose only target is ``name``, or None."""
        for node in walk(self.func):
            if isinstance(node, gast.Assign) and any(t is name for t in node.targets):
                return node
        return None

    def fields_given(self, name, fields, positional, node) -> dict:
        """Field name -> the argument ``name(...)`` gives it, by position then by
        keyword, as Python binds them (a named tuple's too); Python's TypeError,
        located, for too many, repeated or unknown ones."""
        if len(positional) > len(fields):
            raise self.error(f"{name}() takes {len(fields)} positional arguments but "
                             f"{len(positional)} were given", node, SrcGradError)
        given = dict(zip(fields, positional))
        for kw in node.keywords:
            if kw.arg not in fields or kw.arg in given:
                what = "got multiple values for argument" if kw.arg in given \
                    else "got an unexpected keyword argument"
                raise self.error(f"{name}() {what} '{kw.arg}'", kw.value, SrcGradError)
            given[kw.arg] = kw.value
        return given

    def _default(self, cls, field, node):
        """The value of a field the call leaves out: its default, or a new value
        from its ``default_factory`` (called here, as ``__init__`` would)."""
        if field.default is not dataclasses.MISSING:
            return self.bound_value(field.default, node)
        if field.default_factory is not dataclasses.MISSING:
            made = gast.Call(func=self.bound_value(field.default_factory, node), args=[],
                             keywords=[])
            return self.atom(gast.copy_location(made, node))
        raise self.error(f"{cls.__name__}() missing required argument '{field.name}'", node,
                         SrcGradError)
