"""``**`` arguments: ``f(x, **{'axis': 0})`` and ``f(x, **kw)`` as keywords.

Part of :mod:`.normalizer` (a mixin of its normaliser, through :mod:`.calls`;
split from it so that calls stays one readable module).  A rule binds a call's
arguments by name, and some need their value when the code is generated
(``axis=0``), so ``**`` arguments are written out as keywords where their keys
are known when compiling: a dict display, or a local dict assigned once at the
top of the function and only ever read by key after (nothing can add a key).

Before, a call with a dict of keywords; after, the keywords written out, the
constant one as its value, the other read from the dict:

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from .normalizer import normalize, unparse_body
    >>> def f(x, w):
    ...     kw = {"axis": 0, "weights": w}
    ...     return np.sum(np.average(x, **kw))
    >>> print(unparse_body(normalize(parse_function(f))))
    kw = {'axis': 0, 'weights': w}
    t1 = kw['weights']
    t2 = np.average(x, axis=0, weights=t1)
    t3 = np.sum(t2)
    return t3
"""

from __future__ import annotations

import gast

from ..errors import SrcGradError
from ..ir.syntax import clone, walk


class Keywords:
    """``**`` arguments written out as keywords (mixed into the normaliser)."""

    def expanded_keywords(self, node):
        """``f(x, **{'axis': 0})`` -> ``f(x, axis=0)``, and ``f(x, **kw)`` for a
        ``kw = {'axis': 0, 'w': w}`` assigned once at the top of the function
        and only ever read by key (so its keys are those written) -> ``f(x,
        axis=0, w=kw['w'])``: a constant value is written in (a rule may need
        it, ``axis=0``), any other is read from the dict at the call."""
        keywords = []
        for kw in node.keywords:
            if kw.arg is not None:
                keywords.append(kw)
                continue
            value, read_from = kw.value, None
            if isinstance(value, gast.Name):
                value, read_from = self.keyword_dict(value), value
            value = self.as_display(value)  # f(x, **dict(axis=0))
            if not isinstance(value, gast.Dict) or not all(
                    isinstance(k, gast.Constant) and isinstance(k.value, str)
                    and k.value.isidentifier() for k in value.keys):
                raise self.error(
                    "'**' arguments are supported for a dict whose keys are known when the "
                    "code is generated only: a dict written there ({'axis': 0}), or a name "
                    "assigned one once at the top of the function and only read by key "
                    "after; pass the keywords by name (axis=0)", kw.value)
            for key, item in zip(value.keys, value.values):
                if read_from is not None and not isinstance(constant_of(item), gast.Constant):
                    item = gast.Subscript(value=clone(read_from), slice=clone(key),
                                          ctx=gast.Load())
                keywords.append(gast.copy_location(
                    gast.keyword(arg=key.value, value=clone(item)), kw.value))
        names = [kw.arg for kw in keywords]
        for name in names:
            if names.count(name) > 1:
                raise self.error(f"keyword argument '{name}' is given more than once", node,
                                 SrcGradError)
        return gast.copy_location(gast.Call(func=node.func, args=node.args,
                                            keywords=keywords), node)

    def keyword_dict(self, name):
        """The dict literal the local ``name`` holds at a ``**name``, when it is
        assigned once, at the top of the function, and every other use of it is
        a read of one key (nothing can add a key); None otherwise.  The
        ``**kw`` parameter of a helper whose call's keys are known
        (:class:`~..frontend.linker.Packed`) holds those keys, read from it."""
        keys = getattr(self, "packed_keys", {}).get(name.id)
        if keys is not None and name.id == getattr(self.func.args.kwarg, "id", None) \
                and not self.assignments.get(name.id, 0) and self._read_by_key(name):
            return gast.Dict(keys=[gast.Constant(value=k, kind=None) for k in keys],
                             values=[clone(name) for _ in keys])
        if name.id not in self.locals or self.assignments.get(name.id, 0) != 1 \
                or name.id not in self.env:  # (not assigned yet: Python raises NameError)
            return None
        found = [self.as_display(s.value) for s in self.func.body
                 if isinstance(s, gast.Assign) and len(s.targets) == 1
                 and isinstance(s.targets[0], gast.Name) and s.targets[0].id == name.id]
        found = [v for v in found if isinstance(v, gast.Dict)]
        if len(found) != 1 or None in found[0].keys:
            return None
        return found[0] if self._read_by_key(name) else None

    def _read_by_key(self, name) -> bool:
        """Whether every use of ``name`` reads one key or passes it as ``**name``
        (``kw.update(...)``, ``g(kw)``, ``kw`` passed on: its keys may change)."""
        allowed = {id(n.value) for n in walk(self.func) if isinstance(n, gast.keyword)
                   and n.arg is None}
        allowed |= {id(n.value) for n in walk(self.func) if isinstance(n, gast.Subscript)
                    and isinstance(n.ctx, gast.Load) and isinstance(n.slice, gast.Constant)}
        return not any(isinstance(n, gast.Name) and n.id == name.id
                       and isinstance(n.ctx, gast.Load) and id(n) not in allowed
                       for n in walk(self.func))


    def as_display(self, value):
        """``dict(target=0.5, scale=s)`` (the builtin, keywords alone) as the
        display ``{'target': 0.5, 'scale': s}``, whose keys are as known (outside
        tester T1, session 30, #5); any other value as it is."""
        if isinstance(value, gast.Call) and not value.args and value.keywords \
                and all(k.arg is not None for k in value.keywords) \
                and self.callee(value) is dict:
            return gast.copy_location(gast.Dict(
                keys=[gast.Constant(value=k.arg, kind=None) for k in value.keywords],
                values=[k.value for k in value.keywords]), value)
        return value


def constant_of(node):
    """``node`` when it is a literal that cannot change (a number, a string, a
    tuple of them, ``-1``); None otherwise."""
    if isinstance(node, gast.Constant):
        return node
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)) \
            and isinstance(node.operand, gast.Constant):
        return gast.Constant(value=0, kind=None)  # a number: stands for the literal
    if isinstance(node, gast.Tuple) and all(constant_of(e) is not None for e in node.elts):
        return gast.Constant(value=(), kind=None)
    return None
