"""Anomaly mode: a check after each statement of the adjoint sweep that makes a cotangent.

``grad(f, check_finite=True)`` (or ``SRCGRAD_ANOMALY=1``) runs this pass last,
after the optimisations, so it checks the statements that really run.  After
each adjoint statement that assigns cotangents it puts one call
``check_finite(d_x, file, line, column, expression, name=name, ...)`` (the
runtime helper :func:`srcgrad.runtime.anomaly.check_finite`): the user's
file, line and 0-based column, the source of the expression whose adjoint the
statement is (``source_stmt``, set by :mod:`.reverse`, holds the forward
statement; its ``op.node`` is the user's expression) and the forward values
the statement reads.  The first NaN or Inf raises ``NonFiniteGradientError``
there.  Without the option the pass does not run: the code is byte for byte
what it was.

Before (the adjoint sweep of ``np.sum(np.exp(np.sin(x)))``) and after:

    >>> from .. import _doctest_helpers as h
    >>> from ..pipeline import Options, generate
    >>> def sweep(options):
    ...     source = generate(h.chain, options).source.replace(h.__file__, "helpers.py")
    ...     print(source[source.index("    # Adjoint"):], end="")
    >>> sweep(Options())
        # Adjoint sweep
        d_t3 = grad_seed(t3)
        d_t2 = unreduced(d_t3, x)  # t2 has the shape of x
        d_x = into_first(np.multiply, d_t2 * t2, np.cos(x))  # d_t2 * t2 * np.cos(x), written into the new array of d_t2 * t2
        return grad_like(d_x, x)
    >>> sweep(Options(check_finite=True))
        # Adjoint sweep
        d_t3 = grad_seed(t3)
        d_t2 = unreduced(d_t3, x)  # t2 has the shape of x
        check_finite(d_t2, 'helpers.py', 16, 11, 'np.sum(np.exp(np.sin(x)))', x=x)
        d_x = into_first(np.multiply, d_t2 * t2, np.cos(x))  # d_t2 * t2 * np.cos(x), written into the new array of d_t2 * t2
        check_finite(d_x, 'helpers.py', 16, 25, 'np.sin(x) (or that of np.exp(np.sin(x)): the optimised code computes its adjoint in the same statement)', {'t2': 'np.exp(np.sin(x))'}, t2=t2, x=x)
        return grad_like(d_x, x)

A statement the optimisations folded together (``d_x = d_t2 * t2 * np.cos(x)``
holds the adjoints of ``np.exp`` and ``np.sin``) is checked once, located at
the last expression it mirrors, its message naming the others too (``the
adjoint of np.sin(x) (or that of np.exp(np.sin(x)): ...)``), since any of them
may have made the NaN (review s36 R4-19: a fused ``sqrt`` was blamed on ``x ** 2``).

Sound: a check reads the values its statement just made or read, and changes
nothing (it returns None), so the gradient is bit for bit the same.
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import helper_ref, source_of


def check_cotangents(body: list, program: ir.Program, skip=()) -> list:
    """``body`` (a generated function's statements) with a ``check_finite`` call
    after each adjoint statement that assigns cotangents; ``skip`` holds the ids
    of statements of the forward sweep."""
    forward = set(program.params)
    for stmt in ir.walk_statements(program.body):
        forward.update(ir.assigned_by(stmt))
    # a value the user never named (t3 = S[0, 0]) is shown as the expression it is
    written = {n.id for n in gast.walk(program.node) if isinstance(n, gast.Name)}
    shown = {}
    for stmt in ir.walk_statements(program.body):
        node = getattr(getattr(stmt, "op", None), "node", None)
        if isinstance(stmt, gast.Assign) and node is not None:
            for name in ir.target_names(stmt):
                if name not in written and name not in shown:
                    shown[name] = source_of(node)
    return _checked(body, program.filename, forward, set(skip), shown)


def _checked(stmts, filename, forward, skip, shown=None) -> list:
    out = []
    for stmt in stmts:
        out.append(stmt)
        if id(stmt) in skip:
            continue
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(stmt, (gast.For, gast.While, gast.If)) and inner:
                setattr(stmt, field, _checked(inner, filename, forward, skip, shown))
        out.extend(_checks(stmt, filename, forward, shown or {}))
    return out


def _checks(stmt, filename, forward, shown) -> list:
    """The checks after ``stmt``: none unless it assigns cotangents and mirrors a
    located user expression."""
    source = getattr(stmt, "source_stmt", None)
    node = getattr(getattr(source, "op", None), "node", None)
    if not isinstance(stmt, gast.Assign) or getattr(node, "lineno", None) is None \
            or isinstance(stmt.value, (gast.Constant, gast.Name)):
        return []  # a zero, or a copy of a cotangent already checked
    targets = ir.target_names(stmt)
    if not targets or any(t in forward for t in targets):
        return []  # a restore (h = h_tape.pop()), not a cotangent
    reads = [n for n in dict.fromkeys(ir.names_in(stmt.value)) if n in forward]
    expression = source_of(node)
    others = [source_of(n) for n in dict.fromkeys(
        getattr(getattr(s, "op", None), "node", None)
        for s in getattr(stmt, "folded_sources", ())) if n is not None and n is not node]
    if others:  # one statement computes several adjoints: each may be the one (R4-19)
        named = list(dict.fromkeys(others))
        expression += (f" (or that of {' or '.join(named)}: the optimised code computes "
                       f"{'their adjoints' if len(named) > 1 else 'its adjoint'} in the "
                       f"same statement)")
    where = [gast.Constant(value=v, kind=None) for v in
             (filename, node.lineno, getattr(node, "col_offset", 0), expression)]
    labels = {n: shown[n] for n in reads if n in shown}
    if labels:  # the user's expressions for srcgrad's own names, in the message
        where.append(gast.Dict(keys=[gast.Constant(value=k, kind=None) for k in labels],
                               values=[gast.Constant(value=v, kind=None)
                                       for v in labels.values()]))
    out = []
    for target in targets:
        call = gast.Call(func=helper_ref("check_finite"), args=[ir.name(target), *where],
                         keywords=[gast.keyword(arg=n, value=ir.name(n)) for n in reads])
        out.append(gast.Expr(value=call))
    return out


__all__ = ["check_cotangents"]
