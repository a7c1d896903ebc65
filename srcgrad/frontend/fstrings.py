"""f-strings become ``str.format`` calls, which srcgrad already runs as written.

Notebook and training code formats values for printing and logging
(``print(f"step {i}: loss {loss:.3f}")``, ``log.info(f"w={w!r}")``).  An
f-string is a string: it has no derivative, and the values it formats are only
read.  Rather than teach every pass a new node, the frontend rewrites each
f-string into the equivalent ``'step {}: loss {:.3f}'.format(i, loss)`` -- the
same conversions (``!r``, ``!s``, ``!a``), format specs (nested fields
included, ``{x:{width}}``) and literal braces (``{{``), evaluated in the same
order -- before the fence sees the function.  f-strings in what a ``raise`` or
an ``assert`` reports keep their form: those are run as written already.

    >>> import gast
    >>> func = gast.parse('def f(x, w):\\n    print(f"x={x:.{w}f} {x!r} {{}}")').body[0]
    >>> format_fstrings(func)
    >>> print(gast.unparse(func).strip().splitlines()[1].strip())
    print('x={:.{}f} {!r} {{}}'.format(x, w, x))
"""

from __future__ import annotations

import gast

from ..ir.syntax import walk
from ..ir.transformer import Transformer

_CONVERSIONS = {115: "!s", 114: "!r", 97: "!a"}


def format_fstrings(func) -> None:
    """Rewrite, in place, every f-string of ``func`` outside ``raise`` and
    ``assert`` statements into a ``str.format`` call, keeping its location."""
    if any(isinstance(n, gast.JoinedStr) for n in walk(func)):  # (a walk is the cheaper)
        _Rewriter().visit(func)


class _Rewriter(Transformer):
    def visit_Raise(self, node):
        return node  # run as written, f-strings and all (frontend/fence.py)

    def visit_Assert(self, node):
        return node

    def visit_JoinedStr(self, node):
        values: list = []
        template = _template(node, values)
        call = gast.Call(func=gast.Attribute(value=gast.Constant(value=template, kind=None),
                                             attr="format", ctx=gast.Load()),
                         args=[self.visit(v) for v in values], keywords=[])
        for made in gast.walk(call.func):
            gast.copy_location(made, node)
        return gast.copy_location(call, node)


def _template(joined, values: list) -> str:
    """The format string of the f-string ``joined``; its formatted expressions
    are appended to ``values`` in the order ``str.format`` numbers them."""
    parts = []
    for part in joined.values:
        if isinstance(part, gast.Constant):
            parts.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            continue
        values.append(part.value)
        field = "{" + _CONVERSIONS.get(part.conversion, "")
        if part.format_spec is not None:
            field += ":" + _template(part.format_spec, values)
        parts.append(field + "}")
    return "".join(parts)
