"""``with np.errstate(divide="ignore"): ...`` blocks, run as the code around them.

Numerical code silences NumPy's floating-point warnings where it expects
them (``np.log`` of zeros masked afterwards by ``np.where``)::

    with np.errstate(divide="ignore", invalid="ignore"):
        logp = np.where(p > 0, np.log(p), 0.0)

Settings of "ignore", "warn", "print" and "log" only choose how NumPy reports
a division by zero, an overflow, an underflow or an invalid operation; the
numbers are the same whichever is set.  So the statements of such a block are
differentiated as if the ``with`` were not there, and the generated functions
run whole under the settings the blocks asked for (``with
np.errstate(divide="ignore"):`` around each one's body, see
:func:`..ir.emit.function_source`): the function's value and gradient are the
same bits, and neither the forward nor the adjoint sweep reports what the
user silenced (the adjoint of ``np.log`` at 0 divides by zero too).  Where
two blocks ask different things of one category, the quieter wins.

"raise" and "call" change what the code does (an exception, a callback) and
the block is refused, located, as is any other ``with`` (a context manager
srcgrad cannot see into), ``np.errstate`` bound to a name (``as e``), and a
setting that is not a string literal.

    >>> import gast, numpy as np
    >>> tree = gast.parse(
    ...     "def f(p):\\n"
    ...     "    with np.errstate(divide='ignore'):\\n"
    ...     "        q = np.log(p)\\n"
    ...     "    return q\\n").body[0]
    >>> class Globals:
    ...     def lookup(self, name):
    ...         return {"np": np}[name]
    >>> run_errstate_blocks(tree, Globals(), "<doc>")
    {'divide': 'ignore'}
    >>> from ..ir.emit import show_statements
    >>> print(show_statements(tree.body))
    q = np.log(p)
    return q
"""

from __future__ import annotations

import gast
import numpy as np

from ..errors import UnsupportedSyntaxError
from ..ir.syntax import walk_nodes

#: The settings that change only how NumPy reports, quietest first.
_QUIET_FIRST = ("ignore", "log", "print", "warn")
#: np.errstate's keywords.
_CATEGORIES = ("all", "divide", "over", "under", "invalid")


def run_errstate_blocks(func: gast.FunctionDef, resolver, filename) -> dict:
    """Replace each ``with np.errstate(...)`` block of ``func`` by its statements,
    in place; return the settings the generated code runs under (empty where
    there is none).  Other ``with`` statements are left for the fence to refuse."""
    settings: dict = {}
    for node in walk_nodes(func):  # (a list made first: blocks change as it goes)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list) or not any(
                    isinstance(s, gast.With) for s in stmts):
                continue
            setattr(node, field, _unwrapped(stmts, resolver, filename, settings))
    return settings


def _unwrapped(stmts, resolver, filename, settings) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.With) and _errstate_items(stmt, resolver, filename, settings):
            out += _unwrapped(stmt.body, resolver, filename, settings)
        else:
            out.append(stmt)
    return out


def _errstate_items(stmt, resolver, filename, settings) -> bool:
    """Whether every item of ``stmt`` is ``np.errstate(...)`` (then its settings are
    merged into ``settings``); a refusal where one is but cannot be followed."""
    calls = [item.context_expr for item in stmt.items]
    if not all(isinstance(c, gast.Call) and _static(c.func, resolver) is np.errstate
               for c in calls):
        return False
    for item, call in zip(stmt.items, calls):
        if item.optional_vars is not None or call.args:
            raise _refusal("srcgrad follows 'with np.errstate(...)' given keyword settings "
                           "only (divide='ignore', ...), not bound to a name", call, filename)
        for keyword in call.keywords:
            value = keyword.value
            if keyword.arg not in _CATEGORIES or not (
                    isinstance(value, gast.Constant) and value.value in _QUIET_FIRST):
                raise _refusal(
                    "srcgrad follows np.errstate settings that only choose how NumPy reports "
                    f"({', '.join(repr(q) for q in _QUIET_FIRST)} for "
                    f"{', '.join(_CATEGORIES)}); 'raise' and 'call' change what the code "
                    "does: differentiate the code without them, and check for inf/nan in "
                    "the result instead", keyword.value, filename)
            _merge(settings, keyword.arg, value.value)
    return True


def merge_errstate(into: dict, settings: dict) -> None:
    """Add the settings of a function inlined into another (a helper's ``with
    np.errstate`` blocks) to that function's, the quieter winning."""
    for category, value in settings.items():
        _merge(into, category, value)


def _merge(settings, category, value) -> None:
    if category == "all":
        for each in _CATEGORIES[1:]:
            _merge(settings, each, value)
        return
    old = settings.get(category)
    if old is None or _QUIET_FIRST.index(value) < _QUIET_FIRST.index(old):
        settings[category] = value


def _static(node, resolver):
    """The object ``np.errstate`` (a chain of attributes of a global) names, or None."""
    if isinstance(node, gast.Attribute):
        base = _static(node.value, resolver)
        return getattr(base, node.attr, None) if base is not None else None
    if isinstance(node, gast.Name):
        return resolver.lookup(node.id)  # (a sentinel for a name it does not know)
    return None


def _refusal(message, node, filename):
    return UnsupportedSyntaxError(message, filename=filename, lineno=node.lineno,
                                  col=node.col_offset)
