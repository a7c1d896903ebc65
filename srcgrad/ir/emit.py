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

import gast

from .syntax import source_of, walk_nodes

INDENT = "    "


def unparse(node) -> str:
    """Source of a gast node: :func:`.syntax.source_of` (which converts the node
    kinds of generated code to ``ast`` directly, without gast's converter)."""
    return source_of(node)


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
        text = unparse(as_written(stmt))
    comment = getattr(stmt, "comment", None)
    first, *rest = text.split("\n")
    lines.append(f"{pad}{first}" + (f"  # {comment}" if comment else ""))
    lines.extend(pad + r for r in rest)
    return lines


def as_written(stmt):
    """``stmt`` as the user wrote it: an attribute assignment the normaliser keeps
    as ``setattr(obj, "a", v)`` (``stmt.attribute_store``, the attribute's name:
    see normalize/attribute_stores.py) is ``obj.a = v``."""
    attr = getattr(stmt, "attribute_store", None)
    if attr is None:
        return stmt
    obj, _, stored = stmt.value.args
    return gast.Assign(targets=[gast.Attribute(value=obj, attr=attr, ctx=gast.Store())],
                       value=stored, type_comment=None)


def _is_pass(stmts) -> bool:
    return all(isinstance(s, gast.Pass) for s in stmts)


def block_lines(stmts, depth: int) -> list[str]:
    lines = []
    for stmt in stmts:
        lines.extend(statement_lines(stmt, depth))
    if not stmts:
        lines.append(INDENT * depth + "pass")
    return lines


def function_source(name: str, params: list[str], defaults: list, body, docstring: str,
                    errstate=None) -> str:
    """Source of ``def name(params): body`` with a docstring.

    ``defaults`` are gast expressions for the trailing parameters' defaults;
    ``errstate``, NumPy's error settings the body runs under (the function's
    ``with np.errstate(...)`` blocks, :mod:`..frontend.errstate`).
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
    if errstate and body:
        settings = ", ".join(f"{k}={v!r}" for k, v in sorted(errstate.items()))
        lines.append(f"{INDENT}with np.errstate({settings}):  # as in the function's own "
                     f"'with' blocks: the same numbers, silenced warnings stay silent")
        lines.extend(block_lines(body, 2))
    else:
        lines.extend(block_lines(body, 1) if body else [])
    return "\n".join(lines) + "\n"


def function_names(defaults, body, errstate=None) -> set[str]:
    """The names :func:`function_source` writes for ``defaults``, ``body`` and
    ``errstate``: those an ``ast.parse`` of its text finds as ``Name`` nodes (the
    linker imports and binds those of the module's free names among them).
    Read from the trees, each statement as :func:`statement_lines` writes it,
    not from the text parsed again: parsing a 4,700-line module cost the link
    more than the rest of it.  A lambda's or local function's parameters,
    ``Name`` nodes in gast, are no ``Name`` in ``ast``.

        >>> stmt = gast.parse("out = np.tanh(h) + (lambda k: w)(h)").body[0]
        >>> sorted(function_names([], [stmt], {"over": "ignore"}))
        ['h', 'np', 'out', 'w']
    """
    found: set[str] = set()
    for default in defaults:
        _names_into(found, default)
    _block_names(found, body)
    if errstate and body:
        found.add("np")  # with np.errstate(...):
    return found


def _block_names(found: set, stmts) -> None:
    for stmt in stmts:  # as statement_lines writes them
        if isinstance(stmt, gast.If):
            _names_into(found, stmt.test)
            _block_names(found, stmt.body)
            _block_names(found, stmt.orelse)
        elif isinstance(stmt, gast.For):
            _names_into(found, stmt.target)
            _names_into(found, stmt.iter)
            _block_names(found, stmt.body)
            _block_names(found, stmt.orelse)
        elif isinstance(stmt, gast.While):
            _names_into(found, stmt.test)
            _block_names(found, stmt.body)
            _block_names(found, stmt.orelse)
        else:
            _names_into(found, as_written(stmt))


def _names_into(found: set, tree) -> None:
    name, param = gast.Name, gast.Param
    found.update(node.id for node in walk_nodes(tree)
                 if type(node) is name and type(node.ctx) is not param)


def show_statements(stmts) -> str:
    """Source of a list of statements (for doctests and debugging)."""
    return "\n".join(block_lines(stmts, 0))
