"""Assignments to an attribute: ``self.t += 1``, ``self.t = self.t + 1``, ``opt.lr = v``.

Part of :mod:`.normalizer` (a mixin of its normaliser, through
:mod:`.statements`).  Python runs ``obj.a = v`` as ``setattr(obj, "a", v)``
and ``obj.a += v`` as ``setattr(obj, "a", obj.a.__iadd__(v))``: the object
changes, whoever else holds it sees the change, and an array the attribute
holds is changed in place by ``+=`` (a number is rebound).  srcgrad runs such
a statement as written, in the forward sweep, like a method of the object
called for what it does (``h.tick()``): the statement stays ``obj.a = v`` or
``obj.a += v`` in the generated code, an opaque statement whose effect later
attribute reads see, as they see it in Python.

What it cannot do is carry a derivative through the object: the value stored,
or the object itself, being differentiated is refused where the sweeps are
made (:func:`srcgrad.ad.in_place.check_in_place_calls`, located, naming the
attribute), a loop whose iterations are rerun (``"sqrt"``, ``("revolve",
s)``) refuses it (:mod:`srcgrad.memory.checkpointing`), and an augmented
store after the adjoint read a field of the object is refused as a method
changing its fields is (:mod:`srcgrad.memory.stale_views`).  So a step
counter, a flag, a learning-rate schedule -- state without a derivative --
is followed, Python-exactly.

Before, a method counting its calls; after, ``self.t += 1`` is the rebinding
``self.t = t1 + 1``, checked first to rebind a number (:func:`rebinding
<srcgrad.runtime.aliases.rebinding>` raises, located, where ``self.t`` holds
an array or a list, which Python's ``+=`` would change in place), the store
kept as a statement (``attribute_store`` tells the emitter to write it as the
assignment it is):

    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> class Counter:
    ...     def step(self, w, g):
    ...         self.t += 1
    ...         return w - g / self.t
    >>> print(unparse_body(normalize(parse_function(Counter.step))))  # doctest: +ELLIPSIS
    t1 = self.t
    rebinding(t1, "'self.t += 1' changes the array (or list) 'self.t' holds in place, ...)
    t2 = t1 + 1
    self.t = t2
    t3 = self.t
    t4 = g / t3
    t5 = w - t4
    return t5
"""

from __future__ import annotations

import gast

from .. import ir
from ..frontend.parse import root_name
from ..ir.syntax import clone, constant, helper_ref, load_name, source_of
from .expressions import BINOPS, OP_LABELS


class AttributeStores:
    """``obj.a = v`` and ``obj.a op= v`` (mixed into the normaliser)."""

    def attribute_store(self, target, value, stmt, op=None, atom=None):
        """Emit the store of ``value`` (``op``: the augmented operator; ``atom``:
        the value already computed, of a tuple unpacked) into the attribute
        ``target`` of a local object, kept as written."""
        root = root_name(target.value)
        if root is None or root not in self.locals:
            raise self.error(
                f"'{root or '...'}.{target.attr} = ...' assigns an attribute of a global, "
                f"module or class: srcgrad only assigns attributes of the objects the "
                f"function holds (a parameter such as 'self', a local); keep the state in "
                f"an object passed to the function", target)
        if any(isinstance(sub, gast.Call) for sub in gast.walk(target.value)):
            raise self.error(
                f"'{source_of(target)} = ...' assigns an attribute of an object a call "
                f"returns here: bind the object to a name first", target)
        if op is None:  # Python evaluates the value first, then the object
            stored = atom if atom is not None else self.atom(value)
        else:  # obj.a op= v: obj.a, then v, then obj.a = obj.a op v (obj: no call)
            read = clone(target)
            for sub in gast.walk(read):
                if hasattr(sub, "ctx"):
                    sub.ctx = gast.Load()
            current = self.atom(read)
            self.out.append(self.rebinding_check(current, target, stmt))
            right = self.atom(value)
            primitive = BINOPS[type(op)]
            stored = self.atom_of(gast.BinOp(left=current, op=op, right=right),
                                  ir.Op(primitive, [current, right], {}, stmt,
                                        OP_LABELS.get(primitive, "operator")))
        obj = self.atom(target.value)
        call = gast.Call(func=load_name("setattr"),
                         args=[obj, gast.Constant(value=target.attr, kind=None), stored],
                         keywords=[])
        node = gast.copy_location(gast.Expr(value=call), stmt)
        node.op = ir.Op(ir.OPAQUE, [], {}, stmt, "attribute assignment")
        node.attribute_store = target.attr
        node.attribute_target = target  # obj.a as written, for messages
        self.out.append(node)

    def rebinding_check(self, current, target, stmt):
        """``rebinding(t1, message, where)`` before ``obj.a op= v`` is run as
        ``obj.a = t1 op v`` (``t1 = obj.a``): Python's ``op=`` rebinds a number,
        but changes an array or a list in place, which srcgrad would not follow."""
        shown = source_of(stmt).strip()
        message = (
            f"'{shown}' changes the array (or list) '{source_of(target)}' holds in place, "
            f"as Python's 'op=' does on a mutable value, and srcgrad follows an attribute "
            f"assignment only as a rebinding of the attribute (the arrays read from the "
            f"object before keep their values): write '{source_of(target)} = "
            f"{source_of(target)} {_SYMBOLS[type(stmt.op)]} ...', which makes a new array")
        where = constant((getattr(stmt, "source_file", None) or self.parsed.filename,
                          getattr(stmt, "lineno", None),
                          getattr(stmt, "col_offset", None)))
        call = gast.Call(func=helper_ref("rebinding"),
                         args=[current, gast.Constant(value=message, kind=None), where],
                         keywords=[])
        node = gast.copy_location(gast.Expr(value=call), stmt)
        node.op = ir.Op(ir.OPAQUE, [], {}, stmt, "statement")
        return node


_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//",
            gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@", gast.BitAnd: "&",
            gast.BitOr: "|", gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>"}

