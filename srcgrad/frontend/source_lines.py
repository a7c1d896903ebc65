"""A definition's lines in its file, without ``inspect``'s tokenizer.

``inspect.getsourcelines`` finds where a function's block ends by running
Python's tokenizer over it: 20-30 ms for a 1000-line function, a fortieth of
its compilation (and more than the rest of a cache hit, which reads the text
to hash it).  The code object says it more cheaply: its first line
(``co_firstlineno``, the first decorator's), the last line any of its
instructions came from (:func:`last_line`, nested code included), then the
rest of the indented block -- comments, blank lines, closing brackets --
each line indented deeper than the first.  Trailing blank lines are not the
block's.  Lines are read through :mod:`linecache`, refreshed first, as
``inspect`` does, so an edited file is seen.

    >>> import textwrap
    >>> code = compile(textwrap.dedent('''
    ...     @decorated
    ...     def f(x):
    ...         y = g(x,
    ...               1)
    ...         # a comment
    ...
    ...     z = 2
    ... '''), "<doctest>", "exec").co_consts[0]
    >>> lines = ["\\n", "@decorated\\n", "def f(x):\\n", "    y = g(x,\\n", "          1)\\n",
    ...          "    # a comment\\n", "\\n", "z = 2\\n"]
    >>> block_end(code, lines)  # the comment's line and the blank one after it
    7
"""

from __future__ import annotations

import linecache
import re
import types

#: The first line of a definition as ``inspect.findsource`` looks for it (a lambda's
#: aside): where the code object's first line is no such line, ask ``inspect``.
_DEFINITION = re.compile(r"\s*(@|def\s|async\s+def\s)")
_DEF = re.compile(r"(async\s+)?def\s")


def definition_lines(code, scope=None):
    """``(lines, first)`` as ``inspect.getsourcelines(code)`` gives them for the
    code of a ``def`` (``scope``: its module's globals, for a loader's
    source), or None where the lines cannot be told this way (no source, a
    first line that starts no definition): the caller asks ``inspect``."""
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename, scope)
    first = code.co_firstlineno
    if not lines or first > len(lines) or not _DEFINITION.match(lines[first - 1]):
        return None
    low, high = _span(code)
    last = _block_end(lines, first, high)
    # instructions from elsewhere (a code object given another first line, as a
    # test framework's wrapper is): its lines then hold no def of that indentation
    indent = lines[first - 1][:_indent(lines[first - 1])]
    if low < first or not any(line.startswith(indent) and _DEF.match(line, len(indent))
                              for line in lines[first - 1:last]):
        return None
    while last > first and not lines[last - 1].strip():
        last -= 1
    block = "".join(lines[first - 1:last])
    if block.count('"""') % 2 or block.count("'''") % 2:
        # a triple-quoted string cut open: a string statement after the last
        # instruction with lines at column 0 ("""old version: ...""" after the
        # return) has no instruction of its own (review s37 D-4): inspect's way
        return None
    return lines[first - 1:last], first


def block_end(code, lines) -> int:
    """The number of the last line of ``code``'s block in ``lines`` (the file's):
    its last instruction's line, then every line indented deeper than its first
    or blank (blank lines at the end included)."""
    return _block_end(lines, code.co_firstlineno, last_line(code))


def _block_end(lines, first, high) -> int:
    last = max(high, first)
    indent = _indent(lines[first - 1])
    while last < len(lines) and (not lines[last].strip() or _indent(lines[last]) > indent):
        last += 1
    return last


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def last_line(code) -> int:
    """The last line any instruction of ``code`` or of the code nested in it came from."""
    return _span(code)[1]


def _span(code) -> tuple[int, int]:
    """The first and last lines the instructions of ``code`` and of the code
    nested in it came from (``co_firstlineno`` for both where there are none)."""
    if hasattr(code, "co_positions"):  # Python 3.11: where each instruction's expression ends
        starts, ends = [], []
        for start, end, _, _ in code.co_positions():
            if start:
                starts.append(start)
            if end:
                ends.append(end)
    else:
        starts = ends = [line for _, _, line in code.co_lines() if line]
    for inner in code.co_consts:
        if isinstance(inner, types.CodeType):
            low, high = _span(inner)
            starts.append(low)
            ends.append(high)
    return min(starts, default=code.co_firstlineno), max(ends, default=code.co_firstlineno)


def read_names(code) -> set[str]:
    """The global and attribute names ``code`` and the code nested in it read
    (``co_names``): what a function may look up in its globals."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= read_names(const)
    return names


__all__ = ["block_end", "definition_lines", "last_line", "read_names"]
