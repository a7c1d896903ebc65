"""Tests and comparisons that call a function defined in the differentiated one.

A comparison, an ``if`` or ``while`` test, ``not`` and ``and``/``or`` of truth
values are kept whole and evaluated as written (never differentiated: a
truth value has no derivative).  A local function or lambda has no name in the
generated code, though -- srcgrad inlines its body where it is called -- so a
test calling one (a backtracking line search's ``while f(x + a * d) > fx``, a
Metropolis test ``if np.log(u) < logp(prop) - logp(x)``, ``m = f(x) > 0.1``)
could not be evaluated as written.  Here such a call is computed first, as any
call is (:meth:`LocalCallsInTests.hoisted_calls`), and the test reads its
result; a ``while`` whose test calls one is run as ``while True`` with the
test checked at the top of each iteration (:func:`loop_tests_as_breaks`), so
the call is made again each time, as Python makes it.

Before, a while test calling the local ``f``; after the rewrite (the call is
then computed before the ``if``):

    >>> import gast
    >>> from ..ir.syntax import source_of
    >>> tree = gast.parse('''
    ... def search(x):
    ...     def f(v):
    ...         return v * v
    ...     a = 1.0
    ...     while f(x * a) > 0.1:
    ...         a = a * 0.5
    ...     return a''')
    >>> loop_tests_as_breaks(tree.body[0])
    >>> print(source_of(tree.body[0].body[2]))
    while True:
        if not f(x * a) > 0.1:
            break
        a = a * 0.5

A ``while`` test joined by ``and``/``or`` (``while n < 20 and f(x) > c``) is
checked operand by operand, one ``if ... break`` each, so a call runs only
where Python makes it.  Elsewhere Python may skip a call written after
``and``/``or``, in a branch of a conditional expression or in a generator:
there the call stays refused, with a message saying to compute it first.
"""

from __future__ import annotations

import gast

from ..errors import UnsupportedSyntaxError
from ..ir.syntax import clone, walk

#: Nodes under which Python may not evaluate (or evaluates many times) a call.
_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def local_function_names(func, nodes=None) -> set[str]:
    """The names ``func`` binds to a function of its own: a nested ``def``, a
    name assigned a lambda (``nodes``: its :func:`walk`, when made already)."""
    nodes = walk(func) if nodes is None else nodes
    names = {n.name for n in nodes if isinstance(n, gast.FunctionDef) and n is not func}
    for node in nodes:
        if isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda):
            names |= {t.id for t in node.targets if isinstance(t, gast.Name)}
    return names


def _calls_local(node, names) -> bool:
    return any(isinstance(sub, gast.Call) and (
        isinstance(sub.func, gast.Lambda)
        or isinstance(sub.func, gast.Name) and sub.func.id in names) for sub in walk(node))


def loop_tests_as_breaks(func) -> None:
    """Rewrite, in place, each ``while TEST:`` of ``func`` whose test calls a
    local function into ``while True: if not TEST: break`` (module docstring)."""
    nodes = walk(func)
    if not any(isinstance(n, gast.While) for n in nodes):
        return  # (no loop to rewrite: one walk of a long function, not three)
    names = local_function_names(func, nodes)
    if not names and not any(isinstance(n, gast.Lambda) for n in nodes):
        return
    for loop in nodes:
        if not isinstance(loop, gast.While) or not _calls_local(loop.test, names) \
                or loop.orelse:
            continue
        test = loop.test
        stops = _break_unless(test)
        for node in (n for stop in stops for n in walk(stop)):
            if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
                gast.copy_location(node, test)
        loop.test = gast.copy_location(gast.Constant(value=True, kind=None), test)
        loop.body = [*stops, *loop.body]


def _break_unless(test) -> list:
    """Statements that leave the loop unless ``test`` holds, evaluating its
    operands as Python does: ``a and b`` checks ``a``, then ``b``; ``a or b``
    checks ``b`` only where ``a`` is false."""
    if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And):
        return [stop for value in test.values for stop in _break_unless(value)]
    if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.Or):
        first, *rest = test.values
        rest = rest[0] if len(rest) == 1 else gast.BoolOp(op=gast.Or(), values=rest)
        return [gast.If(test=gast.UnaryOp(op=gast.Not(), operand=first),
                        body=_break_unless(rest), orelse=[])]
    return [gast.If(test=gast.UnaryOp(op=gast.Not(), operand=test), body=[gast.Break()],
                    orelse=[])]


class LocalCallsInTests:
    """Mixed into the normaliser: the local-function calls of an expression
    evaluated as written, computed first."""

    def hoisted_calls(self, node):
        """``node`` (a copy) with each call of a local function or lambda in it
        replaced by a name holding its result, computed here; those names are
        marked ``hoisted``.  Refused where Python may not make the call
        (after ``and``/``or``, in a branch of ``a if c else b``, in a generator
        or lambda)."""
        names = set(self.local_functions)
        if not any(isinstance(sub, gast.Call) and self.is_local_function(sub.func)
                   for sub in walk(node)):
            return node
        node = clone(node)
        self._refuse_skipped(node, names, False)
        return self._replaced(node)

    def _refuse_skipped(self, node, names, skipped) -> None:
        if isinstance(node, gast.Call) and self.is_local_function(node.func) and skipped:
            shown = node.func.id if isinstance(node.func, gast.Name) else "lambda"
            raise self.parsed.error(
                UnsupportedSyntaxError,
                f"'{shown}' is a function defined in this one, called in a test where "
                f"Python may not call it (after 'and' / 'or', in a branch of 'a if c else "
                f"b', or in a generator): srcgrad inlines such a function, so compute the "
                f"value first (v = {shown}(...)) and test v, or define '{shown}' at module "
                f"level", node)
        for field, value in gast.iter_fields(node):
            later = skipped or isinstance(node, _SCOPES) \
                or isinstance(node, gast.IfExp) and field in ("body", "orelse")
            for i, child in enumerate(value if isinstance(value, list) else [value]):
                if isinstance(child, gast.AST):
                    self._refuse_skipped(child, names, later or (
                        isinstance(node, gast.BoolOp) and field == "values" and i > 0))

    def _replaced(self, node):
        if isinstance(node, gast.Call) and self.is_local_function(node.func):
            atom = self.atom(node)
            atom.hoisted = True
            return atom
        for field, value in gast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, field, [self._replaced(v) if isinstance(v, gast.AST) else v
                                      for v in value])
            elif isinstance(value, gast.AST):
                setattr(node, field, self._replaced(value))
        return node
