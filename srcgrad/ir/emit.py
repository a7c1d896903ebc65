"""Emission: gast statements to Python source, with comments.

``ast.unparse`` drops comments, so statements are rendered one at a time and
the comments the passes attached are written beside them: ``stmt.comment`` at
the end of the statement's line (``# save: h``), ``stmt.comment_before`` as
lines above it (``# Adjoint sweep``).  Compound statements are rendered
recursively with four-space indentation, so the output reads like code written
by hand and is byte-identical for identical input.

    >>> import gast
    >>> stmt = gast.parse("h = np.tanh(t2)").body[0]
    >>> stmt.comment = "save: h"
    >>> print(function_source("f", ["x"], [], [stmt], "Doc."))
    def f(x):
        \"\"\"Doc.\"\"\"
        h = np.tanh(t2)  # save: h
"""

from __future__ import annotations

import ast

import gast

from .syntax import SignedConstants, source_of

INDENT = "    "


def unparse(node) -> str:
    """Source of a gast node, exactly as :func:`.syntax.source_of` writes it.

    Emission converts some three hundred statements per 100-line function, and
    gast's general converter (then ``fix_missing_locations`` and a pass for
    negative literals) was a sixth of the compile time.  The statements of
    generated code use node kinds whose fields gast and ``ast`` share, which a
    direct copy converts; anything else goes the general way."""
    try:
        return ast.unparse(_to_ast(node))
    except _Unusual:
        return source_of(node)


class _Unusual(Exception):
    """A node kind the direct copy leaves to gast's converter."""


def _shared_kinds() -> dict:
    """gast node classes with an ``ast`` twin of the very same fields."""
    kinds = {}
    for name in dir(gast):
        kind, twin = getattr(gast, name), getattr(ast, name, None)
        if isinstance(kind, type) and issubclass(kind, gast.AST) and isinstance(twin, type) \
                and issubclass(twin, ast.AST) and kind._fields == twin._fields:
            kinds[kind] = twin
    return kinds


_TWINS = _shared_kinds()
_CONTEXTS = {gast.Load: ast.Load, gast.Store: ast.Store, gast.Del: ast.Del}
_SIGNED = SignedConstants()


def _to_ast(node):
    kind = type(node)
    if kind is list:
        return [_to_ast(n) for n in node]
    if kind is gast.Name:
        return ast.Name(id=node.id, ctx=_CONTEXTS[type(node.ctx)]())
    if kind is gast.Constant:
        return _SIGNED.visit_Constant(ast.Constant(value=node.value, kind=node.kind))
    twin = _TWINS.get(kind)
    if twin is None:
        if isinstance(node, gast.AST):
            raise _Unusual(kind.__name__)
        return node
    new = twin(**{f: _to_ast(getattr(node, f, None)) for f in kind._fields})
    if isinstance(new, ast.stmt):
        new.lineno = 1  # read by unparse (type comments are looked up by line)
    return new


def statement_lines(stmt, depth: int) -> list[str]:
    pad = INDENT * depth
    lines = [f"{pad}# {text}" if text else "" for text in getattr(stmt, "comment_before", [])]
    if isinstance(stmt, gast.If) and _is_pass(stmt.body) and stmt.orelse:
        flipped = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=stmt.test),
                          body=stmt.orelse, orelse=[])
        return lines + statement_lines(flipped, depth)
    if isinstance(stmt, gast.If):
        lines.append(f"{pad}if {unparse(stmt.test)}:")
        lines.extend(block_lines(stmt.body, depth + 1))
        orelse = stmt.orelse
        while len(orelse) == 1 and isinstance(orelse[0], gast.If) \
                and not getattr(orelse[0], "comment_before", None):
            lines.append(f"{pad}elif {unparse(orelse[0].test)}:")
            lines.extend(block_lines(orelse[0].body, depth + 1))
            orelse = orelse[0].orelse
        if orelse:
            lines.append(f"{pad}else:")
            lines.extend(block_lines(orelse, depth + 1))
        return lines
    if isinstance(stmt, (gast.For, gast.While)):
        header = (f"for {unparse(stmt.target)} in {unparse(stmt.iter)}:"
                  if isinstance(stmt, gast.For) else f"while {unparse(stmt.test)}:")
        lines.append(f"{pad}{header}")
        lines.extend(block_lines(stmt.body, depth + 1))
        if stmt.orelse:
            lines.append(f"{pad}else:")
            lines.extend(block_lines(stmt.orelse, depth + 1))
        return lines
    if isinstance(stmt, gast.Return) and isinstance(stmt.value, gast.Tuple) and stmt.value.elts:
        text = "return " + ", ".join(unparse(e) for e in stmt.value.elts)
        text += "," if len(stmt.value.elts) == 1 else ""
    else:
        text = unparse(stmt)
    comment = getattr(stmt, "comment", None)
    first, *rest = text.split("\n")
    lines.append(f"{pad}{first}" + (f"  # {comment}" if comment else ""))
    lines.extend(pad + r for r in rest)
    return lines


def _is_pass(stmts) -> bool:
    return all(isinstance(s, gast.Pass) for s in stmts)


def block_lines(stmts, depth: int) -> list[str]:
    lines = []
    for stmt in stmts:
        lines.extend(statement_lines(stmt, depth))
    if not stmts:
        lines.append(INDENT * depth + "pass")
    return lines


def function_source(name: str, params: list[str], defaults: list, body, docstring: str) -> str:
    """Source of ``def name(params): body`` with a docstring.

    ``defaults`` are gast expressions for the trailing parameters' defaults.
    """
    rendered = list(params)
    offset = len(params) - len(defaults)
    for i, default in enumerate(defaults):
        rendered[offset + i] = f"{params[offset + i]}={unparse(default)}"
    lines = [f"def {name}({', '.join(rendered)}):"]
    doc_lines = docstring.strip("\n").split("\n")
    if len(doc_lines) == 1:
        lines.append(f'{INDENT}"""{doc_lines[0]}"""')
    else:
        lines.append(f'{INDENT}"""{doc_lines[0]}')
        lines.extend((INDENT + d) if d else "" for d in doc_lines[1:])
        lines.append(f'{INDENT}"""')
    lines.extend(block_lines(body, 1) if body else [])
    return "\n".join(lines) + "\n"


def show_statements(stmts) -> str:
    """Source of a list of statements (for doctests and debugging)."""
    return "\n".join(block_lines(stmts, 0))
